"""The Spark engine (local mode) builds the same tablebases as DuckDB, byte for byte.

One Spark session serves the whole test run (it takes seconds to start, and each level or
rank step costs Spark a job), so the rulesets here are small ones with few levels: one or
more per game, rank by rank and by retrograde analysis, with draws, ties and misère play,
a plug-in game, and random move graphs with cycles and ties.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import VerificationError
from pipeline.datadir.layout import DataDir, RulesetFiles
from pipeline.engines import engine_kind
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from tests.staged import staged
from tests.test_ties import random_graph, write_graph

ROOT = Path(__file__).resolve().parent.parent

RULESETS = [
    "sticks:rows=3",  # rank by rank, misère
    "chopsticks:fingers=3,split=any",  # cycles: draws, Grundy values only where no cycle is reachable
    "tictactoe:cols=3,k=3,rows=1",  # ties, no Grundy values
    "connect:cols=3,k=3,rows=2",  # positions listed part by part (streamed on DuckDB)
    "nim:start=1-2-2,variant=arrow",  # several legal starts
    "octal:code=0.07,play=misere,start=5",
    "hackenbush:fib=3",
    "takeaway:take=2,tokens=5",  # the example plug-in
]
FILES = ("positions", "transitions", "solution", "verification", "tablebase", "summary")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    root = tmp_path_factory.mktemp("engines")
    duck, spark = DataDir(root / "duckdb"), DataDir(root / "spark")
    for ruleset in RULESETS:
        rules = Ruleset.parse(ruleset)
        build(rules, duck)
        build(rules, spark, engine=engine_kind("spark"))
    return duck, spark


@pytest.mark.parametrize("ruleset", RULESETS)
def test_spark_builds_the_same_files_as_duckdb(built, ruleset):
    duck, spark = built
    rules = Ruleset.parse(ruleset)
    for kind in FILES:
        mine, theirs = getattr(spark.published(rules), kind), getattr(duck.published(rules), kind)
        assert mine.read_bytes() == theirs.read_bytes(), f"{ruleset}: {kind}.parquet differs"


def test_spark_catalog_is_the_duckdb_catalog(built):
    duck, spark = built
    assert pq.read_table(spark.catalog).equals(pq.read_table(duck.catalog))


@pytest.mark.parametrize("seed", [5])
def test_spark_solves_cyclic_graphs_with_ties_and_draws_like_duckdb(tmp_path, seed):
    terminal, children = random_graph(seed, 40, acyclic=False, most=2)
    solutions = []
    for engine in ("duckdb", "spark"):
        files = RulesetFiles(tmp_path / engine)
        write_graph(files, terminal, children, ranked=False)
        staged(solve, files, tmp_path / "tmp", impartial=True, engine=engine)
        staged(verify, files, tmp_path / "tmp", impartial=True, engine=engine)
        solutions.append(files.solution.read_bytes())
    assert solutions[0] == solutions[1]
    values = set(pq.read_table(files.solution)["value"].to_pylist())
    assert values == {"win", "loss", "tie", "draw"}  # the graph exercises every value


def test_spark_verifier_refuses_a_wrong_value(tmp_path):
    terminal, children = random_graph(2, 12, acyclic=True)
    files = RulesetFiles(tmp_path / "graph")
    write_graph(files, terminal, children, ranked=False)
    staged(solve, files, tmp_path / "tmp", impartial=True, engine="spark")
    table = pq.read_table(files.solution)
    rows = table.to_pylist()
    row = next(r for r in rows if r["value"] == "win" and r["remoteness"] > 0)
    row["remoteness"] += 2
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), files.solution)
    with pytest.raises(VerificationError, match="win"):
        staged(verify, files, tmp_path / "tmp", impartial=True, engine="spark")


def test_spark_verifier_refuses_a_wrong_count_of_winning_moves(tmp_path):
    terminal, children = random_graph(2, 12, acyclic=True)
    files = RulesetFiles(tmp_path / "graph")
    write_graph(files, terminal, children, ranked=False)
    staged(solve, files, tmp_path / "tmp", impartial=True, engine="spark")
    table = pq.read_table(files.solution)
    rows = table.to_pylist()
    next(r for r in rows if r["value"] == "win")["winning_moves"] += 1
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), files.solution)
    with pytest.raises(VerificationError, match="winning_moves"):
        staged(verify, files, tmp_path / "tmp", impartial=True, engine="spark")


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ROOT / ".venv" / "bin" / "tablebase"), *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_bad_input_on_spark_is_one_line(tmp_path):
    result = run("build", "tictactoe:k=9", "--engine", "spark", "--data", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "tictactoe" in result.stderr
    assert not (tmp_path / "tictactoe").exists()
    result = run("build", "sticks", "--engine", "sparkle", "--data", str(tmp_path))
    assert result.returncode == 2 and result.stderr == (  # a malformed command line
        "error: invalid value for '--engine': 'sparkle' is not one of 'duckdb', 'spark': see `tablebase build --help`\n"
    )


def test_no_java_is_one_line_saying_what_to_install(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = "/nonexistent"
    run("build", "sticks:rows=2", "--data", str(tmp_path))
    result = run("solve", "sticks:rows=2", "--engine", "spark", "--data", str(tmp_path), env=env)
    assert result.returncode == 1
    assert result.stderr.startswith("error: the spark engine needs Java 17 or newer") and result.stderr.count("\n") == 1


def test_spark_reads_the_published_files_as_they_are(built):
    """The README's Spark reader: one game's tablebases by a glob, the catalog's map column,
    the transitions' dictionary-encoded strings."""
    from pipeline.core.dataset import TABLEBASE, game_fields
    from pipeline.engines.spark_engine import session

    duck, _ = built
    spark = session()
    catalog = {row["ruleset"]: row for row in pq.read_table(duck.catalog).to_pylist()}
    tablebases = spark.read.parquet(str(duck.root / "tictactoe" / "*" / "tablebase.parquet"))
    assert tablebases.count() == sum(row["positions"] for row in catalog.values() if row["game"] == "tictactoe")
    one = duck.root / catalog[Ruleset.parse("tictactoe:cols=3,k=3,rows=1").id]["tablebase_path"]
    assert tablebases.columns == pq.read_schema(one).names
    assert [name for name in tablebases.columns if name not in TABLEBASE.schema().names] == [
        field.name for field in game_fields(pq.read_schema(one), TABLEBASE)
    ]
    sticks = Ruleset.parse("sticks:rows=3").id
    row = spark.read.parquet(str(duck.catalog)).where(f"ruleset = '{sticks}'").first()
    assert row["params"]["rows"] == "3" and row["positions"] == catalog[sticks]["positions"]
    moves = spark.read.parquet(str(duck.root / "sticks" / "*" / "transitions.parquet"))
    assert dict(moves.dtypes)["move"] == "string"
    assert moves.count() == catalog[sticks]["transitions"]


def test_a_spark_failure_is_one_line():
    """A Java exception out of Py4J (here Spark's broadcast running out of memory) becomes
    the Java message, without the stack."""
    from pipeline.cli import describe

    class Py4JJavaError(Exception):
        pass

    Py4JJavaError.__module__ = "py4j.protocol"
    error = Py4JJavaError(
        "An error occurred while calling o2170.localCheckpoint.\n"
        ": org.apache.spark.SparkException: Not enough memory to build and broadcast the table\n"
        "\tat org.apache.spark.sql.errors.QueryExecutionErrors$.notEnough(QueryExecutionErrors.scala:2180)"
    )
    message, status = describe(error)
    assert status == 1 and "\n" not in message
    assert message.startswith("Spark failed: Not enough memory to build and broadcast the table")
    assert "spark.driver.memory" in message


def test_the_same_rows_give_the_same_bytes_however_they_are_batched(tmp_path, monkeypatch):
    """Spark's part files and DuckDB's record batches cut the rows differently; the file
    written from them must not show it (row groups and pages included)."""
    import pipeline.storage.parquet as parquet

    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 1000)
    schema = pa.schema([pa.field("id", pa.int64(), nullable=False), pa.field("text", pa.string())])
    table = pa.table({"id": range(2500), "text": [f"p{i % 37}" for i in range(2500)]}, schema=schema)
    written = []
    for size in (2500, 1000, 333, 7):
        path = tmp_path / f"{size}.parquet"
        assert (
            parquet.write_batches(table.to_batches(max_chunksize=size), path, schema, parquet.Encoding(delta=("id",)))
            == 2500
        )
        written.append(path.read_bytes())
    assert len(set(written)) == 1
    assert [pq.ParquetFile(tmp_path / "7.parquet").metadata.row_group(i).num_rows for i in range(3)] == [
        1000,
        1000,
        500,
    ]


def test_dictionaries_are_written_the_same_however_they_came(tmp_path, monkeypatch):
    """The moves' labels arrive with one dictionary per game batch, or per Spark part file:
    each row group is written with its strings in the order they first occur."""
    import pipeline.storage.parquet as parquet

    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 1000)
    schema = pa.schema(
        [
            pa.field("id", pa.int64(), nullable=False),
            pa.field("move", pa.dictionary(pa.int32(), pa.string()), nullable=False),
        ]
    )
    ids, labels = list(range(2500)), [f"take {(i * 7) % 11}" for i in range(2500)]
    written = []
    for size, encode in ((2500, "whole"), (300, "per batch"), (7, "reversed"), (1000, "strings")):
        batches = []
        for lo in range(0, 2500, size):
            part = labels[lo : lo + size]
            if encode == "strings":
                move = pa.array(part)
            else:
                dictionary = sorted(set(labels if encode == "whole" else part), reverse=encode == "reversed")
                move = pa.DictionaryArray.from_arrays(
                    pa.array([dictionary.index(x) for x in part], pa.int32()), pa.array(dictionary)
                )
            batches.append(pa.RecordBatch.from_arrays([pa.array(ids[lo : lo + size]), move], names=["id", "move"]))
        path = tmp_path / f"{encode}.parquet"
        parquet.write_batches(batches, path, schema, parquet.Encoding(delta=("id",)))
        written.append(path.read_bytes())
    assert len(set(written)) == 1
    assert pq.read_table(tmp_path / "whole.parquet")["move"].to_pylist() == labels


def test_the_moves_are_generated_on_the_executors_and_checked_there(tmp_path, monkeypatch):
    """A game whose rank does not fall is refused in one line from an executor: the driver's
    space gives the numbering, the executors' spaces the moves."""
    import numpy as np

    from pipeline.core.errors import DataError
    from pipeline.games import chopsticks
    from pipeline.stages.enumerate import enumerate_ruleset

    rules = Ruleset.parse("tictactoe:cols=3,k=3,rows=3")  # 9 parts: one per number of marks
    assert rules.game.space(rules).parts() == 9
    files = {engine: DataDir(tmp_path / engine).ruleset(rules) for engine in ("duckdb", "spark")}
    for engine, out in files.items():
        staged(enumerate_ruleset, out, tmp_path / "tmp", rules=rules, engine=engine)
    assert files["spark"].transitions.read_bytes() == files["duckdb"].transitions.read_bytes()
    assert files["spark"].positions.read_bytes() == files["duckdb"].positions.read_bytes()

    monkeypatch.setattr(chopsticks.RankedChopsticksSpace, "rank", lambda self: np.zeros(self.pair.size, np.int64))
    rules = Ruleset.parse("chopsticks")
    with pytest.raises(DataError, match=r"^the game's rank does not fall along the move from position"):
        staged(
            enumerate_ruleset,
            DataDir(tmp_path / "broken").ruleset(rules),
            tmp_path / "tmp",
            rules=rules,
            engine="spark",
        )


def test_the_data_cards_spark_line_reads_every_game_at_once(built):
    from pipeline.engines.spark_engine import session
    from pipeline.products.datacard import ALL_GAMES

    duck, _ = built
    [line] = [line for line in ALL_GAMES if line.startswith("spark.")]
    # the card's glob is a bundle's (files by kind); the data folder's, made absolute (Java's
    # working directory is not Python's), holds the same files
    assert "'tablebase/*/*.parquet'" in line
    frame = eval(line.replace("'tablebase/*/*.parquet'", f"'{duck.root}/*/*/tablebase.parquet'"), {"spark": session()})
    total = sum(pq.read_table(duck.catalog)["positions"].to_pylist())
    assert frame.count() == total and {"rows", "mover", "heaps", "value"} <= set(frame.columns)


def test_spark_decodes_the_packed_scores_as_values_does(tmp_path):
    from pipeline.core.dataset import SOLVER_MADE
    from pipeline.engines.spark_engine import SparkEngine
    from tests.test_values import EDGES, decoded

    engine = SparkEngine(tmp_path)
    try:
        engine.view(
            "res",
            engine.spark.createDataFrame(
                [(i, s, None, None, *(None for _ in SOLVER_MADE)) for i, s in enumerate(EDGES)],
                "id INT, score INT, grundy INT, height INT" + "".join(f", {c.name} INT" for c in SOLVER_MADE),
            ),
        )
        rows = engine.sql("rank_solution").collect()
    finally:
        engine.release()
    assert [tuple(row)[:3] for row in rows] == decoded()
