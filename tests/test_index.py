"""index.parquet: every position's id by a hash of its text (pipeline/core/dataset.py INDEX),
written by export, read by probe to find a text without reading every text.

The hashes are recomputed here with hashlib, not DuckDB's md5_number, so the definition
published in the schema (TEXT_HASH) is held to what the files hold."""

from __future__ import annotations

import hashlib

import pyarrow.parquet as pq
import pytest

from pipeline.core.dataset import INDEX
from pipeline.datadir.catalog import read_catalog
from pipeline.datadir.layout import DataDir
from pipeline.products import probe as probing
from pipeline.stages.export import INDEX_GROUP_ROWS
from tests.conftest import BUILT


def md5_hash(text: str) -> int:
    return int.from_bytes(hashlib.md5(text.encode("utf-8")).digest()[12:], "little")


@pytest.mark.parametrize("ruleset", BUILT)
def test_the_index_holds_every_position_once_by_its_texts_hash_in_order(built, ruleset):
    row = next(row for row in read_catalog(DataDir(built)) if row.ruleset == ruleset)
    folder = built / row.folder
    index = pq.read_table(folder / "index.parquet")
    assert index.schema == INDEX.schema()
    texts = dict(
        zip(*(c.to_pylist() for c in pq.read_table(folder / "tablebase.parquet", columns=["id", "position"]).columns))
    )
    rows = list(zip(index["hash"].to_pylist(), index["id"].to_pylist()))
    assert len(rows) == row.positions == len(texts)
    assert sorted(rows) == rows
    assert {id_ for _, id_ in rows} == set(texts)
    assert all(hash_ == md5_hash(texts[id_]) for hash_, id_ in rows)
    assert probing.text_hash(row.start) == md5_hash(row.start)


def test_the_index_is_written_in_row_groups_of_its_own_size_each_with_its_range(tmp_path, monkeypatch):
    """A lookup decodes one row group of it: they are INDEX_GROUP_ROWS (here 50), not the
    million of the other files, and each has the min/max a reader skips the others by."""
    from pipeline.games.rulesets import Ruleset
    from pipeline.stages import export
    from pipeline.stages.build import build

    monkeypatch.setattr(export, "INDEX_GROUP_ROWS", 50)
    build(Ruleset.parse("chopsticks"), DataDir(tmp_path))
    meta = pq.read_metadata(tmp_path / "chopsticks" / "default" / "index.parquet")
    assert (meta.num_rows, meta.num_row_groups) == (224, 5)
    ranges = [meta.row_group(g).column(0).statistics for g in range(meta.num_row_groups)]
    assert all(r.has_min_max for r in ranges)
    assert all(a.max <= b.min for a, b in zip(ranges, ranges[1:]))
    assert INDEX_GROUP_ROWS == 1 << 16


def test_probe_finds_every_position_by_its_text(built):
    row = next(row for row in read_catalog(DataDir(built)) if row.ruleset == "chopsticks:split=any")
    table = pq.read_table(built / row.tablebase_path, columns=["position", "value", "remoteness"]).to_pylist()
    for position in table[::7]:  # every position is asked over HTTP too (tests/test_serve.py)
        found = probing.probe(row.ruleset, position["position"], built)
        assert (found.position, found.value, found.remoteness) == (
            position["position"],
            position["value"],
            position["remoteness"],
        )


def test_texts_sharing_a_hash_are_told_apart_by_their_texts(built, tmp_path, monkeypatch):
    """An index where every position shares one hash (as two texts of a billion may share
    one of 2^32), over several row groups: each text still finds its own row, and a text that is no position, with
    that hash too, finds none rather than another position's."""
    import pyarrow as pa

    row = next(row for row in read_catalog(DataDir(built)) if row.ruleset == "chopsticks")
    tablebase = built / row.tablebase_path
    texts = pq.read_table(tablebase, columns=["id", "position", "value", "remoteness"]).to_pylist()
    crowded = tmp_path / "index.parquet"
    pq.write_table(  # in row groups of 50: the one hash runs over all of them
        pa.table({"hash": [7] * len(texts), "id": [t["id"] for t in texts]}, schema=INDEX.schema()),
        crowded,
        row_group_size=50,
    )
    monkeypatch.setattr(probing, "text_hash", lambda text: 7)
    with probing.connection() as con:
        for text in texts:
            found = probing.find(con, str(crowded), str(tablebase), text["position"])
            assert found == (text["id"], text["value"], text["remoteness"])
        # a text of the right form that is no position of the ruleset: hashed like the rest here
        assert probing.find(con, str(crowded), str(tablebase), "9-9|9-9") is None


@pytest.mark.parametrize("damage", ["flipped byte", "fifo"])
def test_a_damaged_index_is_refused_in_words_before_it_is_read(built, tmp_path, damage):
    """The index is looked up like the tablebase: a byte changed is a checksum that differs,
    a FIFO in its place is no regular file; either is a DataError naming the file, and no
    lookup reads it (a FIFO read would wait for ever)."""
    import os
    import shutil

    from pipeline.core.errors import DataError

    data = tmp_path / "data"
    shutil.copytree(built, data)
    index = data / "chopsticks" / "default" / "index.parquet"
    if damage == "fifo":
        index.unlink()
        os.mkfifo(index)
    else:
        raw = bytearray(index.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        index.write_bytes(bytes(raw))
    with pytest.raises(DataError, match="index"):
        probing.probe("chopsticks", "1-1|1-1", data)
