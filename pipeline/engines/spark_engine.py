"""The Spark engine: the same stages on Apache Spark, in local mode or on a cluster.

Its SQL is in pipeline/sql/spark/, one SELECT per file with named parameters (`:level`).
Spark has no UPDATE or INSERT on views, so a level step returns the whole new state, which
is checkpointed (`localCheckpoint`: the executors keep it, and the plan does not grow from
level to level); the positions finished on a level are those whose level column is the
level's number. The executors write the moves, the solution, the tablebase, its index and
its lookup themselves, as folders of parts cut by ranges of their key (`write_parts`,
`write_lookup`), each part in the bytes DuckDB would give its rows: none of those rows
passes through this process.

Where Spark runs:
  TABLEBASE_SPARK_MASTER   the master URL (default local[*]): spark://host:7077 for a
                           standalone cluster, yarn, k8s://…
  SPARK_REMOTE             a Spark Connect server (sc://host:15002) instead
  TABLEBASE_SPARK_CONF     more settings, `key=value` separated by spaces
                           (e.g. "spark.driver.memory=8g spark.executor.memory=16g")
On a cluster, the data folder (and its scratch folders) must be on storage every node
sees: a shared filesystem mounted at the same path everywhere; and enumerate runs the games'
generators in the executors' Python (PYSPARK_PYTHON, by default this process's Python),
which needs tablebase and any game plug-in installed.
"""

from __future__ import annotations

import atexit
import contextlib
import dataclasses
import functools
import json
import logging
import os
import pickle
import re
import shutil
import signal
import sys
import tempfile
import warnings
from collections.abc import Callable, Iterator, Sequence
from importlib import resources
from pathlib import Path
from typing import Any, ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core import values
from pipeline.core.dataset import PUBLISHED_TRANSITIONS
from pipeline.core.errors import DataError, TablebaseError
from pipeline.engines import spark_alone
from pipeline.engines.arrays import child_floors, floor_above
from pipeline.engines.base import Capabilities, EngineKind, Steps, Tally, WrittenMoves, by_id_join, declared
from pipeline.engines.spark_reach import Reach
from pipeline.engines.spark_runs import keeping_partitions, map_arrow, partitions_for
from pipeline.games.rulesets import space_of
from pipeline.storage import parts
from pipeline.storage.db import parse_size, sql_text
from pipeline.storage.files import atomic_folder
from pipeline.storage.imports import show_pandas
from pipeline.storage.parquet import AS_TYPED, Encoding, write_batches
from pipeline.storage.progress import log

show_pandas()  # the command line hides it (pipeline/storage/imports.py); pyspark's driver checks it is there

#: Shuffle partitions in local mode: Spark's default of 200 makes every small step slow.
LOCAL_PARTITIONS = 8
#: The driver's memory in local mode (Spark's default, 1 GiB, cannot broadcast one level's
#: frontier of sticks rows=10); TABLEBASE_SPARK_CONF's spark.driver.memory overrides it.
LOCAL_MEMORY = "4g"


def local_heap() -> int:
    """Bytes of this machine's memory the Spark engine's JVM may take: spark.driver.memory in
    local mode (TABLEBASE_SPARK_CONF's, else LOCAL_MEMORY); 0 with a cluster, whose executors
    run elsewhere (a cluster's driver heap holds little: plans, counts)."""
    if os.environ.get("SPARK_REMOTE") or not os.environ.get("TABLEBASE_SPARK_MASTER", "local").startswith("local"):
        return 0
    memory = LOCAL_MEMORY
    for setting in os.environ.get("TABLEBASE_SPARK_CONF", "").split():
        key, _, value = setting.partition("=")
        if key == "spark.driver.memory":
            memory = value
    return parse_size(memory + ("iB" if memory[-1:].isalpha() else ""), "spark.driver.memory")


class SparkSetupError(TablebaseError):
    """Spark cannot start: pyspark or Java is missing, or the master cannot be reached."""


_SESSION: Any = None


def require() -> None:
    """SparkSetupError, one line saying what to install, unless pyspark and Java are there
    (checked before any work, without starting Spark)."""
    # pyspark warns about pandas versions; the engine moves no data through pandas
    warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas", category=FutureWarning)
    try:
        import pyspark.sql  # noqa: F401
    except ImportError:
        raise SparkSetupError(
            "the spark engine needs pyspark: pip install 'tablebase[spark]' (make install does), and Java 17 or newer"
        ) from None
    if not os.environ.get("SPARK_REMOTE") and shutil.which("java") is None and not os.environ.get("JAVA_HOME"):
        raise SparkSetupError(
            "the spark engine needs Java 17 or newer: install it "
            "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless) or set JAVA_HOME"
        )


def session() -> Any:
    """The process's one Spark session, started on first use (5–15 s) and stopped at exit."""
    global _SESSION
    if _SESSION is not None:
        return _SESSION
    require()
    from pyspark.sql import SparkSession

    master = os.environ.get("TABLEBASE_SPARK_MASTER", "local[*]")
    # enumerate runs the games' generators in Spark's Python workers: this Python, with the
    # pipeline and its games installed, unless PYSPARK_PYTHON names another
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    builder = SparkSession.builder.appName("tablebase")
    # Spark's log at level error, one line each, instead of its start-up banner and warnings
    quiet = resources.files("pipeline.engines").joinpath("log4j2.properties")
    builder = builder.config("spark.driver.extraJavaOptions", f"-Dlog4j2.configurationFile=file:{quiet}")
    if os.environ.get("SPARK_REMOTE"):
        builder = builder.remote(os.environ["SPARK_REMOTE"])
    else:
        builder = builder.master(master)
        builder = builder.config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false")
        if master.startswith("local"):
            # in local mode the driver does all the work: give it what DuckDB may use
            builder = builder.config("spark.sql.shuffle.partitions", str(LOCAL_PARTITIONS))
            builder = builder.config("spark.driver.memory", LOCAL_MEMORY)
    # Our Parquet files are compressed 10-30x (delta-encoded ids, dictionaries): without this
    # Spark takes the transitions of sticks rows=10 (14 M rows) for a small table and
    # broadcasts them to every join, running out of memory.
    builder = builder.config("spark.sql.sources.fileCompressionFactor", "30")
    for setting in os.environ.get("TABLEBASE_SPARK_CONF", "").split():
        key, _, value = setting.partition("=")
        builder = builder.config(key, value)
    before = set(_children())
    try:
        with _jvm_output_to(JVM_LOG):
            _SESSION = builder.getOrCreate()
    except BaseException as error:  # Py4J and Java errors have no common base; a signal is not an Exception
        _end_started(before)
        if not isinstance(error, Exception):  # Ctrl-C, SIGTERM: the command line says it
            raise
        first = (str(error).strip().splitlines() or [type(error).__name__])[0]
        raise SparkSetupError(f"Spark did not start ({master}): {first} (Java's output: {JVM_LOG})") from None
    if not os.environ.get("SPARK_REMOTE"):
        _SESSION.sparkContext.setLogLevel("ERROR")
    logging.getLogger("py4j").setLevel(logging.WARNING)  # not a line per connection closed
    atexit.register(_stop)
    log.info("spark: session on %s, Spark %s", master, _SESSION.version)
    return _SESSION


def _children() -> list[int]:
    """This process's child processes, from /proc (none where there is no /proc)."""
    me, found = os.getpid(), []
    with contextlib.suppress(OSError):
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError, ValueError, IndexError), open(f"/proc/{entry}/stat") as stat:
                    if int(stat.read().rsplit(")", 1)[1].split()[1]) == me:
                        found.append(int(entry))
    return found


def _end_started(before: set[int]) -> None:
    """End the JVM that a session's start left behind. A signal while PySpark waits for its
    JVM removes the folder where the JVM was to say its port; the JVM's main thread then
    fails, and Py4J's server thread keeps it running for ever, an orphan (seen: SIGTERM 6 s
    into `build --engine spark`). SIGTERM lets it run its shutdown hooks."""
    for pid in set(_children()) - before:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGTERM)


def failure(error: BaseException) -> str:
    """The line that says why a Spark call failed: the Java exception's message, without its
    class name and stack (Py4J puts it on the line starting with ': ')."""
    lines = [line.strip() for line in str(error).splitlines() if line.strip()]
    java = next((line[2:] for line in lines if line.startswith(": ")), lines[0] if lines else type(error).__name__)
    kind, _, message = java.partition(": ")
    found = message if message and "." in kind and " " not in kind else java
    if "Not enough memory" in found or "OutOfMemory" in found:
        found += (
            " — give Spark more with TABLEBASE_SPARK_CONF='spark.driver.memory=8g' (local mode) "
            "or spark.executor.memory on a cluster"
        )
    return found


#: Where the JVM's own output goes (its start-up notices, errors with their stacks): the
#: pipeline reports a failed Spark call in one line (`failure`), so the terminal gets no more.
JVM_LOG = Path(tempfile.gettempdir()) / f"tablebase-spark-{os.getpid()}.log"


@contextlib.contextmanager
def _jvm_output_to(path: Path) -> Iterator[None]:
    """Standard error pointed at `path` while the JVM starts: it inherits that for its life."""
    sys.stderr.flush()
    saved = os.dup(2)
    target = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.dup2(target, 2)
        yield
    finally:
        os.dup2(saved, 2)
        os.close(saved)
        os.close(target)


def _stop() -> None:
    global _SESSION
    if _SESSION is not None:
        _SESSION.stop()
        _SESSION = None
        JVM_LOG.unlink(missing_ok=True)


def parameters() -> dict[str, Any]:
    """pipeline/core/values.py's variables as the named parameters of pipeline/sql/spark/: a
    value's code under its word (`:tie`), the word itself under `<word>_word`, and `:band`
    (Spark's parameters cannot be lists, so no value_names)."""
    found = {key: value for key, value in values.sql_variables().items() if key != "value_names"}
    return {**found, **{f"{word}_word": word for word in values.WORDS}}


class SparkEngine:
    # the games' generators run on the executors (transitions)
    capabilities: ClassVar[Capabilities] = Capabilities(name="spark", sql_folder="spark", local_moves=False)

    @staticmethod
    def require() -> None:
        """The module's require(): pyspark and Java, checked without starting Spark."""
        require()

    @staticmethod
    def heap() -> int:
        """The JVM's memory in local mode (local_heap)."""
        return local_heap()

    @staticmethod
    def explain(error: BaseException) -> tuple[str, str] | None:
        """Py4J's and pyspark's errors: the Java exception's message (`failure`)."""
        if type(error).__module__.split(".")[0] in ("py4j", "pyspark"):
            return "Spark failed", failure(error)
        return None

    def __init__(self, temp_dir: Path):
        self.spark = session()
        self.temp_dir = temp_dir
        self.frames: dict[str, Any] = {}  # every view this engine made, by name
        self.paths: dict[str, Path] = {}  # the views read from a file, their files
        self.configured: str | None = None  # spark.sql.shuffle.partitions, where changed here

    def register(self, view: str, path: Path) -> None:
        self.paths[view] = path
        if view == "positions":  # what a stage reads and writes is as large as its positions
            self._cut_for(parts.read_metadata(path).num_rows)
        self.view(view, self.spark.read.parquet(str(parts.located(path))))  # a file, or its folder of parts

    def _cut_for(self, rows: int) -> None:
        """Spark's shuffles cut for a ruleset of `rows` positions (spark_runs.partitions_for)
        until the engine closes: Spark's one setting, spark.sql.shuffle.partitions, would
        be every ruleset's, from a few positions to 10^11."""
        if self.configured is None:
            self.configured = self.spark.conf.get("spark.sql.shuffle.partitions")
        self.spark.conf.set("spark.sql.shuffle.partitions", str(partitions_for(self.spark, rows, self.configured)))

    def view(self, name: str, frame: Any) -> Any:
        """`frame` as the view `name` (replacing the one before)."""
        frame.createOrReplaceTempView(name)
        self.frames[name] = frame
        return frame

    def sql(self, name: str, **params: Any) -> Any:
        """The DataFrame of pipeline/sql/spark/<name>.sql with its parameters."""
        text = declared(sql_text(name, SparkEngine.capabilities.sql_folder))
        used = {key: value for key, value in {**parameters(), **params}.items() if re.search(rf":{key}\b", text)}
        return self.spark.sql(text, args=used)

    def rows(self, sql: str) -> list[tuple]:
        return [tuple(row) for row in self.spark.sql(sql).collect()]

    def one_of(self, expression: str, words: Sequence[str]) -> str:
        """As it is: the text reaches Arrow as a string, which `write` makes a dictionary."""
        return expression

    def text_hash(self, expression: str) -> str:
        """Spark has no md5_number: its md5's hex digits 25-32 (the digest's last 4 bytes),
        byte by byte in reverse order (little-endian), as a number."""
        digest = f"md5({expression})"
        pairs = ", ".join(f"substr({digest}, {start}, 2)" for start in (31, 29, 27, 25))
        return f"CAST(conv(concat({pairs}), 16, 10) AS BIGINT)"

    def write(
        self,
        sql: str,
        path: Path,
        schema: pa.Schema,
        encoding: Encoding = AS_TYPED,
        order: Sequence[str] = ("id",),
        tally: Tally | None = None,
        convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
        progress: Callable[[int], None] | None = None,
        keys: tuple[int, int] | None = None,
    ) -> int:
        """The executors write the rows as a folder of parts (`write_parts`)."""
        rows = self.write_parts(self.spark.sql(sql), path, schema, encoding, order, tally, convert, keys)
        if progress is not None:
            progress(rows)
        return rows

    def write_lookup(
        self,
        tablebase: Path,
        transitions: Path,
        path: Path,
        schema: pa.Schema,
        encoding: Encoding,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """A task a part of the tablebase: the executor merges it with the moves from its
        ids (found by the moves' row group statistics) and writes the lookup's part of those
        ids; this process lays the parts out in order."""
        pieces = [str(piece) for piece in parts.parts(tablebase)]
        folder = self.temp_dir / f"spark-{path.stem}"
        shutil.rmtree(folder, ignore_errors=True)
        written = folder / "parts"
        written.mkdir(parents=True)
        write = functools.partial(
            _write_lookups,
            pieces,
            str(transitions),
            str(written),
            schema,
            dataclasses.replace(encoding, part_rows=None),
        )
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
                tasks = self.spark.range(len(pieces), numPartitions=max(1, len(pieces)))
                summaries = tasks.mapInArrow(write, WRITTEN_SCHEMA).collect()
        except Exception as error:  # noqa: BLE001 - raised on an executor
            raise _executor_error(error) from None
        try:
            _lay_out(written, path, schema, encoding, [summary["bucket"] for summary in summaries])
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        rows = sum(summary["rows"] for summary in summaries)
        if progress is not None:
            progress(rows)
        return rows

    def transitions(
        self,
        rules: Any,
        space: Any,
        numbering: Any,
        bound: int,
        scratch: Path,
        generated: Callable[[int], None] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """The game's generators on the executors, one part of the moves at a time
        (Space.parts): each executor builds the ruleset's space itself and renumbers its moves
        from the numbering this process saves beside the parts. Spark sorts them into
        buckets of consecutive sources, written as Parquet part files and read back here in
        order; no process holds every move."""
        folder, frame = self._moves(rules, space, numbering, bound)
        written = folder / "buckets"
        try:
            frame.write.partitionBy("bucket").parquet(str(written))
        except Exception as error:  # noqa: BLE001 - a game's own error, raised on an executor
            raise _executor_error(error) from None
        return _read_buckets(written, folder)

    def write_transitions(
        self, rules: Any, space: Any, numbering: Any, bound: int, path: Path, encoding: Encoding
    ) -> WrittenMoves:
        """The moves made on the executors (as `transitions`), each bucket of consecutive
        sources written by the executor that sorted it as a part of the folder at `path`,
        with the file's own schema and encoding; this process then only names the parts in
        order (buckets without a move make none) and adds up each source's moves."""
        folder, frame = self._moves(rules, space, numbering, bound)
        try:
            summaries = self._write_parts(
                frame.select("bucket", "src", "dst", "move"), path, PUBLISHED_TRANSITIONS, encoding, rules.id, folder
            )
            counts = np.zeros(bound, dtype=np.int64)
            for summary in summaries:
                held = np.frombuffer(summary["counts"], dtype=np.int64)
                counts[summary["lo"] : summary["lo"] + held.size] += held
            return WrittenMoves(sum(summary["rows"] for summary in summaries), counts)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def write_searched(
        self,
        rules: Any,
        search: Any,
        files: Any,
        schema: pa.Schema,
        encodings: tuple[Encoding, Encoding],
        with_counts: Callable[[pa.Table, Any, pa.Array], pa.Table],
        found: Callable[[int], None] | None = None,
    ) -> tuple[int, int]:
        """A searching space's positions found, numbered and written with their moves by
        the executors (pipeline/engines/spark_enumerate.py), as folders of parts:
        (positions, transitions)."""
        from pipeline.engines.spark_enumerate import Enumeration

        try:
            size = rules.game.size(rules)
            bound = None if size is None else size.positions
            return Enumeration(self, rules.id, search, found, bound).write(
                files.positions, schema, encodings[0], files.transitions, encodings[1], with_counts
            )
        except Exception as error:  # noqa: BLE001 - a game's own error, raised on an executor
            raise _executor_error(error) from None

    def write_parts(
        self,
        frame: Any,
        path: Path,
        schema: pa.Schema,
        encoding: Encoding,
        order: Sequence[str] = ("id",),
        tally: Tally | None = None,
        convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
        keys: tuple[int, int] | None = None,
    ) -> int:
        """A DataFrame's rows (its columns are those of `schema`, in its order, by whatever
        names; before `convert`, where it is given) written by the executors as a folder of
        parts at `path`, in order of the columns `order`: cut into buckets by ranges of the
        first (integers, from `keys`' least to its greatest: found by a job of their own
        where not given), each sorted and written by the executor that holds it, which
        counts its row groups into a copy of `tally` (merged into it here) and converts its
        batches. The rows."""
        from pyspark.sql import functions as F

        key = order[0]
        if len(frame.columns) == len(schema):  # else `convert` makes the file's columns
            frame = frame.toDF(*schema.names)
        low, high = keys if keys is not None else frame.agg(F.min(key), F.max(key)).first()
        low, high = int(low or 0), int(high or 0)
        buckets = max(int(self.spark.conf.get("spark.sql.shuffle.partitions")), 1)
        span = max(high - low + 1, 1)  # no rows at all: (0, -1)

        bucketed = frame.select(
            ((F.col(key) - low) * buckets / span).cast("int").alias("bucket"), *[F.col(name) for name in frame.columns]
        )
        folder = self.temp_dir / f"spark-{path.stem}"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        try:
            ordered = bucketed.repartition(buckets, "bucket").sortWithinPartitions("bucket", *order)
            summaries = self._write_parts(ordered, path, schema, encoding, None, folder, tally, convert)
            if tally is not None:  # in order of the buckets, as one process would have counted
                for summary in sorted(summaries, key=lambda summary: summary["bucket"]):
                    tally.merge(pickle.loads(summary["tally"]))
            return sum(summary["rows"] for summary in summaries)
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def _write_parts(
        self,
        frame: Any,
        path: Path,
        schema: pa.Schema,
        encoding: Encoding,
        ruleset: str | None,
        folder: Path,
        tally: Tally | None = None,
        convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
    ) -> list[Any]:
        """Write `frame` (a bucket column, then the columns of `schema`, but a first
        `ruleset` one where `ruleset` is given, each bucket in one partition, sorted) on the
        executors, a file a bucket, and lay the files out in bucket order as the folder of
        parts at `path`; the executors' summaries (`_write_buckets`)."""
        written = folder / "parts"
        written.mkdir()
        # a part a bucket (spark.sql.shuffle.partitions of them), whatever part_rows says
        write = functools.partial(
            _write_buckets,
            str(written),
            schema,
            dataclasses.replace(encoding, part_rows=None),
            ruleset,
            None if tally is None else pickle.dumps(tally),
            convert,
        )
        try:
            with warnings.catch_warnings():
                warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
                summaries = frame.mapInArrow(write, WRITTEN_SCHEMA).collect()
        except Exception as error:  # noqa: BLE001 - a game's own error, raised on an executor
            raise _executor_error(error) from None
        _lay_out(written, path, schema, encoding, [summary["bucket"] for summary in summaries])
        return summaries

    def _moves(self, rules: Any, space: Any, numbering: Any, bound: int) -> tuple[Path, Any]:
        """A scratch folder holding the numbering the executors renumber the moves by, and
        the moves as a DataFrame: made part by part on the executors, in buckets of
        consecutive sources, each bucket in one partition sorted by source and the game's
        own id of the child (the published order)."""
        folder = self.temp_dir / "spark-moves"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        if numbering is not None:
            np.save(folder / "new_id.npy", numbering.new_id)
            np.save(folder / "rank.npy", numbering.rank)
        count = space.parts()
        buckets = partitions_for(self.spark, bound)
        slices = max(1, min(count, self.spark.sparkContext.defaultParallelism * 4))
        generate = functools.partial(_generate, rules.id, str(folder), numbering is not None, max(1, bound), buckets)
        with warnings.catch_warnings():  # mapInArrow checks pandas, which it does not use here
            warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
            frame = self.spark.range(count, numPartitions=slices).mapInArrow(generate, MOVES_SCHEMA)
        return folder, frame.repartition(buckets, "bucket").sortWithinPartitions("bucket", "src", "game_dst")

    def solver(self, impartial: bool) -> SparkSolver:
        return SparkSolver(self, impartial)

    def check_facts(self, impartial: bool, query: str) -> Iterator[tuple[int, tuple]]:
        """Every position's facts at once: Spark spreads the work itself; a small ruleset's
        (spark_alone.small) by one task, the DuckDB engine's."""
        if spark_alone.small(self.paths["positions"], self.paths["transitions"]):
            yield from self._checked_by_one_task(impartial, query)
            return
        self.view("facts", self.sql("verify", impartial=impartial))
        yield self.rows("SELECT count(*) FROM positions")[0][0], self.rows(query)[0]

    def _checked_by_one_task(self, impartial: bool, query: str) -> Iterator[tuple[int, tuple]]:
        """check_facts run by one task (spark_alone.checked_batches): each part's row."""
        folder = self.temp_dir / "spark-alone-verify"
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        paths = (str(self.paths["positions"]), str(self.paths["transitions"]), str(self.paths["solution"]))
        checking = functools.partial(spark_alone.checked_batches, paths, str(folder), impartial, query)
        try:
            rows = self.one_task(checking, spark_alone.FACTS_SCHEMA)
        finally:
            shutil.rmtree(folder, ignore_errors=True)
        log.debug("spark: verified by one task (%s positions or fewer)", f"{spark_alone.POSITIONS:,}")
        for row in rows:
            yield int(row["held"]), tuple(json.loads(row["row"]))

    def one_task(self, function: Callable, schema: str) -> list[Any]:
        """The rows `function` (batches in, batches of `schema` out) gives, run by one task
        (spark_alone.py's work); its error on the executor as its own one line."""
        try:
            return map_arrow(self.spark.range(1, numPartitions=1), function, schema).collect()
        except Exception as error:  # noqa: BLE001 - a DataError of the files', raised on an executor
            raise _executor_error(error) from None

    def by_id(self, views: dict[str, str]) -> tuple[str, str]:
        """Joined on id, with no ORDER BY: `write` sorts each part itself."""
        return by_id_join(views, ordered=False)

    def reach(self, starts: list[int]) -> Reach:
        held = self.frames.pop("children", None)  # a walk before's
        if held is not None:
            held.unpersist()
        return Reach(self, starts)

    def children(self) -> None:
        """The view `children` (sql/spark/children.sql), made and checkpointed once a walk,
        where a level's frontier is too wide to read its moves by their range."""
        if "children" not in self.frames:
            with keeping_partitions(self.spark):  # by id, sorted, as the levels: joined without a shuffle or a sort
                children = self.sql("children").sortWithinPartitions("id")
                self.view("children", children.localCheckpoint(eager=True))

    def release(self) -> None:
        """Every view this engine made dropped, and what it cached let go."""
        for frame in self.frames.values():
            with contextlib.suppress(Exception):  # a view read from a file has nothing cached
                frame.unpersist()
        for name in self.frames:
            self.spark.catalog.dropTempView(name)
        self.frames = {}

    def close(self) -> None:
        """The process's Spark session stays up for the next (it stops at exit), its
        shuffles cut as they were."""
        self.release()
        if self.configured is not None:
            self.spark.conf.set("spark.sql.shuffle.partitions", self.configured)
            self.configured = None


#: mypy checks here that the class is an Engine (pipeline/engines/base.py).
_CHECKED: EngineKind = SparkEngine


#: What each executor returns for enumerate: the moves, renumbered, with their bucket
#: (a run of consecutive sources) and the game's own id of the child (the order within a source).
MOVES_SCHEMA = "bucket int, src long, dst long, game_dst long, move string"


def _generate(
    ruleset_id: str, folder: str, numbered: bool, bound: int, buckets: int, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """On an executor: the moves of the parts named in `batches` (one id column)."""
    from pipeline.graph.numbering import check_rank_falls

    space = space_of(ruleset_id)  # once a Python worker
    new_id = np.load(Path(folder) / "new_id.npy", mmap_mode="r") if numbered else None
    rank = np.load(Path(folder) / "rank.npy", mmap_mode="r") if numbered else None
    for batch in batches:
        for part in batch.column(0).to_numpy().tolist():
            for moves in space.transitions_part(part):
                game_src, game_dst = moves.column("src").to_numpy(), moves.column("dst").to_numpy()
                src, dst = game_src, game_dst
                if new_id is not None and rank is not None:  # numbered
                    src, dst = new_id[game_src].astype(np.int64), new_id[game_dst].astype(np.int64)
                    check_rank_falls(rank, src, dst)
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array((src * buckets // bound).astype(np.int32)),
                        pa.array(src),
                        pa.array(dst),
                        pa.array(game_dst),
                        moves.column("move").cast(pa.string()),
                    ],
                    names=["bucket", "src", "dst", "game_dst", "move"],
                )


#: What each executor returns of the buckets it wrote (`_write_buckets`): no row, only how
#: many, each source's count (of the moves: from `lo` on, as int64 bytes), and its tally
#: (pickled, where one was asked for).
WRITTEN_SCHEMA = "bucket int, rows long, lo long, counts binary, tally binary"
_WRITTEN = pa.schema(
    [("bucket", pa.int32()), ("rows", pa.int64()), ("lo", pa.int64()), ("counts", pa.binary()), ("tally", pa.binary())]
)


def _bucket_name(bucket: int) -> str:
    return f"bucket-{bucket:05d}.parquet"


def _write_buckets(
    folder: str,
    schema: pa.Schema,
    encoding: Encoding,
    ruleset_id: str | None,
    tally: bytes | None,
    convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None,
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """On an executor: the rows of its partition (a bucket column, then the file's columns
    but its first `ruleset` where `ruleset_id` names it; bucket by bucket, each sorted), each
    bucket written to `folder` as one Parquet file of `schema` (its batches made the file's
    by `convert`); a summary row a bucket, with each value's count of the first column
    written (a move's source), and its row groups counted by a copy of the empty `tally`."""
    ruleset = pa.array([ruleset_id])

    def runs() -> Iterator[tuple[int, list[pa.RecordBatch]]]:
        """(bucket, its batches), bucket by bucket: a bucket's rows are consecutive."""
        current, held = None, []
        for batch in batches:
            bucket = batch.column(0).to_numpy()
            cuts = [0, *(np.flatnonzero(bucket[1:] != bucket[:-1]) + 1).tolist(), len(bucket)]
            for lo, hi in zip(cuts[:-1], cuts[1:]):
                if hi == lo:
                    continue
                if current is not None and int(bucket[lo]) != current:
                    yield current, held
                    held = []
                current = int(bucket[lo])
                held.append(batch.slice(lo, hi - lo))
        if current is not None:
            yield current, held

    for bucket, held in runs():
        lo, counts = 0, np.zeros(0, np.int64)
        if ruleset_id is not None:  # the moves: each source's count, for the positions file
            src = np.concatenate([batch.column(1).to_numpy() for batch in held])
            lo = int(src.min())
            counts = np.bincount(src - lo).astype(np.int64)
        published = (
            pa.RecordBatch.from_arrays(
                [
                    *(
                        [pa.DictionaryArray.from_arrays(np.zeros(batch.num_rows, np.int8), ruleset)]
                        if ruleset_id is not None
                        else []
                    ),
                    *batch.columns[1:],
                ],
                # the frame's own names where `convert` makes the file's columns
                names=[*(schema.names[:1] if ruleset_id is not None else []), *batch.schema.names[1:]],
            )
            for batch in held
        )
        counted = None if tally is None else pickle.loads(tally)
        observe = None if counted is None else counted.add
        rows = write_batches(published, Path(folder) / _bucket_name(bucket), schema, encoding, observe, convert)
        yield pa.RecordBatch.from_pylist(
            [
                {
                    "bucket": bucket,
                    "rows": rows,
                    "lo": lo,
                    "counts": counts.tobytes(),
                    "tally": b"" if counted is None else pickle.dumps(counted),
                }
            ],
            schema=_WRITTEN,
        )


def _lay_out(written: Path, path: Path, schema: pa.Schema, encoding: Encoding, buckets: list[int]) -> None:
    """The buckets' files in `written`, in order of bucket, as the folder of parts at `path`."""
    if not buckets:  # no row at all: one empty part, as one file would be
        write_batches(iter(()), path, schema, dataclasses.replace(encoding, part_rows=1))
        return
    with atomic_folder(parts.folder_of(path)) as laid:
        for number, bucket in enumerate(sorted(buckets)):
            os.rename(written / _bucket_name(bucket), laid / parts.part_name(number))
    path.unlink(missing_ok=True)


def _write_lookups(
    pieces: list[str],
    transitions: str,
    folder: str,
    schema: pa.Schema,
    encoding: Encoding,
    batches: Iterator[pa.RecordBatch],
) -> Iterator[pa.RecordBatch]:
    """On an executor: for each part of the tablebase named in `batches` (by its number in
    `pieces`), the lookup's rows of its ids written to `folder` as one file. The first part
    takes every move below its last id, the last every move above its first, so a move from
    no position is found (lookup_batches) rather than dropped."""
    from pipeline.engines.lookup import lookup_batches

    for batch in batches:
        for number in batch.column(0).to_numpy().tolist():
            footer = pq.read_metadata(pieces[number])
            column = footer.schema.to_arrow_schema().get_field_index("id")
            lo = hi = None
            if footer.num_row_groups:
                lo = footer.row_group(0).column(column).statistics.min
                hi = footer.row_group(footer.num_row_groups - 1).column(column).statistics.max
            within = (None if number == 0 else lo, None if number == len(pieces) - 1 else hi)
            merged = lookup_batches(Path(pieces[number]), Path(transitions), within)
            rows = write_batches(merged, Path(folder) / _bucket_name(number), schema, encoding)
            yield pa.RecordBatch.from_pylist(
                [{"bucket": number, "rows": rows, "lo": 0, "counts": b"", "tally": b""}], schema=_WRITTEN
            )


def _executor_error(error: BaseException) -> BaseException:
    """A pipeline error raised on an executor as itself (its one line), else as it came."""
    from pipeline.core import errors

    found = re.findall(r"pipeline\.core\.errors\.(\w+): (.+)", str(error))
    if found:
        kind, message = found[-1]
        return getattr(errors, kind, errors.DataError)(message.strip())
    return error


def _read_buckets(written: Path, folder: Path) -> Iterator[pa.RecordBatch]:
    """The part files of every bucket, bucket by bucket: (src, dst, move) in order. Each
    bucket was one shuffle partition, so it is one file sorted by source."""
    try:
        found = {int(path.name.partition("=")[2]): sorted(path.glob("*.parquet")) for path in written.glob("bucket=*")}
        for bucket in sorted(found):
            if len(found[bucket]) != 1:
                raise DataError(f"Spark wrote {len(found[bucket])} files for bucket {bucket} of the moves, not one")
            moves = pq.ParquetFile(found[bucket][0], read_dictionary=["move"])
            yield from moves.iter_batches(batch_size=1 << 20, columns=["src", "dst", "move"])
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class Levels:
    """Steps over one of pipeline/sql/spark/'s level statements: the state (a view named
    `state`) is rebuilt by each level from the view `frontier` and checkpointed; `finished`
    says, as SQL over the new state, which rows a level finished; the next frontier is
    their `columns`."""

    def __init__(
        self,
        engine: SparkEngine,
        state: str,
        first: Callable[[], Any],
        sql_name: str,
        finished: Callable[[int], str],
        columns: str,
    ):
        self.engine, self.state, self._first, self.sql_name = engine, state, first, sql_name
        self.finished, self.columns = finished, columns

    def _advance(self, frame: Any, level: int) -> int:
        """The new state checkpointed, and the rows the level finished counted as it is
        written (an Observation: one job a level, not a second to count the frontier)."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        old = self.engine.frames.get(self.state)
        finished = Observation(f"{self.state}_{level}")
        frame = frame.observe(finished, F.expr(f"count_if({self.finished(level)})").alias("finished"))
        frame = self.engine.view(self.state, frame.localCheckpoint(eager=True))
        if old is not None:
            old.unpersist()
        # the next level reads the frontier from the checkpoint: no recomputing
        self.engine.view("frontier", frame.where(self.finished(level)).selectExpr(*self.columns.split(", ")))
        return int(finished.get["finished"] or 0)

    def first(self) -> int:
        with keeping_partitions(self.engine.spark):
            return self._advance(self._first(), 0)

    def step(self, level: int) -> int:
        with keeping_partitions(self.engine.spark):
            return self._advance(self.engine.sql(self.sql_name, level=level), level)


class SparkSolver:
    """pipeline/sql/spark/: rank_level.sql rank by rank, else solve_*.sql and grundy_*.sql;
    a small ruleset by one task (spark_alone.py)."""

    def __init__(self, engine: SparkEngine, impartial: bool):
        self.engine, self.spark, self.impartial = engine, engine.spark, impartial
        self.results: list[tuple[int, Any]] = []  # (last id, checkpointed frame) a rank solved
        self.floors: tuple[np.ndarray, np.ndarray] | None = None  # the moves' (child_floors)
        # a small ruleset's solve by one task: each analysis's positions finished a level
        self.by_task: dict[str, list[int]] | None = None
        self.alone = self.engine.temp_dir / "spark-alone"
        self.small: bool | None = None  # whether it is (spark_alone.small), once asked

    def _by_one_task(self, ranked: bool) -> bool:
        """Whether the ruleset is solved by one task (spark_alone.small), the task run at the
        first step asked for: the solve's counts kept, its solution the view `alone`."""
        paths = self.engine.paths
        if self.small is None:  # asked once: a rank or level does not read every part's footer again
            self.small = spark_alone.small(paths["positions"], paths["transitions"])
        if self.by_task is None and self.small:
            shutil.rmtree(self.alone, ignore_errors=True)
            self.alone.mkdir(parents=True)
            solving = functools.partial(
                spark_alone.solved_batches,
                str(paths["positions"]),
                str(paths["transitions"]),
                str(self.alone),
                self.impartial,
                ranked,
            )
            rows = self.engine.one_task(solving, spark_alone.COUNTS_SCHEMA)
            counts: dict[str, list[int]] = {name: [] for name in spark_alone.ANALYSES}
            for analysis, _, finished in sorted(rows, key=lambda row: (row["analysis"], row["level"])):
                counts.setdefault(analysis, []).append(int(finished))
            self.by_task = counts
            self.engine.view("alone", self.spark.read.parquet(str(self.alone / spark_alone.SOLUTION_FILE)))
            log.debug("spark: solved by one task (%s positions or fewer)", f"{spark_alone.POSITIONS:,}")
        return self.by_task is not None

    def _recorded(self, analysis: str) -> Steps:
        """The one task's levels of `analysis`, replayed."""
        return spark_alone.Recorded((self.by_task or {}).get(analysis, []))

    def by_rank(self, positions: int, moves: int) -> bool:
        """Always: a small ruleset's solve is one task already (`_by_one_task`), and a rank
        a job costs no more than a level a job."""
        return True

    def ranks(self) -> list[tuple[int, int, int, int]]:
        return self.engine.rows("SELECT rank, min(id), max(id), count(*) FROM positions GROUP BY rank ORDER BY rank")

    def _solved(self, floor: int = 0) -> None:
        """The view `res`: the ranks solved so far that hold an id of `floor` or more."""
        union = self.spark.sql("SELECT 0 AS id, 0 AS score, 0 AS grundy, 0 AS height WHERE false")
        for last, frame in self.results:
            if last >= floor:
                union = union.unionByName(frame, allowMissingColumns=True)  # the solver-made columns
        self.engine.view("res", union)

    def rank(self, lo: int, hi: int) -> Iterator[pa.RecordBatch]:
        """Solve lo..hi; its rows are given with every rank's at the end (`rest`). Its moves
        meet only the ranks they may lead into (from the moves file's statistics, as the
        DuckDB engine keeps its ranks): a rank's plan and reads do not grow with the ranks
        before it."""
        if self._by_one_task(True):
            return iter(())  # every rank solved by the task, at the first
        if self.floors is None:
            self.floors = child_floors(self.engine.paths["transitions"])
        self._solved(floor_above(self.floors, lo - 1))
        done = self.engine.sql("rank_level", lo=lo, hi=hi, impartial=self.impartial)
        self.results.append((hi, done.localCheckpoint(eager=True)))
        return iter(())

    def _parents(self) -> None:
        """The view `parents` (sql/spark/parents.sql), made and checkpointed once a solve."""
        if "parents" not in self.engine.frames:
            with keeping_partitions(self.spark):  # by id, as the levels' states: joined without a shuffle
                parents = self.engine.sql("parents").sortWithinPartitions("id")
                self.engine.view("parents", parents.localCheckpoint(eager=True))

    def values(self) -> Steps:
        if self._by_one_task(False):
            return self._recorded("values")
        self._parents()
        return Levels(
            self.engine,
            "st",
            lambda: self.engine.sql("solve_setup"),
            "solve_level",
            lambda level: f"rem = {level} AND val IN ({values.Value.WIN.code}, {values.Value.LOSS.code})",
            "id, val",
        )

    def ties(self) -> Steps:
        if self._by_one_task(False):
            return self._recorded("ties")
        self._parents()
        return Levels(
            self.engine,
            "st",
            lambda: self.engine.frames["st"],
            "solve_tie_level",
            lambda level: f"rem = {level} AND val = {values.Value.TIE.code}",
            "id, val",
        )

    def grundy(self) -> Steps:
        if self._by_one_task(False):
            return self._recorded("grundy")
        self._parents()
        return Levels(
            self.engine,
            "gst",
            lambda: self.engine.sql("grundy_setup"),
            "grundy_level",
            lambda level: f"height = {level}",
            "id, grundy",
        )

    def _solution(self, ranked: bool) -> Any:
        """The whole solution, in id order, decoded by sql/spark/rank_solution.sql or
        solve_solution.sql, or the one task's."""
        if self.by_task is not None:
            return self.engine.frames["alone"]
        if ranked:
            self._solved()
            return self.engine.sql("rank_solution")
        if not self.impartial:  # no Grundy values were computed: the solution's are NULL
            self.engine.view(
                "gst",
                self.spark.sql("SELECT 0L AS id, CAST(NULL AS INT) AS grundy, CAST(NULL AS INT) AS height WHERE false"),
            )
        return self.engine.sql("solve_solution", impartial=self.impartial)

    def write(
        self, ranked: bool, path: Path, schema: pa.Schema, encoding: Encoding, given: Iterator[pa.RecordBatch]
    ) -> int:
        """The ranks solved as `given` is read (they give no row: every row comes at the
        end), then the whole solution written by the executors as a folder of parts."""
        for batch in given:
            if batch.num_rows:
                raise AssertionError("Spark's ranks give their rows at the end")
        ids = parts.read_metadata(self.engine.paths["positions"]).num_rows
        try:
            return self.engine.write_parts(self._solution(ranked), path, schema, encoding, keys=(0, ids - 1))
        finally:
            shutil.rmtree(self.alone, ignore_errors=True)
