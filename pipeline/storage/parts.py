"""A ruleset's file of one kind as one Parquet file or as a folder of parts (issue 36).

    tablebase.parquet                 one file, as the DuckDB engine writes it on one machine
    tablebase/part-00000.parquet      or a folder of parts in its place: part 0, 1, 2, ...,
    tablebase/part-00001.parquet      each sorted by the file's key and holding keys after
    ...                               the part before's, so the parts in order are the file

Both are the same rows in the same order: the folder is what many writers make when none
may hold every row (Spark's executors, each writing its own range), or what a host that
limits a file's size can take. Every reader of the pipeline opens either through `open_file`,
`read_metadata` and `sql_source`; outside it DuckDB, Polars and Spark read the folder's glob
(`tablebase/part-*.parquet`), pyarrow and pandas the folder.

A folder holds parts and nothing else: `part-NNNNN.parquet`, numbered from 0 without a gap
(five digits at least, ordered by number), and hidden scratch of a writer at work. Its
checksum (`sha256`) is that of its listing, `<sha256>  part-NNNNN.parquet` a line, in order,
as `sha256sum` prints it inside the folder: a part changed, missing, added or renamed
changes it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.core.errors import DataError

if TYPE_CHECKING:  # imported where a file is opened: the reading commands name parts without pyarrow
    import pyarrow as pa
    import pyarrow.parquet as pq

#: A part's name: its number, five digits at least.
PART = re.compile(r"part-(\d{5,})\.parquet")


def part_name(number: int) -> str:
    return f"part-{number:05d}.parquet"


def folder_of(path: Path) -> Path:
    """Where the folder of parts of the file `path` (`<kind>.parquet`) is: `<kind>/`."""
    return path.with_suffix("")


def located(path: Path) -> Path:
    """`path` (`<kind>.parquet`), or the folder of parts in its place where that is there
    and no file (nor anything else) is at `path`."""
    if not os.path.lexists(path):
        folder = folder_of(path)
        try:
            mode = os.lstat(folder).st_mode
        except OSError:
            return path
        if stat.S_ISDIR(mode):
            return folder
    return path


def in_parts(path: Path) -> bool:
    """Whether the rows of `path` are a folder of parts."""
    return located(path) != path


def parts(path: Path) -> list[Path]:
    """The files holding the rows of `path`, in order: the file itself (whether or not it is
    there: its reader says what is wrong), or the parts of the folder in its place.
    DataError where the folder holds anything but parts 0, 1, 2, ... (or none)."""
    where = located(path)
    if where == path:
        return [path]
    return _parts_of(where)


def _parts_of(folder: Path) -> list[Path]:
    numbered = []
    for name in os.listdir(folder):
        if name.startswith("."):
            continue  # a writer's scratch
        found = PART.fullmatch(name)
        if found is None:
            raise DataError(
                f"{folder / name} is not a part of the folder of parts {folder} (part-NNNNN.parquet): remove it, or rebuild"
            )
        numbered.append((int(found.group(1)), name))
    numbered.sort()
    for expected, (number, name) in enumerate(numbered):
        if number != expected:
            raise DataError(f"{folder} has no part {expected} before {name}: a part is missing, rebuild it")
    if not numbered:
        raise DataError(f"{folder} is a folder of parts holding none: rebuild it")
    return [folder / name for _, name in numbered]


def sql_source(path: Path) -> str:
    """What DuckDB's read_parquet (and Spark's reader) reads for `path`: the file, or the
    glob of its folder's parts."""
    where = located(path)
    return str(path) if where == path else str(where / "part-*.parquet")


def source_name(path: Path) -> str:
    """How a reader given `path`'s folder names its rows: `<kind>.parquet`, or the glob of
    its parts `<kind>/part-*.parquet` (the catalog's `tablebase_path` and `transitions_path`)."""
    where = located(path)
    return path.name if where == path else f"{where.name}/part-*.parquet"


def sha256(path: Path) -> str:
    """The file's SHA-256; a folder of parts': that of its listing (the module's docstring)."""
    where = located(path)
    if where == path:
        return file_sha256(path)
    listing = "".join(f"{file_sha256(part)}  {part.name}\n" for part in _parts_of(where))
    return hashlib.sha256(listing.encode()).hexdigest()


def listing_sha256(sums: Sequence[tuple[str, str]]) -> str:
    """The checksum of a folder of parts from its parts' (name, SHA-256), in order."""
    return hashlib.sha256("".join(f"{digest}  {name}\n" for name, digest in sums).encode()).hexdigest()


def file_sha256(path: Path) -> str:
    with open(regular(path), "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def regular(path: Path, what: str = "") -> Path:
    """`path`, unless something other than a regular file is in its place (a FIFO, a
    device, a socket, a folder): DataError then, before it is opened, as `tablebase check`
    reports it. Opening a FIFO no one writes waits for ever, in C, where no signal reaches
    Python; a device could be read without end. Not there at all is the caller's to say."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return path
    if not stat.S_ISREG(mode):
        kind = next((name for test, name in _KINDS if test(mode)), "not a file")
        named = f"{what} {path}" if what else str(path)
        raise DataError(f"{named} is not a regular file but {kind}: remove it and rebuild, or see `tablebase check`")
    return path


_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


def open_file(path: Path, read_dictionary: Sequence[str] | None = None) -> pq.ParquetFile | Parts:
    """`path`'s rows to read: the Parquet file, or its folder of parts opened as one."""
    import pyarrow.parquet as pq

    files = parts(path)
    if len(files) == 1 and files[0] == path:
        return pq.ParquetFile(regular(path), read_dictionary=read_dictionary)
    return Parts([pq.ParquetFile(regular(part), read_dictionary=read_dictionary) for part in files])


def read_metadata(path: Path) -> pq.FileMetaData | PartsMetadata:
    """`path`'s footer: the file's, or its parts' as one."""
    import pyarrow.parquet as pq

    files = parts(path)
    if len(files) == 1 and files[0] == path:
        return pq.read_metadata(path)
    return PartsMetadata([pq.read_metadata(part) for part in files])


def read_schema(path: Path) -> pa.Schema:
    """`path`'s columns, as pq.read_schema gives them (a folder's: its first part's)."""
    import pyarrow.parquet as pq

    return pq.read_schema(parts(path)[0])


class PartsMetadata:
    """The footers of a folder's parts as one file's: row groups numbered across the parts."""

    def __init__(self, footers: list[pq.FileMetaData]):
        self.footers = footers
        self._groups = [
            (index, group) for index, footer in enumerate(footers) for group in range(footer.num_row_groups)
        ]

    @property
    def num_rows(self) -> int:
        return sum(footer.num_rows for footer in self.footers)

    @property
    def num_row_groups(self) -> int:
        return len(self._groups)

    @property
    def num_columns(self) -> int:
        return self.footers[0].num_columns

    @property
    def schema(self) -> pq.ParquetSchema:
        return self.footers[0].schema

    @property
    def metadata(self) -> dict[bytes, bytes] | None:
        return self.footers[0].metadata

    def row_group(self, index: int) -> pq.RowGroupMetaData:
        part, group = self._groups[index]
        return self.footers[part].row_group(group)

    def located(self, index: int) -> tuple[int, int]:
        """The part and its row group that are row group `index` of the whole."""
        return self._groups[index]


class Parts:
    """A folder's parts opened as one Parquet file: what the pipeline's readers use of
    pq.ParquetFile, row groups numbered across the parts."""

    def __init__(self, files: list[pq.ParquetFile]):
        self.files = files
        self.metadata = PartsMetadata([file.metadata for file in files])

    @property
    def num_row_groups(self) -> int:
        return self.metadata.num_row_groups

    @property
    def schema_arrow(self) -> pa.Schema:
        return self.files[0].schema_arrow

    @property
    def schema(self) -> pq.ParquetSchema:
        return self.files[0].schema

    def read_row_group(self, index: int, columns: Sequence[str] | None = None, **options: Any) -> pa.Table:
        part, group = self.metadata.located(index)
        return self.files[part].read_row_group(group, columns=columns, **options)

    def read_row_groups(self, indices: Sequence[int], columns: Sequence[str] | None = None, **options: Any) -> pa.Table:
        tables = [self.read_row_group(index, columns, **options) for index in indices]
        import pyarrow as pa

        return pa.concat_tables(tables) if tables else self.files[0].read_row_groups([], columns=columns, **options)

    def iter_batches(
        self,
        batch_size: int = 65536,
        row_groups: Sequence[int] | None = None,
        columns: Sequence[str] | None = None,
        **options: Any,
    ) -> Iterator[pa.RecordBatch]:
        if row_groups is None:
            for file in self.files:
                yield from file.iter_batches(batch_size=batch_size, columns=columns, **options)
            return
        for index in row_groups:
            part, group = self.metadata.located(index)
            yield from self.files[part].iter_batches(
                batch_size=batch_size, row_groups=[group], columns=columns, **options
            )

    def read(self, columns: Sequence[str] | None = None, **options: Any) -> pa.Table:
        import pyarrow as pa

        return pa.concat_tables([file.read(columns=columns, **options) for file in self.files])

    def close(self) -> None:
        for file in self.files:
            file.close()
