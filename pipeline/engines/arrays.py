"""The DuckDB engine's passes that look positions up by id: NumPy over the stage files.

Where SQL hash-joins every transition to its child (10^8 rows to 10^7), a position's id is
an index here: each pass streams transitions.parquet one row group at a time, gathers the
children's columns by index and reduces them per source, so its memory is a few arrays of
one entry per position plus one row group. What each pass computes is the same as the
Spark engine's SQL (pipeline/sql/spark/): verify's facts, export's reachable positions.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Callable, Iterator, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import values
from pipeline.errors import DataError
from pipeline.parquet import read_table
from pipeline.threads import in_order

#: Grundy values below this are gathered as bits of one uint64 a position; larger ones
#: (rare: a value is at most the number of moves) as (position, value) pairs.
MASK_BITS = 63
#: "No value" for a running minimum / maximum of remoteness or height (all are >= 0).
NO_MIN = np.iinfo(np.int32).max
NO_MAX = -1
T = TypeVar("T")


class Ids:
    """Positions' ids as indexes 0..n-1 (the positions file's order): dense ids map to
    themselves, others through a lookup table as long as the largest id. An id that is no
    position's gets index n, so arrays of n + 1 entries answer for it with their last."""

    def __init__(self, ids: np.ndarray):
        self.n = ids.size
        self.dense = bool(self.n == 0 or (ids[0] == 0 and ids[-1] == self.n - 1 and np.all(np.diff(ids) == 1)))
        self.table = None
        if not self.dense:
            if ids.min() < 0:
                raise DataError(f"a position has the negative id {int(ids.min())}")
            self.table = np.full(int(ids.max()) + 1, self.n, dtype=np.int32)
            self.table[ids] = np.arange(self.n, dtype=np.int32)

    def index(self, ids: np.ndarray) -> np.ndarray:
        """Each id's index, n where it is no position's."""
        size = self.n if self.dense else self.table.size
        if ids.size and (ids.min() < 0 or ids.max() >= size):
            ids = np.where((ids >= 0) & (ids < size), ids, size)
            if not self.dense:
                return np.append(self.table, self.n)[ids]
        return ids if self.dense else self.table[ids]


def _codes(column: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """A column of value words as value codes (pipeline/values.py), 0 for NULL or a word
    that is not a value."""
    words = {word: code for code, word in enumerate(values.WORDS, start=1)}
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    if not pa.types.is_dictionary(column.type):
        column = column.dictionary_encode()
    to_code = np.array([words.get(word, 0) for word in column.dictionary.to_pylist()] + [0], dtype=np.int8)
    indices = column.indices.fill_null(len(column.dictionary)).to_numpy()
    return to_code[indices]


def _row_groups(path: Path, work: Callable[[pa.Table], T], ahead: int = 4) -> Iterator[T]:
    """work(row group's src and dst) for each row group of a transitions file, in order,
    on two threads (NumPy and the Parquet reader let go of the GIL), at most `ahead` row
    groups read and not yet consumed."""
    local = threading.local()  # a reader a thread

    def read(group: int) -> T:
        if not hasattr(local, "reader"):
            local.reader = pq.ParquetFile(path)
        return work(local.reader.read_row_group(group, columns=["src", "dst"]))

    return in_order(read, range(pq.read_metadata(path).num_row_groups), ahead)


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
    sol = read_table(solution, columns=["id", "value", "remoteness", "grundy", "grundy_height"],
                        read_dictionary=["value"])
    at = ids.index(sol["id"].to_numpy())
    keep = at < n
    row = np.full(n, -1, dtype=np.int64)  # each position's row of the solution, -1 if none
    row[at[keep]] = np.flatnonzero(keep)
    solved = row >= 0
    take = pa.array(row, mask=~solved)

    def placed(name: str) -> pa.Array:
        """The solution's column `name` in the positions' order, NULL where unsolved."""
        return sol[name].take(take).combine_chunks()

    stored = {name: placed(name) for name in ("remoteness", "grundy", "grundy_height")}
    code = _codes(placed("value"))
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
        counts = [children, children - by_kind[:, missing], *(by_kind[:, c] for c in (loss, win, tie, draw)),
                  with_grundy]
        big = None
        if big_grundy is not None:
            value = big_grundy[dst]
            big = np.stack([src[value >= 0], value[value >= 0]], axis=1)
        return (src[starts], np.stack(counts).astype(np.int32), np.minimum.reduceat(loss_rem[dst], starts),
                np.minimum.reduceat(tie_rem[dst], starts), np.maximum.reduceat(win_rem[dst], starts),
                np.bitwise_or.reduceat(grundy_bit[dst], starts), np.maximum.reduceat(child_height[dst], starts), big)

    # per position, from its children: counts (children, known, loss, win, tie, draw, with
    # a Grundy value), least loss and tie remoteness, greatest win remoteness, Grundy bits,
    # greatest height; each column with its reduction and the reduction's identity
    columns = [(np.add, 0, np.int32)] * 7 + [(np.minimum, NO_MIN, np.int32), (np.minimum, NO_MIN, np.int32),
                                             (np.maximum, NO_MAX, np.int32), (np.bitwise_or, 0, np.uint64),
                                             (np.maximum, NO_MAX, np.int32)]
    result = [np.full(n, empty, dtype=dtype) for _, empty, dtype in columns]
    large = []
    last = -1  # the greatest source so far: parts in ascending order are assigned, not reduced
    for part in _row_groups(transitions, children_of):
        if part is None:
            continue
        here, counts, *best, big = part
        merged = [*counts, *best]
        if here[0] > last:
            # sources with moves are most often a run of ids: a copy, not a scatter
            at = slice(here[0], here[-1] + 1) if here[-1] - here[0] + 1 == here.size else here
            for array, values_ in zip(result, merged):
                array[at] = values_
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
        pairs = np.unique(np.concatenate(large), axis=0)
        owner, child_value = pairs[:, 0], pairs[:, 1]
        taken[owner[child_value == grundy[owner]]] = True
        np.add.at(below, owner[child_value < grundy[owner]], 1)

    terminal = pos["terminal"]
    terminal_code = _codes(terminal)
    finished = terminal_code[terminal.is_valid().to_numpy(zero_copy_only=False)]
    # normal play: every finished position is lost by the mover (NULL: no game is over)
    normal_play = bool((finished == loss).all()) if finished.size else None

    def nullable(array: np.ndarray, missing: np.ndarray, wide: bool = False) -> pa.Array:
        return pa.array(array.astype(np.int64) if wide else array, mask=missing)

    return pa.table({
        "id": pos["id"],
        "terminal": terminal.cast(pa.string()),
        "terminal_code": nullable(terminal_code.astype(np.int32), terminal_code == 0),
        "moves": pos["moves"],
        "value": placed("value").cast(pa.string()),
        "code": nullable(code.astype(np.int32), code == 0),
        "remoteness": stored["remoteness"],
        "solved": solved,
        "children": children,
        "known_children": known,
        "loss_children": counts[loss],
        "min_loss": nullable(min_loss, min_loss == NO_MIN, wide=True),
        "win_children": counts[win],
        "max_win": nullable(max_win, max_win == NO_MAX, wide=True),
        "tie_children": counts[tie],
        "min_tie": nullable(min_tie, min_tie == NO_MIN, wide=True),
        "draw_children": counts[draw],
        "grundy": stored["grundy"],
        "grundy_height": stored["grundy_height"],
        "grundy_children": grundy_children,
        "grundy_taken": pa.array(taken, mask=grundy < 0),
        "grundy_below": below,
        "max_child_height": nullable(max_height, max_height == NO_MAX, wide=True),
        "impartial": pa.repeat(pa.scalar(impartial), n) if n else pa.array([], pa.bool_()),
        "normal_play": pa.repeat(pa.scalar(normal_play, pa.bool_()), n) if n else pa.array([], pa.bool_()),
    })


def reachable(positions: Path, transitions: Path, starts: np.ndarray) -> np.ndarray:
    """Whether play from the positions with ids `starts` reaches each position (in the
    positions file's order). Where every position has a rank and every move lowers it,
    one pass over the moves from the highest rank down (a position's parents all come
    before it); otherwise breadth first over the moves held in memory (4 bytes a move)."""
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
    reader = pq.ParquetFile(transitions)
    rank = np.append(rank, np.iinfo(rank.dtype).min)
    below = below_rank = None  # the lowest source so far, and its rank
    for group in reversed(range(reader.num_row_groups)):
        batch = reader.read_row_group(group, columns=["src", "dst"])
        src = ids.index(batch["src"].to_numpy())
        dst = ids.index(batch["dst"].to_numpy())
        if not src.size:
            continue
        src_rank = rank[src]
        if ((src[1:] < src[:-1]).any() or (below is not None and (src[-1] > below or src_rank[-1] > below_rank))
                or (src >= ids.n).any() or (rank[dst] >= src_rank).any()):
            return False
        below, below_rank = src[0], src_rank[0]
        bounds = np.flatnonzero(src_rank[1:] != src_rank[:-1]) + 1
        if (np.diff(src_rank[np.concatenate(([0], bounds))]) < 0).any():
            return False  # sources by id must go up in rank
        ends = np.concatenate((bounds, [src.size]))
        for lo, hi in zip(np.concatenate(([0], bounds))[::-1], ends[::-1]):
            seen[dst[lo:hi][seen[src[lo:hi]]]] = True
    return True


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
        frontier = np.unique(children[children < ids.n])
    return seen


def _by_source(transitions: Path, ids: Ids) -> tuple[np.ndarray, np.ndarray]:
    """Every move's child by source: position i's children are dst[first[i]:first[i + 1]]
    (index n: "no position"). 4 bytes a move where the file is sorted by source, as
    enumerate writes it; otherwise the file is sorted here, in memory."""
    reader = pq.ParquetFile(transitions)
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
