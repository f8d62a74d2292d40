"""Games on a multiset of heaps whose moves turn one heap into at most two smaller ones:
sticks (rows) and the octal games. One engine, the rules given as move patterns.

A position is a multiset of heap sizes 1..top, stored as a count vector: key =
sum(count[L] * weight[L]) in a mixed radix whose digit L is large enough for any
reachable count of heaps of size L (a start heap m holds at most (m + 1) // (L + 1) of
them: every move removes at least one token, which separates the pieces). A move pattern
(L, a, b) replaces one heap of size L by heaps a and b (a ≤ b, a + b < L, 0 meaning no
heap), so the child's key is the parent's plus a constant `-weight[L] + weight[a] +
weight[b]` that depends on the pattern only: children come from whole arrays of keys at
once. Every move removes at least one token, so positions are found level by level by the
tokens left. Ids are dense and in the published order: by tokens left, fewest first,
then by key. A move taking t tokens from a position with T lands among the positions
with T - t, and for one pattern the children of ascending keys ascend too, so a child's
id is found by a binary search within that one level, with sorted needles. Distinct
patterns leave distinct multisets, so a position's children are distinct; patterns
are tried most tokens taken first, then by their constant, which is ascending child id.
"""

from __future__ import annotations

from collections import Counter
from typing import Callable, Iterator

import numpy as np
import pyarrow as pa

from pipeline.games import POSITION_COLUMNS, Size, Space
from pipeline.games._bulk import BATCH_ROWS, Batcher, joined_text, number_lists, reachable_by_level, terminal_column
from pipeline.threads import in_order

#: Positions per block of text building.
BLOCK = 1 << 20
#: Keys are int64.
KEY_LIMIT = 2.0**62

Pattern = tuple[int, int, int]  # (heap size, heap a left, heap b left)


def key_space(start: tuple[int, ...]) -> float:
    """How many keys the mixed radix of `start` spans (must stay below KEY_LIMIT), or a
    number past KEY_LIMIT as soon as the product passes it: every digit is at least 2, so
    that is within 62 digits whatever the start (10,000 heaps of 10,000 took seconds)."""
    heaps = Counter(start)
    span = 1.0
    for size in range(1, max(start) + 1):
        span *= 1.0 + sum(n * ((m + 1) // (size + 1)) for m, n in heaps.items())
        if span >= KEY_LIMIT:
            break
    return span


def size_bound(start: tuple[int, ...], patterns: list[Pattern]) -> Size:
    """Upper bounds without building: the multisets of heaps no larger than the start's
    that pass two tests, each with every pattern once per distinct heap size. No more
    tokens than the start; and k heaps cut from one start heap of m tokens took k - 1
    moves, each removing a token, so they hold at most m - k + 1: counting a heap of
    size L as L + 1, a reachable multiset weighs at most the start's tokens plus its
    heaps (for sticks:rows=13 47 M positions where tokens alone allow 115 M)."""
    top = max(start)
    per_size = [0] * (top + 1)
    for size, _, _ in patterns:
        per_size[size] += 1
    by_tokens = _multisets(top, per_size, sum(start), lambda size: size)
    by_weight = _multisets(top, per_size, sum(start) + len(start), lambda size: size + 1)
    return Size(min(by_tokens[0], by_weight[0]), min(by_tokens[1], by_weight[1]), ranked=True, by_rank=True)


def _multisets(top: int, per_size: list[int], capacity: int, weight: Callable[[int], int]) -> tuple[int, int]:
    """(multisets of heaps 1..top whose heaps' weights sum to at most `capacity`, their
    moves: per_size[L] for each distinct size L held)."""
    ways, moves = [1] + [0] * capacity, [0] * (capacity + 1)  # multisets (and their moves) by weight
    for size in range(1, top + 1):
        unit = weight(size)
        # With h ≥ 0 heaps of this size: new_ways[t] = sum over h of ways[t - h*unit], which
        # is ways[t] + new_ways[t - unit]; likewise the moves, where each multiset holding
        # this size (h ≥ 1) gains per_size[size]: of those, the ones with one heap of it,
        # ways[t - unit], are the only ones new_moves[t - unit] does not count already.
        # One pass per size (a sum over h took 33 s for octal:start=1-1-…-1, 9,999 heaps).
        new_ways, new_moves = ways[:], moves[:]
        for total in range(unit, capacity + 1):
            new_ways[total] += new_ways[total - unit]
            new_moves[total] += new_moves[total - unit] + per_size[size] * ways[total - unit]
        ways, moves = new_ways, new_moves
    return sum(ways), sum(moves)


class HeapSpace(Space):
    """Every position reachable from `start` under `patterns` (see the module docstring)."""

    def __init__(self, start: tuple[int, ...], patterns: list[Pattern], label: Callable[[int, int, int], str],
                 misere: bool, column: str, column_type: pa.DataType,
                 reach: dict[int, list[tuple[int, int]]] | None = None):
        """`reach`: optional smaller patterns ({size: [(a, b), …]}) that reach the same
        positions as `patterns` (sticks: one stick at a time), to search with."""
        self.start = start
        self.top = top = max(start)
        self.misere = misere
        self.column, self.column_type = column, column_type
        assert key_space(start) < KEY_LIMIT, "the game's validate refuses starts whose keys overflow"
        radix = np.array([1 + sum((m + 1) // (size + 1) for m in start) for size in range(1, top + 1)])
        self.radix = radix.astype(np.int64)
        self.weight = np.concatenate([[0], np.cumprod(np.concatenate([[1], radix[:-1]]))]).astype(np.int64)
        delta = np.array([self.weight[a] + self.weight[b] - self.weight[size] for size, a, b in patterns],
                         dtype=np.int64)
        taken = np.array([size - a - b for size, a, b in patterns], dtype=np.int64)
        order = np.lexsort((delta, -taken))  # ascending child id: most taken (lowest level) first
        self.patterns = [patterns[i] for i in order]
        self.labels = [label(*pattern) for pattern in self.patterns]
        self.delta, self.taken = delta[order], taken[order]
        self.pattern_heap = np.array([size for size, _, _ in self.patterns], dtype=np.int64)
        self.reach = reach or {}
        for size, a, b in patterns:
            if not reach:
                self.reach.setdefault(size, []).append((a, b))
        self._keys: np.ndarray | None = None
        self._first: np.ndarray | None = None  # first[t]: the first id with t tokens left

    def counts(self, keys: np.ndarray, size: int) -> np.ndarray:
        """How many heaps of `size` each position has."""
        return (keys // self.weight[size]) % self.radix[size - 1]

    # -- positions -------------------------------------------------------------------

    def keys(self) -> np.ndarray:
        """Every reachable position's key, in id order: by tokens left, then ascending."""
        if self._keys is None:
            w = self.weight
            steps = {size: (np.array([w[a] + w[b] - w[size] for a, b in pairs], dtype=np.int64),
                            np.array([size - a - b for a, b in pairs], dtype=np.int64))
                     for size, pairs in self.reach.items()}

            def expand(keys: np.ndarray, level: int):
                for size, (deltas, taken) in steps.items():
                    having = keys[self.counts(keys, size) > 0]
                    for removed in np.unique(taken):
                        chosen = deltas[taken == removed]
                        yield level - int(removed), (having[:, None] + chosen[None, :]).reshape(-1)

            start_key = int(sum(w[m] for m in self.start))
            total = sum(self.start)
            found = reachable_by_level({total: np.array([start_key])}, expand)  # highest level first
            levels = {int(self.tokens(level[:1])[0]): level for level in found}
            sizes = np.array([levels[t].size if t in levels else 0 for t in range(total + 1)], dtype=np.int64)
            self._first = np.concatenate(([0], np.cumsum(sizes)))
            self._keys = np.concatenate([levels[t] for t in sorted(levels)])
        return self._keys

    def tokens(self, keys: np.ndarray) -> np.ndarray:
        """Tokens left in each position (its level, and its rank)."""
        return sum(size * self.counts(keys, size) for size in range(1, self.top + 1))

    def positions(self) -> pa.Table:
        keys = self.keys()
        lists, texts = [], []
        sizes = np.arange(1, self.top + 1, dtype=np.int64)
        for lo in range(0, keys.size, BLOCK):
            block = keys[lo : lo + BLOCK]
            counts = np.stack([self.counts(block, size) for size in range(1, self.top + 1)], axis=1)
            values = np.repeat(np.tile(sizes, block.size), counts.reshape(-1))
            heaps = number_lists(counts.sum(axis=1), values, self.column_type.value_type)
            lists.append(heaps)
            texts.append(joined_text(heaps))
        # over when no heap can be moved on (all gone, or only heaps no pattern takes from)
        finished = np.ones(keys.size, dtype=bool)
        for size in sorted(set(self.pattern_heap.tolist())):
            finished &= self.counts(keys, size) == 0
        terminal = terminal_column(finished, "win" if self.misere else "loss")
        return pa.Table.from_arrays(
            [pa.array(np.arange(keys.size, dtype=np.int64)), pa.chunked_array(texts, pa.string()), terminal,
             pa.chunked_array(lists, self.column_type)],
            schema=POSITION_COLUMNS.append(pa.field(self.column, self.column_type)),
        )

    def rank(self) -> np.ndarray:
        """Tokens left: every move removes at least one."""
        self.keys()
        return np.repeat(np.arange(self._first.size - 1), np.diff(self._first))

    # -- moves -----------------------------------------------------------------------

    def _step(self) -> int:
        """Positions per part: about 4 batches of moves each."""
        return max(1, 4 * BATCH_ROWS // max(1, len(self.patterns)))

    def parts(self) -> int:
        return max(1, -(-self.keys().size // self._step()))

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        lo = part * self._step()
        return self._from(np.arange(lo, min(lo + self._step(), self.keys().size), dtype=np.int64))

    def transitions_from(self, ids: np.ndarray) -> Iterator[pa.RecordBatch]:
        return self._from(ids)

    def _from(self, ids: np.ndarray) -> Iterator[pa.RecordBatch]:
        """Batches of the moves out of `ids` (ascending): transitions_from's, and each part's."""
        self.keys()
        ids = np.asarray(ids, dtype=np.int64)
        batcher = Batcher(self.labels)
        # runs of ids on one level, at most a step of positions each
        cuts = np.union1d(np.searchsorted(ids, self._first), np.arange(0, ids.size, self._step()))
        runs = (ids[lo:hi] for lo, hi in zip(cuts, np.append(cuts[1:], ids.size)) if hi > lo)
        for moves in in_order(self._moves, runs):
            yield from batcher.add(*moves)
        yield from batcher.finish()

    def _moves(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, pattern) of the moves out of `ids` (ascending, all on one level),
        source by source, each source's in pattern order (ascending child id)."""
        keys, first = self.keys(), self._first
        level = int(np.searchsorted(first, ids[0], side="right")) - 1
        block = keys[ids]
        having = {size: np.flatnonzero(self.counts(block, size) > 0) for size in np.unique(self.pattern_heap)}
        per_source = np.zeros(block.size, dtype=np.int64)
        for size, rows in having.items():
            per_source[rows] += int(np.count_nonzero(self.pattern_heap == size))
        slot = np.zeros(block.size + 1, dtype=np.int64)  # where each source's next move goes
        np.cumsum(per_source, out=slot[1:])
        dst = np.empty(int(slot[-1]), dtype=np.int64)
        pattern = np.empty(dst.size, dtype=np.int32)
        for p, (size, delta, taken) in enumerate(zip(self.pattern_heap, self.delta, self.taken)):
            rows = having[size]
            if not rows.size:
                continue
            below = level - int(taken)
            lo, hi = (int(first[below]), int(first[below + 1])) if below >= 0 else (0, 0)
            child = block[rows] + delta  # ascending: rows ascend, and so do their keys
            level_keys = keys[lo:hi]
            # the part of the level between the first and last child: a search in cache
            start = int(np.searchsorted(level_keys, child[0]))
            near = level_keys[start : int(np.searchsorted(level_keys, child[-1], side="right"))]
            at = np.searchsorted(near, child)
            if at.size and (at[-1] >= near.size or (near[np.minimum(at, near.size - 1)] != child).any()):
                raise AssertionError(f"a move of pattern {self.patterns[p]} leaves a position never reached")
            at += start
            out = slot[rows]
            dst[out] = lo + at
            pattern[out] = p
            slot[rows] += 1
        return np.repeat(ids, per_source), dst, pattern
