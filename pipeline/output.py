"""Query results as text (an aligned table, CSV, a JSON array, or JSON Lines), and output
written where a user asks for it: a file, a device, a FIFO or standard output, every write
checked."""

from __future__ import annotations

import io
import json
import os
import stat
from enum import Enum
from pathlib import Path
from typing import TextIO

import pyarrow as pa
import pyarrow.csv as pacsv

from pipeline.errors import OutputError, ReaderGone, TablebaseError


class Format(str, Enum):
    """How a query's result is written."""

    table = "table"  # aligned columns, for people
    csv = "csv"
    json = "json"  # one JSON array of objects, one object per line
    jsonl = "jsonl"  # JSON Lines: one object per line, nothing around them
    parquet = "parquet"  # binary: written to a file, never rendered as text


def render(table: pa.Table, form: Format | str) -> str:
    """`table` as text in `form`: table, csv, json (an array of objects) or jsonl."""
    try:
        form = Format(form)
    except ValueError:
        raise TablebaseError(f"unknown format {form!r} (expected one of "
                             f"{', '.join(f.value for f in Format if f is not Format.parquet)})") from None
    if form is Format.table:
        return _aligned(table)
    if form is Format.csv:
        sink = io.BytesIO()
        pacsv.write_csv(_flat(table), sink)
        return sink.getvalue().decode()
    if form is Format.json:
        lines = _json_lines(table)
        return "[\n" + ",\n".join(lines) + "\n]\n" if lines else "[]\n"
    if form is Format.jsonl:
        return "".join(line + "\n" for line in _json_lines(table))
    raise TablebaseError(f"format {form.value} is binary: it needs an output file")


def _json_lines(table: pa.Table) -> list[str]:
    """Each row as one line of JSON: an object keyed by column name."""
    rows = zip(*(_plain_column(column) for column in table.columns)) if table.num_columns else []
    return [json.dumps(dict(zip(table.column_names, row)), default=str, ensure_ascii=False) for row in rows]


def _aligned(table: pa.Table) -> str:
    rows = [["NULL" if v is None else str(v) for v in row.values()] for row in table.to_pylist()]
    names = table.column_names
    widths = [max([len(name)] + [len(r[i]) for r in rows]) for i, name in enumerate(names)]
    lines = ["  ".join(name.ljust(w) for name, w in zip(names, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def _plain_column(column: pa.ChunkedArray) -> list:
    """A column's values as plain Python, maps as dicts."""
    values = column.to_pylist()
    if pa.types.is_map(column.type):
        return [None if v is None else dict(v) for v in values]
    return values


def _flat(table: pa.Table) -> pa.Table:
    """Nested columns (lists, maps) as JSON text, which CSV cannot hold otherwise."""
    columns = []
    for column in table.columns:
        if pa.types.is_nested(column.type):
            column = pa.array([None if v is None else json.dumps(v, default=str, ensure_ascii=False)
                               for v in _plain_column(column)], pa.string())
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)


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
            from pipeline.parquet import atomic_path

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


def write_whole(fd: int, data: bytes | memoryview) -> None:
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

    def write(self, data: bytes | memoryview) -> int:
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
    return io.TextIOWrapper(_WholeWrites(fd, "standard output"), encoding=stream.encoding,
                            errors=stream.errors, write_through=True)
