"""`tablebase` turns NumPy's transparent huge pages off (pipeline.cli.small_pages) through
NumPy's documented NUMPY_MADVISE_HUGEPAGE, whatever NumPy release is installed."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

#: NumPy 1.26's layout, as far as huge pages go: numpy.core, no numpy._core, and the
#: variable read when NumPy is imported (reported here instead of acted on).
NUMPY_1_26 = """
import os
__version__ = "1.26.4"
core = None
madvise_hugepage = os.environ.get("NUMPY_MADVISE_HUGEPAGE")
"""


def run(code: str, env: dict[str, str], path: Path | None = None) -> subprocess.CompletedProcess:
    environment = {key: value for key, value in os.environ.items() if not key.endswith("_HUGEPAGE")}
    environment.pop("TABLEBASE_HUGEPAGES", None)
    environment.update(env)
    if path is not None:
        environment["PYTHONPATH"] = os.pathsep.join([str(path), str(ROOT)])
    return subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, env=environment, timeout=60
    )


SMALL_PAGES_THEN_NUMPY = "from pipeline.cli import small_pages; small_pages(); import numpy; print({})"


def test_small_pages_works_with_numpy_1_26s_layout(tmp_path):
    """The private `numpy._core.multiarray._set_madvise_hugepage` the command called is not in
    NumPy 1.26 (pyproject allows numpy>=1.26): every command failed with an AttributeError."""
    (tmp_path / "numpy").mkdir()
    (tmp_path / "numpy" / "__init__.py").write_text(NUMPY_1_26)
    done = run(SMALL_PAGES_THEN_NUMPY.format("numpy.__version__, numpy.madvise_hugepage"), {}, tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stdout.split() == ["1.26.4", "0"]


def test_the_command_starts_before_numpy_is_imported():
    """NumPy reads NUMPY_MADVISE_HUGEPAGE once, when imported: small_pages must run first."""
    done = run("import sys, pipeline.cli; print('numpy' in sys.modules)", {})
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "False"


GETTER = "numpy._core.multiarray._get_madvise_hugepage()"


@pytest.mark.parametrize(
    ("env", "huge"),
    [({}, "False"), ({"TABLEBASE_HUGEPAGES": "1"}, "default"), ({"NUMPY_MADVISE_HUGEPAGE": "1"}, "True")],
    ids=["off by default", "TABLEBASE_HUGEPAGES=1 keeps numpy's default", "the user's own setting wins"],
)
def test_the_installed_numpy_takes_the_setting(env, huge):
    import numpy

    if not hasattr(getattr(numpy, "_core", None), "multiarray") or not hasattr(
        numpy._core.multiarray, "_get_madvise_hugepage"
    ):
        pytest.skip("this NumPy does not say whether it asks for huge pages")
    if huge == "default":
        huge = run(f"import numpy; print({GETTER})", {}).stdout.strip()
    done = run(SMALL_PAGES_THEN_NUMPY.format(GETTER), env)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == huge
