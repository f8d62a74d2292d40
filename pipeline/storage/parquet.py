"""Parquet files as data products: zstd, deterministic bytes, written aside then renamed."""

from __future__ import annotations

import queue
import shutil
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import suppress
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.errors import DataError, OutputError
from pipeline.storage import parts
from pipeline.storage.files import atomic_folder, atomic_path
from pipeline.storage.parts import folder_of, part_name, regular
from pipeline.storage.threads import in_order

if TYPE_CHECKING:
    import duckdb

COMPRESSION = "zstd"
ROW_GROUP_ROWS = 1 << 20


def with_dictionaries(schema: pa.Schema, names: tuple[str, ...]) -> pa.Schema:
    """`schema` with the string columns `names` written as dictionaries (of at most 127
    strings with int8 codes): stored as every string column is, read as strings, but the
    writer takes the codes it is handed rather than hashing each row's text."""
    return pa.schema(
        [field.with_type(pa.dictionary(pa.int8(), field.type)) if field.name in names else field for field in schema],
        metadata=schema.metadata,
    )


@dataclass(frozen=True)
class Encoding:
    """How a file's columns are written, beyond what their types say.

    `delta`: columns written delta-encoded, not with dictionaries: integers that mostly go
    up by little (ids: DELTA_BINARY_PACKED) and strings that share prefixes with the one
    before (position texts in id order: DELTA_BYTE_ARRAY). Both are smaller and quicker to
    write than dictionaries that overflow to plain pages. `unranged`: columns written
    without min/max, whose values are in no order a reader could skip row groups by
    (position texts: numbered by rank, each row group's texts run from nearly the least to
    nearly the greatest); comparing every text cost a sixth of writing a tablebase.
    `group_rows`: rows a row group (the last one fewer; None: ROW_GROUP_ROWS): a file read
    a row or two at a time (index.parquet, lookup.parquet) takes smaller ones, since a
    reader decodes a whole row group's column. `plain`: columns written as they are, with
    neither (texts a lookup decodes 16,384 at a time: plain pages decode in two thirds of
    the time delta ones take, and zstd makes them smaller than delta's). A nested column's
    leaves are named by their Parquet paths (`dst.list.element`)."""

    delta: tuple[str, ...] = ()
    unranged: tuple[str, ...] = ()
    group_rows: int | None = None
    plain: tuple[str, ...] = ()
    #: Rows a part at most, written as a folder of parts (pipeline/storage/parts.py) in the
    #: file's place, each part whole row groups; None: one file.
    part_rows: int | None = None


#: Every column as its type says: dictionaries where Arrow chooses them, min/max on each.
AS_TYPED = Encoding()


class BatchWriter:
    """Streams record batches into one Parquet file (use inside `atomic_path`)."""

    def __init__(self, path: Path, schema: pa.Schema, encoding: Encoding = AS_TYPED):
        self.rows = 0
        delta, unranged, plain = encoding.delta, encoding.unranged, encoding.plain
        leaves = dict(leaf for field in schema for leaf in _leaves(field.name, field.type))
        options: dict = {}
        if delta or plain:
            options = {
                "use_dictionary": [path for path in leaves if path not in delta and path not in plain],
                "column_encoding": {
                    **{
                        path: "DELTA_BYTE_ARRAY" if pa.types.is_string(leaves[path]) else "DELTA_BINARY_PACKED"
                        for path in delta
                    },
                    **dict.fromkeys(plain, "PLAIN"),
                },
            }
        # Dictionary columns are stored dictionary-encoded either way; without the Arrow
        # schema in the file readers see plain strings, which merge across files (pyarrow
        # cannot group differing dictionaries). They are written without min/max: Arrow
        # finds the strings a row group uses by hashing every row, which was half the cost
        # of writing the transitions (a move's name and the ruleset's are never filtered
        # by range; a reader filtering on them reads the column, a few KB a row group).
        dictionaries = [field.name for field in schema if pa.types.is_dictionary(field.type)]
        statistics = (
            [path for path in leaves if path.split(".")[0] not in dictionaries and path.split(".")[0] not in unranged]
            if dictionaries or unranged
            else True
        )
        self._writer = pq.ParquetWriter(
            path, schema, compression=COMPRESSION, write_statistics=statistics, store_schema=not dictionaries, **options
        )
        self.group_rows = ROW_GROUP_ROWS if encoding.group_rows is None else encoding.group_rows

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        self._writer.write(batch, row_group_size=self.group_rows)
        self.rows += batch.num_rows

    def close(self) -> None:
        self._writer.close()


def _leaves(path: str, data_type: pa.DataType) -> Iterator[tuple[str, pa.DataType]]:
    """The Parquet paths of a column's leaves and their types, as the writer names them
    (`dst.list.element`: Arrow writes lists in Parquet's standard three levels)."""
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        yield from _leaves(f"{path}.list.element", data_type.value_type)
    elif pa.types.is_dictionary(data_type):
        yield path, data_type.value_type
    else:
        yield path, data_type


def write_select(
    con: duckdb.DuckDBPyConnection,
    select: str,
    path: Path,
    schema: pa.Schema,
    encoding: Encoding = AS_TYPED,
    observe: Callable[[pa.Table], None] | None = None,
    convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
) -> int:
    """Write the rows of a DuckDB `select` (columns in `schema`'s order) to `path` atomically,
    with exactly `schema`: DuckDB would mark columns without NULLs required, so files of
    one kind would differ in schema. The number of rows."""
    return write_batches(con.sql(select).to_arrow_reader(ROW_GROUP_ROWS), path, schema, encoding, observe, convert)


def write_batches(
    batches: Iterable[pa.RecordBatch],
    path: Path,
    schema: pa.Schema,
    encoding: Encoding = AS_TYPED,
    observe: Callable[[pa.Table], None] | None = None,
    convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
) -> int:
    """Write record batches (columns in `schema`'s order, any names and compatible types) to
    `path` atomically with exactly `schema`, in row groups of exactly `encoding.group_rows`
    rows (ROW_GROUP_ROWS unless it says; the last one shorter), each dictionary column with its strings in the order they first
    occur in the row group: however the rows arrive, from a game's batches, DuckDB or
    Spark's part files, the same rows give the same bytes. `observe` sees each row group as
    written (to count while writing); `convert` makes each batch given into the file's
    (export: keys into their texts). The number of rows.

    With `encoding.part_rows`, the rows go to a folder of parts in the file's place (parts.py),
    a new part begun at each `part_rows` rows (rounded up to whole row groups): the same row
    groups as one file's, in the same bytes, cut into files. The folder replaces the file or
    folder there only once every part is written; one file replaces a folder likewise."""
    if encoding.part_rows is not None:
        with atomic_folder(folder_of(path)) as tmp:
            writer: BatchWriter | _PartsWriter = _PartsWriter(tmp, schema, encoding)
            rows = _write_batches(writer, batches, schema, observe, convert)
        path.unlink(missing_ok=True)  # the folder is the rows now
        return rows
    with atomic_path(path) as tmp:
        writer = BatchWriter(tmp, schema, encoding)
        rows = _write_batches(writer, batches, schema, observe, convert)
    folder = folder_of(path)
    if folder.is_dir() and not folder.is_symlink():  # the file is the rows now
        shutil.rmtree(folder, ignore_errors=True)
    return rows


def _write_batches(
    writer: BatchWriter | _PartsWriter,
    batches: Iterable[pa.RecordBatch],
    schema: pa.Schema,
    observe: Callable[[pa.Table], None] | None,
    convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None,
) -> int:

    def put(table: pa.Table) -> None:
        # laid out here, not on the writer's thread, which compresses: the slower of the two
        table = pa.Table.from_arrays(  # one chunk a column: pages do not follow batches
            [
                first_seen(column) if pa.types.is_dictionary(column.type) else column.combine_chunks()
                for column in table.columns
            ],
            schema=schema,
        )
        if observe is not None:
            observe(table)
        behind.put(table)

    try:
        with _Behind(writer.write) as behind:  # encoding and compressing overlap making the next rows
            pending: list[pa.RecordBatch] = []
            held = 0
            # converted on two threads, ahead of the rows laid out here
            for batch in batches if convert is None else in_order(convert, batches, ahead=3):
                pending.append(
                    pa.RecordBatch.from_arrays(
                        [_conform(column, field.type) for column, field in zip(batch.columns, schema)],
                        schema=schema,
                    )
                )
                held += batch.num_rows
                while held >= writer.group_rows:
                    table = pa.Table.from_batches(pending, schema)
                    put(table.slice(0, writer.group_rows))
                    rest = table.slice(writer.group_rows)
                    pending, held = rest.to_batches(), rest.num_rows
            if held or not (behind.puts or writer.rows):
                put(pa.Table.from_batches(pending, schema))
    except BaseException:
        # the file is scratch and goes with atomic_path; closing a half-written row group
        # fails in Arrow's words ("Column 5 had 245024 while previous column had 0"),
        # which must not hide what stopped the writing (a Ctrl-C, a full disk)
        with suppress(Exception):
            writer.close()
        raise
    writer.close()
    return writer.rows


class _PartsWriter:
    """BatchWriter's work split over a folder's parts: a part ends after the row group that
    reaches `encoding.part_rows` rows."""

    def __init__(self, folder: Path, schema: pa.Schema, encoding: Encoding):
        assert encoding.part_rows is not None
        self.folder, self.schema, self.encoding = folder, schema, encoding
        self.rows, self.parts = 0, 0
        self.group_rows = ROW_GROUP_ROWS if encoding.group_rows is None else encoding.group_rows
        self.part_rows = max(encoding.part_rows, 1)
        self._part: BatchWriter | None = None

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        if self._part is not None and self._part.rows >= self.part_rows:
            self._part.close()
            self._part = None
        if self._part is None:
            self._part = BatchWriter(self.folder / part_name(self.parts), self.schema, self.encoding)
            self.parts += 1
        self._part.write(batch)
        self.rows += batch.num_rows

    def close(self) -> None:
        if self._part is None:  # no row at all: one empty part, as one file would be
            self._part = BatchWriter(self.folder / part_name(0), self.schema, self.encoding)
            self.parts = 1
        self._part.close()


class _Behind:
    """Runs `work(item)` for each item put, in order, on a thread of its own, at most
    `depth` items behind; the first error it meets is raised in the thread that puts (at
    the next put or on leaving the block). Leaving the block waits for the work to end."""

    def __init__(self, work: Callable[[object], None], depth: int = 2):
        self.work, self.puts = work, 0
        self.error: BaseException | None = None
        self.queue: queue.Queue = queue.Queue(maxsize=depth)
        self.thread = threading.Thread(target=self._run, daemon=True)

    def _run(self) -> None:
        while (item := self.queue.get()) is not _DONE:
            if self.error is None:
                try:
                    self.work(item)
                except BaseException as error:  # noqa: BLE001 - handed to the putting thread
                    self.error = error

    def put(self, item: object) -> None:
        if self.error is not None:
            raise self.error
        self.queue.put(item)
        self.puts += 1

    def __enter__(self) -> _Behind:
        self.thread.start()
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        if error is not None and self.error is None:
            self.error = error  # the thread skips what is left
        self.queue.put(_DONE)
        self.thread.join()
        if error is None and self.error is not None:
            raise self.error


_DONE = object()


def _conform(column: pa.Array, data_type: pa.DataType) -> pa.Array:
    if pa.types.is_dictionary(data_type) and not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    return column.cast(data_type)


def first_seen(column: pa.ChunkedArray) -> pa.DictionaryArray:
    """A dictionary column as one array whose dictionary holds the strings used, in the
    order they first occur, NULLs kept: the same strings give the same array, whatever
    dictionaries the chunks came with."""
    chunks = [chunk for chunk in column.chunks if len(chunk)]
    if not chunks:
        return pa.array([], column.type)
    if all(chunk.null_count == 0 for chunk in chunks):
        if len(chunks) == 1 and len(chunks[0].dictionary) == 1:
            return chunks[0]  # one string (the ruleset's name): as the steps below would give it
        if len(chunks[0].dictionary) == 1 and all(chunk.dictionary.equals(chunks[0].dictionary) for chunk in chunks):
            return pa.concat_arrays(chunks)  # one string in every chunk: as the steps below would give it
    if len(chunks) > 1 and all(chunk.dictionary.equals(chunks[0].dictionary) for chunk in chunks[1:]):
        # one dictionary (a game's move names): one pass over the rows, not one a chunk
        chunks = [pa.concat_arrays(chunks)]
    dictionaries = pa.concat_arrays([chunk.dictionary for chunk in chunks])
    import pyarrow.compute as pc  # here: 50 ms of every command's start-up, for writers alone

    strings = pc.unique(dictionaries)
    # each chunk's codes as positions in `strings` (a dict: pc.index_in spends ~9 ms a call
    # building its hash table, more than the rest of a row group's work)
    position = {string: at for at, string in enumerate(strings.to_pylist())}
    to_string = np.array([position[string] for string in dictionaries.to_pylist()], dtype=np.int64)
    offsets = np.cumsum([0] + [len(chunk.dictionary) for chunk in chunks])
    # a NULL as the code one past the chunk's dictionary
    parts = [
        (
            to_string[offset : offset + len(chunk.dictionary)],
            chunk.indices.fill_null(len(chunk.dictionary)).to_numpy(zero_copy_only=False),
        )
        for offset, chunk in zip(offsets, chunks)
    ]
    rows = sum(codes.size for _, codes in parts)
    first = np.full(len(strings), rows, dtype=np.int64)  # each string's first row
    row = 0
    for strings_of, codes in parts:
        seen = _first_rows(codes, strings_of.size + 1)[:-1]
        np.minimum.at(first, strings_of, np.where(seen < codes.size, seen + row, rows))
        row += codes.size
    used = np.flatnonzero(first < rows)
    order = used[np.argsort(first[used], kind="stable")]
    renumber = np.zeros(len(strings), dtype=np.int64)
    renumber[order] = np.arange(order.size)
    index_type = column.type.index_type
    # one gather a chunk: its own codes straight to their numbers in the new dictionary
    dtype = np.dtype(f"int{index_type.bit_width}")
    codes = np.concatenate([np.append(renumber[strings_of], 0).astype(dtype)[codes] for strings_of, codes in parts])
    nulls = np.concatenate([codes_of == strings_of.size for strings_of, codes_of in parts])
    return pa.DictionaryArray.from_arrays(
        pa.array(codes, index_type, mask=nulls if nulls.any() else None), strings.take(pa.array(order))
    )


#: Rows looked through at a time for codes not seen yet.
_SCAN = 1 << 12


def _first_rows(codes: np.ndarray, count: int) -> np.ndarray:
    """The first row of each code 0..count-1 in `codes` (codes.size where it is absent):
    blocks are looked through until every code that occurs is found, which for a
    dictionary column is mostly in its first rows."""
    first = np.full(count, codes.size, dtype=np.int64)
    missing = np.bincount(codes, minlength=count) > 0  # occurs, and not found yet
    left = int(missing.sum())
    for lo in range(0, codes.size, _SCAN):
        if not left:
            break
        block = codes[lo : lo + _SCAN]
        here = np.unique(block)
        for code in here[missing[here]].tolist():
            first[code] = lo + int(np.argmax(block == code))
            missing[code] = False
            left -= 1
    return first


def read_table(path: Path, columns: list[str] | None = None, read_dictionary: list[str] | None = None) -> pa.Table:
    """One Parquet file (or a folder of parts) as a table. pq.read_table goes through pyarrow.dataset, whose
    first use imports pandas (0.2-0.5 s, paid by every build of a small ruleset)."""
    file = parts.open_file(path, read_dictionary=read_dictionary)
    missing = [name for name in columns or [] if name not in file.schema_arrow.names]
    if missing:  # as pq.read_table says it (ParquetFile.read raises a bare KeyError)
        raise pa.ArrowInvalid(f"No match for FieldRef.Name({missing[0]}) in {path}")
    return file.read(columns=columns)


def write_table(table: pa.Table, path: Path) -> None:
    """Write `table` to `path` atomically."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)


def table_bytes(table: pa.Table) -> pa.Buffer:
    """`table` as the bytes of a Parquet file, as write_table writes it; OutputError naming
    the first column whose type Parquet cannot hold (a UNION, an INTERVAL)."""
    sink = pa.BufferOutputStream()
    try:
        pq.write_table(table, sink, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)
    except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError) as error:
        for index, field in enumerate(table.schema):
            try:  # the schema alone decides: no rows needed to find the column
                pq.write_table(table.select([index]).slice(0, 0), pa.BufferOutputStream())
            except (pa.ArrowNotImplementedError, pa.ArrowInvalid, pa.ArrowTypeError):
                raise OutputError(
                    f"the result's column {field.name!r} is of type {field.type}, which Parquet "
                    "cannot hold: cast it in the SQL (to VARCHAR, say) or choose another --format"
                ) from None
        raise OutputError(f"the result cannot be written as Parquet: {str(error).splitlines()[0]}") from None
    return sink.getvalue()


def require(path: Path, what: str) -> Path:
    """`path` if it exists and reads as Parquet (a folder of parts in its place: each part);
    DataError naming `what` otherwise."""
    if not path.exists() and not parts.in_parts(path):
        raise DataError(f"{what} {path} is missing")
    for part in parts.parts(path):
        regular(part, what)
        try:
            pq.read_metadata(part)
        except (OSError, pa.ArrowException) as error:
            raise DataError(f"{what} {part} is not a readable Parquet file ({error})") from None
    return path


def sha256(path: Path) -> str:
    """The file's SHA-256, or its folder of parts' (parts.sha256)."""
    return parts.sha256(path)
