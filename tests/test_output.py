"""Query results as text: every format holds the rows, JSON parses as one array, values JSON
has no word for become valid JSON; output goes to files, devices, FIFOs, symlinks and
standard output as a user expects, every write checked."""

from __future__ import annotations

import json
import logging
import os
import signal
import stat
import subprocess
import sys
from pathlib import Path
from typing import IO

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import OutputError, TablebaseError
from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.storage.output import Format, blob_text, interval_text, render
from pipeline.storage.parquet import table_bytes, write_table
from tests.command import forked

ROWS = [
    {"ruleset": "chopsticks", "plies": 8, "grundy": None, "moves": ["1-1", "0-2"]},
    {"ruleset": "nim:heaps=1-2-3", "plies": 6, "grundy": 0, "moves": []},
]
TABLE = pa.Table.from_pylist(ROWS)


def test_json_is_one_array_of_the_rows():
    text = render(TABLE, Format.json)
    assert json.loads(text) == ROWS
    assert text.splitlines()[0] == "[" and len(text.splitlines()) == len(ROWS) + 2  # an object a line


def test_json_of_no_rows_is_an_empty_array():
    assert render(TABLE.slice(0, 0), "json") == "[]\n"
    assert json.loads(render(TABLE.slice(0, 0), "json")) == []


def test_jsonl_is_one_object_per_line():
    lines = render(TABLE, Format.jsonl).splitlines()
    assert [json.loads(line) for line in lines] == ROWS
    assert render(TABLE.slice(0, 0), Format.jsonl) == ""


def test_maps_become_objects():
    table = pa.table({"m": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int64()))})
    assert json.loads(render(table, Format.json)) == [{"m": {"a": 1}}]


@pytest.mark.parametrize("form", ["xml", "parquet"])
def test_unknown_and_binary_formats_are_refused(form):
    with pytest.raises(TablebaseError, match=form):
        render(TABLE, form)


# --- plain results, written from DuckDB's rows without Arrow --------------------------------

#: Every plain type (output.PLAIN_TYPES) with the values that could tell two writers apart.
PLAIN = """
    SELECT * FROM (VALUES
        (true, 1::TINYINT, -2::SMALLINT, 3::INTEGER, '-9223372036854775808'::BIGINT, 255::UTINYINT,
         65535::USMALLINT, 4294967295::UINTEGER, 18446744073709551615::UBIGINT, 0.1::FLOAT, 0.1::DOUBLE,
         'plain'),
        (false, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, 'nan'::FLOAT, 'inf'::DOUBLE,
         'quote " comma , line
break
	tab'),
        (NULL, 0, 0, 0, 0, 0, 0, 0, 0, '-inf'::FLOAT, -0.0::DOUBLE, ''),
        (true, 1, 1, 1, 1, 1, 1, 1, 1, 1e30::FLOAT, 'nan'::DOUBLE, NULL),
        (false, 2, 2, 2, 2, 2, 2, 2, 2, 3.5::FLOAT, 1e300, 'ünï "cödé" ✓ \x01')
    ) AS v("bool", "tiny", "small", "int", "big", "utiny", "usmall", "uint", "ubig", "float", "double", "text")
"""


@pytest.mark.parametrize("form", ["table", "csv", "json", "jsonl"])
@pytest.mark.parametrize(
    "sql",
    [
        PLAIN,
        f"SELECT text, int FROM ({PLAIN})",  # CSV without floats: from DuckDB's rows too
        "SELECT 1 AS x, 2 AS X, 3 AS x_1, 4 AS x",  # names DuckDB's CSV and Parquet would rename
        f"SELECT * FROM ({PLAIN}) WHERE false",  # no row
        "SELECT [1, 2] AS list, 'a' AS text, [['x', NULL], NULL] AS lists, [0.1::DOUBLE, 'nan'::DOUBLE, 1e300] AS floats, NULL::INT[] AS none",
        "SELECT {'a': 1} AS struct, MAP {'k': 2} AS map, [1, 2]::INT[2] AS array",  # not plain: through Arrow
        "SELECT 170141183460469231731687303715884105727::HUGEINT AS huge",  # Arrow gives a Decimal
    ],
)
def test_a_result_written_from_duckdbs_rows_is_what_arrow_writes(sql, form):
    """`rendered` writes a result of plain columns from DuckDB's rows, without loading pyarrow:
    every format must be byte for byte what `render` writes from the Arrow table."""
    from pipeline.storage.output import rendered

    con = duckdb.connect()
    assert rendered(con.sql(sql), form) == render(con.sql(sql).to_arrow_table(), form)


def test_lists_nested_past_the_plain_depth_go_through_arrow():
    """Python's recursion through a list 500 deep ended `tablebase sql` in a traceback where
    Arrow refuses it in one line: such a list is not plain, and is Arrow's to write or refuse."""
    from pipeline.storage.output import PLAIN_DEPTH, plain, rendered

    assert plain("VARCHAR" + "[]" * PLAIN_DEPTH) and not plain("VARCHAR" + "[]" * (PLAIN_DEPTH + 1))
    con = duckdb.connect()
    deep = f"SELECT {'[' * (PLAIN_DEPTH + 4)}1{']' * (PLAIN_DEPTH + 4)} AS x"
    assert rendered(con.sql(deep), "json") == render(con.sql(deep).to_arrow_table(), "json")
    deepest = f"SELECT {'[' * 100}1{']' * 100} AS x"  # Arrow refuses past about 64 levels
    with pytest.raises(pa.ArrowException):
        rendered(con.sql(deepest), "jsonl")


def test_plain_types_are_the_types_duckdb_names():
    """A type name misspelt in PLAIN_TYPES would send every such result through Arrow unseen."""
    from pipeline.storage.output import PLAIN_TYPES

    con = duckdb.connect()
    assert {str(t) for t in con.sql(PLAIN).types} == PLAIN_TYPES
    assert [str(t) for t in con.sql("SELECT ['a'] AS a, [[1.5]] AS b").types] == ["VARCHAR[]", "DECIMAL(2,1)[][]"]


# --- values JSON and CSV have no word for -------------------------------------------------


def strict_json(text: str) -> object:
    """`text` parsed as JSON is (RFC 8259): NaN and Infinity, which Python's json accepts, refused."""

    def refuse(word: str) -> None:
        raise ValueError(f"{word} is not JSON")

    return json.loads(text, parse_constant=refuse)


@pytest.fixture(scope="module")
def odd() -> pa.Table:
    """One row of values JSON or CSV have no word for, as DuckDB gives them."""
    return (
        duckdb.connect()
        .sql("""
    SELECT 'nan'::DOUBLE AS nan, 'inf'::DOUBLE AS inf, '-inf'::FLOAT AS minus_inf,
           {'x': 'nan'::DOUBLE, 'l': ['inf'::DOUBLE, 1.5]} AS nested,
           MAP {1: 'one'} AS int_keys, MAP {{'a': 1}: 'struct key'} AS struct_keys,
           [MAP {1.5: 'inf'::DOUBLE}] AS list_of_maps,
           'a\\x00b'::BLOB AS blob, '101'::BIT AS bit, 1.50::DECIMAL(4, 2) AS decimal,
           170141183460469231731687303715884105727::HUGEINT AS huge,
           DATE '2024-01-02' AS date, TIMESTAMP '2024-01-02 03:04:05.5' AS timestamp,
           TIMESTAMPTZ '2024-01-02 03:04:05+00' AS timestamptz, TIME '03:04:05' AS time,
           '2024-01-01 00:00:00.123456789'::TIMESTAMP_NS AS nanoseconds,
           [TIMESTAMP '2024-01-02 03:04:05'] AS timestamps,
           INTERVAL '14 months 2 days 3.5 seconds' AS interval,
           '0c1cfbe4-76a3-48f0-ab18-b60d526ceadb'::UUID AS uuid,
           union_value(n := 'nan'::DOUBLE) AS union_nan
    """)
        .to_arrow_table()
    )


@pytest.mark.parametrize("form", ["json", "jsonl"])
def test_json_writes_nan_and_infinities_as_null(odd, form):
    text = render(odd, form)
    row = strict_json(text)[0] if form == "json" else strict_json(text.splitlines()[0])
    assert row["nan"] is None and row["inf"] is None and row["minus_inf"] is None and row["union_nan"] is None
    assert row["nested"] == {"x": None, "l": [None, 1.5]}
    assert row["list_of_maps"] == [{"1.5": None}]


def test_json_holds_every_duckdb_type_as_valid_json(odd):
    row = strict_json(render(odd, "json"))[0]
    assert row["int_keys"] == {"1": "one"} and row["struct_keys"] == {'{"a": 1}': "struct key"}
    assert row["blob"] == "a\\x00b"  # as DuckDB writes a BLOB, and reads it back with ::BLOB
    assert row["decimal"] == "1.50" and row["huge"] == "170141183460469231731687303715884105727"  # exact
    assert row["date"] == "2024-01-02" and row["timestamp"] == "2024-01-02 03:04:05.500000"
    assert row["nanoseconds"] == "2024-01-01 00:00:00.123456789" and row["timestamps"] == ["2024-01-02 03:04:05.000000"]
    assert row["interval"] == "1 year 2 months 2 days 00:00:03.5"
    assert row["uuid"] == "0c1cfbe4-76a3-48f0-ab18-b60d526ceadb"
    assert set(row) == set(odd.column_names)


def test_csv_and_table_write_blobs_intervals_and_nanoseconds_as_text(odd):
    csv = render(odd, "csv")
    _header, line = csv.splitlines()
    assert "a\\x00b" in line and "\\x05\\xFD" in line and "1 year 2 months 2 days 00:00:03.5" in line
    assert "2024-01-01 00:00:00.123456789" in line
    assert '"{""x"": null, ""l"": [null, 1.5]}"' in line  # nested columns as valid JSON text
    table = render(odd, "table")
    assert "a\\x00b" in table and "1 year 2 months 2 days 00:00:03.5" in table
    assert "2024-01-01 00:00:00.123456789" in table


def test_blobs_and_intervals_read_as_duckdb_writes_them():
    con = duckdb.connect()
    every_byte = bytes(range(256))
    assert blob_text(every_byte) == con.execute("SELECT ?::BLOB::VARCHAR", [every_byte]).fetchall()[0][0]
    for interval in [
        "0 seconds",
        "1 month",
        "-1 month",
        "14 months",
        "-14 months -1 second",
        "1 day",
        "-2 days",
        "30 hours",
        "-3.25 seconds",
        "1 month -1 day 1 microsecond",
        "12 months 1 day 1 hour 2 minutes 3.000004 seconds",
        "-100000 hours",
    ]:
        value = con.sql(f"SELECT INTERVAL '{interval}' AS i").to_arrow_table()["i"][0].as_py()
        expected = con.sql(f"SELECT INTERVAL '{interval}'::VARCHAR").fetchall()[0][0]
        assert interval_text(value.months, value.days, value.nanoseconds) == expected, interval


@pytest.mark.parametrize("column", ["union_value(a := 1)", "INTERVAL '1 day'"])
def test_parquet_names_a_column_it_cannot_hold(column):
    table = duckdb.connect().sql(f"SELECT 1 AS fine, {column} AS odd").to_arrow_table()
    with pytest.raises(OutputError, match=r"column 'odd' .* Parquet cannot hold"):
        table_bytes(table)


def test_parquet_bytes_are_what_write_table_writes(tmp_path):
    write_table(TABLE, tmp_path / "t.parquet")
    assert bytes(table_bytes(TABLE)) == (tmp_path / "t.parquet").read_bytes()


# --- where the output goes -----------------------------------------------------------------

NULL, FULL = (1, 3), (1, 7)  # the major and minor numbers of /dev/null and /dev/full


def tablebase(*args: str, stdout: IO | None = None) -> subprocess.CompletedProcess:
    """The command in a process of its own (forked with the libraries loaded), its standard
    output `stdout` if given."""
    return forked(*args, stdout=stdout, timeout=120)


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """A data folder with one small ruleset built."""
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    folder = tmp_path_factory.mktemp("output")
    build(Ruleset.parse("sticks:rows=2"), DataDir(folder))
    return folder


def device(path: Path, numbers: tuple[int, int]) -> Path:
    """A character device like /dev/null or /dev/full, made under the test's own folder."""
    if os.geteuid() != 0:
        pytest.skip("making a device node (mknod) needs root")
    os.mknod(path, 0o666 | stat.S_IFCHR, os.makedev(*numbers))
    return path


def one_error_line(result: subprocess.CompletedProcess) -> str:
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_output_to_a_device_writes_to_it_and_leaves_it_a_device(data, tmp_path, form):
    null = device(tmp_path / "null", NULL)
    result = tablebase("sql", "SELECT 1 AS a", "--data", str(data), "--output", str(null), "--format", form)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISCHR(null.lstat().st_mode) and null.lstat().st_rdev == os.makedev(*NULL)


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_output_to_a_full_device_is_one_line_and_leaves_it_a_device(data, tmp_path, form):
    full = device(tmp_path / "full", FULL)
    result = tablebase("sql", "SELECT 1 AS a", "--data", str(data), "--output", str(full), "--format", form)
    assert one_error_line(result) == f"error: cannot write {full}: No space left on device"
    assert stat.S_ISCHR(full.lstat().st_mode) and full.lstat().st_rdev == os.makedev(*FULL)


@pytest.mark.parametrize("form", ["csv", "parquet"])
def test_output_to_a_fifo_gives_its_reader_every_byte(data, tmp_path, form):
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    # The test is the reader, opened for writing too so that nothing here waits on the
    # command, whatever it does to the FIFO; the result is far smaller than a pipe holds.
    reader = os.open(fifo, os.O_RDWR | os.O_NONBLOCK)
    try:
        result = tablebase("sql", "SELECT 7 AS a", "--data", str(data), "--output", str(fifo), "--format", form)
        got = b""
        while True:
            try:
                got += os.read(reader, 1 << 16)
            except BlockingIOError:
                break
    finally:
        os.close(reader)
    assert result.returncode == 0, result.stderr
    assert stat.S_ISFIFO(fifo.lstat().st_mode)
    if form == "csv":
        assert got == b'"a"\n7\n'
    else:
        assert pq.read_table(pa.BufferReader(got)).to_pylist() == [{"a": 7}]


def test_output_through_a_symlink_writes_its_target(data, tmp_path):
    (tmp_path / "target.csv").write_text("old\n")
    link = tmp_path / "link.csv"
    link.symlink_to("target.csv")
    dangling = tmp_path / "dangling.csv"
    dangling.symlink_to("made.csv")
    for path in (link, dangling):
        result = tablebase("sql", "SELECT 1 AS a", "--data", str(data), "--output", str(path), "--format", "csv")
        assert result.returncode == 0, result.stderr
        assert path.is_symlink()
    assert (tmp_path / "target.csv").read_text() == (tmp_path / "made.csv").read_text() == '"a"\n1\n'


def test_output_keeps_the_permissions_of_the_file_it_replaces(data, tmp_path):
    target = tmp_path / "private.csv"
    target.write_text("old\n")
    target.chmod(0o600)
    result = tablebase("sql", "SELECT 1 AS a", "--data", str(data), "--output", str(target), "--format", "csv")
    assert result.returncode == 0, result.stderr
    assert target.read_text() == '"a"\n1\n' and stat.S_IMODE(target.stat().st_mode) == 0o600


def test_output_naming_a_descriptor_writes_to_the_one_the_shell_opened(data, tmp_path):
    """`-o /dev/fd/1 >> log` adds to the log: replacing the file would drop what it held.
    (/dev/fd/1, not /dev/stdout: a regression here, run as root, must not replace the
    system's /dev/stdout with a file, as the code before this test did.)"""
    log = tmp_path / "log"
    log.write_text("before\n")
    with open(log, "a") as appended:
        result = tablebase(
            "sql", "SELECT 1 AS a", "--data", str(data), "--output", "/dev/fd/1", "--format", "csv", stdout=appended
        )
    assert result.returncode == 0, result.stderr
    assert log.read_text() == 'before\n"a"\n1\n'


def test_output_through_a_symlink_into_the_data_folder_is_refused(data, tmp_path):
    link = tmp_path / "catalog.parquet"
    link.symlink_to(data / "catalog.parquet")
    before = (data / "catalog.parquet").read_bytes()
    result = tablebase("sql", "SELECT 1", "--data", str(data), "--output", str(link), "--format", "parquet")
    assert "inside the data folder" in one_error_line(result)
    assert link.is_symlink() and (data / "catalog.parquet").read_bytes() == before


@pytest.mark.parametrize("kind", ["symlink loop", "folder"])
def test_output_that_cannot_be_a_file_is_one_line(data, tmp_path, kind):
    path = tmp_path / "odd"
    if kind == "folder":
        path.mkdir()
    else:
        path.symlink_to("odd")
    result = tablebase("sql", "SELECT 1", "--data", str(data), "--output", str(path))
    assert one_error_line(result).startswith(f"error: cannot write {path}: ")


def test_claims_out_writes_through_a_symlink_and_into_a_device(data, tmp_path):
    (tmp_path / "report.md").write_text("old\n")
    link = tmp_path / "link.md"
    link.symlink_to("report.md")
    result = tablebase("claims", "--data", str(data), "--out", str(link))
    assert result.returncode == 0, result.stderr
    assert link.is_symlink() and (tmp_path / "report.md").read_text().startswith("# The seeds' claims")
    full = device(tmp_path / "full", FULL)
    assert (
        one_error_line(tablebase("claims", "-q", "--data", str(data), "--out", str(full)))
        == f"error: cannot write {full}: No space left on device"
    )
    assert stat.S_ISCHR(full.lstat().st_mode)


@pytest.mark.parametrize("command", [["draw", "sticks:rows=2", "-q"], ["publish", "-q"]])
def test_an_out_folder_that_is_a_device_is_refused_in_one_line(data, tmp_path, command):
    null = device(tmp_path / "null", NULL)
    result = tablebase(*command, "--data", str(data), "--out", str(null))
    assert one_error_line(result) == f"error: --out {null} is not a folder: name a folder (it is made if missing)"
    assert stat.S_ISCHR(null.lstat().st_mode)


@pytest.mark.parametrize(
    "args",
    [
        ["sql", "SELECT 1"],
        ["sql", "SELECT 1", "--format", "json"],
        ["probe", "sticks:rows=2", "start"],
        ["query", "--list"],
        ["--help"],
    ],
)
def test_standard_output_on_a_full_device_is_one_line(data, args):
    with open("/dev/full", "w") as full:
        result = tablebase(*args, *(["--data", str(data)] if args[0] != "--help" else []), stdout=full)
    assert one_error_line(result) == "error: cannot write to standard output: No space left on device"


def test_a_closed_standard_output_is_one_line(data):
    result = subprocess.run(
        ["sh", "-c", 'exec "$@" >&-', "sh", sys.executable, "-m", "pipeline", "sql", "SELECT 1", "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert one_error_line(result) == "error: cannot write to standard output: Bad file descriptor"


def test_a_reader_that_stops_reading_ends_the_command_quietly_by_sigpipe(data):
    """As `seq 1000000 | head -1`: no error line, and the status a shell reports as 141."""
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "sql", "SELECT * FROM range(200000)", "-f", "csv", "--data", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout.readline().strip() == b'"range"'
    process.stdout.close()  # 1.3 MB, far more than a pipe holds, is still to come
    assert process.wait(timeout=120) == -signal.SIGPIPE
    assert process.stderr.read() == b""


def test_parquet_of_a_union_is_one_line_naming_the_column_and_writes_nothing(data, tmp_path):
    target = tmp_path / "u.parquet"
    result = tablebase(
        "sql", "SELECT union_value(a := 1) AS u", "--data", str(data), "-f", "parquet", "-o", str(target)
    )
    line = one_error_line(result)
    assert "column 'u'" in line and "Parquet cannot hold" in line and "data file" not in line
    assert not target.exists() and list(tmp_path.iterdir()) == []
