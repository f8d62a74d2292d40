"""The installed package holds everything the code reads: subpackages, SQL, the query library."""

from __future__ import annotations

import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_folder_of_the_package_is_installed():
    folders = {".".join(path.relative_to(ROOT).parts) for path in [ROOT / "pipeline", *(ROOT / "pipeline").rglob("*")]
               if path.is_dir() and "__pycache__" not in path.parts}
    assert set(SETUPTOOLS["packages"]) == folders | {"pipeline.queries"}


def test_query_library_is_installed_as_a_package():
    assert SETUPTOOLS["package-dir"] == {"pipeline.queries": "queries"}
    assert SETUPTOOLS["package-data"]["pipeline.queries"] == ["*.sql"]
    # A regular package, not a namespace one: an editable install only finds those.
    assert (ROOT / "queries" / "__init__.py").is_file()
