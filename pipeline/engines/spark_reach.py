"""Reachability on Spark's executors (export's `reachable` column): breadth first from the
starts over the moves files, no position passing through the driver.

1. The first levels, while they hold at most WALKED positions and their moves' row groups
   at most READ moves, walked by one task (`walk`: a job a level would cost more than the
   positions): a small game is walked whole in one job, a large one its first plies.
2. Then level by level on the executors (`Reach`), each level's new positions checkpointed
   alone and the levels so far kept as runs (spark_runs.Runs).
"""

from __future__ import annotations

import functools
from collections.abc import Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.engines.spark_runs import Runs, keeping_partitions, map_arrow, walked_batches
from pipeline.storage import parts
from pipeline.storage.progress import log

#: What the walk of the first levels gives: a position's id and its level; a row at level -1
#: where the walk found every level.
WALKED_SCHEMA = "id long, at int"
#: The first levels are walked by one task while they hold at most this many positions (as
#: enumerate's: pipeline/engines/spark_enumerate.py) ...
WALKED = 1 << 18
#: ... and the row groups of moves their sources lie in hold at most this many moves in all
#: (the task reads those row groups whole, 16 bytes a move): where ids do not follow the plies
#: (a game whose moves return) a level's sources may lie in every row group.
READ = 1 << 23


def _sources(transitions: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row group's least and greatest source and its rows, from the moves file's
    statistics (a row group without them: every source)."""
    meta = parts.read_metadata(transitions)
    column = meta.schema.to_arrow_schema().names.index("src")
    info = np.iinfo(np.int64)
    lo = np.full(meta.num_row_groups, info.min, np.int64)
    hi = np.full(meta.num_row_groups, info.max, np.int64)
    rows = np.zeros(meta.num_row_groups, np.int64)
    for group in range(meta.num_row_groups):
        found = meta.row_group(group)
        rows[group] = found.num_rows
        stats = found.column(column).statistics
        if stats is not None and stats.has_min_max:
            lo[group], hi[group] = int(stats.min), int(stats.max)
    return lo, hi, rows


def walk(transitions: Path, starts: np.ndarray, most: int, read: int) -> Generator[tuple[int, np.ndarray], None, bool]:
    """The levels of a walk from `starts` over the moves file, found in this process:
    (level, ids), a level's ids distinct and sorted, none of a level before; returns whether
    every level was found. The walk stops before a level that would bring the positions
    found past `most`, or before reading the moves of a level whose row groups would bring
    the moves read past `read`; the starts are a level whatever their number."""
    lo, hi, rows = _sources(transitions)
    moves = parts.open_file(transitions)
    seen = np.empty(0, np.int64)
    ids = np.unique(np.asarray(starts, dtype=np.int64))
    found = level = 0
    while ids.size:
        yield level, ids
        found += ids.size
        seen = np.union1d(seen, ids)
        # the row groups that hold a move from the level: some id within their sources' range
        wanted = np.flatnonzero(np.searchsorted(ids, hi, "right") > np.searchsorted(ids, lo, "left"))
        read -= int(rows[wanted].sum())
        if read < 0:
            return False
        kids = np.empty(0, np.int64)
        if wanted.size:
            table = moves.read_row_groups(wanted.tolist(), columns=["src", "dst"])
            src, dst = table["src"].to_numpy(), table["dst"].to_numpy()
            kids = np.unique(dst[np.isin(src, ids)])
        kids = kids[~np.isin(kids, seen, assume_unique=True)]
        if found + kids.size > most:
            return False
        ids, level = kids, level + 1
    return True


def _walked(
    transitions: str, starts: list[int], most: int, read: int, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """On an executor (one task, whatever it is given): `walk`'s levels, and a row at level
    -1 where they are every level."""
    for _ in batches:
        pass
    yield from walked_batches(
        walk(Path(transitions), np.asarray(starts, dtype=np.int64), most, read),
        lambda found: pa.RecordBatch.from_arrays(
            [pa.array(found[1]), pa.array(np.full(found[1].size, found[0], np.int32))], names=["id", "at"]
        ),
        pa.RecordBatch.from_arrays([pa.array([0]), pa.array([-1], pa.int32())], names=["id", "at"]),
    )


class Reach:
    """Reachability level by level, touching the frontier only: the first levels walked by
    one task (`walk`), then each level's new positions checkpointed alone, and the levels
    so far kept as a few runs partitioned by id (spark_runs.Runs), so a level shuffles and
    writes only its own, where rewriting the whole state (spark_engine.Levels) wrote a row
    a position each level.

    A level's moves are read by the frontier's range of ids where it is narrow
    (sql/spark/reachable_range.sql: the moves files' row groups outside it skipped, as
    a game numbered by plies has it), else from every position's children
    (reachable_level.sql), made once, on the first wide level. The view `reach` (id, seen,
    at: reached.sql) is the walk's result, made from the levels (the view `seen`) when read."""

    #: A frontier whose ids span at most this share of all ids reads its moves by range.
    NARROW = 0.25

    def __init__(self, engine: Any, starts: list[int]):
        self.engine, self.starts = engine, starts
        self.levels: list[Any] = []
        self.runs = Runs(engine, "id")
        self.span: tuple[int, int] = (0, -1)  # the last level's least and greatest id
        self.ids = 0  # every position's
        self.walked: list[int] = []  # the positions of each level the task walked
        self.whole = False  # the task walked every level

    def _views(self) -> None:
        seen = self.levels[0]
        for other in self.levels[1:]:
            seen = seen.unionByName(other)
        self.engine.view("seen", seen)
        self.engine.view("reach", self.engine.sql("reached"))

    def _keep(self, frame: Any, level: int) -> int:
        """A level found by the executors checkpointed, counted and its range found as it
        is written (one job)."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        counted = Observation(f"reach_{level}")
        frame = frame.sortWithinPartitions("id").observe(
            counted, F.count(F.lit(1)).alias("found"), F.min("id").alias("lo"), F.max("id").alias("hi")
        )
        frame = frame.localCheckpoint(eager=True)
        found = int(counted.get["found"] or 0)
        if found:
            self.span = (int(counted.get["lo"]), int(counted.get["hi"]))
        self.levels.append(frame)
        self.engine.frames[f"reach_{level}"] = frame  # let go by release()
        self.runs.add(frame, found, True)
        self.engine.view("frontier", frame.select("id"))
        self._views()
        return found

    def first(self) -> int:
        """The task's walk (one job), its levels counted and their ranges found (another)."""
        from pyspark.sql import functions as F

        self.ids = self.engine.rows("SELECT count(*) FROM positions")[0][0]
        spark = self.engine.spark
        walking = functools.partial(
            _walked, str(self.engine.paths["transitions"]), [int(i) for i in self.starts], WALKED, READ
        )
        walked = map_arrow(spark.range(1, numPartitions=1), walking, WALKED_SCHEMA).localCheckpoint(eager=True)
        self.engine.frames["reach_walked"] = walked  # let go by release()
        counted = walked.groupBy("at").agg(F.count(F.lit(1)), F.min("id"), F.max("id")).collect()
        held = sorted((int(at), int(found), int(lo), int(hi)) for at, found, lo, hi in counted)
        self.whole = bool(held) and held[0][0] == -1
        held = held[1:] if self.whole else held
        self.walked = [found for _, found, _, _ in held]
        frame = walked.where("at >= 0")
        self.levels.append(frame)
        self._views()
        if not held:
            return 0
        self.runs.add(frame, sum(self.walked), False)
        last, _, lo, hi = held[-1]
        self.span = (lo, hi)
        # the walk is one partition: spread over the shuffle's, as the levels Spark finds
        partitions = int(spark.conf.get("spark.sql.shuffle.partitions"))
        self.engine.view("frontier", walked.where(f"at = {last}").select("id").repartition(partitions, "id"))
        log.debug(
            "spark: reachability walked %d levels in one task%s", len(held), " (every level)" if self.whole else ""
        )
        return self.walked[0]

    def step(self, level: int) -> int:
        if level < len(self.walked):
            return self.walked[level]
        if self.whole or not self.walked:
            return 0
        lo, hi = self.span
        with keeping_partitions(self.engine.spark):
            if hi - lo + 1 <= self.NARROW * self.ids:
                log.debug("spark: reachable level %d reads the moves from ids %d to %d", level, lo, hi)
                found = self.engine.sql("reachable_range", level=level, lo=lo, hi=hi)
            else:
                self.engine.children()
                found = self.engine.sql("reachable_level", level=level)
            return self._keep(self.runs.unseen(found), level)
