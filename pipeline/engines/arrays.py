"""The DuckDB engine's passes that look positions up by id: NumPy over the stage files.

Where SQL hash-joins every transition to its child (10^8 rows to 10^7), a position's id is
an index here: each pass streams transitions.parquet one row group at a time, gathers the
children's columns by index and reduces them per source, so its memory is a few arrays of
one entry per position plus one row group. What each pass computes is the same as the
Spark engine's SQL (pipeline/sql/spark/): verify's facts, export's reachable positions.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import numpy as np
import pyarrow as pa

from pipeline.core import values
from pipeline.core.dataset import SOLUTION, SOLVER_MADE
from pipeline.core.errors import DataError
from pipeline.core.keys import distinct, distinct_rows
from pipeline.storage import parts
from pipeline.storage.parquet import read_table
from pipeline.storage.threads import in_order

#: Grundy values below this are gathered as bits of one uint64 a position; larger ones
#: (rare: a value is at most the number of moves) as (position, value) pairs.
MASK_BITS = 63
#: "No value" for a running minimum / maximum of remoteness or height (all are >= 0).
NO_MIN = np.iinfo(np.int32).max
NO_MAX = -1
T = TypeVar("T")

#: The solution's columns, as declared: id, value, remoteness, grundy, grundy_height, then
#: the solver-made ones, which the facts carry as stored.
SOLVED = SOLUTION.schema().names


class Ids:
    """Positions' ids as indexes 0..n-1 (the positions file's order): dense ids map to
    themselves, others through a lookup table as long as the largest id. An id that is no
    position's gets index n, so arrays of n + 1 entries answer for it with their last."""

    def __init__(self, ids: np.ndarray):
        self.n = ids.size
        self.dense = bool(self.n == 0 or (ids[0] == 0 and ids[-1] == self.n - 1 and np.all(np.diff(ids) == 1)))
        self.table = np.zeros(0, dtype=np.int32)  # dense: not used
        if not self.dense:
            if ids.min() < 0:
                raise DataError(f"a position has the negative id {int(ids.min())}")
            self.table = np.full(int(ids.max()) + 1, self.n, dtype=np.int32)
            self.table[ids] = np.arange(self.n, dtype=np.int32)

    @classmethod
    def counting(cls, n: int) -> Ids:
        """The ids 0..n-1, each its own index (nothing held)."""
        ids = cls(np.zeros(0, dtype=np.int64))
        ids.n = n
        return ids

    def index(self, ids: np.ndarray) -> np.ndarray:
        """Each id's index, n where it is no position's."""
        size = self.n if self.dense else self.table.size
        if ids.size and (ids.min() < 0 or ids.max() >= size):
            ids = np.where((ids >= 0) & (ids < size), ids, size)
            if not self.dense:
                return np.append(self.table, self.n)[ids]
        return ids if self.dense else self.table[ids]


def value_codes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column of value words as value codes (pipeline/core/values.py), 0 for NULL or a word
    that is not a value."""
    words = {word: code for code, word in enumerate(values.WORDS, start=1)}
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    to_code = np.array([words.get(word, 0) for word in column.dictionary.to_pylist()] + [0], dtype=np.int8)
    indices = column.indices.fill_null(len(column.dictionary)).to_numpy()
    return to_code[indices]


def row_groups(path: Path, work: Callable[[pa.Table], T], ahead: int = 4, last_first: bool = False) -> Iterator[T]:
    """work(row group's src and dst) for each row group of a transitions file, in order
    (from the last with `last_first`), on two threads (NumPy and the Parquet reader let go
    of the GIL), at most `ahead` row groups read and not yet consumed."""
    local = threading.local()  # a reader a thread

    def read(group: int) -> T:
        if not hasattr(local, "reader"):
            local.reader = parts.open_file(path)
        return work(local.reader.read_row_group(group, columns=["src", "dst"]))

    groups = range(parts.read_metadata(path).num_row_groups)
    return in_order(read, reversed(groups) if last_first else groups, ahead)


def _int(column: pa.ChunkedArray, missing: int) -> np.ndarray:
    return column.fill_null(missing).to_numpy().astype(np.int32)


def verify_facts(positions: Path, transitions: Path, solution: Path, impartial: bool) -> pa.Table:
    """One row per position with what its children's stored values say: the columns of the
    view `facts` that pipeline/stages/verify.py's checks read (pipeline/sql/spark/verify.sql
    computes the same). Children are counted per transition (src, dst)."""
    loss, win, tie, draw = (values.Value(word).code for word in ("loss", "win", "tie", "draw"))
    pos = read_table(positions, columns=["id", "terminal", "moves"], read_dictionary=["terminal"])
    ids = Ids(pos["id"].to_numpy())
    n = ids.n
    sol = read_table(solution, columns=SOLVED, read_dictionary=["value"])
    at = ids.index(sol["id"].to_numpy())
    keep = at < n
    row = np.full(n, -1, dtype=np.int64)  # each position's row of the solution, -1 if none
    row[at[keep]] = np.flatnonzero(keep)
    solved = row >= 0
    take = pa.array(row, mask=~solved)

    def placed(name: str) -> pa.Array:
        """The solution's column `name` in the positions' order, NULL where unsolved."""
        return sol[name].take(take).combine_chunks()

    stored = {name: placed(name) for name in SOLVED[2:]}
    code = value_codes(placed("value"))
    remoteness = _int(stored["remoteness"], NO_MIN)
    grundy = _int(stored["grundy"], -1)
    height = _int(stored["grundy_height"], -1)

    # each position as a child, at index n a child that is no solved position: its kind
    # (value code, `missing` when unsolved) and whether it has a Grundy value (+ kinds),
    # and the remoteness, Grundy bit and height its parents reduce
    missing = len(values.WORDS) + 1
    kinds = 2 * (missing + 1)

    def as_child(column: np.ndarray, keep: np.ndarray, empty: int) -> np.ndarray:
        child = np.full(n + 1, empty, dtype=column.dtype)
        np.copyto(child[:n], column, where=solved & keep)
        return child

    kind = as_child(np.where(grundy >= 0, missing + 1, 0).astype(np.int8) + code, np.ones(n, bool), missing)
    loss_rem = as_child(remoteness, code == loss, NO_MIN)
    tie_rem = as_child(remoteness, code == tie, NO_MIN)
    win_rem = as_child(remoteness, (code == win) & (remoteness != NO_MIN), NO_MAX)
    small = (grundy >= 0) & (grundy < MASK_BITS)
    grundy_bit = as_child(np.left_shift(np.uint64(1), np.where(small, grundy, 0).astype(np.uint64)), small, 0)
    child_height = as_child(height, height >= 0, NO_MAX)
    big_grundy = as_child(grundy, grundy >= MASK_BITS, -1) if (grundy >= MASK_BITS).any() else None

    def children_of(batch: pa.Table) -> tuple | None:
        """One row group's moves reduced per source: (sources, tallies of their children's
        kinds, least loss and tie remoteness, greatest win remoteness, Grundy bits, greatest
        height, (source, large Grundy value) pairs)."""
        src = ids.index(batch["src"].to_numpy())
        dst = ids.index(batch["dst"].to_numpy())
        if src.size and src.max() >= n:  # moves out of no position: no position's facts
            dst, src = dst[src < n], src[src < n]
        if src.size > 1 and (src[1:] < src[:-1]).any():
            order = np.argsort(src, kind="stable")
            src, dst = src[order], dst[order]
        if not src.size:
            return None
        new = np.empty(src.size, dtype=bool)
        new[0] = True
        np.not_equal(src[1:], src[:-1], out=new[1:])
        starts = np.flatnonzero(new)
        segment = np.cumsum(new, dtype=np.int32)
        segment -= 1
        segment *= kinds
        segment += kind[dst]
        tally = np.bincount(segment, minlength=starts.size * kinds).reshape(starts.size, kinds)
        with_grundy = tally[:, missing + 1 :].sum(axis=1)
        by_kind = tally[:, : missing + 1] + tally[:, missing + 1 :]
        children = by_kind.sum(axis=1)
        counts = [
            children,
            children - by_kind[:, missing],
            *(by_kind[:, c] for c in (loss, win, tie, draw)),
            with_grundy,
        ]
        big = None
        if big_grundy is not None:
            value = big_grundy[dst]
            big = np.stack([src[value >= 0], value[value >= 0]], axis=1)
        return (
            src[starts],
            np.stack(counts).astype(np.int32),
            np.minimum.reduceat(loss_rem[dst], starts),
            np.minimum.reduceat(tie_rem[dst], starts),
            np.maximum.reduceat(win_rem[dst], starts),
            np.bitwise_or.reduceat(grundy_bit[dst], starts),
            np.maximum.reduceat(child_height[dst], starts),
            big,
        )

    # per position, from its children: counts (children, known, loss, win, tie, draw, with
    # a Grundy value), least loss and tie remoteness, greatest win remoteness, Grundy bits,
    # greatest height; each column with its reduction and the reduction's identity
    columns = [(np.add, 0, np.int32)] * 7 + [
        (np.minimum, NO_MIN, np.int32),
        (np.minimum, NO_MIN, np.int32),
        (np.maximum, NO_MAX, np.int32),
        (np.bitwise_or, 0, np.uint64),
        (np.maximum, NO_MAX, np.int32),
    ]
    result = [np.full(n, empty, dtype=dtype) for _, empty, dtype in columns]
    large = []
    last = -1  # the greatest source so far: parts in ascending order are assigned, not reduced
    for part in row_groups(transitions, children_of):
        if part is None:
            continue
        here, counts, *best, big = part
        merged = [*counts, *best]
        if here[0] > last:
            # sources with moves are most often a run of ids: a copy, not a scatter
            sources = slice(here[0], here[-1] + 1) if here[-1] - here[0] + 1 == here.size else here
            for array, values_ in zip(result, merged):
                array[sources] = values_
        elif here[0] == last:  # the source the part before ended with goes on
            for (reduce, _, _), array, values_ in zip(columns, result, merged):
                array[here[0]] = reduce(array[here[0]], values_[0])
                array[here[1:]] = values_[1:]
        else:  # moves out of order (a file not sorted by src): every part reduced in
            for (reduce, _, _), array, values_ in zip(columns, result, merged):
                reduce.at(array, here, values_)
        last = max(last, int(here[-1]))
        if big is not None:
            large.append(big)
    children, known, *by_value, grundy_children, min_loss, min_tie, max_win, mask, max_height = result
    counts = dict(zip((loss, win, tie, draw), by_value))

    # Grundy value g: taken if some child has g; below: distinct child values under g
    g = np.where(grundy >= 0, grundy, 0).astype(np.uint64)
    low = np.minimum(g, MASK_BITS)
    taken = (grundy >= 0) & (g < MASK_BITS) & (((mask >> np.minimum(g, np.uint64(MASK_BITS))) & np.uint64(1)) == 1)
    below = np.bitwise_count(mask & ((np.uint64(1) << low) - np.uint64(1))).astype(np.int32)
    if large:
        pairs = distinct_rows(np.concatenate(large))
        owner, child_value = pairs[:, 0], pairs[:, 1]
        taken[owner[child_value == grundy[owner]]] = True
        np.add.at(below, owner[child_value < grundy[owner]], 1)

    terminal = pos["terminal"]
    terminal_code = value_codes(terminal)
    finished = terminal_code[terminal.is_valid().to_numpy(zero_copy_only=False)]
    # normal play: every finished position is lost by the mover (NULL: no game is over)
    normal_play = bool((finished == loss).all()) if finished.size else None

    return _facts_table(
        pos["id"],
        terminal,
        terminal_code,
        pos["moves"],
        placed("value"),
        code,
        stored["remoteness"],
        solved,
        children,
        known,
        counts,
        (min_loss, max_win, min_tie),
        stored,
        grundy_children,
        (taken, grundy < 0),
        below,
        max_height,
        impartial,
        normal_play,
    )


def _nullable(array: np.ndarray, absent: np.ndarray, wide: bool = False) -> pa.Array:
    return pa.array(array.astype(np.int64) if wide else array, mask=absent)


def _facts_table(
    ids: pa.Array,
    terminal: pa.Array,
    terminal_code: np.ndarray,
    moves: pa.Array,
    value: pa.Array,
    code: np.ndarray,
    remoteness: pa.Array,
    solved: pa.Array,
    children: np.ndarray,
    known: np.ndarray,
    counts: dict[int, np.ndarray],
    extremes: tuple[np.ndarray, np.ndarray, np.ndarray],
    own: pa.Table,
    grundy_children: np.ndarray,
    taken: tuple[np.ndarray, np.ndarray],
    below: np.ndarray,
    max_height: np.ndarray,
    impartial: bool,
    normal_play: bool | None,
) -> pa.Table:
    """The facts verify checks, one row a position (the whole table's and a part's alike):
    its own columns, what its children say, and the Grundy facts. `extremes`: min_loss,
    max_win, min_tie; `own`: its grundy, grundy_height and solver-made columns (SOLVER_MADE,
    as stored, for the checks to compare); `taken`: (taken, no Grundy value)."""
    loss, win, tie, draw = (values.Value(word).code for word in ("loss", "win", "tie", "draw"))
    min_loss, max_win, min_tie = extremes
    n = len(ids)
    return pa.table(
        {
            "id": ids,
            "terminal": terminal.cast(pa.string()),
            "terminal_code": _nullable(terminal_code.astype(np.int32), terminal_code == 0),
            "moves": moves,
            "value": value.cast(pa.string()),
            "code": _nullable(code.astype(np.int32), code == 0),
            "remoteness": remoteness,
            "solved": solved,
            "children": children,
            "known_children": known,
            "loss_children": counts[loss],
            "min_loss": _nullable(min_loss, min_loss == NO_MIN, wide=True),
            "win_children": counts[win],
            "max_win": _nullable(max_win, max_win == NO_MAX, wide=True),
            "tie_children": counts[tie],
            "min_tie": _nullable(min_tie, min_tie == NO_MIN, wide=True),
            "draw_children": counts[draw],
            "grundy": own["grundy"],
            "grundy_height": own["grundy_height"],
            "grundy_children": grundy_children,
            "grundy_taken": pa.array(taken[0], mask=taken[1]),
            "grundy_below": below,
            "max_child_height": _nullable(max_height, max_height == NO_MAX, wide=True),
            "impartial": pa.repeat(pa.scalar(impartial), n) if n else pa.array([], pa.bool_()),
            "normal_play": pa.repeat(pa.scalar(normal_play, pa.bool_()), n) if n else pa.array([], pa.bool_()),
        }
        | {column.name: own[column.name] for column in SOLVER_MADE}
    )


def dense_ids(path: Path) -> int | None:
    """n if the file's `id` column holds 0, 1, …, n - 1 in order, else None; read a row
    group at a time."""
    file = parts.open_file(path)
    n = 0
    for group in range(file.num_row_groups):
        ids = file.read_row_group(group, columns=["id"])["id"].to_numpy()
        if ids.size and (ids[0] != n or ids[-1] != n + ids.size - 1 or (np.diff(ids) != 1).any()):
            return None
        n += ids.size
    return n


def rank_starts(positions: Path) -> np.ndarray | None:
    """The first id of each rank, where positions have the ids 0..n-1 numbered rank by rank
    (each rank a run of ids, ranks ascending); else None. Read a row group at a time."""
    if dense_ids(positions) is None:
        return None
    file = parts.open_file(positions)
    starts, last, at = [], None, 0
    for group in range(file.num_row_groups):
        rank = file.read_row_group(group, columns=["rank"])["rank"]
        if rank.null_count:
            return None
        rank = rank.to_numpy()
        if not rank.size:
            continue
        if (last is not None and rank[0] < last) or (np.diff(rank) < 0).any():
            return None
        new = np.flatnonzero(np.diff(np.concatenate(([rank[0] - 1 if last is None else last], rank))))
        starts.append(new + at)
        last, at = rank[-1], at + rank.size
    return np.concatenate(starts) if starts else np.zeros(0, dtype=np.int64)


#: Where moves can cycle and there are more of them than this, the reachable positions are
#: found by sweeps over the moves file rather than breadth first over the moves held in
#: memory (4 bytes a move: dobutsu's 1.9 billion would take 7.5 GB).
SWEEP_MOVES = 1 << 26
#: Moves a part of verify_parts' at most (but for one position's): a row group of sticks
#: rows=10's positions leads by 14.5 M moves, checked as one part on one thread (4.5 s) where
#: parts of 2 M are checked on two threads while the next is read.
PART_MOVES = 1 << 21


def reachable(positions: Path, transitions: Path, starts: np.ndarray) -> np.ndarray:
    """Whether play from the positions with ids `starts` reaches each position (in the
    positions file's order). Where every position has a rank and every move lowers it,
    one pass over the moves from the highest rank down (a position's parents all come
    before it): one byte a position, a row group of moves at a time. Otherwise, with many
    moves and ids 0..n-1, sweeps over the moves in id order (one, where ids go breadth
    first from the starts); with few, breadth first over the moves held in memory (4 bytes
    a move)."""
    first = rank_starts(positions)
    if first is not None:
        n = parts.read_metadata(positions).num_rows
        seen = np.zeros(n + 1, dtype=bool)
        starts = np.asarray(starts, dtype=np.int64)
        seen[starts[(starts >= 0) & (starts < n)]] = True
        if n and _by_rank_downwards(transitions, n, first, seen):
            return seen[:-1]
    if parts.read_metadata(transitions).num_rows > SWEEP_MOVES and (n := dense_ids(positions)) is not None:
        seen = np.zeros(n + 1, dtype=bool)
        starts = np.asarray(starts, dtype=np.int64)
        seen[starts[(starts >= 0) & (starts < n)]] = True
        return _sweeps(transitions, n, seen)[:-1]
    pos = read_table(positions, columns=["id", "rank"])
    ids = Ids(pos["id"].to_numpy())
    seen = np.zeros(ids.n + 1, dtype=bool)  # the last: "no position"
    seen[ids.index(np.asarray(starts, dtype=np.int64))] = True
    seen[ids.n] = False
    rank = pos["rank"]
    if rank.null_count == 0 and ids.n and _downwards(transitions, ids, rank.to_numpy(), seen):
        return seen[:-1]
    return _breadth_first(transitions, ids, seen)[:-1]


def _downwards(transitions: Path, ids: Ids, rank: np.ndarray, seen: np.ndarray) -> bool:
    """Mark in `seen` what its marked positions reach, row groups last to first, each row
    group's sources rank by rank from the highest. False, `seen` half marked, where the
    file is not in that order (sources descending, every move lowering the rank)."""
    rank = np.append(rank, np.iinfo(rank.dtype).min)
    below = below_rank = None  # the lowest source so far, and its rank
    for batch in row_groups(transitions, lambda table: table, last_first=True):  # read ahead as marks are made
        src = ids.index(batch["src"].to_numpy())
        dst = ids.index(batch["dst"].to_numpy())
        if not src.size:
            continue
        src_rank = rank[src]
        if (
            (src[1:] < src[:-1]).any()
            or (below is not None and (src[-1] > below or src_rank[-1] > below_rank))
            or (src >= ids.n).any()
            or (rank[dst] >= src_rank).any()
        ):
            return False
        below, below_rank = src[0], src_rank[0]
        bounds = np.flatnonzero(src_rank[1:] != src_rank[:-1]) + 1
        if (np.diff(src_rank[np.concatenate(([0], bounds))]) < 0).any():
            return False  # sources by id must go up in rank
        ends = np.concatenate((bounds, [src.size]))
        for lo, hi in zip(np.concatenate(([0], bounds))[::-1], ends[::-1]):
            seen[dst[lo:hi][seen[src[lo:hi]]]] = True
    return True


def _by_rank_downwards(transitions: Path, n: int, first: np.ndarray, seen: np.ndarray) -> bool:
    """_downwards for ids 0..n-1 numbered rank by rank (`first`: each rank's first id): a
    move lowers the rank where it leads below its source's rank's first id."""

    def ranked(table: pa.Table) -> tuple[np.ndarray, np.ndarray, np.ndarray, bool]:
        """(src, dst, where the sources' rank changes, whether every move is in order and
        lowers the rank), made on the reading threads, ahead of the marking."""
        src, dst = table["src"].to_numpy(), table["dst"].to_numpy()
        if not src.size:
            return src, dst, src, True
        rank = np.searchsorted(first, src, side="right") - 1
        ordered = not (
            (src[1:] < src[:-1]).any() or src[0] < 0 or src[-1] >= n or dst.min() < 0 or (dst >= first[rank]).any()
        )
        return src, dst, np.flatnonzero(rank[1:] != rank[:-1]) + 1, ordered

    below = None  # the lowest source so far
    for src, dst, bounds, ordered in row_groups(transitions, ranked, last_first=True):
        if not src.size:
            continue
        if not ordered or (below is not None and src[-1] > below):
            return False
        below = src[0]
        for lo, hi in zip(np.concatenate(([0], bounds))[::-1], np.concatenate((bounds, [src.size]))[::-1]):
            seen[dst[lo:hi][seen[src[lo:hi]]]] = True
    return True


def _sweeps(transitions: Path, n: int, seen: np.ndarray) -> np.ndarray:
    """Mark in `seen` (ids 0..n-1, then "no position") what its marked positions reach:
    passes over the moves row group by row group, a group's moves marked again while they
    mark one of its own sources, until a pass marks nothing behind it (a position whose
    moves it may have passed: up to the greatest source of the groups before). Where ids go
    breadth first from the starts (dobutsu), every position's parent comes before it: one
    pass."""
    while True:
        behind, passed = False, -1
        for src, dst in row_groups(transitions, lambda table: (table["src"].to_numpy(), table["dst"].to_numpy())):
            if not src.size:
                continue
            if src.min() < 0 or src.max() >= n:
                raise DataError(f"{transitions}: a move out of no position")
            dst = np.where((dst >= 0) & (dst < n), dst, n)  # a move to no position (verify says so) reaches none
            low, high = int(src.min()), int(src.max())
            while True:
                new = dst[seen[src]]
                new = new[~seen[new]]
                if not new.size:
                    break
                seen[new] = True
                behind |= bool((new <= passed).any())
                if not ((new >= low) & (new <= high)).any():
                    break
            passed = max(passed, high)
        if not behind:
            return seen


def _breadth_first(transitions: Path, ids: Ids, seen: np.ndarray) -> np.ndarray:
    first, dst = _by_source(transitions, ids)
    frontier = np.flatnonzero(seen[:-1])
    while frontier.size:
        begin, count = first[frontier], first[frontier + 1] - first[frontier]
        # the frontier's moves, range by range: offsets within each range added to its start
        at = np.repeat(begin - np.cumsum(count) + count, count) + np.arange(count.sum())
        children = dst[at]
        children = children[~seen[children]]
        seen[children] = True
        seen[ids.n] = False
        frontier = distinct(children[children < ids.n])
    return seen


def _by_source(transitions: Path, ids: Ids) -> tuple[np.ndarray, np.ndarray]:
    """Every move's child by source: position i's children are dst[first[i]:first[i + 1]]
    (index n: "no position"). 4 bytes a move where the file is sorted by source, as
    enumerate writes it; otherwise the file is sorted here, in memory."""
    reader = parts.open_file(transitions)
    dst = np.empty(reader.metadata.num_rows, dtype=np.int32)
    count = np.zeros(ids.n + 1, dtype=np.int64)
    at, last = 0, -1
    for group in range(reader.num_row_groups):
        batch = reader.read_row_group(group, columns=["src", "dst"])
        src = ids.index(batch["src"].to_numpy())
        if src.size and ((src[1:] < src[:-1]).any() or src[0] < last):
            return _sorted_by_source(transitions, ids)
        if src.size:
            last = int(src[-1])
            count[src[0] : last + 1] += np.bincount(src - src[0])
        dst[at : at + src.size] = ids.index(batch["dst"].to_numpy())
        at += src.size
    return np.concatenate(([0], np.cumsum(count))), dst


def _sorted_by_source(transitions: Path, ids: Ids) -> tuple[np.ndarray, np.ndarray]:
    table = read_table(transitions, columns=["src", "dst"])
    src = ids.index(table["src"].to_numpy())
    dst = ids.index(table["dst"].to_numpy()).astype(np.int32)
    del table
    order = np.argsort(src, kind="stable")
    return np.searchsorted(src[order], np.arange(ids.n + 2)), dst[order]


def child_floors(transitions: Path) -> tuple[np.ndarray, np.ndarray]:
    """(each row group's greatest source, the least child of that row group and every later
    one) from the transitions file's statistics: moves out of a source above a row group's
    greatest lead no lower than the next row group's floor. Without statistics, floors of 0:
    every rank's results are kept."""
    meta = parts.read_metadata(transitions)
    names = meta.schema.to_arrow_schema().names
    src, dst = names.index("src"), names.index("dst")
    src_max: list[int] = []
    dst_min: list[int] = []
    for group in range(meta.num_row_groups):
        row_group = meta.row_group(group)
        src_stats, dst_stats = row_group.column(src).statistics, row_group.column(dst).statistics
        if not row_group.num_rows:  # an empty row group: no move, no child
            src_max.append(src_max[-1] if src_max else -1)
            dst_min.append(np.iinfo(np.int64).max)
            continue
        known = src_stats is not None and src_stats.has_min_max and dst_stats is not None and dst_stats.has_min_max
        src_max.append(src_stats.max if known else np.iinfo(np.int64).max)
        dst_min.append(dst_stats.min if known else 0)
    floor = np.minimum.accumulate(np.array(dst_min, dtype=np.int64)[::-1])[::-1]
    return np.array(src_max, dtype=np.int64), floor


def floor_above(floors: tuple[np.ndarray, np.ndarray], hi: int) -> int:
    """The least id a move out of a position above `hi` may lead to, by child_floors'
    (greatest source, floor) of each row group; `hi` + 1 where no move comes from above it."""
    src_max, floor = floors
    at = int(np.searchsorted(src_max, hi, side="right"))
    return int(floor[at]) if at < floor.size else hi + 1


def verify_parts(
    positions: Path,
    transitions: Path,
    solution: Path,
    impartial: bool,
    each: Callable[[pa.Table], Any] = lambda facts: facts,
) -> Iterator[Any]:
    """verify_facts' table part by part (one row group of positions each), in id order,
    without ever holding every position: where the files are as the stages write them
    (ids 0..n-1 in both files, moves by ascending source), each part's moves are read
    from the transitions file as the sources come, and their children's stored values
    looked up in a window of the solution, from the least child any later move may lead
    to (the transitions' statistics) to the greatest child met so far. Moves that all lead
    one rank down (Connect-Four) keep two ranks in the window. Files not in that order are
    checked whole (verify_facts). `each(part's facts)` is what is given, made on the thread
    that made the facts (the checks, side by side with the next parts)."""
    if not _streamable(positions, transitions, solution):
        yield each(verify_facts(positions, transitions, solution, impartial))
        return
    normal_play = _normal_play(positions)
    window = _Window(solution, impartial)
    moves = _Moves(transitions)
    pos = parts.open_file(positions)
    missing = len(values.WORDS) + 1

    def gathered() -> Iterator[tuple[pa.Table, pa.Table, np.ndarray, dict[str, np.ndarray]]]:
        """Each part's positions, own stored values, moves (sources as indexes into the
        part) and children's stored values, in turn: the window moves on as they are read."""
        for group in range(pos.num_row_groups):
            whole = pos.read_row_group(group, columns=["id", "terminal", "moves"])
            ids = whole["id"].to_numpy()
            if ids.size and (ids[0] != window.own_start or (np.diff(ids) != 1).any()):
                raise DataError(f"{positions}: ids are not 0, 1, 2, … in order")
            for start, end in _slices(whole["moves"], PART_MOVES):
                part = whole.slice(start, end - start)
                lo, hi = window.own_start, window.own_start + part.num_rows
                own = window.own(part.num_rows)
                src, dst = moves.upto(hi)
                later = moves.floor()
                window.cover(int(dst.max()) if dst.size else lo, min(int(dst.min()), later) if dst.size else later)
                yield part, own, src - lo, window.children(dst, missing)

    # the facts of a part are made on two threads while the next parts are read
    yield from in_order(lambda args: each(_part_facts(*args, impartial, normal_play)), gathered())


def _slices(moves: pa.ChunkedArray, most: int) -> list[tuple[int, int]]:
    """The row group cut into runs of positions, (start, end), each leading by at most
    `most` moves but for one position's (by the positions' own count of moves: a wrong
    count makes the parts uneven, never the facts wrong, as each part takes the moves
    read for its ids)."""
    counts = np.nan_to_num(moves.to_numpy(zero_copy_only=False), nan=0).astype(np.int64)
    if counts.size == 0:
        return [(0, 0)]
    total = np.cumsum(counts)
    cuts = np.searchsorted(total, np.arange(most, int(total[-1]), most), side="right")
    ends = distinct(np.concatenate((cuts[cuts > 0], [counts.size])))
    return list(zip(np.concatenate(([0], ends[:-1])).tolist(), ends.tolist(), strict=True))


def _streamable(positions: Path, transitions: Path, solution: Path) -> bool:
    """Whether positions and solution hold the ids 0..n-1 in order, row group by row group,
    and the moves' row groups come by ascending source, by their statistics."""

    def runs(path: Path, column: str) -> list[tuple[int, int, int]] | None:
        meta = parts.read_metadata(path)
        index = meta.schema.to_arrow_schema().names.index(column)
        found: list[tuple[int, int, int]] = []
        for group in range(meta.num_row_groups):
            row_group = meta.row_group(group)
            stats = row_group.column(index).statistics
            if row_group.num_rows and (stats is None or not stats.has_min_max):
                return None
            if row_group.num_rows:
                found.append((stats.min, stats.max, row_group.num_rows))
        return found

    held, solved = runs(positions, "id"), runs(solution, "id")
    if held is None or solved is None:
        return False
    for found in (held, solved):
        if (
            any(high - low + 1 != rows for low, high, rows in found)
            or any(later[0] != earlier[1] + 1 for earlier, later in zip(found, found[1:]))
            or (found and found[0][0] != 0)
        ):
            return False
    if held and held[-1][1] != (solved[-1][1] if solved else -1):
        return False
    moves = runs(transitions, "src")
    return moves is not None and all(later[0] >= earlier[1] for earlier, later in zip(moves, moves[1:]))


def _normal_play(positions: Path) -> bool | None:
    """Whether every finished position is lost by the mover (None: no game is over), read
    row group by row group."""
    file = parts.open_file(positions, read_dictionary=["terminal"])
    finished = False
    for group in range(file.num_row_groups):
        terminal = file.read_row_group(group, columns=["terminal"])["terminal"]
        codes = value_codes(terminal)[terminal.is_valid().to_numpy(zero_copy_only=False)]
        if codes.size and not (codes == values.Value.LOSS.code).all():
            return False
        finished |= bool(codes.size)
    return True if finished else None


class _Moves:
    """The transitions file's (src, dst) read forwards, by ascending source."""

    def __init__(self, path: Path):
        self.file = parts.open_file(path)
        self.group = 0
        self.held = (np.zeros(0, np.int64), np.zeros(0, np.int64))
        self.floors = child_floors(path)[1]

    def upto(self, hi: int) -> tuple[np.ndarray, np.ndarray]:
        """The moves out of sources below `hi` not given yet, by source."""
        src, dst = self.held
        parts_src, parts_dst = [src], [dst]
        while (not src.size or src[-1] < hi) and self.group < self.file.num_row_groups:
            batch = self.file.read_row_group(self.group, columns=["src", "dst"])
            self.group += 1
            src, dst = batch["src"].to_numpy(), batch["dst"].to_numpy()
            if src.size > 1 and (src[1:] < src[:-1]).any():
                order = np.argsort(src, kind="stable")
                src, dst = src[order], dst[order]
            parts_src.append(src)
            parts_dst.append(dst)
        src = np.concatenate(parts_src) if len(parts_src) > 1 else parts_src[0]
        dst = np.concatenate(parts_dst) if len(parts_dst) > 1 else parts_dst[0]
        cut = int(np.searchsorted(src, hi))
        self.held = src[cut:], dst[cut:]
        return src[:cut], dst[:cut]

    def floor(self) -> int:
        """The least child a move not given yet may lead to."""
        later = int(self.floors[self.group]) if self.group < self.floors.size else np.iinfo(np.int64).max
        return min(int(self.held[1].min()), later) if self.held[1].size else later


class _Column:
    """An array that grows at its end and is dropped from its start, copied only when the
    dropped part outgrows what is held (so each entry is copied a few times at most)."""

    def __init__(self, dtype: np.dtype):
        self.data = np.zeros(0, dtype=dtype)
        self.start = self.end = 0

    def append(self, values_: np.ndarray) -> None:
        if self.end + values_.size > self.data.size:
            held = self.data[self.start : self.end]
            size = max(2 * held.size, held.size + values_.size)
            if size > self.data.size or self.start:
                data = np.empty(max(size, self.data.size), dtype=self.data.dtype)
                data[: held.size] = held
                self.data, self.start, self.end = data, 0, held.size
        self.data[self.end : self.end + values_.size] = values_
        self.end += values_.size

    def drop(self, count: int) -> None:
        self.start += count

    def gather(self, at: np.ndarray) -> np.ndarray:
        return self.data[self.start + at]


class _Window:
    """Each position's stored values as a child (value code, remoteness, Grundy value,
    height) for the ids from `base` to `top`, read from the solution as far as needed and
    dropped below the least child still to come; and each position's own stored values,
    read in step with the positions."""

    def __init__(self, solution: Path, impartial: bool):
        self.path = solution
        self.file = parts.open_file(solution, read_dictionary=["value"])
        self.group = 0
        self.base = self.top = 0  # ids base..top-1 are held as children
        self.own_start = 0  # the next position whose own values are asked for
        self.columns = {"code": _Column(np.dtype(np.int8)), "remoteness": _Column(np.dtype(np.int32))}
        if impartial or self._any_grundy():
            self.columns |= {"grundy": _Column(np.dtype(np.int32)), "height": _Column(np.dtype(np.int32))}
        self.pending: list[pa.Table] = []  # rows read, not yet given as positions' own
        self.given = 0  # rows of pending[0] given already

    def _any_grundy(self) -> bool:
        """Whether the solution holds a Grundy value or height anywhere (its statistics)."""
        meta = self.file.metadata
        names = meta.schema.to_arrow_schema().names
        for group in range(meta.num_row_groups):
            for name in ("grundy", "grundy_height"):
                column = meta.row_group(group).column(names.index(name))
                if column.statistics is None or column.statistics.null_count != column.num_values:
                    return True
        return False

    def _read(self) -> None:
        rows = self.file.read_row_group(self.group, columns=SOLVED)
        self.group += 1
        ids = rows["id"].to_numpy()
        if ids.size and (ids[0] != self.top or ids[-1] != self.top + ids.size - 1):
            raise DataError(f"{self.path}: ids are not 0, 1, 2, … in order")
        read = {
            "code": value_codes(rows["value"]),
            "remoteness": _int(rows["remoteness"], NO_MIN),
            "grundy": _int(rows["grundy"], -1),
            "height": _int(rows["grundy_height"], -1),
        }
        for name, column in self.columns.items():
            column.append(read[name])
        self.top += ids.size
        self.pending.append(rows)

    def own(self, count: int) -> pa.Table:
        """The solution's next `count` rows: the stored values of the next positions."""
        while sum(t.num_rows for t in self.pending) - self.given < count and self.group < self.file.num_row_groups:
            self._read()
        table = pa.concat_tables(self.pending).slice(self.given, count)
        self.given += count
        while self.pending and self.given >= self.pending[0].num_rows:
            self.given -= self.pending.pop(0).num_rows
        self.own_start += count
        return table

    def cover(self, upto: int, floor: int) -> None:
        """Hold the ids up to `upto`; drop those below `floor` (no move left leads there)."""
        while self.top <= upto and self.group < self.file.num_row_groups:
            self._read()
        drop = min(floor, self.top) - self.base
        if drop > 0:
            for column in self.columns.values():
                column.drop(drop)
            self.base += drop

    def children(self, dst: np.ndarray, missing: int) -> dict[str, np.ndarray]:
        """Each child's stored value code (0: no value; `missing`: no position), remoteness
        (NO_MIN where none), and Grundy value and height where held (-1 where none)."""
        at = dst - self.base
        outside = (at < 0) | (at >= self.top - self.base)
        stray = bool(outside.any())
        if stray:
            if ((dst >= 0) & (dst < self.base)).any():
                raise AssertionError("a child below the window: its floor was wrong")
            at = np.where(outside, 0, at)
        found = {name: column.gather(at) for name, column in self.columns.items()}
        if stray:
            empty = {"code": missing, "remoteness": NO_MIN, "grundy": -1, "height": -1}
            for name, column in found.items():
                column[outside] = empty[name]
        return found


def _part_facts(
    part: pa.Table,
    own: pa.Table,
    src: np.ndarray,
    children_: dict[str, np.ndarray],
    impartial: bool,
    normal_play: bool | None,
) -> pa.Table:
    """The facts of one part's positions (verify_facts' columns) from their moves: `src` as
    indexes into the part, ascending; `children_` the stored values of each move's child."""
    loss, win, tie, draw = (values.Value(word).code for word in ("loss", "win", "tie", "draw"))
    n = part.num_rows
    missing = len(values.WORDS) + 1
    code, rem = children_["code"], children_["remoteness"]
    has_grundy = children_.get("grundy")
    starts = np.flatnonzero(np.concatenate(([True], src[1:] != src[:-1]))) if src.size else np.zeros(0, np.int64)
    here = src[starts]
    # children by the code of their value, a row a code (each row one position a column):
    # src indexes the part, so code * n + src counts them all in one pass
    tally = np.bincount(code.astype(np.int64) * n + src, minlength=(missing + 1) * n).reshape(missing + 1, n)

    def reduce(kind: int, reducer: np.ufunc, empty: int) -> np.ndarray:
        out = np.full(n, empty, dtype=np.int32)
        if src.size:
            out[here] = reducer.reduceat(np.where(code == kind, rem, empty), starts)
        return out

    min_loss, min_tie = reduce(loss, np.minimum, NO_MIN), reduce(tie, np.minimum, NO_MIN)
    win_rem = np.where(rem == NO_MIN, NO_MAX, rem)
    max_win = np.full(n, NO_MAX, dtype=np.int32)
    if src.size:
        max_win[here] = np.maximum.reduceat(np.where(code == win, win_rem, NO_MAX), starts)
    children = np.bincount(src, minlength=n)
    unknown = tally[missing]

    own_code = value_codes(own["value"])
    solved = np.ones(n, dtype=bool)
    terminal = part["terminal"]
    terminal_code = value_codes(terminal)
    grundy = _int(own["grundy"], -1)
    grundy_children = np.zeros(n, dtype=np.int32)
    taken = np.zeros(n, dtype=bool)
    below = np.zeros(n, dtype=np.int32)
    max_height = np.full(n, NO_MAX, dtype=np.int32)
    if has_grundy is not None:
        child_grundy = has_grundy
        child_height = children_["height"]
        with_value = child_grundy >= 0
        if src.size:
            grundy_children[here] = np.add.reduceat(with_value.astype(np.int32), starts)
            max_height[here] = np.maximum.reduceat(np.where(child_height >= 0, child_height, NO_MAX), starts)
            # a child's value is taken where it equals the parent's; distinct values below it counted
            parent_grundy = np.repeat(grundy[here], np.diff(np.append(starts, src.size)))
            mine = with_value & (parent_grundy >= 0)
            equal = mine & (child_grundy == parent_grundy)
            taken[here] = np.logical_or.reduceat(equal, starts)
            lower = mine & (child_grundy < parent_grundy)
            if lower.any():  # distinct (source, child value) pairs, as one integer each
                width = int(child_grundy[lower].max()) + 1
                pairs = distinct(src[lower].astype(np.int64) * width + child_grundy[lower])
                below += np.bincount(pairs // width, minlength=n).astype(np.int32)

    by_kind = {c: tally[c] for c in (loss, win, tie, draw)}
    return _facts_table(
        part["id"],
        terminal,
        terminal_code,
        part["moves"],
        own["value"],
        own_code,
        own["remoteness"],
        solved,
        children,
        children - unknown,
        by_kind,
        (min_loss, max_win, min_tie),
        own,
        grundy_children,
        (taken, grundy < 0),
        below,
        max_height,
        impartial,
        normal_play,
    )
