"""Enumerate on Spark's executors, for a game whose space can search (Space.search):
no position passes through the driver.

1. The levels: the first, while they hold at most WALKED positions, walked by one
   task (`walk`: a job a level would cost more than the positions); then each level's
   positions are coded (terminal or not) by the executors and checkpointed; the children
   of its positions played on are made by the executors and made distinct by a shuffle
   (less, where moves can return, those of every level before: an anti-join), which is
   the next level. The driver holds each level's count.
2. The ids: every position sorted at once by the game's order (level, then terminal code
   where it says, then key), in ranges of it (Spark's range partitioning); a position's id
   is its partition's first (from the partitions' counts) plus its place there.
3. The files: each range is a part of positions.parquet, written by the executor that
   holds it (each position's moves counted there, from its children); the moves are made
   again from the positions played on, joined to their children's ids (a shuffle), and
   written as parts by ranges of their source (SparkEngine.write_parts).

Every step's function runs on an executor, from the ruleset's id: the executor makes the
game's space itself (`searched`), once a Python worker.
"""

from __future__ import annotations

import functools
import shutil
from collections.abc import Callable, Generator, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.core.dataset import PUBLISHED_TRANSITIONS
from pipeline.core.errors import DataError
from pipeline.engines.spark_runs import (
    Runs,
    keeping_partitions,
    map_arrow,
    partitions_for,
    shuffling_into,
    walked_batches,
)
from pipeline.storage.parquet import Encoding

#: What a level holds: each position's key and terminal code (Search.codes).
LEVEL_SCHEMA = "key long, code byte"
#: What the walk of the first levels gives: a level's, and the level.
WALKED_SCHEMA = "key long, code byte, level int"
#: The first levels are walked by one task while they hold at most this many positions. A
#: level on Spark is two jobs of 0.3-1 s each whatever its size: connect 4x4's 17 levels
#: (161 k positions) took 14 s so in local mode, warm, and 2.5 s walked by one task
#: (BENCHMARKS.md). The task's largest array is one level's moves: a few hundred MB at
#: most, for dobutsu's forty moves a position.
WALKED = 1 << 18
#: The moves before their children are numbered: source id, child key, move code, level.
MOVES_SCHEMA = "src long, kid long, move int, level int"


def searched(ruleset_id: str) -> Any:
    """The ruleset's Search, made where it is asked for (an executor), of the space made
    once a process."""
    from pipeline.games.rulesets import space_of

    search = space_of(ruleset_id).search()
    if search is None:
        raise DataError(f"{ruleset_id}'s space offers no search here: the game module is wrong")
    return search


def _codes(search: Any, keys: np.ndarray, level: int) -> np.ndarray:
    """Search.codes of `keys`, checked: a code a key."""
    codes = np.asarray(search.codes(keys, level))
    if codes.shape != keys.shape:
        raise DataError(
            f"the game's search gave {codes.size:,} terminal codes for {keys.size:,} keys: the game module is wrong"
        )
    return codes.astype(np.int8)


def walk(search: Any, most: int | None = None) -> Generator[tuple[int, np.ndarray, np.ndarray], None, bool]:
    """A search's levels found in this process: (level, keys, codes), a level's keys
    distinct and sorted; returns whether every level was found. With `most`, the walk
    stops before a level that would bring the positions found past `most` (its keys are
    made, not coded); the starts are a level whatever their number."""
    seen = np.empty(0, dtype=np.int64)
    keys = np.unique(np.asarray(search.starts(), dtype=np.int64))
    found = level = 0
    while keys.size and (most is None or not found or found + keys.size <= most):
        codes = _codes(search, keys, level)
        yield level, keys, codes
        found += keys.size
        played = keys[codes == 0]
        if not played.size:
            return True
        kids = np.unique(np.asarray(search.children(played, level)[2], dtype=np.int64))
        if search.rank(level) is None:  # moves may return to any level before
            seen = np.union1d(seen, keys)
            kids = kids[~np.isin(kids, seen, assume_unique=True)]
        keys, level = kids, level + 1
    return not keys.size


def _walked(ruleset_id: str, most: int, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """On an executor (one task, whatever it is given): the search's first levels, while
    they hold at most `most` positions, and a row at level -1 where they are all of them."""
    for _ in batches:
        pass
    names = ["key", "code", "level"]
    yield from walked_batches(
        walk(searched(ruleset_id), most),
        lambda found: pa.RecordBatch.from_arrays(
            [pa.array(found[1]), pa.array(found[2]), pa.array(np.full(found[1].size, found[0], np.int32))], names=names
        ),
        pa.RecordBatch.from_arrays([pa.array([0]), pa.array([0], pa.int8()), pa.array([-1], pa.int32())], names=names),
    )


def _coded(ruleset_id: str, level: int, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """On an executor: keys (one column) with their terminal codes."""
    search = searched(ruleset_id)
    for batch in batches:
        keys = batch.column(0).to_numpy()
        codes = _codes(search, keys, level)
        yield pa.RecordBatch.from_arrays([pa.array(keys), pa.array(codes)], names=["key", "code"])


def _kids(ruleset_id: str, level: int, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """On an executor: the children of a level's positions played on (keys), each once a
    batch, with their terminal codes (coded before the shuffle that makes them distinct:
    one pass through Python a level, not two)."""
    for batch in batches:
        _, _, kids = searched(ruleset_id).children(batch.column(0).to_numpy(), level)
        unique = pa.record_batch([pa.array(np.unique(np.asarray(kids, dtype=np.int64)))], names=["key"])
        yield from _coded(ruleset_id, level + 1, iter([unique]))


def _made(search: Any, keys: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Search.children of `keys`, checked: rows within them, a child once a position."""
    rows, moves, kids = (np.asarray(made) for made in search.children(keys, level))
    if not rows.size:
        return rows.astype(np.int64), moves.astype(np.int32), kids.astype(np.int64)
    if rows.min() < 0 or rows.max() >= keys.size or not rows.shape == moves.shape == kids.shape:
        raise DataError("the game's search gave moves from no position it was asked for: the game module is wrong")
    order = np.lexsort((kids, rows))
    same = (rows[order][1:] == rows[order][:-1]) & (kids[order][1:] == kids[order][:-1])
    if same.any():
        raise DataError("the game's search gave two moves from one position to one child: the game module is wrong")
    return rows.astype(np.int64), moves.astype(np.int32), kids.astype(np.int64)


def _levels(levels: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    """(level, the rows at it) of a batch's positions."""
    for level in np.unique(levels).tolist():
        yield int(level), np.flatnonzero(levels == level)


def _moves(ruleset_id: str, batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
    """On an executor: the moves of positions played on (id, key, level), their children
    as keys."""
    search = searched(ruleset_id)
    for batch in batches:
        ids, keys, levels = (batch.column(i).to_numpy() for i in range(3))
        for level, at in _levels(levels):
            rows, moves, kids = _made(search, keys[at], level)
            yield pa.RecordBatch.from_arrays(
                [
                    pa.array(ids[at][rows]),
                    pa.array(kids),
                    pa.array(moves),
                    pa.array(np.full(rows.size, level, np.int32)),
                ],
                names=["src", "kid", "move", "level"],
            )


class PositionRows:
    """A `convert` for the positions file: a batch of (id, key, code, level) made the file's
    rows (Search.positions), with each position's moves counted from its children and its
    level's rank. Pickles as the ruleset's id and what it is given."""

    def __init__(self, ruleset_id: str, schema: pa.Schema, with_counts: Callable[[pa.Table, Any, pa.Array], pa.Table]):
        self.ruleset_id, self.schema, self.with_counts = ruleset_id, schema, with_counts

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        search = searched(self.ruleset_id)
        ids, keys, codes, levels = (batch.column(i).to_numpy() for i in range(4))
        moves = np.zeros(ids.size, dtype=np.int64)
        ranks = np.zeros(ids.size, dtype=np.int64)
        ranked = np.ones(ids.size, dtype=bool)
        for level, at in _levels(levels):
            rank = search.rank(level)
            ranks[at], ranked[at] = (0, False) if rank is None else (rank, True)
            played = at[codes[at] == 0]
            if played.size:
                rows, _, _ = _made(search, keys[played], level)
                moves[played] = np.bincount(rows, minlength=played.size)
        table = search.positions(ids, keys, codes, levels)
        if table.num_rows != ids.size:
            raise DataError(
                f"the game's search gave {table.num_rows:,} rows for {ids.size:,} positions: the game module is wrong"
            )
        rank_column = pa.array(ranks.astype(np.int32), mask=~ranked)
        return self.with_counts(table, moves, rank_column).cast(self.schema).combine_chunks().to_batches()[0]


class MoveNames:
    """A `convert` for the moves file: a batch of (ruleset, src, dst, move code) with the
    ruleset's id and the moves' names (Search.moves) as the file's dictionaries."""

    def __init__(self, ruleset_id: str, names: list[str]):
        self.ruleset, self.names = pa.array([ruleset_id]), pa.array(names, pa.string())

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        codes = batch.column(3).to_numpy()
        if codes.size and (codes.min() < 0 or codes.max() >= len(self.names)):
            raise DataError(
                f"the game's search gave a move code out of its {len(self.names)} names: the game module is wrong"
            )
        return pa.RecordBatch.from_arrays(
            [
                pa.DictionaryArray.from_arrays(np.zeros(batch.num_rows, np.int8), self.ruleset),
                batch.column(1),
                batch.column(2),
                pa.DictionaryArray.from_arrays(codes.astype(np.int32), self.names),
            ],
            schema=PUBLISHED_TRANSITIONS,
        )


class Enumeration:
    """One ruleset's enumerate on the executors of `engine` (a SparkEngine)."""

    def __init__(
        self,
        engine: Any,
        ruleset_id: str,
        search: Any,
        found: Callable[[int], None] | None = None,
        bound: int | None = None,
    ):
        """`bound`: the most positions the ruleset can have (Game.size), where known."""
        self.engine, self.spark, self.ruleset_id, self.search = engine, engine.spark, ruleset_id, search
        self.found, self.bound = found, bound
        self.levels: list[Any] = []  # (key, code, level) of one level or more, checkpointed
        self.counts: list[int] = []  # each level's positions
        self.played: list[int] = []  # each level's positions played on (not terminal)

    def _rank(self, level: int) -> int | None:
        from pipeline.games import RANKS

        rank = self.search.rank(level)
        if rank is not None and not RANKS[0] <= rank <= RANKS[1]:
            raise DataError(
                f"the game's rank {rank:,} is beyond the 32 bits the positions file holds "
                f"({RANKS[0]:,} to {RANKS[1]:,}): the game module is wrong"
            )
        if level and (rank is None) != (self.search.rank(0) is None):
            raise DataError(
                "the game's search gave a rank for some levels and None for others: the game module is wrong"
            )
        return rank

    def _found(self, level: int, found: int) -> None:
        """A level's positions counted, its rank and the search's size checked."""
        self._rank(level)
        self.counts.append(found)
        if self.bound is not None and sum(self.counts) > self.bound:  # a search that would never end
            raise DataError(
                f"the game's search found {sum(self.counts):,} positions, more than its size's bound of "
                f"{self.bound:,}: the game module is wrong"
            )

    def _walk(self, most: int) -> tuple[Any, bool]:
        """The first levels walked by one task (`walk`) and checkpointed: the last level's
        (key, code), and whether the search goes on from it."""
        from pyspark.sql import functions as F

        walked = map_arrow(
            self.spark.range(1, numPartitions=1), functools.partial(_walked, self.ruleset_id, most), WALKED_SCHEMA
        ).localCheckpoint(eager=True)
        self.engine.frames["walked"] = walked  # let go by release()
        counted = walked.groupBy("level").agg(F.count(F.lit(1)), F.expr("count_if(code = 0)")).collect()
        held = sorted((int(level), int(found), int(played)) for level, found, played in counted)
        whole = bool(held) and held[0][0] == -1  # every level walked
        held = held[1:] if whole else held
        if not held:
            raise DataError("the game's search gave no start: the game module is wrong")
        for level, found, played in held:
            self._found(level, found)
            self.played.append(played)
        self.levels.append(walked.where("level >= 0"))
        if self.found is not None:
            self.found(sum(self.counts))
        last = len(held) - 1
        # the walk is one partition: unspread, every level after it would stay one (a
        # DISTINCT of one partition needs no shuffle), one task on the whole cluster
        partitions = int(self.spark.conf.get("spark.sql.shuffle.partitions"))
        frontier = walked.where(f"level = {last} AND code = 0").select("key", "code").repartition(partitions)
        return frontier, not whole and held[last][2] > 0

    def _cut(self, level: int) -> int:
        """The partitions the level after `level` is cut into: for the positions it likely
        holds, its positions played on each making as many new positions as those of the
        level before did (the first level's: one each)."""
        played = self.played[level]
        likely = played * self.counts[level] // self.played[level - 1] if level and self.played[level - 1] else played
        return partitions_for(self.spark, likely)

    def search_levels(self) -> int:
        """Every level found and checkpointed (the first walked by one task: WALKED); the
        positions."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        frame, played = self._walk(WALKED)
        # where a move may return to a position of any level before, each level is less
        # every level before: they are kept as runs partitioned by key, and each level made
        # under keeping_partitions, partitioned by key as they are, meets them unshuffled
        seen = None if self._rank(0) is not None else Runs(self.engine, "key")
        if seen is not None:
            seen.add(self.levels[0], sum(self.counts), partitioned=False)
        while played:
            level = len(self.counts) - 1
            # a walk that meets what it has seen keeps its levels in the runs' partitions;
            # else a level is cut for the positions it likely holds
            cut = keeping_partitions(self.spark) if seen is not None else shuffling_into(self.spark, self._cut(level))
            with cut:
                frame = map_arrow(
                    frame.where("code = 0").select("key"),
                    functools.partial(_kids, self.ruleset_id, level),
                    LEVEL_SCHEMA,
                ).dropDuplicates(["key"])  # a key's code is one: partitioned by key alone
                if seen is not None:
                    frame = seen.unseen(frame).sortWithinPartitions("key")
                counted = Observation(f"level_{level + 1}")
                frame = (
                    frame.select("key", "code", F.lit(level + 1).alias("level"))
                    .observe(counted, F.count(F.lit(1)).alias("found"), F.expr("count_if(code = 0)").alias("open"))
                    .localCheckpoint(eager=True)
                )
            found, played = int(counted.get["found"] or 0), int(counted.get["open"] or 0) > 0
            if not found:
                break
            self._found(level + 1, found)
            self.played.append(int(counted.get["open"] or 0))
            if seen is not None:
                seen.add(frame, found, partitioned=True)
            self.levels.append(frame)
            self.engine.frames[f"level_{level + 1}"] = frame  # let go by release()
            if self.found is not None:
                self.found(sum(self.counts))
        return sum(self.counts)

    def numbered(self) -> Any:
        """Every position (id, key, code, level) in id order, each range of ids in a
        partition of its own: the levels sorted at once by the game's order, and each
        partition's first id found from the partitions' counts."""
        from pyspark.sql import functions as F

        every = self.levels[0]
        for frame in self.levels[1:]:
            every = every.unionByName(frame)
        order = [F.col("level") * -1 if self.search.descending else F.col("level")]
        order += [F.col("code")] if self.search.by_code else []
        order += [F.col("key")]
        ranges = partitions_for(self.spark, sum(self.counts))
        ordered = every.repartitionByRange(ranges, *order).sortWithinPartitions(*order).localCheckpoint(eager=True)
        self.engine.frames["numbered"] = ordered
        for frame in self.levels:
            frame.unpersist()
        held = dict(ordered.groupBy(F.spark_partition_id()).count().collect())
        firsts = np.concatenate([[0], np.cumsum([held.get(p, 0) for p in range(ordered.rdd.getNumPartitions())])])
        if int(firsts[-1]) != sum(self.counts):
            raise DataError(f"Spark numbered {int(firsts[-1]):,} positions of the {sum(self.counts):,} found")
        # each partition's first id, joined by broadcast (a frame of a row a partition, where a
        # literal a partition would make a plan too big for 10^5 partitions)
        offsets = self.spark.createDataFrame([(p, int(at)) for p, at in enumerate(firsts[:-1])], "part int, first long")
        # monotonically_increasing_id: the partition in its high bits, the place in the low 33
        placed = ordered.select(
            F.spark_partition_id().alias("part"),
            F.monotonically_increasing_id().bitwiseAND((1 << 33) - 1).alias("place"),
            "key",
            "code",
            "level",
        )
        joined = placed.join(F.broadcast(offsets), "part")  # the partitions and their order kept
        return joined.select((F.col("first") + F.col("place")).alias("id"), "key", "code", "level")

    def write(
        self,
        positions: Path,
        schema: pa.Schema,
        positions_encoding: Encoding,
        transitions: Path,
        transitions_encoding: Encoding,
        with_counts: Callable[[pa.Table, Any, pa.Array], pa.Table],
    ) -> tuple[int, int]:
        """The levels searched, numbered and written: (positions, transitions)."""
        from pyspark.sql import Observation
        from pyspark.sql import functions as F

        total = self.search_levels()
        numbered = self.numbered()
        # the writes' shuffles (the moves met with their children's ids, the parts' buckets)
        # cut for the positions, as the numbering is: Spark's one setting would be every size's
        with shuffling_into(self.spark, partitions_for(self.spark, total)):
            folder = self.engine.temp_dir / "spark-positions"
            shutil.rmtree(folder, ignore_errors=True)
            folder.mkdir(parents=True)
            try:
                self.engine._write_parts(
                    numbered.select(F.spark_partition_id().alias("bucket"), "*"),
                    positions,
                    schema,
                    positions_encoding,
                    None,
                    folder,
                    convert=PositionRows(self.ruleset_id, schema, with_counts),
                )
            finally:
                shutil.rmtree(folder, ignore_errors=True)
            generated, checked = Observation("generated"), Observation("moves")
            made = map_arrow(
                numbered.where("code = 0").select("id", "key", "level"),
                functools.partial(_moves, self.ruleset_id),
                MOVES_SCHEMA,
            ).observe(generated, F.count(F.lit(1)).alias("moves"))
            children = numbered.select(F.col("key").alias("kid"), F.col("id").alias("dst"), F.col("level").alias("at"))
            joined = made.join(children, "kid").observe(checked, F.expr("count_if(at != level + 1)").alias("unranked"))
            rows = self.engine.write_parts(
                joined.select(F.lit(None).cast("string").alias("ruleset"), "src", "dst", "move"),
                transitions,
                PUBLISHED_TRANSITIONS,
                transitions_encoding,
                order=("src", "dst"),
                convert=MoveNames(self.ruleset_id, list(self.search.moves)),
                keys=(0, total - 1),
            )
            moves = int(generated.get["moves"] or 0)
            if rows != moves:  # fewer: a child not found; more: a child found at two levels
                raise DataError(
                    f"the game's search gave {moves:,} moves, of which {rows:,} lead to a position it found once: "
                    "the game module is wrong"
                )
            if self.search.rank(0) is not None and int(checked.get["unranked"] or 0):
                raise DataError(
                    "the game's search gave ranks, but a move leads elsewhere than to the next level: "
                    "the game module is wrong"
                )
            return total, rows
