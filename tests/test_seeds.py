"""The seeds' published results, read from the exported tablebases."""

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.products.query import run_sql
from pipeline.tablebases import Tablebases

QUERIES = Path(__file__).resolve().parent.parent / "queries"


def start_of(data: Path, ruleset: str) -> dict:
    catalog = pq.read_table(data / "catalog.parquet").to_pylist()
    return next(row for row in catalog if row["ruleset"] == ruleset)


def test_seed003_state_graph_counts_and_second_player_win(built):
    sql = (QUERIES / "seed003_state_graph.sql").read_text()
    [row] = run_sql(built, sql, {"ruleset": "chopsticks"}).to_pylist()
    assert row == {
        "nodes": 165,
        "edges": 273,
        "finished_won_by_first": 8,
        "finished_won_by_second": 8,
        "winner": "second player",
    }


def test_seed000_split_any_is_second_player_win(built):
    row = start_of(built, "chopsticks:split=any")
    assert (row["start"], row["start_value"]) == ("1-1|1-1", "loss")


@pytest.mark.parametrize("ruleset", ["chopsticks:overflow=rollover", "chopsticks:split=dead"])
def test_loops_make_the_start_a_draw(built, ruleset):
    row = start_of(built, ruleset)
    assert row["start_value"] == "draw"
    assert row["start_remoteness"] is None


@pytest.fixture(scope="module")
def sticks_data(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("sticks")
    Tablebases(data).build(*(f"sticks:rows={rows}" for rows in range(1, 11)))
    return data


def test_seed001_table_rows_1_to_10(sticks_data):
    sql = (QUERIES / "seed001_sticks_table.sql").read_text()
    rows = run_sql(sticks_data, sql).to_pylist()
    assert [(r["play"], r["rows"]) for r in rows] == [("misere", n) for n in range(1, 11)]
    first = [r["rows"] for r in rows if r["winner"] == "first"]
    assert first == [2, 4, 5, 6, 8, 9, 10]
    assert all(r["winner"] == r["seed_says"] for r in rows)
