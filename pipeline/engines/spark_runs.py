"""Spark's walks that must not meet a key twice (reachability's levels, the levels of a
game whose moves return): what they have seen kept partitioned, so that a level shuffles
its own rows only."""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Generator, Iterator
from typing import Any, TypeVar

import pyarrow as pa

T = TypeVar("T")


def map_arrow(frame: Any, function: Callable, schema: str) -> Any:
    """frame.mapInArrow(function, schema), without PySpark's warning about pandas (which
    mapInArrow checks for and does not use)."""
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="PySpark does not yet fully support pandas")
        return frame.mapInArrow(function, schema)


def walked_batches(
    levels: Generator[T, None, bool], batch: Callable[[T], pa.RecordBatch], whole: pa.RecordBatch
) -> Iterator[pa.RecordBatch]:
    """A walk's levels as batches (`batch` of each), then `whole` where the walk says it
    found every level: what the one task of a walk (spark_enumerate's, spark_reach's) gives."""
    while True:
        try:
            level = next(levels)
        except StopIteration as stop:
            if stop.value:
                yield whole
            return
        yield batch(level)


#: The rows a shuffle's partition is cut for where they are known ahead (a level's likely
#: positions, the positions numbered): about Spark's advisory partition (64 MB) in rows of a
#: key and a code. 7x5's widest level (about 10^10 positions) in the 200 partitions a cluster
#: shuffles into unless told would be 5 x 10^7 rows a task; cut so, it is 5,000 tasks.
PARTITION_ROWS = 1 << 21


def partitions_for(spark: Any, rows: int, fewest: str | None = None) -> int:
    """The partitions a shuffle of about `rows` rows is cut into: `fewest` (by default
    spark.sql.shuffle.partitions, the session's, as a user sets it), or more where each
    would hold over PARTITION_ROWS."""
    fewest = fewest or spark.conf.get("spark.sql.shuffle.partitions")
    return max(int(fewest), -(-rows // PARTITION_ROWS), 1)


@contextlib.contextmanager
def shuffling_into(spark: Any, partitions: int) -> Iterator[None]:
    """spark.sql.shuffle.partitions set to `partitions` while a plan is made and run (a
    level's), and as it was after. Adaptive execution, where it is on, still merges the
    partitions of a level smaller than they were cut for."""
    held = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.shuffle.partitions", str(partitions))
    try:
        yield
    finally:
        spark.conf.set("spark.sql.shuffle.partitions", held)


@contextlib.contextmanager
def keeping_partitions(spark: Any) -> Iterator[None]:
    """Spark's adaptive execution off while a level is planned and checkpointed: the
    checkpoint then keeps its rows' partitioning by id, and the next level's join with it
    shuffles only the frontier's side. With it on, a checkpoint's partitioning is forgotten
    and every level shuffles the whole state and every position's parents again. (The
    parents are checkpointed sorted by id too, so that no level sorts them.)"""
    settings = {
        "spark.sql.adaptive.enabled": "false",
        # a Bloom filter of the other side, built by a pass over it, is of no use where no side is shuffled
        "spark.sql.optimizer.runtime.bloomFilter.enabled": "false",
    }
    held = {key: spark.conf.get(key) for key in settings}
    for key, value in settings.items():
        spark.conf.set(key, value)
    try:
        yield
    finally:
        for key, value in held.items():
            spark.conf.set(key, value)


class Runs:
    """The keys a walk has seen (the column `column`), as a few runs, each hash-partitioned
    by the key and sorted within its partitions, checkpointed with keeping_partitions. A
    frame of keys partitioned likewise (a DISTINCT's output, under keeping_partitions) is
    anti-joined with each run in turn (`unseen`) with no shuffle and no sort of the runs:
    where the union of every level was shuffled whole at every level, a level now
    shuffles its own rows.

    A large run is merged with the one before while that one holds fewer than twice its
    keys (a binary counter's carries): at most log2 of the keys' count runs, and each key
    rewritten about as often, where a chain of a run a level would make a plan that grows
    with the levels. Small runs (fewer than SMALL keys, which Spark broadcasts to the
    join) are kept as they come, partitioned or not, until there are SMALL_RUNS of them:
    a merge is a job, and a game's many small levels would pay one every other level."""

    #: A run this small is broadcast to each join (8 bytes a key: 8 MB, under Spark's 10 MB).
    SMALL = 1 << 20
    #: Small runs kept before they are merged into one.
    SMALL_RUNS = 16

    def __init__(self, engine: Any, column: str):
        self.engine, self.column = engine, column
        self.made = 0  # runs made here, for their names
        self.runs: list[tuple[int, Any, str | None]] = []  # (keys, checkpoint, its name where made here)

    def _partitions(self) -> int:
        return int(self.engine.spark.conf.get("spark.sql.shuffle.partitions"))

    def add(self, frame: Any, keys: int, partitioned: bool) -> None:
        """`frame`'s keys kept as a run. `partitioned`: `frame` is a checkpoint made under
        keeping_partitions, hash-partitioned by the key and sorted within its partitions
        (a level made so), kept as it is unless it is merged."""
        merged = []
        if keys >= self.SMALL:
            while self.runs and self.runs[-1][0] < 2 * keys:
                merged.append(self.runs.pop())
        elif sum(held < self.SMALL for held, _, _ in self.runs) >= self.SMALL_RUNS - 1:
            while self.runs and self.runs[-1][0] < self.SMALL:
                merged.append(self.runs.pop())
        keys += sum(held for held, _, _ in merged)
        if not merged and (partitioned or keys < self.SMALL):
            self.runs.append((keys, frame, None))
            return
        union = frame.select(self.column)
        for _, run, _ in merged:
            union = union.unionByName(run.select(self.column))
        with keeping_partitions(self.engine.spark):
            made = union.repartition(self._partitions(), self.column).sortWithinPartitions(self.column)
            made = made.localCheckpoint(eager=True)
        self.made += 1
        name = f"run_{id(self)}_{self.made}"
        self.engine.frames[name] = made  # let go by release()
        self.runs.append((keys, made, name))
        for _, run, owned in merged:  # the walk's own levels are its caller's to keep
            if owned is not None:
                run.unpersist()
                del self.engine.frames[owned]

    def unseen(self, frame: Any) -> Any:
        """`frame`'s rows whose key no run holds."""
        for _, run, _ in self.runs:
            frame = frame.join(run.select(self.column), self.column, "left_anti")
        return frame
