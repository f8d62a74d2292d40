"""Hostile text at every argument of every command, and the files a user hands us: one
`error:` line and exit 1 or 2 (or success), never a traceback (issue 33, findings 6 to 9).

The property test runs the installed script's entry point in this process, through
tests/command.py as the other command-line tests do: a new Python for each of hundreds of
command lines would take minutes."""

from __future__ import annotations

import contextlib
import functools
import json
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest
import typer.main
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pipeline.commands import app
from tests.command import tablebase

#: The ruleset the command lines name: the smallest there is, built in a fraction of a second.
SMALL = "sticks:rows=2"
#: A position of SMALL.
POSITION = "start"


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("hostile") / "data"
    result = tablebase("build", "-q", SMALL, "--data", str(folder))
    assert result.returncode == 0, result.stderr
    return folder


def one_error_line(status: int, err: str) -> str:
    """The error line of a command that failed, checked to be the only one."""
    assert "Traceback" not in err, err
    assert status in (1, 2), (status, err)
    lines = err.strip().splitlines()
    assert lines and lines[-1].startswith("error: "), err
    assert sum(line.startswith("error:") for line in lines) == 1, err
    return lines[-1]


def run_entry(args: list[str], stdin: str = "") -> tuple[int, str, str]:
    """The entry point run in this process on `args` (tests/command.py): (exit status, stdout, stderr)."""
    result = tablebase(*args, input=stdin)
    return result.returncode, result.stdout, result.stderr


# --- every argument of every command ----------------------------------------------------------

#: A command line of each command that works (with --data added where it takes one), as
#: {parameter: value}: arguments by name, options by their flag. Each example puts a hostile
#: text in place of one value. Commands that write are pointed at files in the working folder.
WORKING = {
    "enumerate": {"rulesets": SMALL, "-q": None},
    "solve": {"rulesets": SMALL, "-q": None},
    "verify": {"rulesets": SMALL, "-q": None, "--format": "text"},
    "export": {"rulesets": SMALL, "-q": None},
    "build": {"rulesets": SMALL, "-q": None, "--engine": "duckdb"},
    "estimate": {"rulesets": SMALL, "--format": "text"},
    "probe": {"ruleset": SMALL, "position": POSITION, "--format": "text"},
    "query": {"name": "longest_lines", "--param": f"ruleset={SMALL}", "--format": "csv", "--output": "out.csv"},
    "sql": {"statement": "SELECT $p AS x", "--param": "p=1", "--format": "json", "--output": "out.json"},
    "claims": {"--out": "claims.md", "-q": None},
    "check": {"--format": "text"},
    "publish": {"--out": "bundle", "--url": "https://example.org/x", "-q": None},
    "check-game": {"name": "sticks", "ruleset": SMALL, "--format": "text"},
    "games": {"--format": "text"},
    "rulesets": {"--rulesets": "rulesets.toml", "--format": "text"},
    "play": {"ruleset": SMALL, "--as": "first", "--from": POSITION, "--max-plies": "3"},
    "draw": {"rulesets": SMALL, "--out": "pages", "--rulesets": "rulesets.toml", "-q": None},
    "version": {},
}

#: The options whose value is a path: a hostile text there is one file name in the working
#: folder, never an absolute path (the tests run as root on some machines, and `build --data /`
#: is for another test to refuse).
PATHS = {"--data", "--output", "--out", "--rulesets", "--queries"}

#: Commands whose result is a report of problems, a line each, and exit 1 where there are any.
REPORTS = {"check", "verify", "check-game"}

#: Commands slow enough (a whole bundle, every claim) to run fewer examples.
SLOW = {"publish": 4, "claims": 5, "draw": 5, "build": 6}

#: Texts a user may type that found faults before: a position or id of 100,000 characters,
#: SQL nested past what Python's stack holds, names DuckDB makes twice, bytes that are not UTF-8.
NAMED = [
    "",
    " ",
    "-",
    "--",
    "\n",
    "start",
    "sticks:",
    "sticks:rows=",
    "sticks:rows=2,rows=2",
    "sticks:rows=99999999999999999999",
    "1-1|" * 25_000,
    "a" * 100_000,
    "x" * 300 + ".sql",
    "'\"\\%s{}$(",
    "SELECT 1 AS x, 2 AS x",
    "SELECT * FROM (SELECT 1 AS a, 2 AS b) t JOIN (SELECT 1 AS a, 3 AS b) u USING (a)",
    "SELECT " + "1+(" * 400 + "1" + ")" * 400,
    "SELECT * FROM " + "(SELECT * FROM " * 500 + "range(3)" + ")" * 500,
    "SELECT * FROM 'x.duckdb'",
    "SELECT \udcff",
    "sticks:rows=\udcff",
    "\udcfe\udcff",
    "ruleset=\udcff",
    "ruleset=" + "a" * 100_000,
    "position=" + "1-1|" * 25_000,
]

#: Any text Python can hand a command from its command line: Unicode without NUL (argv
#: cannot hold one), and bytes that are not UTF-8, which Python keeps as lone surrogates.
ARGV_TEXT = st.text(st.characters(exclude_characters="\x00"), max_size=30)
NOT_UTF8 = st.builds(
    lambda before, byte, after: before + byte + after,
    ARGV_TEXT,
    st.characters(min_codepoint=0xDC80, max_codepoint=0xDCFF),
    ARGV_TEXT,
)
HOSTILE = st.one_of(ARGV_TEXT, NOT_UTF8, st.sampled_from(NAMED)).filter(
    lambda text: text.strip() not in ("--debug", "--install-completion", "--show-completion")
)


def command_line(name: str, values: dict[str, str | None], data: Path) -> list[str]:
    """The command line of `name` with `values`: arguments in their order, then options."""
    command = typer.main.get_command(app).commands[name]
    args = [name]
    for param in command.params:
        if param.param_type_name == "argument" and param.name in values:
            args.append(str(values[param.name]))
    for key, value in values.items():
        if key.startswith("-"):
            args += [key] if value is None else [key, value]
    if any("--data" in param.opts for param in command.params) and "--data" not in values:
        args += ["--data", str(data)]
    return args


def hostile_places(name: str) -> list[str]:
    """Every parameter of `name` that takes a value: its arguments by name, options by flag."""
    command = typer.main.get_command(app).commands[name]
    places = []
    for param in command.params:
        if param.param_type_name == "argument":
            places.append(param.name)
        elif not getattr(param, "is_flag", False) and not param.count:
            places.append(next(opt for opt in param.opts if opt.startswith("--")))
    return places


#: Commands that run until they are stopped (a server): no command line of theirs "works"
#: and ends, so tests/test_serve.py puts their options' mistakes to the test instead.
UNTIL_STOPPED = {"serve"}


def test_every_command_is_put_to_the_test():
    assert sorted(WORKING) == sorted(set(typer.main.get_command(app).commands) - UNTIL_STOPPED)


@pytest.mark.parametrize("name", sorted(WORKING))
def test_hostile_text_in_any_argument_gives_one_error_line_or_works(name, built, tmp_path_factory):
    folder = tmp_path_factory.mktemp(f"hostile-{name}")
    data = folder / "data"
    shutil.copytree(built, data)
    (folder / "rulesets.toml").write_text(f'[[ruleset]]\nid = "{SMALL}"\n')
    places = hostile_places(name)
    working = command_line(name, WORKING[name], data)
    with contextlib.chdir(folder):
        status, _, err = run_entry(working)
    assert status == 0, (working, err)
    if not places:
        return

    @settings(
        max_examples=SLOW.get(name, 12),  # 25 took the suite a minute and a half more
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    )
    @given(place=st.sampled_from(places), text=HOSTILE)
    def hostile(place: str, text: str) -> None:
        values = dict(WORKING[name])
        if place == "--data":
            values["--data"] = str(folder / text.replace("/", "_")) if text.strip() else text
        elif place in PATHS:
            values[place] = text.replace("/", "_")
        else:
            values[place] = text
        args = command_line(name, values, data)
        with contextlib.chdir(folder):
            status, _, err = run_entry(args, stdin="quit\n")
        if status == 1 and name in REPORTS and "error:" not in err:  # the problems found, a line each
            assert "Traceback" not in err and all(len(line) <= 2_200 for line in err.splitlines()), err[:300]
        elif status:
            line = one_error_line(status, err)
            assert len(line) <= 2_200, line[:300]
        else:
            assert "Traceback" not in err, err

    hostile()


# --- the files a user hands us ------------------------------------------------------------------


def test_a_query_file_that_is_not_utf8_is_refused_in_one_line(built, tmp_path):
    query = tmp_path / "mine.sql"
    query.write_bytes(b"-- mine\nSELECT '\xff\xfe' AS x\n")
    for args in (["query", str(query)], ["query", "--list", "--queries", str(tmp_path)]):
        status, _, err = run_entry([*args, "--data", str(built)])
        line = one_error_line(status, err)
        assert line == f"error: query file {query} is not UTF-8 text (byte 16: b'\\xff'): save it as UTF-8", line


def test_a_query_file_with_a_byte_order_mark_runs(built, tmp_path):
    query = tmp_path / "mine.sql"
    query.write_bytes("\ufeffSELECT 42 AS answer\n".encode())
    status, out, err = run_entry(["query", str(query), "--format", "csv", "--data", str(built)])
    assert status == 0 and out == '"answer"\n42\n', err


@pytest.mark.parametrize(
    "args, what",
    [
        (["sql", "SELECT '\udcff'"], "argument 2 (\"SELECT '\\udcff'\")"),
        (["sql", "SELECT $p", "-p", "p=\udcff"], "the value of -p"),
        (["query", "longest_lines", "--param", "ruleset=\udcff"], "the value of --param"),
        (["query", "\udcff.sql"], "argument 2 ('\\udcff.sql')"),
        (["build", "sticks:rows=2", "--data", "/tmp/\udcff"], "the value of --data"),
        (["publish", "--out", "bundle", "--url", "https://\udcff"], "the value of --url"),
    ],
)
def test_an_argument_that_is_not_utf8_is_refused_in_one_line_before_the_command_runs(tmp_path, args, what):
    status, _, err = run_entry(args)
    line = one_error_line(status, err)
    assert status == 2 and line.startswith(f"error: {what} is not UTF-8 text (byte 0xff at character"), line
    assert line.endswith("write it in UTF-8, as the terminal's locale should"), line


def test_a_rulesets_file_that_is_not_utf8_is_refused_in_one_line(tmp_path):
    path = tmp_path / "rulesets.toml"
    path.write_bytes(b'[[ruleset]]\nid = "\xff"\n')
    status, _, err = run_entry(["rulesets", "--rulesets", str(path)])
    assert one_error_line(status, err) == f"error: ruleset file {path} is not UTF-8 text (byte 18: b'\\xff')"


# --- positions of any length --------------------------------------------------------------------


@pytest.mark.parametrize(
    "args",
    [
        ["probe", "sticks:rows=2", "1-1|" * 25_000],
        ["probe", "chopsticks", " " + "1-1|" * 25_000],
        ["probe", "nim", "9 " * 50_000],
        ["probe", "tictactoe", "x" * 100_000],
        ["probe", "connect", "x." * 50_000],
        ["probe", "hackenbush", "1-2," * 25_000],
        ["probe", "dobutsu", "k" * 100_000],
        ["query", "principal_variation", "-p", "ruleset=sticks:rows=2", "-p", "position=" + "1" * 100_000],
        ["play", "sticks:rows=2", "--from", "1|" * 50_000],
        ["sql", "SELECT 1 FROM " + "a" * 100_000],
        ["sql", "SELECT 1", "--output", "/tmp/" + "a" * 100_000],
        ["query", "a" * 100_000 + ".sql"],
    ],
    ids=lambda args: " ".join(arg[:20] for arg in args[:2]),
)
def test_an_error_quotes_at_most_a_line_of_what_was_typed(built, args):
    status, _, err = run_entry([*args, "--data", str(built)])
    line = one_error_line(status, err)
    assert len(line) < 600, line[:600]


def test_a_line_break_or_escape_in_what_was_typed_stays_on_the_error_line(tmp_path):
    status, _, err = run_entry(["probe", SMALL, "start", "--data", str(tmp_path / "two\nlines\x1b[2J")])
    line = one_error_line(status, err)
    assert "two\\nlines\\x1b[2J" in line and "\x1b" not in line, line


# --- output never loses a column ----------------------------------------------------------------


TWICE = [
    "SELECT 1 AS x, 2 AS x, 3 AS X, 4 AS x_1",
    "SELECT * FROM (SELECT 1 AS a, 2 AS b) t JOIN (SELECT 1 AS a, 3 AS b) u ON t.a = u.a",
]


@pytest.mark.parametrize("sql", TWICE, ids=["aliases", "join"])
@pytest.mark.parametrize("form", ["table", "csv", "json", "jsonl", "parquet"])
def test_columns_of_one_name_are_named_apart_as_duckdb_names_them_in_every_format(built, tmp_path, sql, form):
    out_file = tmp_path / "out.parquet"
    output = ["--output", str(out_file)] if form == "parquet" else []
    status, out, err = run_entry(["sql", sql, "--format", form, *output, "--data", str(built)])
    assert status == 0, err
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS {sql}")
    names = [row[0] for row in con.execute("SELECT name FROM pragma_table_info('t')").fetchall()]
    values = list(con.execute("SELECT * FROM t").fetchall()[0])
    if form == "parquet":
        table = pq.read_table(out_file)
        assert table.column_names == names and list(table.to_pylist()[0].values()) == values
    elif form in ("json", "jsonl"):
        row = json.loads(out)[0] if form == "json" else json.loads(out.splitlines()[0])
        assert list(row) == names and list(row.values()) == values
    else:
        separator = "," if form == "csv" else None
        header, first = out.splitlines()[:2]
        assert [name.strip('"') for name in header.split(separator)] == names
        assert [int(value) for value in first.split(separator)] == values


@functools.cache
def _names_database() -> duckdb.DuckDBPyConnection:
    """One in-memory database for every example: a connection each made 200 examples take 10 s, not 1.3."""
    return duckdb.connect()


@settings(max_examples=200, deadline=None)
@given(st.lists(st.sampled_from(["x", "X", "x_1", "X_1", "x_2", "y", "É", "é", "x_1_1"]), min_size=1, max_size=8))
def test_unique_names_are_the_names_duckdb_gives_a_table(names):
    from pipeline.storage.output import unique_names

    con = _names_database()
    columns = ", ".join(f'{index} AS "{name}"' for index, name in enumerate(names))
    con.execute(f"CREATE OR REPLACE TABLE t AS SELECT {columns}")
    assert unique_names(names) == [row[0] for row in con.execute("SELECT name FROM pragma_table_info('t')").fetchall()]


# --- the sandbox keeps its word -----------------------------------------------------------------


@pytest.mark.parametrize(
    "reference",
    [
        "'{folder}/secret.duckdb'",
        "'{folder}/secret.DB'",
        "'{folder}/secret.ddb'",
        "'{folder}/secr*.duckdb'",
        "'{folder}/secret.duckdb?'",
        '"{folder}/secret".duckdb',
    ],
)
@pytest.mark.parametrize("statement", ["SELECT * FROM {reference}", "DESCRIBE {reference}", "SUMMARIZE {reference}"])
def test_read_files_reads_no_database_file_however_it_is_named(built, tmp_path, reference, statement):
    with duckdb.connect(str(tmp_path / "secret.duckdb")) as con:
        con.execute("CREATE TABLE t AS SELECT 'hidden' AS secret")
    for name in ("secret.DB", "secret.ddb"):
        shutil.copy(tmp_path / "secret.duckdb", tmp_path / name)
    sql = statement.format(reference=reference.format(folder=tmp_path))
    status, out, err = run_entry(["sql", sql, "--read-files", "--data", str(built)])
    line = one_error_line(status, err)
    assert "hidden" not in out and "secret" not in out
    assert line.startswith("error: --read-files reads no database file, and DuckDB reads ") and "--allow-writes" in line


@pytest.mark.parametrize(
    "sql",
    [
        "SELECT " + "1+(" * 400 + "1" + ")" * 400,
        "SELECT * FROM " + "(SELECT * FROM " * 999 + "range(3)" + ")" * 999,
        "SELECT * FROM read_csv(" + "[" * 990 + "'a.csv'" + "]" * 990 + ")",
    ],
    ids=["expression", "subqueries", "lists"],
)
@pytest.mark.parametrize("flag", ["--read-files", None])
def test_sql_nested_as_deep_as_duckdb_parses_is_read_without_a_traceback(built, sql, flag):
    status, out, err = run_entry(["sql", sql, *filter(None, [flag]), "--format", "csv", "--data", str(built)])
    assert "Traceback" not in err and "RecursionError" not in err, err[-500:]
    if status:
        one_error_line(status, err)  # the list of lists names a file that is not there
    else:
        assert out.splitlines()[1:] in (["401"], ["0", "1", "2"]), out


def test_the_parse_tree_walk_reads_deep_json_as_json_loads_does():
    from pipeline.products.query import _deep_json

    con = duckdb.connect()
    for sql in (
        "SELECT * FROM read_csv(['a', 'b\"\\x'], header = true) WHERE x = 'é:,]}' AND y = -1.5e3 AND z IS NULL",
        "WITH a AS (SELECT {'k': [1, 2, {'z': []}]} AS s) SELECT * FROM a",
        "SELECT " + "1+(" * 300 + "1" + ")" * 300,
    ):
        text = con.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchall()[0][0]
        assert _deep_json(text) == json.loads(text), sql


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner),
    max_leaves=40,
)


@settings(max_examples=300, deadline=None)
@given(JSON, st.booleans())
def test_the_deep_json_reader_reads_any_json_as_json_loads_does(value, ascii_only):
    from pipeline.products.query import _deep_json

    text = json.dumps(value, ensure_ascii=ascii_only, indent=None if ascii_only else 1)
    assert _deep_json(text) == json.loads(text)


def test_read_files_still_reads_a_csv_named_like_no_database(built, tmp_path):
    (tmp_path / "notes.dbx.csv").write_text("a\n1\n")
    status, out, err = run_entry(
        ["sql", f"SELECT * FROM '{tmp_path}/notes.dbx.csv'", "--read-files", "-f", "csv", "--data", str(built)]
    )
    assert status == 0 and out == '"a"\n1\n', err


# --- typos are loud -----------------------------------------------------------------------------


@pytest.mark.parametrize(
    "text, said",
    [
        ('[[rulesets]]\nid = "nim"\n', "unknown table [[rulesets]] (did you mean [[ruleset]]?)"),
        ("[a]\nb = 1\n", "unknown table [a]: write each ruleset as a [[ruleset]] table"),
        ('x = 3\n[[ruleset]]\nid = "nim"\n', "unknown key 'x': write each ruleset as a [[ruleset]] table"),
        ('[[ruleset]]\nidd = "nim"\n', "ruleset 1 has an unknown key 'idd' (did you mean id?)"),
        ('[[ruleset]]\nid = "nim"\n[[ruleset]]\nid = "nim:heaps=2"\ncoment = "x"\n', "ruleset 2 has an unknown key"),
        ('[[ruleset]]\ncomment = "x"\n', "a [[ruleset]] table has no id"),
    ],
)
@pytest.mark.parametrize("command", [["rulesets"], ["build", "--all", "--data", "data"]])
def test_a_typo_in_a_rulesets_file_names_the_mistake_and_what_was_meant(tmp_path, monkeypatch, text, said, command):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "rulesets.toml"
    path.write_text(text)
    status, _, err = run_entry([*command, "--rulesets", str(path)])
    line = one_error_line(status, err)
    assert line.startswith(f"error: ruleset file {path}: ") and said in line, line
    assert not (tmp_path / "data").exists()


def test_build_all_of_a_rulesets_file_naming_none_says_so_not_use_all(tmp_path):
    path = tmp_path / "rulesets.toml"
    path.write_text("# every ruleset commented out\n# [[ruleset]]\n# id = 'nim'\n")
    status, _, err = run_entry(["build", "--all", "--rulesets", str(path), "--data", str(tmp_path / "data")])
    line = one_error_line(status, err)
    assert "use --all" not in line and line == (
        f'error: --all builds the rulesets of {path}, and it names none: add a [[ruleset]] table with id = "game:key=value,…"'
    )
    status, out, err = run_entry(["rulesets", "--rulesets", str(path)])
    assert status == 0 and out == "" and err.startswith("note: tablebase rulesets lists the rulesets of"), err
