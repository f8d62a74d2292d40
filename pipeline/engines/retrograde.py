"""The DuckDB engine's retrograde analysis, for games whose moves can cycle: values, then
ties, then Grundy values (impartial games), each level by level (pipeline/stages/solve.py
runs the levels).

The state is NumPy arrays with an entry per position, indexed as the positions file is
ordered (ids 0..n-1 are their own index; other ids are mapped): a value code, the
remoteness, and a counter of the children not yet known won; for Grundy values a counter,
a mask of the children's values, the value and the height. Each array's type is the
smallest the data allows (moves per position, levels so far): the state of 500 M
positions takes 1.5 GB.

A level finds the moves from the positions finished at the level before (its frontier)
to parents still open, in one of two ways:

- forward: one pass over transitions.parquet by source (row group by row group, read and
  looked up on two threads), every move's child looked up by index. The first pass does
  level 1 of values and of Grundy values at once: their frontiers, the finished games and
  the positions without moves, are often over half the positions. As it goes it builds
  the reverse adjacency below from the moves that can still matter (from a parent still
  open to a child that is no win or loss at level 0, or with moves). A later frontier
  whose moves are a large share of all the moves goes forward too (FORWARD_SHARE).
- reverse: the frontier, as an Arrow table, joined by DuckDB to `rev` (id, parents), one
  row per position with the positions that move to it as a LIST
  (pipeline/sql/duckdb/retrograde_*.sql). DuckDB scans the ids and decodes only the lists
  of the rows that match; NumPy then counts the parents and applies them to the state.

`rev` lives in a DuckDB database of the solver's own: in memory for a graph of up to 16 M
moves, a file in the scratch folder for a larger one (compressed, paged within DuckDB's
memory limit); a graph of up to 4 M moves holds it in NumPy arrays instead
(HeldReverse: the join a gather, without a DuckDB statement a level). Its
moves are bucketed by child range as the first pass finds them (in scratch files for a
large graph), and each bucket sorted as one int64 key a move. Once half its rows belong to
positions finished and passed to their parents in every analysis still to run, it is
rewritten with the others, so a level scans at most about twice the rows still live. Each
move is read once by the first pass and unnested at most once by each analysis: the work
grows with the transitions, not with transitions x depth.
"""

from __future__ import annotations

import math
import threading
import time
from collections import defaultdict
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core import values
from pipeline.core.keys import distinct_rows
from pipeline.engines.arrays import Ids, row_groups, value_codes
from pipeline.storage import parts
from pipeline.storage.db import DEFAULT_MEMORY_LIMIT, parse_size, sql_text
from pipeline.storage.progress import log
from pipeline.storage.threads import in_order

WIN, LOSS, TIE, DRAW = (values.Value(word).code for word in ("win", "loss", "tie", "draw"))
WORDS = pa.array(values.WORDS)

#: Graphs of more transitions than this keep `rev` in a database file in the scratch
#: folder (compressed, paged out within DuckDB's memory limit); smaller ones in memory.
ON_DISK = 1 << 24
#: Graphs of at most this many transitions hold `rev` as NumPy arrays (HeldReverse, 4 bytes
#: a move): a level's join is then a gather, not DuckDB statements, which cost a few
#: milliseconds a level whatever its size: most of a small solve (sticks:rows=4's 0.23 s
#: became 0.07, chopsticks:fingers=12,hands=3's 0.95 s 0.30).
HELD = 1 << 22
#: Moves of `rev` sorted at a time: the first pass buckets them by child range, in
#: scratch files (8 bytes a move) where there is more than one bucket.
BUCKET = 1 << 25
#: Bytes a move of a bucket takes while the bucket is made into lists (two at a time):
#: its key, its parent copied out, the Arrow table's share.
BUCKET_BYTES = 20
#: `rev` is rewritten once this share of its rows are positions finished and passed to
#: their parents in every analysis still to run (each level scans every row's id), if it
#: has at least COMPACT_ROWS rows.
COMPACT_SHARE = 0.5
COMPACT_ROWS = 1 << 16
#: A level after the first reads every move forward, rather than joining its frontier to
#: `rev`, where the frontier's rows hold more than this share of the transitions: a move
#: read forward took 35 ns of CPU, one unnested and counted 150 ns (a generated graph of
#: 20 M positions and 77 M moves, measured as this pass was written; not in BENCHMARKS.md).
FORWARD_SHARE = 0.25
#: Grundy values below this (a power of two, at most 64) are collected as bits of a mask a
#: position; larger ones, rare (a value is at most the position's number of moves), as
#: (position, value) pairs.
MASK_BITS = 64
#: Rows of the solution a batch, and of DuckDB's answers.
BATCH = 1 << 20
#: Moves a level applies at a time, sorted by parent. The more at once, the closer the
#: parents lie in the state arrays: batches of 1 M moves into 500 M positions touched a
#: new cache line and page at almost every lookup, and updating the state took 210 s of
#: the 790 s of a generated graph of Doebutsu's size.
PARENTS = 1 << 24
#: Frontier positions joined to rev at a time.
FRONTIER = 1 << 22


def _signed(largest: int) -> type:
    """The smallest signed integer type that holds 0..largest."""
    return next(kind for kind in (np.int8, np.int16, np.int32, np.int64) if largest <= np.iinfo(kind).max)


def _runs(sorted_: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The start of each run of equal values of a sorted array, and each run's length."""
    if not sorted_.size:
        return np.zeros(0, np.int64), np.zeros(0, np.int64)
    starts = np.flatnonzero(np.concatenate(([True], sorted_[1:] != sorted_[:-1])))
    return starts, np.diff(np.append(starts, sorted_.size))


def _distinct(ascending: np.ndarray) -> np.ndarray:
    """The distinct values of an ascending array."""
    return ascending[_runs(ascending)[0]]


def _sql(name: str) -> str:
    return sql_text(name, "duckdb")


def _columns(batches: list[pa.RecordBatch]) -> tuple[np.ndarray, np.ndarray]:
    """retrograde_parents.sql's two columns of some batches, each as one array."""
    table = pa.Table.from_batches(batches)
    return table["parent"].to_numpy(), table["value"].to_numpy()


def _most(file: pq.ParquetFile, column: str) -> int:
    """The greatest value of an integer column, from the row groups' statistics where
    they have them."""
    index = file.schema_arrow.names.index(column)
    most = 0
    for group in range(file.num_row_groups):
        stats = file.metadata.row_group(group).column(index).statistics
        if stats is not None and stats.has_min_max:
            most = max(most, int(stats.max))
        elif file.metadata.row_group(group).num_rows:
            most = max(most, int(np.max(file.read_row_group(group, columns=[column])[column])))
    return most


class Levels:
    """The level at which each position was finished in an analysis (remoteness, height),
    UNSET until it is: the smallest unsigned type that holds the levels reached, widened
    when a level outgrows it."""

    def __init__(self, n: int):
        self.array = np.full(n, np.iinfo(np.uint8).max, dtype=np.uint8)

    @property
    def unset(self) -> int:
        return int(np.iinfo(self.array.dtype).max)

    def reach(self, level: int) -> None:
        """Make room for `level` (between levels: the passes' threads read the array)."""
        if level < self.unset:
            return
        wider = np.uint16 if self.array.dtype == np.uint8 else np.uint32
        unset = self.array == self.unset
        self.array = self.array.astype(wider)
        self.array[unset] = np.iinfo(wider).max

    def known(self, at: slice | np.ndarray = slice(None)) -> np.ndarray:
        return self.array[at] != self.unset


class Clock:
    """Seconds spent by step, wall and CPU (the process's: DuckDB's threads and the
    reading threads' too), for the debug log's profile of a solve."""

    def __init__(self) -> None:
        self.wall: defaultdict[str, float] = defaultdict(float)
        self.cpu: defaultdict[str, float] = defaultdict(float)

    @contextmanager
    def __call__(self, step: str) -> Iterator[None]:
        wall, cpu = time.perf_counter(), time.process_time()
        try:
            yield
        finally:
            self.wall[step] += time.perf_counter() - wall
            self.cpu[step] += time.process_time() - cpu

    def __str__(self) -> str:
        steps = sorted(self.wall, key=lambda step: -self.wall[step])
        return ", ".join(f"{step} {self.wall[step]:.2f} s ({self.cpu[step]:.2f} s CPU)" for step in steps)


class Buckets:
    """The moves `rev` will hold, as (child, parent) index pairs in buckets of child ranges:
    held in memory where one bucket holds them all, else appended to scratch files, one a
    bucket. `tables()` gives each bucket's rows, child by child."""

    def __init__(self, n: int, moves: int, folder: Path):
        self.count = max(1, math.ceil(moves / BUCKET))
        self.width = max(1, math.ceil(n / self.count))
        self.held: list[np.ndarray] = []
        self.paths = [folder / f"rev-{bucket}.bin" for bucket in range(self.count)] if self.count > 1 else []
        if self.paths:
            folder.mkdir(parents=True, exist_ok=True)
        self.files = [open(path, "wb") for path in self.paths]  # noqa: SIM115 - closed in tables() or close()

    def sort(self, child: np.ndarray, parent: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """The moves as keys (child's offset in its bucket, parent) by bucket, and where each
        bucket's begin and end: made on the reading threads, then `add`ed."""
        key = child.astype(np.uint64)
        if self.count == 1:
            return key << np.uint64(32) | parent.astype(np.uint64), np.array([0, child.size])
        bucket = (child // self.width).astype(np.uint16)  # 2-byte keys: a radix sort
        order = np.argsort(bucket, kind="stable")
        key -= bucket * np.uint64(self.width)
        key <<= np.uint64(32)
        key |= parent.astype(np.uint64)
        return key[order], np.searchsorted(bucket[order], np.arange(self.count + 1))

    def add(self, key: np.ndarray, bounds: np.ndarray) -> None:
        if self.count == 1:
            self.held.append(key)
            return
        for file, lo, hi in zip(self.files, bounds[:-1], bounds[1:]):
            if hi > lo:
                key[lo:hi].tofile(file)

    def tables(self) -> Iterator[pa.Table]:
        """Each bucket's rows (id, parents), ids ascending, made on two threads."""
        for file in self.files:
            file.close()
        sizes = [path.stat().st_size // 8 for path in self.paths]
        local = threading.local()  # a buffer a thread: fresh memory is slow to fault in

        def table(bucket: int) -> pa.Table:
            if self.paths:
                if getattr(local, "key", np.zeros(0, np.uint64)).size < sizes[bucket]:
                    local.key = np.empty(max(sizes), dtype=np.uint64)
                key = local.key[: sizes[bucket]]
                with open(self.paths[bucket], "rb") as file:
                    file.readinto(memoryview(key).cast("B"))
                self.paths[bucket].unlink()
            else:
                key = np.concatenate(self.held) if self.held else np.zeros(0, np.uint64)
                self.held = []
            key.sort()  # by child, then parent: each child's parents in a run
            # the key's two halves as they lie in memory (little-endian: parent, then child)
            halves = key.view(np.uint32).reshape(-1, 2)
            starts, _ = _runs(halves[:, 1])
            offsets = pa.array(np.append(starts, key.size).astype(np.int32))
            child = halves[starts, 1].astype(np.int32) + np.int32(bucket * self.width)
            parent = np.ascontiguousarray(halves[:, 0]).view(np.int32)
            return pa.table({"id": pa.array(child), "parents": pa.ListArray.from_arrays(offsets, pa.array(parent))})

        return in_order(table, range(self.count), ahead=2)

    def close(self) -> None:
        for file in self.files:
            file.close()
        for path in self.paths:
            path.unlink(missing_ok=True)
        if self.paths:
            with suppress(OSError):  # not empty: not ours alone
                self.paths[0].parent.rmdir()


class Reverse:
    """`rev` (pipeline/sql/duckdb/retrograde_*.sql) in a DuckDB database of its own: each
    position's parents still open as one LIST. Counts the rows a level scans, the moves
    their lists hold (`entries`), and the rows whose positions were passed on since it was
    last written (`passed`: at least as many as are dead)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, buckets: Buckets):
        self.con = con
        con.execute(_sql("retrograde_setup"))
        self.rows = self.entries = self.passed = 0
        for table in buckets.tables():
            con.register("bucket", table)
            con.execute("INSERT INTO rev SELECT * FROM bucket")
            con.unregister("bucket")
            self.rows += table.num_rows
            self.entries += len(table["parents"].combine_chunks().values) if table.num_rows else 0
        self._parents = _sql("retrograde_parents")

    def parents(self, frontier: pa.Table) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """(parent, the child's value) of every move from a parent in `rev` to `frontier`
        (id, value), PARENTS moves at a time. A wide frontier is joined a range of ids at a
        time, FRONTIER positions each: DuckDB's hash table of it stays small, and the
        range's least and greatest id skip the row groups of rev outside it (rev is in id
        order), so the ranges together scan rev about once."""
        if frontier.num_rows > FRONTIER:
            frontier = frontier.take(np.argsort(frontier["id"].to_numpy(), kind="stable"))
        held: list[pa.RecordBatch] = []
        rows = 0
        for lo in range(0, frontier.num_rows, FRONTIER):
            self.con.register("frontier", frontier.slice(lo, FRONTIER))
            try:
                for batch in self.con.sql(self._parents).to_arrow_reader(BATCH):
                    held.append(batch)
                    rows += batch.num_rows
                    if rows >= PARENTS:
                        yield _columns(held)
                        held, rows = [], 0
            finally:
                self.con.unregister("frontier")
        if rows:
            yield _columns(held)

    def moves_into(self, frontier: int) -> float:
        """The moves a frontier of so many positions' rows may hold (an estimate)."""
        return frontier * self.entries / max(self.rows, 1)

    def compact(self, live: Callable[[np.ndarray], np.ndarray]) -> int:
        """Rewrite `rev` with the rows whose position `live(ids)` says is still to be passed
        to its parents, where at least COMPACT_SHARE of them are not; the rows dropped."""
        # the ids a batch at a time: the whole column and what `live` makes of it would
        # be several bytes a row more
        parts = [live(batch["id"].to_numpy()) for batch in self.con.sql("SELECT id FROM rev").to_arrow_reader(BATCH)]
        keep = np.concatenate(parts) if parts else np.zeros(0, dtype=bool)
        dead = int(keep.size - keep.sum())
        self.passed = dead
        if dead < COMPACT_SHARE * self.rows:
            return 0
        self.con.register("live", pa.table({"keep": keep}))
        try:
            self.con.execute(_sql("retrograde_compact"))
        finally:
            self.con.unregister("live")
        self.rows, self.passed = self.rows - dead, 0
        (self.entries,) = self.con.execute("SELECT coalesce(sum(len(parents)), 0)::BIGINT FROM rev").fetchall()[0]
        return dead


class HeldReverse:
    """`rev` as Reverse holds it, but in NumPy arrays, for a small graph (HELD): the ids in
    order, where each one's parents start, how many, and the parents."""

    def __init__(self, buckets: Buckets):
        tables = [table for table in buckets.tables() if table.num_rows]
        ids, counts, parents = [], [], []
        for table in tables:
            lists = table["parents"].combine_chunks()
            ids.append(table["id"].to_numpy())
            counts.append(np.diff(lists.offsets.to_numpy()))
            parents.append(lists.flatten().to_numpy())
        self._hold(
            np.concatenate(ids) if ids else np.zeros(0, np.int32),
            np.concatenate(counts) if counts else np.zeros(0, np.int32),
            np.concatenate(parents) if parents else np.zeros(0, np.int32),
        )
        self.passed = 0

    def _hold(self, ids: np.ndarray, counts: np.ndarray, parents: np.ndarray) -> None:
        if ids.size and np.any(np.diff(ids) <= 0):
            raise AssertionError("rev's buckets are not in ascending order of id")
        self.ids, self.counts, self.parents_of = ids, counts, parents
        self.starts = np.concatenate(([0], np.cumsum(counts)[:-1])).astype(np.int64) if counts.size else counts
        self.rows, self.entries = int(ids.size), int(parents.size)

    def parents(self, frontier: pa.Table) -> Iterator[tuple[np.ndarray, np.ndarray]]:
        """As Reverse.parents: (parent, the child's value) of every move into `frontier`."""
        ids, value = frontier["id"].to_numpy(), frontier["value"].to_numpy()
        if not self.ids.size:
            return
        at = np.minimum(np.searchsorted(self.ids, ids), self.ids.size - 1)
        hit = self.ids[at] == ids
        at, value = at[hit], value[hit]
        counts = self.counts[at].astype(np.int64)
        total = int(counts.sum())
        if not total:
            return
        # each entry's place: its row's start, plus its place within the row
        before = np.cumsum(counts) - counts
        entry = np.repeat(self.starts[at] - before, counts) + np.arange(total)
        yield self.parents_of[entry], np.repeat(value, counts)

    def moves_into(self, frontier: int) -> float:
        return frontier * self.entries / max(self.rows, 1)

    def compact(self, live: Callable[[np.ndarray], np.ndarray]) -> int:
        """As Reverse.compact."""
        keep = live(self.ids)
        dead = int(keep.size - keep.sum())
        self.passed = dead
        if dead < COMPACT_SHARE * self.rows:
            return 0
        entries = np.repeat(keep, self.counts)
        self._hold(self.ids[keep], self.counts[keep], self.parents_of[entries])
        self.passed = 0
        return dead


class Analysis:
    """One retrograde analysis as Steps (pipeline/engines/base.py): `first` finishes level
    0, `step(k)` level k from the moves into its frontier, the positions finished at level
    k - 1 (`at`). Level 1 of values and Grundy values comes from the first pass."""

    name = ""

    def __init__(self, solver: Retrograde, levels: Levels):
        self.solver, self.levels = solver, levels
        self.at = 0  # the level of the frontier
        self.frontier = self._table(np.zeros(0, np.int64), np.zeros(0, np.int8))
        self.finished: list[tuple[np.ndarray, np.ndarray]] = []  # (positions, their values) at the next level
        self.ahead = False  # whether the first pass has made the next level's frontier
        self.over = False

    def first(self) -> int:
        ends = self.ends()
        self.over = not ends
        return ends

    def step(self, level: int) -> int:
        solver = self.solver
        if solver.reverse is None:
            solver.first_pass()
        if not self.ahead:
            began = time.perf_counter()
            self.levels.reach(level)
            rev = solver.reverse
            assert rev is not None
            forward = rev.moves_into(self.frontier.num_rows) > FORWARD_SHARE * solver.moves
            if forward:
                with solver.clock("later levels: a pass over every move"):
                    solver.forward(self, level)
            else:
                # each batch of parents sorted and counted on two threads as DuckDB makes
                # the next; applied to the state here, in order
                batches = rev.parents(self.frontier)
                with solver.clock("later levels through rev"):
                    for reduced in in_order(lambda batch: self.reduce(*batch, ordered=False), batches, ahead=3):
                        with solver.clock("(of which updating the state)"):
                            self.apply(level, reduced)
            rev.passed += self.frontier.num_rows  # dead now, unless another analysis needs them
            self.advance()
            how = "a pass over every move" if forward else f"joined to rev's {rev.rows:,} rows"
            log.debug(
                "%s, level %d: %s finished, %s (%.2f s)",
                self.name,
                level,
                f"{self.frontier.num_rows:,}",
                how,
                time.perf_counter() - began,
            )
        self.ahead = False
        solver.compact()
        self.over = not self.frontier.num_rows
        return self.frontier.num_rows

    def advance(self) -> None:
        """The positions just finished become the frontier."""
        ids = [ids for ids, _ in self.finished]
        found = [value for _, value in self.finished]
        self.frontier = self._table(
            np.concatenate(ids) if ids else np.zeros(0, np.int64),
            np.concatenate(found) if found else np.zeros(0, np.int8),
        )
        self.finished = []
        self.at += 1

    def _table(self, ids: np.ndarray, value: np.ndarray) -> pa.Table:
        return pa.table({"id": pa.array(ids.astype(np.int32)), "value": pa.array(value)})

    def live(self, ids: np.ndarray) -> np.ndarray:
        """Which of the positions `ids` this analysis still passes to their parents: those
        open, and its frontier."""
        if self.over:
            return np.zeros(ids.size, dtype=bool)
        level = self.levels.array[ids]
        frontier = level == self.at
        frontier[frontier] = self.in_frontier(ids[frontier])
        return (level == self.levels.unset) | frontier

    def ends(self) -> int:
        """Level 0: how many positions are finished without looking at a move (and where
        a join passes them on, they are the frontier)."""
        raise NotImplementedError

    def in_frontier(self, child: np.ndarray) -> np.ndarray:
        """Which of the children finished at the frontier's level are in the frontier
        (those whose values this analysis passes to their parents)."""
        return np.ones(child.size, dtype=bool)

    def value(self, child: np.ndarray) -> np.ndarray:
        """The value the frontier's children `child` pass to their parents."""
        raise NotImplementedError

    def reduce(self, parent: np.ndarray, value: np.ndarray, ordered: bool) -> tuple:
        """What moves from `parent` to children of the frontier with `value` (`ordered`:
        parents ascending) tell each parent, a row a parent, ascending (so that `apply`
        goes up through the state arrays, not at random). It reads no state: the passes
        run it on their reading threads."""
        raise NotImplementedError

    def apply(self, level: int, reduced: tuple) -> None:
        """Apply `reduce`'s rows to the parents still open, adding what they finish to
        `finished`."""
        raise NotImplementedError


class Values(Analysis):
    """Wins and losses: a parent of a lost child is won one ply later; a parent whose
    children are all won is lost one ply after the last of them."""

    name = "values"

    def ends(self) -> int:
        # the first pass passes them on (often half the positions: counted, not listed)
        code = self.solver.code
        return int(np.count_nonzero(code == WIN)) + int(np.count_nonzero(code == LOSS))

    def in_frontier(self, child: np.ndarray) -> np.ndarray:
        code = self.solver.code[child]
        return (code == WIN) | (code == LOSS)

    def value(self, child: np.ndarray) -> np.ndarray:
        return self.solver.code[child]

    def reduce(self, parent: np.ndarray, value: np.ndarray, ordered: bool) -> tuple:
        """(parents of a lost child, parents of won children, how many)."""
        lost_child = value == LOSS
        won, counted = parent[lost_child], parent[~lost_child]
        if not ordered:
            won, counted = np.sort(won), np.sort(counted)
        starts, children = _runs(counted)
        return _distinct(won), counted[starts], children

    def apply(self, level: int, reduced: tuple) -> None:
        won, counted, children = reduced
        code, rem, pending = self.solver.code, self.levels.array, self.solver.pending
        won = won[pending[won] > 0]
        code[won] = WIN
        rem[won] = level
        pending[won] = 0
        # a parent with a lost child is won whatever its won children: counted after
        left = pending[counted]
        open_ = left > 0
        counted, left = counted[open_], left[open_] - children[open_]
        pending[counted] = left
        lost = counted[left == 0]
        code[lost] = LOSS
        rem[lost] = level
        self.finished += [(won, np.full(won.size, WIN, np.int8)), (lost, np.full(lost.size, LOSS, np.int8))]


class Ties(Analysis):
    """Once every win and loss is known: a position neither won nor lost with a tied child
    is a tie (the mover prefers it to endless play), one ply after its nearest tied child."""

    name = "ties"

    def ends(self) -> int:
        # joined to rev, which holds the moves into them
        ends = np.flatnonzero(self.solver.code == TIE)
        self.frontier = self._table(ends, np.full(ends.size, TIE, np.int8))
        return ends.size

    def in_frontier(self, child: np.ndarray) -> np.ndarray:
        return self.solver.code[child] == TIE

    def value(self, child: np.ndarray) -> np.ndarray:
        return np.full(child.size, TIE, np.int8)

    def reduce(self, parent: np.ndarray, value: np.ndarray, ordered: bool) -> tuple:
        """(parents of a tied child,)."""
        return (_distinct(parent if ordered else np.sort(parent)),)

    def apply(self, level: int, reduced: tuple) -> None:
        (tied,) = reduced
        pending = self.solver.pending
        tied = tied[pending[tied] > 0]
        self.solver.code[tied] = TIE
        self.levels.array[tied] = level
        pending[tied] = 0
        self.finished.append((tied, np.full(tied.size, TIE, np.int8)))


class Grundy(Analysis):
    """Grundy values, peeled from the positions without moves (height 0) upwards: a
    position's value is the mex of its children's, known once every child's is, at one
    more than the greatest height among them. Children's values below the mask's width are
    bits of the position's mask; larger ones are kept as (position, value) pairs. What is
    never peeled can reach a cycle and has no Grundy value."""

    name = "Grundy values"

    def __init__(self, solver: Retrograde, levels: Levels, moves: np.ndarray):
        super().__init__(solver, levels)
        most = int(moves.max()) if moves.size else 0
        self.width = min(MASK_BITS, 1 << max(3, math.ceil(math.log2(most + 1))))
        self.mask = np.zeros(moves.size, dtype=np.dtype(f"uint{self.width}"))
        self.pending = moves
        self.grundy: np.ndarray = np.full(moves.size, -1, dtype=_signed(most))
        self.large: list[np.ndarray] = []  # (position, child's value) pairs of values >= width
        ends = self.pending == 0
        self.grundy[ends] = 0
        self.levels.array[ends] = 0

    def ends(self) -> int:
        # the first pass passes them on
        return int(np.count_nonzero(self.levels.array == 0))

    def value(self, child: np.ndarray) -> np.ndarray:
        return self.grundy[child]

    def reduce(self, parent: np.ndarray, value: np.ndarray, ordered: bool) -> tuple:
        """(parents, how many children, the bits of their values below the width, and
        (parent, value) pairs of the others or None)."""
        if not ordered:  # by parent, each parent's values beside it
            key = np.sort(parent.astype(np.int64) << 32 | value.astype(np.int64))
            parent, value = key >> 32, key & 0xFFFFFFFF
        starts, children = _runs(parent)
        small = value < self.width
        bits = np.left_shift(np.array(1, self.mask.dtype), np.where(small, value, 0).astype(self.mask.dtype))
        bits[~small] = 0
        large = None if small.all() else np.stack([parent[~small], value[~small]], axis=1).astype(np.int64)
        return parent[starts], children, np.bitwise_or.reduceat(bits, starts), large

    def apply(self, level: int, reduced: tuple) -> None:
        parent, children, bits, large = reduced
        left = self.pending[parent]
        open_ = left > 0  # not done yet
        parent, children, bits, left = parent[open_], children[open_], bits[open_], left[open_]
        if large is not None:
            self.large.append(large[np.isin(large[:, 0], parent)])
        self.mask[parent] |= bits
        left = left - children
        self.pending[parent] = left
        done = parent[left == 0]
        grundy = self._mex(done)
        self.grundy[done] = grundy
        self.levels.array[done] = level
        self.finished.append((done, grundy))

    def _mex(self, done: np.ndarray) -> np.ndarray:
        mask = self.mask[done]
        # the lowest clear bit: mask ^ (mask + 1) sets it and every bit below
        grundy = (np.bitwise_count(mask ^ (mask + np.array(1, mask.dtype))) - 1).astype(self.grundy.dtype)
        full = mask == np.iinfo(mask.dtype).max
        if full.any():
            grundy[full] = self._mex_large(done[full])
        return grundy

    def _mex_large(self, done: np.ndarray) -> np.ndarray:
        """The mex of positions (ascending) whose children take every value below the
        mask's width."""
        pairs = np.concatenate(self.large) if self.large else np.zeros((0, 2), np.int64)
        mine = np.isin(pairs[:, 0], done)
        self.large = [pairs[~mine]]  # no longer needed once their positions are done
        pairs = distinct_rows(pairs[mine])  # by position, then value
        mex = np.full(done.size, self.width, dtype=np.int64)
        if pairs.size:
            starts, lengths = _runs(pairs[:, 0])
            rank = np.arange(len(pairs)) - np.repeat(starts, lengths)
            # a position's values run width, width + 1, … up to its mex: the run's length
            gap = np.where(pairs[:, 1] == self.width + rank, np.iinfo(np.int64).max, rank)
            first_gap = np.minimum.reduceat(gap, starts)
            at = np.searchsorted(done, pairs[starts, 0])
            mex[at] = self.width + np.where(first_gap == np.iinfo(np.int64).max, lengths, first_gap)
        return mex


class Retrograde:
    """Retrograde analysis of a positions file and a transitions file (see the module's
    docstring): `values`, `ties` and, for an impartial game, `grundy` as Steps, run in that
    order, then `solution()`; `close()` drops the database and scratch files."""

    def __init__(self, positions: Path, transitions: Path, scratch: Path, impartial: bool):
        self.transitions, self.scratch = transitions, scratch
        self.moves = parts.read_metadata(transitions).num_rows
        self.clock = Clock()
        with self.clock("positions"):
            moves = self._read_positions(positions, impartial)
        rem = Levels(self.n)
        rem.array[self.code != 0] = 0
        self.values = Values(self, rem)
        self.ties = Ties(self, rem)
        # Grundy values' level 1 comes from the first pass, with the values': set up now
        self.grundy = Grundy(self, Levels(self.n), moves) if moves is not None else None
        self.con: duckdb.DuckDBPyConnection | None = None
        self.reverse: Reverse | HeldReverse | None = None

    def _read_positions(self, path: Path, impartial: bool) -> np.ndarray | None:
        """The value code of each finished game (0 elsewhere) and each position's moves, a
        row group at a time, as the values' counter (`pending`) and, for Grundy values,
        returned; ids kept only where they are not 0..n-1."""
        file = parts.open_file(path, read_dictionary=["terminal"])
        self.n = file.metadata.num_rows
        groups = range(file.num_row_groups)
        most = _most(file, "moves")
        self.code = np.zeros(self.n, dtype=np.int8)
        self.pending = np.zeros(self.n, dtype=_signed(most))
        ids, dense, at = [], True, 0
        for group in groups:
            rows = file.read_row_group(group, columns=["id", "terminal", "moves"])
            here = slice(at, at + rows.num_rows)
            id_ = rows["id"].to_numpy()
            ids.append(id_)
            dense = dense and (not id_.size or (id_[0] == at and bool((np.diff(id_) == 1).all())))
            if dense:
                ids = []  # 0..n-1 so far: their own indexes, nothing to hold
            self.code[here] = value_codes(rows["terminal"])
            self.pending[here] = rows["moves"].to_numpy()
            at = here.stop
        self.id_column = None if dense else np.concatenate(ids)
        self.ids = Ids.counting(self.n) if self.id_column is None else Ids(self.id_column)
        moves = self.pending.copy() if impartial else None
        # open (neither won, lost nor tied) while it has moves not known to lead to a win:
        # one lookup of the counter says both
        self.pending[self.code != 0] = 0
        return moves

    def first_pass(self) -> None:
        """Level 1 of values and of Grundy values, in one pass over every move that also
        buckets the moves `rev` is to hold, then `rev`."""
        analyses = [self.values] + ([self.grundy] if self.grundy is not None else [])
        for analysis in analyses:
            analysis.levels.reach(1)
        buckets = Buckets(self.n, self.moves, self.scratch / "retrograde")
        try:
            with self.clock("first pass"):
                self._level_one(buckets)
            with self.clock("first pass: rev built"):
                self._build(buckets)
        finally:
            buckets.close()
        for analysis in analyses:
            analysis.advance()
            analysis.ahead = True
            log.debug("%s, level 1: %s finished, the first pass", analysis.name, f"{analysis.frontier.num_rows:,}")

    def _level_one(self, buckets: Buckets) -> None:
        """The first pass: `rev`'s moves are those from a parent still open (in either
        analysis) to a child the later levels pass on (no win or loss at level 0, or with
        moves)."""
        grundy = self.grundy
        # what level 0 says of each position in one byte, looked up once a move (a lookup
        # is most of a pass): its value code where the game is over, 8 more without moves
        ends = self.code.copy()
        if grundy is not None:
            ends[grundy.levels.array == 0] += 8

        def reduced(table: pa.Table) -> tuple:
            """On the reading threads, all but the state's updates: what the row group's
            moves tell their sources, and the moves `rev` is to hold, sorted into buckets.
            A source is still open after level 1 unless it has a lost child or every move
            it has left leads to a won end (and, for Grundy values, to a position without
            moves); a source whose moves go on in the next row group may be kept open here
            and closed there, which only keeps a few moves more."""
            src, dst, ordered = self._moves(table)
            if not ordered:
                order = np.argsort(src, kind="stable")
                src, dst = src[order], dst[order]
            end = ends[dst]
            code = end & 7
            starts, moves = _runs(src)
            source = src[starts]
            lost_ends, won_ends = (np.add.reduceat(code == kind, starts, dtype=np.int64) for kind in (LOSS, WIN))
            # as Values.reduce would give them, from the counts a source
            into_values = (source[lost_ends > 0], source[won_ends > 0], won_ends[won_ends > 0])
            open_ = (lost_ends == 0) & (won_ends < self.pending[source])
            later = (code == 0) | (code == TIE)  # a tie at level 0 is the ties' frontier
            into_grundy = None
            if grundy is not None:
                no_moves = end >= 8
                without = np.add.reduceat(no_moves, starts, dtype=np.int64)
                some = without > 0  # their children's Grundy values are all 0: bit 0
                into_grundy = (source[some], without[some], np.ones(int(some.sum()), grundy.mask.dtype), None)
                open_ |= without < grundy.pending[source]
                later |= ~no_moves
            keep = later & np.repeat(open_, moves)
            return into_values, into_grundy, buckets.sort(dst[keep], src[keep])

        for into_values, into_grundy, sorted_ in row_groups(self.transitions, reduced):
            self.values.apply(1, into_values)
            if grundy is not None:
                grundy.apply(1, into_grundy)
            buckets.add(*sorted_)

    def _moves(self, table: pa.Table) -> tuple[np.ndarray, np.ndarray, bool]:
        """A row group's moves as indexes (those from or to no position dropped), and
        whether their sources ascend."""
        n = self.n
        src, dst = self.ids.index(table["src"].to_numpy()), self.ids.index(table["dst"].to_numpy())
        if src.size and (src.max() >= n or dst.max() >= n):
            inside = (src < n) & (dst < n)
            src, dst = src[inside], dst[inside]
        return src, dst, bool(src.size < 2 or (src[1:] >= src[:-1]).all())

    def forward(self, analysis: Analysis, level: int) -> None:
        """Level `level` of `analysis` by one pass over every move, for a frontier whose
        rows in `rev` hold too many moves to unnest."""

        def reduced(table: pa.Table) -> tuple:
            """On the reading threads: the moves into the frontier (children finished at
            level - 1; those finished during the pass are at `level`, either way no
            frontier's), reduced."""
            src, dst, ordered = self._moves(table)
            hit = np.flatnonzero(analysis.levels.array[dst] == level - 1)
            hit = hit[analysis.in_frontier(dst[hit])]
            return analysis.reduce(src[hit], analysis.value(dst[hit]), ordered)

        for into in row_groups(self.transitions, reduced):
            analysis.apply(level, into)

    def _build(self, buckets: Buckets) -> None:
        began = time.perf_counter()
        if self.moves <= HELD:
            self.reverse = HeldReverse(buckets)
        else:
            if self.con is None:
                self.con = self._database()
            self.reverse = Reverse(self.con, buckets)
            self.con.execute(f"SET memory_limit = '{self._duckdb_memory(building=False) >> 20}MiB'")
        log.debug(
            "retrograde: rev built, %s rows holding %s moves (%.2f s)",
            f"{self.reverse.rows:,}",
            f"{self.reverse.entries:,}",
            time.perf_counter() - began,
        )

    def _database(self) -> duckdb.DuckDBPyConnection:
        """The solver's own DuckDB: a file in the scratch folder for a large graph."""
        memory = self._duckdb_memory(building=True)
        config: dict[str, Any] = {"memory_limit": f"{memory >> 20}MiB", "temp_directory": str(self.scratch)}
        if self.moves <= ON_DISK:
            return duckdb.connect(config=config)
        self.scratch.mkdir(parents=True, exist_ok=True)
        path = self.scratch / "retrograde.duckdb"
        path.unlink(missing_ok=True)
        return duckdb.connect(str(path), config=config)

    def _duckdb_memory(self, building: bool) -> int:
        """DuckDB's memory limit: what the state's arrays (and while `rev` is built, the
        buckets being made into lists) leave of TABLEBASE_MEMORY_LIMIT, at least a
        quarter of it: the solve as a whole keeps to the limit."""
        limit = parse_size(DEFAULT_MEMORY_LIMIT, "TABLEBASE_MEMORY_LIMIT")
        held = sum(array.nbytes for array in self._arrays())
        if building:
            held += 2 * BUCKET_BYTES * min(BUCKET, self.moves)
        memory = max(limit - held, limit // 4)
        log.debug("retrograde: DuckDB may use %s MiB beside the arrays' %s MiB", f"{memory >> 20:,}", f"{held >> 20:,}")
        return memory

    def _arrays(self) -> list[np.ndarray]:
        """The state's arrays."""
        arrays = [self.code, self.pending, self.values.levels.array]
        if self.grundy is not None:
            arrays += [self.grundy.pending, self.grundy.mask, self.grundy.grundy, self.grundy.levels.array]
        return arrays

    def compact(self) -> None:
        """Rewrite `rev` once half its rows may be positions no analysis still to run
        passes on."""
        rev = self.reverse
        if rev is None or rev.rows < COMPACT_ROWS or rev.passed < COMPACT_SHARE * rev.rows:
            return
        began = time.perf_counter()
        rows = rev.rows
        analyses = [self.values, self.ties] + ([self.grundy] if self.grundy is not None else [])

        def live(ids: np.ndarray) -> np.ndarray:
            keep = np.zeros(ids.size, dtype=bool)
            for analysis in analyses:
                keep |= analysis.live(ids)
            return keep

        with self.clock("rev rewritten"):
            dropped = rev.compact(live)
        log.debug(
            "retrograde: %s of rev's %s rows are live%s (%.2f s)",
            f"{rows - dropped:,}" if dropped else f"{rows - rev.passed:,}",
            f"{rows:,}",
            ": rewritten" if dropped else "",
            time.perf_counter() - began,
        )

    def solution(self) -> Iterator[pa.RecordBatch]:
        """The solution's rows (id, value, remoteness, grundy, grundy_height, winning_moves)
        in the positions' order; a code 0 (never decided) is a draw."""
        self.close()
        with self.clock("winning moves"):
            self.winning = self._winning_moves()
        for lo in range(0, self.n, BATCH):
            with self.clock("solution's rows made"):
                batch = self._rows(slice(lo, min(lo + BATCH, self.n)))
            yield batch
        log.debug("retrograde: time by step: %s", self.clock)

    def _winning_moves(self) -> np.ndarray:
        """Each position's moves to a lost position, by one more pass over the moves (the
        levels pass a loss only to parents still open, so they never count them all). The
        counter of children not known won is spent once every value is: it holds them."""
        lost = np.append(self.code == LOSS, False)  # index n: a child that is no position
        winning = self.pending
        winning[:] = 0

        def count(table: pa.Table) -> tuple[int, np.ndarray]:
            src, dst = self.ids.index(table["src"].to_numpy()), self.ids.index(table["dst"].to_numpy())
            won = src[lost[dst]]
            # the moves come by source: a row group's sources are a short range of ids
            lo = int(won.min()) if won.size else 0
            return lo, np.bincount(won - lo)

        for lo, counts in row_groups(self.transitions, count):
            winning[lo : lo + counts.size] += counts.astype(winning.dtype)
        return winning

    def _rows(self, at: slice) -> pa.RecordBatch:
        code = self.code[at]
        decided = code != 0
        ids = np.arange(at.start, at.stop) if self.id_column is None else self.id_column[at]
        value = pa.DictionaryArray.from_arrays(pa.array(np.where(decided, code, DRAW) - 1, pa.int8()), WORDS)
        grundy = self.grundy
        if grundy is not None:
            known = grundy.levels.known(at)
            grundy_value = pa.array(grundy.grundy[at].astype(np.int32), mask=~known)
            height = pa.array(grundy.levels.array[at].astype(np.int32), mask=~known)
        else:
            grundy_value = height = pa.nulls(at.stop - at.start, pa.int32())
        return pa.RecordBatch.from_arrays(
            [
                pa.array(ids, pa.int64()),
                value,
                pa.array(self.values.levels.array[at].astype(np.int32), mask=~decided),
                grundy_value,
                height,
                pa.array(self.winning[at].astype(np.int32)),
            ],
            names=["id", "value", "remoteness", "grundy", "grundy_height", "winning_moves"],
        )

    def close(self) -> None:
        """Drop `rev`, its database and scratch files."""
        if self.con is not None:
            self.con.close()
            self.con = None
        self.reverse = None
        for name in ("retrograde.duckdb", "retrograde.duckdb.wal"):
            (self.scratch / name).unlink(missing_ok=True)
