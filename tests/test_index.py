"""index.parquet and lookup.parquet (pipeline/core/dataset.py INDEX, LOOKUP), written by
export and read by probe: every position's id by a hash of its text, and its row with its
moves by id, so that a lookup reads a few small row groups and no other text.

The hashes are recomputed here with hashlib, not DuckDB's md5_number, so the definition
published in the schema (TEXT_HASH) is held to what the files hold; the lookup's rows are
held to the tablebase's and its moves to the transitions', read by DuckDB."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.core.dataset import INDEX, LOOKUP
from pipeline.core.errors import DataError
from pipeline.datadir.catalog import read_catalog
from pipeline.datadir.layout import DataDir
from pipeline.engines.lookup import lookup_batches
from pipeline.products import probe as probing
from tests.conftest import BUILT


def catalog_row(built, ruleset: str):
    return next(row for row in read_catalog(DataDir(built)) if row.ruleset == ruleset)


def md5_hash(text: str) -> int:
    return int.from_bytes(hashlib.md5(text.encode("utf-8")).digest()[12:], "little")


@pytest.mark.parametrize("ruleset", BUILT)
def test_the_index_holds_every_position_once_by_its_texts_hash_in_order(built, ruleset):
    row = catalog_row(built, ruleset)
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


def test_probe_finds_every_position_by_its_text(built):
    row = catalog_row(built, "chopsticks:split=any")
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

    row = catalog_row(built, "chopsticks")
    tablebase = built / row.tablebase_path
    texts = pq.read_table(tablebase, columns=["id", "position", "value", "remoteness"]).to_pylist()
    crowded = tmp_path / "index.parquet"
    pq.write_table(  # in row groups of 50: the one hash runs over all of them
        pa.table({"hash": [7] * len(texts), "id": [t["id"] for t in texts]}, schema=INDEX.schema()),
        crowded,
        row_group_size=50,
    )
    monkeypatch.setattr(probing, "text_hash", lambda text: 7)
    lookup = str(built / row.folder / "lookup.parquet")
    # each text looked up reads the rows of the candidates before its own, up to all 165:
    # every text took 19 s; every seventh and the last reach into every row group of 50
    for text in [*texts[::7], texts[-1]]:
        found = probing.find(str(crowded), lookup, text["position"])
        assert found is not None
        assert (found["id"], found["value"], found["remoteness"]) == (text["id"], text["value"], text["remoteness"])
    # a text of the right form that is no position of the ruleset: hashed like the rest here
    assert probing.find(str(crowded), lookup, "9-9|9-9") is None


@pytest.mark.parametrize("ruleset", BUILT)
def test_the_lookup_holds_the_tablebases_rows_with_the_transitions_moves(built, ruleset):
    import duckdb

    row = catalog_row(built, ruleset)
    folder = built / row.folder
    lookup = pq.read_table(folder / "lookup.parquet")
    assert lookup.schema == LOOKUP.schema()
    assert lookup["id"].to_pylist() == sorted(lookup["id"].to_pylist())
    con = duckdb.connect()
    tablebase, transitions = str(folder / "tablebase.parquet"), str(folder / "transitions.parquet")
    rows = con.execute(
        "SELECT id, position, value, remoteness FROM read_parquet(?) ORDER BY id", [tablebase]
    ).fetchall()
    assert [tuple(r.values()) for r in lookup.select(["id", "position", "value", "remoteness"]).to_pylist()] == rows
    moves = con.execute("SELECT src, move, dst FROM read_parquet(?) ORDER BY src, dst", [transitions]).fetchall()
    listed = [(r["id"], move, dst) for r in lookup.to_pylist() for dst, move in zip(r["dst"], r["move"])]
    assert listed == moves
    assert len(listed) == row.transitions


def test_the_lookup_is_written_in_row_groups_of_its_own_size_and_read_across_them(tmp_path, monkeypatch):
    """A lookup decodes one row group for the position and one for each child: they are
    LOOKUP_GROUP_ROWS (here 50), each with its id range; probe then finds every position
    and its moves, whichever groups they fall in, as the tablebase says them."""
    from pipeline.games.rulesets import Ruleset
    from pipeline.stages import export
    from pipeline.stages.build import build

    monkeypatch.setattr(export, "LOOKUP_GROUP_ROWS", 50)
    build(Ruleset.parse("chopsticks:split=any"), DataDir(tmp_path))
    folder = tmp_path / "chopsticks" / "split-any"
    meta = pq.read_metadata(folder / "lookup.parquet")
    assert meta.num_row_groups == -(-meta.num_rows // 50) > 2
    ranges = [meta.row_group(g).column(0).statistics for g in range(meta.num_row_groups)]
    assert all(r.has_min_max for r in ranges)
    assert all(a.max < b.min for a, b in zip(ranges, ranges[1:]))
    table = pq.read_table(folder / "tablebase.parquet", columns=["id", "position", "value", "remoteness"])
    by_id = {r["id"]: r for r in table.to_pylist()}
    transitions = pq.read_table(folder / "transitions.parquet", columns=["src", "dst", "move"]).to_pylist()
    for position in table.to_pylist()[::5]:
        found = probing.probe("chopsticks:split=any", position["position"], tmp_path)
        assert (found.value, found.remoteness) == (position["value"], position["remoteness"])
        expected = sorted(
            (t["move"], by_id[t["dst"]]["position"], by_id[t["dst"]]["value"], by_id[t["dst"]]["remoteness"])
            for t in transitions
            if t["src"] == position["id"]
        )
        assert sorted((m.move, m.position, m.value, m.remoteness) for m in found.moves) == expected


def test_the_lookup_is_merged_a_batch_of_moves_at_a_time(built, tmp_path, monkeypatch):
    """Positions are given as soon as their moves are all read: with moves read 7 at a time,
    a tablebase of one row group is given in parts of at most 7 moves besides one position's,
    the same rows as read whole (sticks:rows=10 held its 14.5 M moves at once: 2.3 GiB)."""
    import pyarrow as pa

    from pipeline.engines import lookup

    folder = built / "chopsticks" / "split-any"
    tablebase, transitions = pq.read_table(folder / "tablebase.parquet"), pq.read_table(folder / "transitions.parquet")
    pq.write_table(tablebase, tmp_path / "tablebase.parquet")  # one row group
    pq.write_table(transitions, tmp_path / "transitions.parquet", row_group_size=5)
    whole = pa.Table.from_batches(
        list(lookup_batches(tmp_path / "tablebase.parquet", tmp_path / "transitions.parquet"))
    )
    monkeypatch.setattr(lookup, "ROW_GROUP_ROWS", 7)
    parts = list(lookup_batches(tmp_path / "tablebase.parquet", tmp_path / "transitions.parquet"))
    most = max(len(moves) for moves in whole["dst"].to_pylist())
    assert len(parts) > tablebase.num_rows // (7 + most)
    assert all(sum(len(moves) for moves in part["dst"].to_pylist()) <= 7 + most for part in parts)
    assert pa.Table.from_batches(parts).equals(whole) and whole.num_rows == tablebase.num_rows


def test_a_part_of_the_tablebase_gets_the_lookup_rows_of_its_ids_alone(built, tmp_path):
    """Spark's executors write the lookup a part of the tablebase each: the moves from its
    ids found by the moves' row groups (of 5 here), the first part taking every move below
    its ids and the last every move above, so the parts' rows are the whole's."""
    import pyarrow as pa

    folder = built / "chopsticks" / "split-any"
    tablebase, transitions = pq.read_table(folder / "tablebase.parquet"), pq.read_table(folder / "transitions.parquet")
    pq.write_table(transitions, tmp_path / "transitions.parquet", row_group_size=5)
    whole = pa.Table.from_batches(list(lookup_batches(folder / "tablebase.parquet", tmp_path / "transitions.parquet")))
    cuts = [0, 7, 40, tablebase.num_rows]
    given = []
    for number, (lo, hi) in enumerate(zip(cuts[:-1], cuts[1:])):
        pq.write_table(tablebase.slice(lo, hi - lo), tmp_path / f"part-{number}.parquet")
        within = (None if number == 0 else lo, None if hi == tablebase.num_rows else hi - 1)
        given += list(lookup_batches(tmp_path / f"part-{number}.parquet", tmp_path / "transitions.parquet", within))
    assert pa.Table.from_batches(given).to_pylist() == whole.to_pylist()  # the values' dictionaries differ
    assert sum(len(moves) for moves in whole["dst"].to_pylist()) == transitions.num_rows


@pytest.mark.parametrize("disorder", ["tablebase", "transitions", "stray move"])
def test_the_lookup_is_not_written_from_files_out_of_order(built, tmp_path, disorder):
    """The lookup merges two files read in id order: one out of that order, or a move from
    no position, is a DataError naming the file, not a list of another position's moves."""
    import pyarrow as pa

    folder = built / "chopsticks" / "default"
    tablebase, transitions = pq.read_table(folder / "tablebase.parquet"), pq.read_table(folder / "transitions.parquet")
    if disorder == "tablebase":
        tablebase = pa.concat_tables([tablebase.slice(100), tablebase.slice(0, 100)])
    elif disorder == "transitions":
        transitions = pa.concat_tables([transitions.slice(100), transitions.slice(0, 100)])
    else:
        stray = transitions.slice(0, 1).set_column(1, transitions.schema.field("src"), pa.array([10**9], pa.int64()))
        transitions = pa.concat_tables([transitions, stray])
    pq.write_table(tablebase, tmp_path / "tablebase.parquet", row_group_size=64)
    pq.write_table(transitions, tmp_path / "transitions.parquet", row_group_size=64)
    with pytest.raises(DataError, match=disorder.split()[-1] if disorder != "stray move" else "transitions"):
        list(lookup_batches(tmp_path / "tablebase.parquet", tmp_path / "transitions.parquet"))


@pytest.mark.parametrize("kind", ["index", "lookup"])
@pytest.mark.parametrize("damage", ["flipped byte", "fifo"])
def test_a_damaged_index_or_lookup_is_refused_in_words_before_it_is_read(built, tmp_path, damage, kind):
    """They are looked up like the tablebase: a byte changed is a checksum that differs,
    a FIFO in its place is no regular file; either is a DataError naming the file, and no
    lookup reads it (a FIFO read would wait for ever)."""
    import os
    import shutil

    data = tmp_path / "data"
    shutil.copytree(built, data)
    made = data / "chopsticks" / "default" / f"{kind}.parquet"
    if damage == "fifo":
        made.unlink()
        os.mkfifo(made)
    else:
        raw = bytearray(made.read_bytes())
        raw[len(raw) // 2] ^= 0xFF
        made.write_bytes(bytes(raw))
    with pytest.raises(DataError, match=kind):
        probing.probe("chopsticks", "1-1|1-1", data)


def test_the_static_explorer_groups_children_by_the_lookups_row_groups():
    """parquet.js asks children within a row group's span of each other in one query (at
    most two row groups read): its span is the row groups export writes."""
    import re

    from pipeline.stages.export import LOOKUP_GROUP_ROWS

    script = (Path(__file__).resolve().parent.parent / "pipeline" / "explorer" / "parquet.js").read_text()
    assert [int(n) for n in re.findall(r"const SPAN = (\d+)n;", script)] == [LOOKUP_GROUP_ROWS]
