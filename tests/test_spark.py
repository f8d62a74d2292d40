"""What only the Spark engine does without a Spark session: its setup's errors, its words
for Java's, and its writing of part files' rows. What every engine does (the same rows as the
reference solver and the same bytes as DuckDB, the verifier, errors in one line) is
tests/test_engines.py's, run over every engine; so are Spark's own tests that start its
session (its reading of the published files, its own SQL), to share that file's JVM.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

ROOT = Path(__file__).resolve().parent.parent


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


def test_a_spark_failure_is_one_line(monkeypatch):
    """A Java exception out of Py4J (here Spark's broadcast running out of memory) becomes
    the Java message, without the stack."""
    pytest.importorskip("pyspark")
    import pipeline.engines.spark_engine  # noqa: F401 - an error can only be Spark's once it is loaded
    from pipeline.cli import describe
    from pipeline.storage import progress

    # no stage failed before in this process (a test of a verifier's refusal leaves its name)
    monkeypatch.setattr(progress, "failed_in", [])

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


#: Run in a Python of its own: Ctrl-C raised in its main thread once the JVM it starts is up
#: (while PySpark waits for the JVM to say its port), then the pids of the processes it had
#: started when interrupted printed.
INTERRUPTED_START = """
import os, signal, sys, threading, time
from pipeline.engines import spark_engine

signal.signal(signal.SIGINT, signal.default_int_handler)  # pytest-xdist's workers ignore it: so would we
started = []

def interrupt():
    while not started:
        started.extend(spark_engine._children())
        time.sleep(0.01)
    os.kill(os.getpid(), signal.SIGINT)

threading.Thread(target=interrupt, daemon=True).start()
try:
    spark_engine.session()
except KeyboardInterrupt:
    print(" ".join(map(str, started)))
"""


def _running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def test_a_signal_while_spark_starts_leaves_no_jvm_behind():
    """Interrupted while PySpark waited for its JVM, the JVM ran on for ever, an orphan (its
    main thread failed and Py4J's server thread kept it up): spark_engine._end_started ends
    it."""
    pytest.importorskip("pyspark")
    if not Path("/proc").is_dir() or (shutil.which("java") is None and not os.environ.get("JAVA_HOME")):
        pytest.skip("needs Java and /proc")
    env = {key: value for key, value in os.environ.items() if key not in ("TABLEBASE_SPARK_MASTER", "SPARK_REMOTE")}
    result = subprocess.run(
        [str(ROOT / ".venv" / "bin" / "python"), "-c", INTERRUPTED_START],
        capture_output=True,
        text=True,
        env=env,
        cwd=ROOT,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr
    jvms = [int(pid) for pid in result.stdout.split()]
    assert jvms, f"the session started before the interrupt landed: {result.stdout!r}"
    deadline = time.monotonic() + 60
    while any(_running(pid) for pid in jvms) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = [pid for pid in jvms if _running(pid)]
    for pid in left:
        os.kill(pid, 9)
    assert not left, f"the JVM started before the interrupt still runs: {left}"
