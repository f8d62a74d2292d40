"""The installed package holds everything the code reads: subpackages, SQL, the query library."""

from __future__ import annotations

import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SETUPTOOLS = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]


def test_every_folder_of_the_package_is_installed():
    folders = {
        ".".join(path.relative_to(ROOT).parts)
        for path in [ROOT / "pipeline", *(ROOT / "pipeline").rglob("*")]
        if path.is_dir() and "__pycache__" not in path.parts
    }
    assert set(SETUPTOOLS["packages"]) == folders | {"pipeline.queries"}


def test_query_library_is_installed_as_a_package():
    assert SETUPTOOLS["package-dir"] == {"pipeline.queries": "queries"}
    assert SETUPTOOLS["package-data"]["pipeline.queries"] == ["*.sql"]
    # A regular package, not a namespace one: an editable install only finds those.
    assert (ROOT / "queries" / "__init__.py").is_file()


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The project built as a wheel."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("wheel")
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(folder), str(ROOT)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if built.returncode != 0:
        pytest.skip(f"no wheel could be built here (pip wheel: {built.stderr.strip().splitlines()[-1:]})")
    [path] = folder.glob("*.whl")
    return path


def test_the_wheel_holds_the_default_ruleset_file(wheel):
    """Outside the repository, `tablebase rulesets` and `build --all` read the packaged file."""
    import zipfile

    with zipfile.ZipFile(wheel) as archive:
        packaged = archive.read("pipeline/games/rulesets.toml")
    assert packaged == (ROOT / "rulesets.toml").read_bytes()


def test_the_wheel_holds_the_explorers_files(wheel):
    """`tablebase serve` serves the explorer from the package (pipeline/server.py's EXPLORER),
    and `publish --explorer` copies it with parquet.js (pipeline/products/explorer.py's SCRIPTS)."""
    import zipfile

    from pipeline.products.explorer import SCRIPTS
    from pipeline.server import EXPLORER

    with zipfile.ZipFile(wheel) as archive:
        for name in {*EXPLORER, *SCRIPTS}:
            assert archive.read(f"pipeline/explorer/{name}") == (ROOT / "pipeline" / "explorer" / name).read_bytes()


def test_an_installed_copy_renders_the_pages_from_its_templates_style_and_script(wheel, tmp_path):
    """The templates, pages.css and ruleset.js are package files: a copy installed from the
    wheel, away from the repository, reads them through importlib.resources."""
    import subprocess
    import sys

    site = tmp_path / "site"
    installed = subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site), str(wheel)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert installed.returncode == 0, installed.stderr
    templates = ROOT / "pipeline" / "products" / "templates"
    assert sorted(p.name for p in (site / "pipeline" / "products" / "templates").iterdir()) == sorted(
        p.name for p in templates.iterdir()
    )
    script = (
        "import sys; from pipeline.products import pages; "
        "print(pages.__file__); print(pages.asset('ruleset.js') == sys.argv[1]); "
        "sys.stdout.write(pages.index_page([], {}, set(), {}))"
    )
    rendered = subprocess.run(
        [sys.executable, "-c", script, (templates / "ruleset.js").read_text()],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={"PYTHONPATH": str(site)},
        timeout=60,
    )
    assert rendered.returncode == 0, rendered.stderr
    where, same, page = rendered.stdout.split("\n", 2)
    assert Path(where).is_relative_to(site) and same == "True"
    assert (templates / "pages.css").read_text() in page and page.startswith("<!DOCTYPE html>")


def test_the_repositorys_ruleset_file_is_the_packaged_one():
    """One file, so that `make all` and a user outside the repository build the same rulesets."""
    assert (ROOT / "rulesets.toml").resolve() == ROOT / "pipeline" / "games" / "rulesets.toml"
    assert SETUPTOOLS["package-data"]["pipeline.games"] == ["rulesets.toml"]


def test_the_default_install_is_what_the_commands_need():
    """Spark, the browser test's driver, the tests' packages and pandas and Polars are extras
    (the default install was 1.4 GB with them); filelock and graphviz are pure Python, 2.4 MB together;
    nh3, the pages' sanitiser, one wheel of 2.4 MB without dependencies."""
    import re

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]

    def names(requirements: list[str]) -> set[str]:
        return {re.split(r"[<>=!~\[; ]", requirement)[0] for requirement in requirements}

    assert names(project["dependencies"]) == {
        "duckdb",
        "pyarrow",
        "typer",
        "numpy",
        "jinja2",
        "filelock",
        "graphviz",
        "nh3",
    }
    extras = project["optional-dependencies"]
    assert names(extras["spark"]) == {"pyspark"} and names(extras["browser"]) == {"playwright"}
    assert names(extras["data"]) == {"pandas", "polars"}
    assert names(extras["docs"]) == {"mkdocs", "mkdocs-material", "mkdocstrings"}  # tests/test_docs.py builds the site
    assert names(extras["serve"]) == {"starlette", "uvicorn"}  # tablebase serve, whose tests make test runs
    assert "playwright" not in names(extras["test"]) and "pyspark" not in names(extras["test"])


def make_dry_run(target: str) -> list[str]:
    import shutil
    import subprocess

    if shutil.which("make") is None:
        pytest.skip("make is not installed here")
    result = subprocess.run(["make", "-n", "-B", target], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert result.returncode == 0, result.stderr
    return [line for line in result.stdout.splitlines() if "pip install" in line]


def test_make_all_installs_the_light_install_and_make_test_every_extra():
    light = make_dry_run("all")
    assert not any("[" in line for line in light), light
    assert any(line.endswith("pip install --quiet -e .") for line in light), light
    assert any(".[data,test,publish,browser,spark,docs,serve]" in line for line in make_dry_run("test"))


def test_make_dist_installs_the_publish_extra_and_make_test_cffconvert_apart():
    assert any(".[publish]" in line for line in make_dry_run("dist"))
    assert any("cffconvert/bin/pip install --quiet cffconvert==" in line for line in make_dry_run("test"))


def test_make_install_hides_setuptools_note_on_editable_installs():
    editable = [line for line in make_dry_run("test") if " -e " in line]
    assert len(editable) == 3 and all(
        line.startswith('PYTHONWARNINGS="ignore:Editable installation" ') for line in editable
    ), editable


def _make_all_builds(data: Path) -> bool:
    """Whether `make all` (dry run) would run the build of every listed ruleset into `data`."""
    import subprocess

    dry = subprocess.run(
        ["make", "-n", "all", f"DATA={data}"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout
    return "tablebase build --all" in dry


def test_make_all_builds_after_a_build_by_hand_and_not_again(tmp_path):
    # a build by hand (the quick start's) writes the catalog: `make all` still builds the list
    (tmp_path / "catalog.parquet").write_bytes(b"")
    assert _make_all_builds(tmp_path)
    # once `make all` has built it (its stamp, newer than the code and the list), nothing more
    (tmp_path / ".cache").mkdir()
    (tmp_path / ".cache" / "make-all").touch()
    assert not _make_all_builds(tmp_path)


def test_mypy_hides_no_error_of_ours():
    """Every module of pipeline/ is type-checked in full: the one override lets mypy read
    third-party packages without type information, and none turns an error code off."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    for override in mypy.get("overrides", []):
        modules = override["module"] if isinstance(override["module"], list) else [override["module"]]
        assert set(override) == {"module", "ignore_missing_imports"}, override
        assert not any(module.startswith("pipeline") for module in modules), override
    assert not any(key.startswith(("disable_error_code", "ignore_errors")) for key in mypy), mypy
    assert "# type: ignore" not in "".join(path.read_text() for path in (ROOT / "pipeline").rglob("*.py"))
