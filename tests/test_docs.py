"""The documentation site builds without a warning (`mkdocs build --strict`, as `make docs`),
and its generated reference covers every command, option, query and game: those pages are
written from the code as the site builds (docs/hooks/generated.py), so they cannot drift."""

from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys

import pytest

from tests.documentation import ROOT

# The hook is a file of the site's (mkdocs.yml loads it by path), not a module of a package.
_spec = importlib.util.spec_from_file_location("generated", ROOT / "docs" / "hooks" / "generated.py")
assert _spec is not None and _spec.loader is not None
generated = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(generated)


def test_the_site_builds_strict(tmp_path):
    if importlib.util.find_spec("mkdocs") is None:
        pytest.skip("MkDocs is not installed: the docs extra (`make dev`, or pip install -e '.[docs]') brings it")
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}  # Material's notice of its end of life, on every build
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "site")],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    cli = (tmp_path / "site" / "reference" / "cli.html").read_text()
    assert "tablebase build" in cli and "generated:" not in cli
    assert "probe" in (tmp_path / "site" / "reference" / "python.html").read_text()


def test_every_page_is_in_the_nav():
    """A page left out of mkdocs.yml's nav is built but found by no reader (and not run by test_readme)."""
    nav = set(re.findall(r"^\s*- [^:\n]+: (\S+\.md)\s*$", (ROOT / "mkdocs.yml").read_text(), flags=re.M))
    pages = {str(page.relative_to(ROOT / "docs")) for page in (ROOT / "docs").rglob("*.md")}
    assert pages == nav


def test_the_cli_reference_has_every_command_and_option():
    import typer.main

    from pipeline.commands import app

    page = generated.cli()
    group = typer.main.get_command(app)
    for name, command in group.commands.items():
        assert f"### `tablebase {name}`" in page
        for param in command.params:
            for opt in param.opts if param.param_type_name == "option" else ():
                assert opt in page, f"tablebase {name} {opt}"


def test_the_query_reference_has_every_packaged_query():
    page = generated.queries()
    for path in (ROOT / "queries").glob("*.sql"):
        assert f"### `{path.stem}`" in page


def test_the_schema_and_games_references_come_from_their_declarations():
    from pipeline.core.dataset import CATALOG, RULESET_FILES
    from pipeline.games import all_games

    schema = generated.schema()
    for kind in (CATALOG, *RULESET_FILES[:-1]):  # the summary has the catalog's columns
        for column in kind.columns:
            assert f"| `{column.name}` |" in schema, f"{kind.name}.{column.name}"
    games = generated.games()
    for game in all_games().values():
        if type(game).__module__.startswith("pipeline."):
            assert all(f"| `{param.name}` |" in games for param in game.params), game.name
