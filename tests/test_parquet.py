"""pipeline/storage/parquet.py: dictionary columns normalised to first-seen order, and the same rows
giving the same bytes however they are batched."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.storage.parquet import Encoding, first_seen, write_batches

SCHEMA = pa.schema(
    [
        pa.field("n", pa.int64(), nullable=False),
        pa.field("name", pa.dictionary(pa.int32(), pa.string()), nullable=False),
    ]
)


def random_chunks(rng: np.random.Generator, strings: list[str]) -> tuple[list[pa.DictionaryArray], list[str]]:
    """Chunks each with a dictionary of its own (a shuffled subset, some entries unused)."""
    chunks, rows = [], []
    for _ in range(int(rng.integers(1, 5))):
        dictionary = list(rng.permutation(strings)[: int(rng.integers(1, len(strings) + 1))])
        codes = rng.integers(0, len(dictionary), int(rng.integers(1, 3000)))
        chunks.append(pa.DictionaryArray.from_arrays(pa.array(codes, pa.int32()), pa.array(dictionary)))
        rows += [dictionary[code] for code in codes]
    return chunks, rows


def test_first_seen_keeps_nulls_and_orders_the_strings_around_them():
    """A finished game's value, NULL where play goes on (connect's terminal column)."""
    rng = np.random.default_rng(11)
    strings = ["loss", "tie", "win", "draw"]
    for _ in range(40):
        chunks, rows = [], []
        for _ in range(int(rng.integers(1, 4))):
            dictionary = list(rng.permutation(strings)[: int(rng.integers(1, 5))])
            codes = rng.integers(0, len(dictionary), int(rng.integers(1, 2000)))
            nulls = rng.random(codes.size) < rng.random()
            chunks.append(pa.DictionaryArray.from_arrays(pa.array(codes, pa.int8(), mask=nulls), pa.array(dictionary)))
            rows += [None if null else dictionary[code] for code, null in zip(codes, nulls)]
        result = first_seen(pa.chunked_array(chunks))
        assert result.to_pylist() == rows
        assert result.dictionary.to_pylist() == [row for row in dict.fromkeys(rows) if row is not None]
    everything_null = pa.DictionaryArray.from_arrays(pa.array([None, None], pa.int8()), pa.array(["tie"]))
    assert first_seen(pa.chunked_array([everything_null])).to_pylist() == [None, None]


def test_first_seen_orders_each_string_by_its_first_row():
    rng = np.random.default_rng(7)
    strings = [f"take {k}" for k in range(300)]
    for _ in range(40):
        chunks, rows = random_chunks(rng, strings[: int(rng.integers(1, 300))])
        result = first_seen(pa.chunked_array(chunks))
        assert result.to_pylist() == rows
        assert result.dictionary.to_pylist() == list(dict.fromkeys(rows))  # first-seen order, only strings used


def test_same_rows_give_the_same_bytes_however_batched(tmp_path):
    rng = np.random.default_rng(11)
    chunks, rows = random_chunks(rng, [f"move {k}" for k in range(50)])
    numbers = pa.array(np.arange(len(rows)))
    as_chunks = [
        pa.record_batch([numbers.slice(offset, len(chunk)), chunk], schema=SCHEMA)
        for offset, chunk in zip(np.cumsum([0] + [len(c) for c in chunks]), chunks)
    ]
    whole = pa.record_batch([numbers, pa.array(rows).dictionary_encode()], schema=SCHEMA)
    write_batches(iter(as_chunks), tmp_path / "a.parquet", SCHEMA, Encoding(delta=("n",)))
    write_batches(iter([whole]), tmp_path / "b.parquet", SCHEMA, Encoding(delta=("n",)))
    assert (tmp_path / "a.parquet").read_bytes() == (tmp_path / "b.parquet").read_bytes()
    assert pq.read_table(tmp_path / "a.parquet")["name"].to_pylist() == rows


def test_dictionary_columns_are_written_without_min_max(tmp_path):
    batch = pa.record_batch([pa.array([3, 1, 2]), pa.array(["b", "a", "b"]).dictionary_encode()], schema=SCHEMA)
    write_batches(iter([batch]), tmp_path / "t.parquet", SCHEMA)
    group = pq.read_metadata(tmp_path / "t.parquet").row_group(0)
    assert (group.column(0).statistics.min, group.column(0).statistics.max) == (1, 3)
    assert group.column(1).statistics is None or not group.column(1).statistics.has_min_max


def test_first_rows_are_each_codes_first_occurrence():
    """A dictionary column's strings go in the order they first occur: found block by block."""
    from pipeline.storage.parquet import _first_rows

    rng = np.random.default_rng(7)
    for size, count in [(0, 3), (1, 1), (10_000, 5), (50_000, 300), (9_000, 9_000)]:
        codes = rng.integers(0, count, size)
        if size > 8:  # a code seen only at the end
            codes[codes == count - 1] = 0
            codes[-3:] = count - 1
        expected = np.full(count, size)
        for row, code in reversed(list(enumerate(codes.tolist()))):
            expected[code] = row
        assert _first_rows(codes, count).tolist() == expected.tolist()


def test_what_stops_the_writing_is_raised_not_the_failed_close(tmp_path, monkeypatch):
    # Ctrl-C in export's writing came out as Arrow's "Column 5 had 245024 while previous
    # column had 0", raised by closing the half-written file, and exit status 1, not 130
    from pipeline.storage import parquet

    def failing_close(self):
        raise OSError("Column 5 had 245024 while previous column had 0")

    monkeypatch.setattr(parquet.BatchWriter, "close", failing_close)
    schema = pa.schema([("id", pa.int64())])

    def batches():
        yield pa.record_batch([pa.array([1, 2, 3])], schema=schema)
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        write_batches(batches(), tmp_path / "out.parquet", schema)
    assert not list(tmp_path.iterdir())


@pytest.mark.parametrize("size", [0, 1, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 5 * (1 << 18) + 3])
def test_a_files_sha256_is_that_of_its_whole_bytes_whatever_its_size(tmp_path, size):
    """Both ways the checksums are taken (the catalog's, and check's with the file's stat)
    give the SHA-256 of the whole bytes, on files that end before, at and past a read's block."""
    import hashlib

    from pipeline.datadir.check import stamped_sha256
    from pipeline.storage.parquet import sha256

    path = tmp_path / "file"
    path.write_bytes(np.random.default_rng(size).bytes(size))
    expected = hashlib.sha256(path.read_bytes()).hexdigest()
    assert sha256(path) == expected
    stamp, digest = stamped_sha256(path)
    assert digest == expected and stamp is not None and stamp[0] == size
