"""pipeline/stages/export.py: the catalog's figures counted while the tablebase is written,
the start positions found from the positions file's last row group, and what the written
files hold (texts without min/max, words read as strings)."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.dataset import POSITIONS
from pipeline.datadir.catalog import read_catalog
from pipeline.stages.export import find_texts
from pipeline.storage import parquet
from pipeline.storage.parquet import write_batches
from tests.conftest import BUILT


def test_the_counts_made_while_writing_are_those_of_the_written_file(built):
    """Wins, losses, ties, draws, reachable, the longest remoteness and the start's row, as
    SQL counts them over each published tablebase (draws and unreachable positions among
    them: chopsticks:split=any)."""
    from pipeline.datadir.layout import DataDir

    rows = {row.ruleset: row for row in read_catalog(DataDir(built))}
    assert set(BUILT) <= set(rows)
    for ruleset in BUILT:
        row = rows[ruleset]
        path = built / row.tablebase_path
        counted = duckdb.sql(
            f"""SELECT count(*), count(*) FILTER (WHERE value = 'win'), count(*) FILTER (WHERE value = 'loss'),
                      count(*) FILTER (WHERE value = 'tie'), count(*) FILTER (WHERE value = 'draw'),
                      count(*) FILTER (WHERE reachable), max(remoteness)
               FROM read_parquet('{path}')"""
        ).fetchall()[0]
        assert counted == (
            row.positions,
            row.wins,
            row.losses,
            row.ties,
            row.draws,
            row.reachable,
            row.max_remoteness,
        ), ruleset
        start = duckdb.sql(
            f"SELECT value, remoteness FROM read_parquet('{path}') WHERE position = '{row.start}'"
        ).fetchall()[0]
        assert start == (row.start_value, row.start_remoteness), ruleset
    assert rows["chopsticks:split=any"].draws > 0 and rows["chopsticks"].reachable < rows["chopsticks"].positions


def test_texts_are_found_in_any_row_group_and_missing_ones_left_out(tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 10)
    schema = POSITIONS.schema([])
    texts = [f"t{n}" for n in range(35)]
    table = pa.table(
        {"id": range(35), "text": texts, "terminal": [None] * 35, "moves": [1] * 35, "rank": [0] * 35},
        schema=schema,
    )
    path = tmp_path / "positions.parquet"
    write_batches(table.to_batches(), path, schema)
    assert pq.ParquetFile(path).metadata.num_row_groups == 4
    assert find_texts(path, ["t34"]) == {"t34": 34}  # the last row group only
    assert find_texts(path, ["t0", "t34", "t17", "t17"]) == {"t0": 0, "t34": 34, "t17": 17}
    assert find_texts(path, ["t3", "nowhere"]) == {"t3": 3}


def test_position_texts_have_no_min_max_and_words_read_as_strings(built):
    """Texts in rank order tell a reader nothing by their range (so none is written); the
    ruleset and value columns, written from dictionaries, read as strings everywhere."""
    folder = next((built / "chopsticks").iterdir())
    for name, text in (("positions", "text"), ("tablebase", "position")):
        meta = pq.ParquetFile(folder / f"{name}.parquet").metadata
        columns = {
            meta.row_group(0).column(i).path_in_schema: meta.row_group(0).column(i) for i in range(meta.num_columns)
        }
        assert columns[text].statistics is None or not columns[text].statistics.has_min_max
        assert columns["id"].statistics.has_min_max
    for name, words in (("tablebase", ("ruleset", "value")), ("solution", ("value",))):
        schema = pq.read_schema(folder / f"{name}.parquet")
        assert all(schema.field(word).type == pa.string() for word in words), name
        assert duckdb.sql(f"SELECT typeof(value) FROM read_parquet('{folder / name}.parquet') LIMIT 1").fetchall() == [
            ("VARCHAR",)
        ]
