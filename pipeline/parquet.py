"""Parquet files as data products: zstd, deterministic bytes, written aside then renamed."""

from __future__ import annotations

import hashlib
import os
from contextlib import contextmanager
from pathlib import Path
from typing import Iterable, Iterator

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import DataError

COMPRESSION = "zstd"
ROW_GROUP_ROWS = 1 << 20


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path`; renamed onto it only if the block completes.

    The file is flushed to the disk before the rename and the rename after it, so a crash
    or power cut leaves the old file or the new one, never a truncated one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        sync(tmp)
        os.replace(tmp, path)
        sync(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


def sync(path: Path) -> None:
    """fsync a file or a folder (a folder's entries: a rename is durable once it is synced)."""
    if path.is_dir() and os.name == "nt":
        return  # Windows cannot open a folder to sync it
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


class BatchWriter:
    """Streams record batches into one Parquet file (use inside `atomic_path`)."""

    def __init__(self, path: Path, schema: pa.Schema, delta: tuple[str, ...] = ()):
        """`delta`: integer columns to write with DELTA_BINARY_PACKED encoding, not dictionaries."""
        self.rows = 0
        options: dict = {}
        if delta:
            options = {"use_dictionary": [name for name in schema.names if name not in delta],
                       "column_encoding": {name: "DELTA_BINARY_PACKED" for name in delta}}
        # Dictionary columns are stored dictionary-encoded either way; without the Arrow
        # schema in the file readers see plain strings, which merge across files (pyarrow
        # cannot group differing dictionaries).
        plain = any(pa.types.is_dictionary(field.type) for field in schema)
        self._writer = pq.ParquetWriter(path, schema, compression=COMPRESSION, write_statistics=True,
                                        store_schema=not plain, **options)

    def write(self, batch: pa.RecordBatch | pa.Table) -> None:
        self._writer.write(batch, row_group_size=ROW_GROUP_ROWS)
        self.rows += batch.num_rows

    def close(self) -> None:
        self._writer.close()


def write_select(con, select: str, path: Path, schema: pa.Schema, delta: tuple[str, ...] = ()) -> int:
    """Write the rows of a DuckDB `select` (columns in `schema`'s order) to `path` atomically,
    with exactly `schema`: DuckDB would mark columns without NULLs required, so files of
    one kind would differ in schema. The number of rows."""
    return write_batches(con.sql(select).to_arrow_reader(ROW_GROUP_ROWS), path, schema, delta)


def write_batches(batches: Iterable[pa.RecordBatch], path: Path, schema: pa.Schema, delta: tuple[str, ...] = ()) -> int:
    """Write record batches (columns in `schema`'s order, any names and compatible types) to
    `path` atomically with exactly `schema`, in row groups of exactly ROW_GROUP_ROWS rows
    (the last one shorter): however the rows arrive, from DuckDB or from Spark's part
    files, the same rows give the same bytes. The number of rows."""
    with atomic_path(path) as tmp:
        writer = BatchWriter(tmp, schema, delta=delta)
        pending: list[pa.RecordBatch] = []
        held = 0
        try:
            for batch in batches:
                batch = pa.RecordBatch.from_arrays(
                    [column.cast(field.type) for column, field in zip(batch.columns, schema)], schema=schema)
                pending.append(batch)
                held += batch.num_rows
                while held >= ROW_GROUP_ROWS:
                    table = pa.Table.from_batches(pending, schema)
                    writer.write(table.slice(0, ROW_GROUP_ROWS).combine_chunks())  # pages do not follow batches
                    rest = table.slice(ROW_GROUP_ROWS)
                    pending, held = rest.to_batches(), rest.num_rows
            if held or not writer.rows:
                writer.write(pa.Table.from_batches(pending, schema).combine_chunks())
        finally:
            writer.close()
    return writer.rows


def write_table(table: pa.Table, path: Path) -> None:
    """Write `table` to `path` atomically."""
    with atomic_path(path) as tmp:
        pq.write_table(table, tmp, compression=COMPRESSION, row_group_size=ROW_GROUP_ROWS)


def require(path: Path, what: str) -> Path:
    """`path` if it exists and reads as Parquet; DataError naming `what` otherwise."""
    if not path.exists():
        raise DataError(f"{what} {path} is missing")
    try:
        pq.read_metadata(path)
    except (OSError, pa.ArrowException) as error:
        raise DataError(f"{what} {path} is not a readable Parquet file ({error})") from None
    return path


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()
