"""What only the Spark engine does: its setup's errors, its words for Java's, its reading
of the published files, and its own SQL. What every engine does (the same rows as the
reference solver and the same bytes as DuckDB, the verifier, errors in one line) is
tests/test_engines.py's, run over every engine.

One Spark session serves the whole test run (spark_engine.session(): it takes seconds to
start); the published files it reads are built here by DuckDB, the engines' bytes being
the same.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build

ROOT = Path(__file__).resolve().parent.parent

#: Published files for Spark to read: tictactoe's by a glob, and columns that differ by game
#: (sticks' rows, chopsticks' mover, nim's heaps) read at once.
RULESETS = ["sticks:rows=3", "tictactoe:cols=3,k=3,rows=1", "chopsticks:fingers=3,split=any", "nim:start=1-2-2"]


@pytest.fixture(scope="module")
def duck(tmp_path_factory) -> DataDir:
    duck = DataDir(tmp_path_factory.mktemp("published"))
    for ruleset in RULESETS:
        build(Ruleset.parse(ruleset), duck)
    return duck


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ROOT / ".venv" / "bin" / "tablebase"), *args], capture_output=True, text=True, env=env, timeout=300
    )


def test_no_java_is_one_line_saying_what_to_install(tmp_path):
    env = {key: value for key, value in os.environ.items() if key not in ("JAVA_HOME", "SPARK_HOME")}
    env["PATH"] = "/nonexistent"
    run("build", "sticks:rows=2", "--data", str(tmp_path))
    result = run("solve", "sticks:rows=2", "--engine", "spark", "--data", str(tmp_path), env=env)
    assert result.returncode == 1
    assert result.stderr.startswith("error: the spark engine needs Java 17 or newer") and result.stderr.count("\n") == 1


def test_spark_reads_the_published_files_as_they_are(duck):
    """The README's Spark reader: one game's tablebases by a glob, the catalog's map column,
    the transitions' dictionary-encoded strings."""
    from pipeline.core.dataset import TABLEBASE, game_fields
    from pipeline.engines.spark_engine import session

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


def test_the_data_cards_spark_line_reads_every_game_at_once(duck):
    from pipeline.engines.spark_engine import session
    from pipeline.products.datacard import ALL_GAMES

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
