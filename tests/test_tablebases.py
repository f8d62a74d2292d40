"""The library's face, pipeline.Tablebases: its docstring's examples run (a real build into a
fresh folder), and every method raises only TablebaseError subclasses for what the command
line would explain in one line, in the same words."""

from __future__ import annotations

import doctest
import errno
import inspect
import re
import shutil

import duckdb
import pyarrow as pa
import pytest

import pipeline
import pipeline.tablebases
from pipeline.core import errors
from pipeline.core.explain import as_error
from pipeline.tablebases import Tablebases


def test_the_docstrings_examples_run(tmp_path):
    """The module's examples, run as doctests against a data folder they build themselves."""
    result = doctest.testmod(
        pipeline.tablebases,
        globs={"folder": tmp_path / "data"},
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        raise_on_error=False,
        verbose=False,
    )
    assert result.attempted >= 10
    assert result.failed == 0


def test_the_package_offers_the_face_and_its_error():
    assert pipeline.Tablebases is Tablebases
    assert pipeline.TablebaseError is errors.TablebaseError
    with pytest.raises(AttributeError, match="no attribute 'nothing'"):
        pipeline.nothing  # noqa: B018 - the attribute is what is tested


PUBLIC = [name for name, member in vars(Tablebases).items() if not name.startswith("_") and callable(member)]


@pytest.mark.parametrize("name", PUBLIC)
def test_every_method_is_explained(name):
    """Each method goes through the one mapping of foreign errors (a method added without it
    would let a DuckDB or Arrow error out as it is)."""
    member = inspect.getattr_static(Tablebases, name)
    function = member.__func__ if isinstance(member, staticmethod) else member
    assert getattr(function, "__wrapped__", None) is not None, f"Tablebases.{name} is not wrapped by _explained"


@pytest.mark.parametrize(
    ("raised", "kind", "words"),
    [
        (duckdb.IOException("IO Error: Cannot open file x.parquet"), errors.DataError, "Cannot open file x.parquet"),
        (pa.ArrowInvalid("Parquet magic bytes not found"), errors.DataError, "a data file is not as this version"),
        (FileNotFoundError(errno.ENOENT, "No such file or directory", "t.parquet"), errors.DataError, "t.parquet"),
        (OSError(errno.ENOSPC, "No space left on device", "out.parquet"), errors.OutputError, "free some and run it"),
        (MemoryError(), errors.OutOfMemory, "out of memory"),
        (duckdb.OutOfMemoryException("Out of Memory Error"), errors.OutOfMemory, "TABLEBASE_MEMORY_LIMIT"),
    ],
)
def test_foreign_errors_become_tablebase_errors_in_the_command_lines_words(monkeypatch, tmp_path, raised, kind, words):
    def fails(*args, **kwargs):
        raise raised

    monkeypatch.setattr("pipeline.products.probe.probe", fails)
    with pytest.raises(kind, match=words) as caught:
        Tablebases(tmp_path).probe("chopsticks", "start")
    assert caught.value.__cause__ is raised


def test_our_errors_an_interrupt_and_our_bugs_pass_unchanged(monkeypatch, tmp_path):
    """A TablebaseError is raised as it is; DuckDB's interrupt (Ctrl-C inside a query) and an
    error nobody explains (a bug) are not dressed as a user's mistake."""
    mine = errors.PositionError("no such position")
    assert as_error(mine) is mine
    for raised in (duckdb.InterruptException("INTERRUPT Error: Interrupted!"), ZeroDivisionError("bug")):
        assert as_error(raised) is raised

        def fails(*args, raised=raised, **kwargs):
            raise raised

        monkeypatch.setattr("pipeline.products.probe.probe", fails)
        with pytest.raises(type(raised)):
            Tablebases(tmp_path).probe("chopsticks", "start")


def test_a_users_mistakes_raise_the_documented_errors(tmp_path, built):
    tables = Tablebases(built)
    with pytest.raises(errors.RulesetError, match="unknown game"):
        tables.probe("no-such-game", "start")
    with pytest.raises(errors.DataError, match="does not exist"):
        Tablebases(tmp_path / "none").check()
    with pytest.raises(errors.TablebaseError, match="syntax error"):
        tables.sql("SELEC 1")
    with pytest.raises(errors.OutputError, match="is not a folder"):
        (tmp_path / "file").write_text("")
        tables.publish(tmp_path / "file")


def test_a_flipped_byte_is_a_data_error(tmp_path):
    """Probe, SQL and the catalog read only files that match their checksums."""
    tables = Tablebases(tmp_path / "data")
    tables.build("sticks:rows=2")
    path = tables.data / tables.catalog()[0].transitions_path
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 0xFF
    path.write_bytes(bytes(raw))
    for read in (lambda: tables.probe("sticks:rows=2", "start"), lambda: tables.sql("SELECT 1"), tables.catalog):
        with pytest.raises(errors.DataError, match="transitions"):
            read()
    assert any("transitions" in problem for problem in tables.check())


def python_blocks() -> list[tuple[str, str]]:
    """Every ```python block of the README and the documentation's pages that starts by
    importing from the package, by page."""
    from tests.documentation import name, pages

    found = []
    for page in pages():
        for block in re.findall(r"```python\n(from pipeline.*?)```", page.read_text(), flags=re.S):
            found.append((name(page), block))
    return found


@pytest.mark.parametrize(("page", "block"), python_blocks(), ids=[page for page, _ in python_blocks()])
def test_the_documentations_python_runs(built, tmp_path, monkeypatch, page, block):
    """Each such block runs, line by line, in a folder whose `data` is a copy of the shared
    test data (a block may build into it)."""
    shutil.copytree(built, tmp_path / "data", symlinks=True)
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(block, names)


def test_a_file_of_another_versions_schema_says_which_and_how_to_mend_it(tmp_path, monkeypatch):
    """A ruleset built before a column was added (0.14.0's winning_moves) fails check with
    the version that wrote it and the command that rebuilds it, not a bare 'not documented'."""
    import pipeline.core.dataset as dataset
    import pipeline.datadir.check as checks

    tables = Tablebases(tmp_path / "data")
    tables.build("sticks:rows=2")
    documented = dataset.documented_schema  # check imports it where it checks (not with the module)
    monkeypatch.setattr(
        dataset, "documented_schema", lambda kind, schema: documented(kind, schema).append(pa.field("later", pa.int8()))
    )
    monkeypatch.setattr(checks, "__version__", "99.0.0")
    problems = tables.check()
    said = f"(written by tablebase {pipeline.__version__}; this is 99.0.0): rebuild it with `tablebase build sticks:rows=2`"
    assert problems and all(said in problem for problem in problems if "schema" in problem)
    assert any("tablebase.parquet: its schema is not the documented one" in problem for problem in problems)
