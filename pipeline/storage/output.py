"""Query results as text (an aligned table, CSV, a JSON array, or JSON Lines), the other
commands' results written the same way (render_rows, render_item), and output written
where a user asks for it: a file, a device, a FIFO or standard output, every write
checked.

pyarrow is imported where a result needs it, not with this module: a table or JSON of
plain columns (`rendered`) is written from DuckDB's rows, so that `tablebase sql` over the catalog
starts about as fast as DuckDB's own Python does (BENCHMARKS.md, "Start-up, round three")."""

from __future__ import annotations

import io
import json
import math
import os
import stat
import string
from collections.abc import Iterable, Iterator, Sequence
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, TextIO, cast

from pipeline.core.errors import OutputError, ReaderGone, TablebaseError
from pipeline.core.explain import loaded

if TYPE_CHECKING:
    import duckdb
    import pyarrow as pa
    from typing_extensions import Buffer  # collections.abc.Buffer from Python 3.12


class Format(str, Enum):
    """How a query's result is written."""

    table = "table"  # aligned columns, for people
    csv = "csv"
    json = "json"  # one JSON array of objects, one object per line
    jsonl = "jsonl"  # JSON Lines: one object per line, nothing around them
    parquet = "parquet"  # binary: written to a file, never rendered as text


class ListFormat(str, Enum):
    """How a command that lists things (games, rulesets, estimates) prints them."""

    text = "text"  # the command's own lines, for people
    csv = "csv"
    json = "json"  # one JSON array of objects, as a query's
    jsonl = "jsonl"


class ItemFormat(str, Enum):
    """How a command that prints one result (a probe, a check) prints it."""

    text = "text"  # the command's own lines, for people
    json = "json"  # one JSON object, on one line


def render_rows(rows: list[dict[str, object]], form: ListFormat) -> str:
    """A command's rows of plain values (lists and dicts of them too) as text in `form`
    (csv, json or jsonl), written as `render` writes a query's result."""
    import pyarrow as pa

    return render(pa.Table.from_pylist(rows), form.value)


def render_item(item: dict[str, object]) -> str:
    """A command's one result as one JSON object on a line, written as `render` writes a row."""
    import pyarrow as pa

    return render(pa.Table.from_pylist([item]), Format.jsonl)


#: ASCII capitals to small letters, the only letters DuckDB folds comparing names (StringUtil::Lower).
_ASCII_LOWER = str.maketrans(string.ascii_uppercase, string.ascii_lowercase)


def unique_names(names: list[str]) -> list[str]:
    """Column names made distinct as DuckDB makes them when it writes a result as a table or
    a file (CREATE TABLE … AS, COPY … TO; QueryResult::DeduplicateColumns): a name met before,
    in any ASCII case, gets the first free suffix of _1, _2, … (x, x → x, x_1)."""
    taken: dict[str, int] = {}
    result = []
    for name in names:
        folded = name.translate(_ASCII_LOWER)
        if folded in taken:
            while f"{name}_{taken[folded]}".translate(_ASCII_LOWER) in taken:
                taken[folded] += 1
            name = f"{name}_{taken[folded]}"
            folded = name.translate(_ASCII_LOWER)
        taken[folded] = 1
        result.append(name)
    return result


def with_unique_names(table: pa.Table) -> pa.Table:
    """`table` with its columns named apart (`unique_names`): two columns of one name
    (`SELECT 1 AS x, 2 AS x`, a join's `SELECT *`) lost one in JSON, broke the table, and
    made a Parquet file pyarrow cannot read. Renamed rather than refused, as DuckDB's own
    COPY and CREATE TABLE do, since a join of two tables gives such names without asking."""
    names = table.column_names
    if len({name.translate(_ASCII_LOWER) for name in names}) == len(names):
        return table
    return table.rename_columns(unique_names(names))


#: DuckDB's types whose values DuckDB's Python rows and Arrow's `to_pylist` give alike
#: (bool, int, float, str): a result of such columns is rendered without Arrow. HUGEINT is
#: not one (Arrow gives a Decimal), nor anything nested, temporal or binary.
PLAIN_TYPES = frozenset(
    {
        "BOOLEAN",
        "TINYINT",
        "SMALLINT",
        "INTEGER",
        "BIGINT",
        "UTINYINT",
        "USMALLINT",
        "UINTEGER",
        "UBIGINT",
        "FLOAT",
        "DOUBLE",
        "VARCHAR",
    }
)
#: How deep a list of a plain type may nest and still be plain: Arrow refuses deeper ones in
#: one line (about 64 levels), where Python's recursion through them would end in a traceback.
PLAIN_DEPTH = 16


def plain(type_name: str, depth: int = 0) -> bool:
    """Whether a column of DuckDB's type `type_name` is written from DuckDB's rows as Arrow's
    would be: a plain type, or a list of them (`VARCHAR[]`) nested at most PLAIN_DEPTH deep."""
    if type_name.endswith("[]"):
        return depth < PLAIN_DEPTH and plain(type_name[:-2], depth + 1)
    return type_name in PLAIN_TYPES


def rendered(relation: duckdb.DuckDBPyRelation, form: Format | str) -> str:
    """A DuckDB relation's result as text in `form`, as `render` writes it: a table or JSON
    from DuckDB's own rows where every column is plain (no Arrow loaded), else through Arrow.
    CSV always goes through Arrow: its C++ writer takes a third of the time and memory of
    Python's on millions of rows (3 M transitions: 4.5 s and 0.9 GB, against 14.6 s and 2.4 GB)."""
    form = _format(form)
    if form is not Format.csv and all(plain(str(column_type)) for column_type in relation.types):
        return render_values(relation.columns, relation.fetchall(), form)
    return render(relation.to_arrow_table(), form)


def render_values(names: Sequence[str], rows: list[tuple[object, ...]], form: Format | str) -> str:
    """Rows of plain values (bool, int, float, str, None, lists of them: `plain`) as a table
    or JSON, as `render` writes a table of them. `rows` is emptied as it is written, so that
    a million rows are not held twice, as values and as text."""
    names = unique_names(list(names))
    form = _format(form)
    if form is Format.table:
        return _aligned(names, _drained(rows))
    if form in (Format.csv, Format.parquet):
        raise TablebaseError(f"format {form.value} is written through Arrow (render)")
    lines = [
        json.dumps(dict(zip(names, map(_json_any, row))), ensure_ascii=False, allow_nan=False) for row in _drained(rows)
    ]
    return _json_text(lines, form)


def _drained(rows: list[tuple[object, ...]]) -> Iterator[tuple[object, ...]]:
    """`rows` in order, each let go of once taken."""
    rows.reverse()
    while rows:
        yield rows.pop()


def _format(form: Format | str) -> Format:
    try:
        return Format(form)
    except ValueError:
        raise TablebaseError(
            f"unknown format {form!r} (expected one of {', '.join(f.value for f in Format if f is not Format.parquet)})"
        ) from None


def text_format(form: Format | str) -> Format:
    """`form` as one of the text formats (table, csv, json, jsonl); TablebaseError if it is none."""
    chosen = _format(form)
    if chosen is Format.parquet:
        raise TablebaseError(f"format {chosen.value} is binary: it needs an output file")
    return chosen


def render(table: pa.Table, form: Format | str) -> str:
    """`table` as text in `form`: table, csv, json (an array of objects) or jsonl; columns
    of one name named apart (`with_unique_names`)."""
    import pyarrow as pa
    import pyarrow.csv as pacsv

    table = with_unique_names(table)
    form = _format(form)
    if form is Format.table:
        timeless = pa.Table.from_arrays([_times_as_text(c) for c in table.columns], names=table.column_names)
        return _aligned(timeless.column_names, [tuple(row.values()) for row in timeless.to_pylist()])
    if form is Format.csv:
        sink = io.BytesIO()
        pacsv.write_csv(_flat(table), sink)
        return sink.getvalue().decode()
    if form is Format.parquet:
        raise TablebaseError(f"format {form.value} is binary: it needs an output file")
    return _json_text(_json_lines(table), form)


def _json_text(lines: list[str], form: Format) -> str:
    """JSON lines (one object each) as a JSON array, or as JSON Lines."""
    if form is Format.json:
        return "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"
    return "".join(line + "\n" for line in lines)


def _json_lines(table: pa.Table) -> list[str]:
    """Each row as one line of JSON: an object keyed by column name."""
    columns = [
        [_json_value(value, column.type) for value in column.to_pylist()]
        for column in map(_times_as_text, table.columns)
    ]
    rows = zip(*columns) if columns else []
    # allow_nan=False: a value _json_value let through that JSON cannot hold fails here, not in a reader
    return [json.dumps(dict(zip(table.column_names, row)), ensure_ascii=False, allow_nan=False) for row in rows]


def _aligned(names: list[str], values: Iterable[Sequence[object]]) -> str:
    rows = [["NULL" if v is None else value_text(v) for v in row] for row in values]
    widths = [max([len(name)] + [len(r[i]) for r in rows]) for i, name in enumerate(names)]
    lines = ["  ".join(name.ljust(w) for name, w in zip(names, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def _flat(table: pa.Table) -> pa.Table:
    """Nested columns (lists, maps, structs) as JSON text, and BLOBs, INTERVALs and DuckDB's
    own types as text, which CSV cannot hold otherwise."""
    import pyarrow as pa

    columns = []
    for column in table.columns:
        if pa.types.is_nested(column.type):
            column = _times_as_text(column)
            column = pa.array(
                [
                    None if v is None else json.dumps(_json_value(v, column.type), ensure_ascii=False)
                    for v in column.to_pylist()
                ],
                pa.string(),
            )
        elif _textual(column.type):
            column = pa.array([None if v is None else value_text(v) for v in column.to_pylist()], pa.string())
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


def _textual(data_type: pa.DataType) -> bool:
    """Types Arrow's CSV writer cannot write as text: bytes (not UTF-8), intervals, extensions."""
    import pyarrow as pa

    return (
        pa.types.is_binary(data_type)
        or pa.types.is_large_binary(data_type)
        or pa.types.is_fixed_size_binary(data_type)
        or pa.types.is_binary_view(data_type)
        or pa.types.is_interval(data_type)
        or isinstance(data_type, pa.BaseExtensionType)
    )


def _times_as_text(column: pa.ChunkedArray) -> pa.ChunkedArray:
    """Dates, times, timestamps and durations, at any depth, as the text Arrow (and so the CSV
    format) writes for them: Python's datetime cannot hold a TIMESTAMP_NS's nanoseconds."""
    target = _time_text_type(column.type)
    return column if target.equals(column.type) else column.cast(target)


def _time_text_type(data_type: pa.DataType) -> pa.DataType:
    import pyarrow as pa

    if pa.types.is_temporal(data_type) and not pa.types.is_interval(data_type):
        return pa.string()
    if pa.types.is_map(data_type):
        return pa.map_(_time_text_type(data_type.key_type), _time_text_type(data_type.item_type))
    if pa.types.is_struct(data_type):
        return pa.struct([field.with_type(_time_text_type(field.type)) for field in data_type])
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type) or pa.types.is_fixed_size_list(data_type):
        field = data_type.value_field.with_type(_time_text_type(data_type.value_type))
        if pa.types.is_large_list(data_type):
            return pa.large_list(field)
        return pa.list_(field, data_type.list_size if pa.types.is_fixed_size_list(data_type) else -1)
    return data_type


def _json_value(value: object, data_type: pa.DataType) -> object:
    """A value of Arrow type `data_type` (as to_pylist gives it) as what JSON can hold:
    maps as objects, NaN and infinities as null, everything without a JSON type as text."""
    import pyarrow as pa

    if value is None:
        return None
    if pa.types.is_dictionary(data_type):
        return _json_value(value, data_type.value_type)
    if pa.types.is_map(data_type):
        assert isinstance(value, list)  # to_pylist gives a map as a list of (key, value)
        return {_json_key(_json_value(k, data_type.key_type)): _json_value(v, data_type.item_type) for k, v in value}
    if pa.types.is_struct(data_type):
        assert isinstance(value, dict)
        return {field.name: _json_value(value.get(field.name), field.type) for field in data_type}
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type) or pa.types.is_fixed_size_list(data_type):
        assert isinstance(value, list)
        return [_json_value(v, data_type.value_type) for v in value]
    return _json_any(value)


def _json_any(value: object) -> object:
    """A value whose Arrow type is not known here (a UNION's member) as what JSON can hold."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if value is None or isinstance(value, (str, int)):
        return value
    if isinstance(value, dict):
        return {_json_key(_json_any(k)): _json_any(v) for k, v in value.items()}
    if isinstance(value, list) or (
        isinstance(value, tuple) and not isinstance(value, loaded("pyarrow", "MonthDayNano"))
    ):
        return [_json_any(v) for v in value]
    return value_text(value)


def _json_key(key: object) -> str:
    """A map's key as an object's key: text as it is, any other value as its JSON text."""
    return key if isinstance(key, str) else json.dumps(key, ensure_ascii=False)


def value_text(value: object) -> str:
    """A value as text: BLOBs and INTERVALs as DuckDB writes them, anything else as str()
    does (a DECIMAL with its exact digits)."""
    if isinstance(value, (bytes, bytearray)):
        return blob_text(value)
    if isinstance(value, loaded("pyarrow", "MonthDayNano")):  # none without pyarrow loaded
        return interval_text(*cast("tuple[int, int, int]", value))  # a named tuple (months, days, nanoseconds)
    return str(value)


def blob_text(data: bytes | bytearray) -> str:
    """Bytes as DuckDB writes a BLOB: printable ASCII as it is, other bytes (and the quotes
    and backslash) as \\xNN, which DuckDB reads back with ::BLOB."""
    return "".join(chr(b) if 32 <= b < 127 and b not in b"\"'\\" else f"\\x{b:02X}" for b in data)


def interval_text(months: int, days: int, nanoseconds: int) -> str:
    """An INTERVAL as DuckDB writes it: '1 year 2 months 3 days 04:05:06.5'."""
    years = abs(months) // 12 * (-1 if months < 0 else 1)  # each part keeps its sign: -1 year -2 months
    months -= years * 12
    parts = [
        f"{n} {unit}{'' if abs(n) == 1 else 's'}"
        for n, unit in ((years, "year"), (months, "month"), (days, "day"))
        if n
    ]
    if nanoseconds or not parts:
        seconds, fraction = divmod(abs(nanoseconds), 10**9)
        clock = f"{'-' if nanoseconds < 0 else ''}{seconds // 3600:02}:{seconds // 60 % 60:02}:{seconds % 60:02}"
        parts.append(clock + (f".{fraction:09}".rstrip("0") if fraction else ""))
    return " ".join(parts)


def write_output(data: bytes | memoryview, path: Path) -> None:
    """Write `data` to `path` as a user expects of `> path`, never leaving part of it: a
    regular file (or none yet) is replaced atomically, through symlinks the file they end
    at, with the old file's permissions; a device, FIFO or terminal is opened and written
    to, never replaced. OutputError, naming `path`, if any write fails."""
    try:
        mode = path.stat().st_mode  # through symlinks
    except FileNotFoundError:
        mode = None  # nothing there yet, or a symlink to nothing: made
    except OSError as error:  # a symlink loop, a folder on the way that cannot be searched
        raise OutputError(f"cannot write {path}: {error.strerror}") from None
    if mode is not None and stat.S_ISDIR(mode):
        raise OutputError(f"cannot write {path}: it is a folder (name a file in it)")
    try:
        if mode is None or (stat.S_ISREG(mode) and not _names_a_descriptor(path)):
            from pipeline.storage.files import atomic_path

            with atomic_path(Path(os.path.realpath(path))) as tmp:
                with open(tmp, "wb") as handle:
                    handle.write(data)
                if mode is not None:
                    os.chmod(tmp, stat.S_IMODE(mode))
            return
        # O_APPEND: a descriptor named by path (/dev/stdout) opened by `>>` keeps what it has
        flags = os.O_WRONLY | getattr(os, "O_CLOEXEC", 0) | (os.O_APPEND if stat.S_ISREG(mode) else 0)
        fd = os.open(path, flags)
        try:
            write_whole(fd, data)
        finally:
            os.close(fd)
    except OSError as error:
        raise OutputError(f"cannot write {path}: {error.strerror or error}") from None


def _names_a_descriptor(path: Path) -> bool:
    """/dev/stdout, /dev/fd/N, /proc/…/fd/N: a file the shell opened for this command;
    replacing it would leave the descriptor on the old file, which the shell then shows."""
    name = os.path.abspath(path)
    return name in ("/dev/stdin", "/dev/stdout", "/dev/stderr") or name.startswith(("/dev/fd/", "/proc/"))


def write_whole(fd: int, data: Buffer) -> None:
    """Write all of `data` to `fd`, however many writes it takes: a write to a pipe or a
    device may take only part, and the rest must not be dropped."""
    view = memoryview(data).cast("B")
    while view:
        written = os.write(fd, view)
        if written <= 0:
            raise OSError(0, "the file took none of the output")
        view = view[written:]


class _WholeWrites(io.RawIOBase):
    """A file descriptor each write to which is written whole, or raises OutputError
    (ReaderGone where a pipe's reader has gone)."""

    def __init__(self, fd: int, name: str):
        super().__init__()
        self.fd, self.name = fd, name

    def writable(self) -> bool:
        return True

    def fileno(self) -> int:
        return self.fd

    def isatty(self) -> bool:
        return self.fd >= 0 and os.isatty(self.fd)

    def write(self, data: Buffer) -> int:
        try:
            write_whole(self.fd, data)
        except BrokenPipeError:
            raise ReaderGone(f"the reader of {self.name} closed it") from None
        except OSError as error:
            raise OutputError(f"cannot write to {self.name}: {error.strerror or error}") from None
        return memoryview(data).nbytes


def checked_stdout(stream: TextIO | None) -> TextIO:
    """Standard output with every write checked: written whole, or an OutputError (ReaderGone
    for a closed pipe). Python's own stream loses the rest of a write during which a pipe's
    reader leaves, and drops everything silently where descriptor 1 is closed. A stream with
    no descriptor (a test's capture) is returned as it is."""
    if stream is None:  # descriptor 1 closed when Python started
        return io.TextIOWrapper(_WholeWrites(-1, "standard output"), encoding="utf-8", write_through=True)
    try:
        fd = stream.fileno()
    except (AttributeError, OSError, ValueError):
        return stream
    stream.flush()
    return io.TextIOWrapper(
        _WholeWrites(fd, "standard output"), encoding=stream.encoding, errors=stream.errors, write_through=True
    )
