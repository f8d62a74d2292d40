"""A file as a folder of parts (pipeline/storage/parts.py): the same rows, row groups and
bytes cut into files, read by every reader as one file is; a folder that is not whole is
refused in one line."""

from __future__ import annotations

import hashlib

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import DataError
from pipeline.storage import parts
from pipeline.storage.parquet import Encoding, read_table, require, sha256, write_batches

SCHEMA = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("text", pa.string())])


def batches(rows: int, size: int = 700):
    for start in range(0, rows, size):
        ids = list(range(start, min(rows, start + size)))
        yield pa.RecordBatch.from_arrays(
            [pa.array(ids, pa.int64()), pa.array([f"t{i % 37}" for i in ids])], schema=SCHEMA
        )


def write(path, rows, **encoding):
    return write_batches(batches(rows), path, SCHEMA, Encoding(group_rows=100, **encoding))


@pytest.mark.parametrize("part_rows", [1, 100, 250, 1000, 5000])
def test_parts_hold_the_files_row_groups_in_order(tmp_path, part_rows):
    one, cut = tmp_path / "one.parquet", tmp_path / "cut.parquet"
    assert write(one, 2345) == write(cut, 2345, part_rows=part_rows) == 2345
    assert not cut.exists() and parts.in_parts(cut)
    files = parts.parts(cut)
    assert [file.name for file in files] == [parts.part_name(i) for i in range(len(files))]
    whole = -(-max(part_rows, 1) // 100) * 100  # rounded up to whole row groups of 100
    assert [pq.read_metadata(file).num_rows for file in files] == [
        min(whole, 2345 - start) for start in range(0, 2345, whole)
    ]
    single, opened = pq.ParquetFile(one), parts.open_file(cut)
    assert opened.metadata.num_rows == 2345 and opened.num_row_groups == single.num_row_groups == 24
    for group in range(24):
        assert opened.read_row_group(group) == single.read_row_group(group)
        ours, theirs = (
            opened.metadata.row_group(group).column(0).statistics,
            single.metadata.row_group(group).column(0).statistics,
        )
        assert (ours.min, ours.max) == (theirs.min, theirs.max)
    assert pa.Table.from_batches(list(opened.iter_batches(batch_size=333))) == single.read()
    assert pa.Table.from_batches(
        list(opened.iter_batches(row_groups=[23, 5], columns=["id"]))
    ) == single.read_row_groups([23, 5], columns=["id"])
    assert read_table(cut) == read_table(one) == opened.read()
    assert parts.read_metadata(cut).num_rows == 2345 and parts.read_schema(cut) == pq.read_schema(one)
    # DuckDB, pyarrow's datasets and the pipeline read the same rows in the same order
    rows = [tuple(row.values()) for row in single.read().to_pylist()]
    assert duckdb.sql(f"SELECT * FROM read_parquet('{parts.sql_source(cut)}')").fetchall() == rows
    assert pq.read_table(parts.located(cut)).sort_by("id") == single.read()
    assert require(cut, "test file") == cut


def test_a_folders_checksum_is_its_listings_and_the_bytes_are_the_same_each_time(tmp_path):
    cut = tmp_path / "cut.parquet"
    write(cut, 1000, part_rows=300)
    first = {file.name: file.read_bytes() for file in parts.parts(cut)}
    listing = "".join(f"{hashlib.sha256(data).hexdigest()}  {name}\n" for name, data in sorted(first.items()))
    assert sha256(cut) == hashlib.sha256(listing.encode()).hexdigest()
    assert parts.listing_sha256(
        [(name, hashlib.sha256(data).hexdigest()) for name, data in sorted(first.items())]
    ) == sha256(cut)
    write(cut, 1000, part_rows=300)
    assert {file.name: file.read_bytes() for file in parts.parts(cut)} == first
    # a part renamed, changed or added changes the checksum
    before = sha256(cut)
    (parts.folder_of(cut) / parts.part_name(4)).write_bytes(first[parts.part_name(0)])
    assert sha256(cut) != before


def test_one_form_replaces_the_other_whole(tmp_path):
    path = tmp_path / "kind.parquet"
    write(path, 500)
    write(path, 600, part_rows=200)
    assert not path.exists() and read_table(path).num_rows == 600
    write(path, 700)
    assert path.is_file() and not parts.folder_of(path).exists() and read_table(path).num_rows == 700


def test_a_write_that_fails_leaves_the_rows_there_before(tmp_path):
    path = tmp_path / "kind.parquet"
    write(path, 500, part_rows=200)

    def failing():
        yield from batches(300)
        raise OSError("No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_batches(failing(), path, SCHEMA, Encoding(group_rows=100, part_rows=100))
    assert read_table(path).num_rows == 500 and len(parts.parts(path)) == 3
    assert sorted(entry.name for entry in tmp_path.iterdir()) == ["kind"]  # no scratch left


def test_no_rows_make_one_empty_part(tmp_path):
    path = tmp_path / "kind.parquet"
    assert write(path, 0, part_rows=10) == 0
    assert [file.name for file in parts.parts(path)] == [parts.part_name(0)] and read_table(path).num_rows == 0


@pytest.mark.parametrize(
    "damage, said",
    [
        (lambda folder: (folder / "notes.txt").write_text("x"), "is not a part of the folder of parts"),
        (lambda folder: (folder / parts.part_name(1)).unlink(), "has no part 1 before part-00002.parquet"),
        (lambda folder: [file.unlink() for file in folder.iterdir()], "holding none"),
    ],
    ids=["a-stray", "a-gap", "empty"],
)
def test_a_folder_that_is_not_whole_is_one_line(tmp_path, damage, said):
    path = tmp_path / "kind.parquet"
    write(path, 500, part_rows=200)
    damage(parts.folder_of(path))
    with pytest.raises(DataError, match=said):
        read_table(path)
    with pytest.raises(DataError, match=said):
        sha256(path)


def test_a_writers_hidden_scratch_is_no_part(tmp_path):
    path = tmp_path / "kind.parquet"
    write(path, 500, part_rows=200)
    (parts.folder_of(path) / ".part-00003.parquet.123.tmp").write_text("half")
    assert len(parts.parts(path)) == 3


def test_a_file_in_the_files_place_wins_over_a_folder_and_nothing_is_the_file(tmp_path):
    path = tmp_path / "kind.parquet"
    assert parts.located(path) == path and parts.parts(path) == [path]
    parts.folder_of(path).mkdir()
    assert parts.located(path) == parts.folder_of(path)
    write(path, 10)
    assert parts.located(path) == path
