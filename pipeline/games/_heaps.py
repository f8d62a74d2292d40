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

A key is one int64 word where the radix's span fits one (below WORD_LIMIT: a single heap
up to 38 tokens, sticks up to 17 rows), else several: the digits of the smallest sizes
fill a word, the next sizes the next, so each word's part of a move's constant is a
constant too, and a key's words, most significant first, order as its number. Keys of
several words are kept as big-endian bytes, one fixed-width string a position, which
NumPy sorts and searches in that order; what counts heaps reads them back as words. The
words bound nothing: what limits a start is its size (`size_bound`, the estimate).
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Callable, Iterator

import numpy as np
import pyarrow as pa

from pipeline.core.errors import RulesetError
from pipeline.core.params import shortened
from pipeline.games._bulk import BATCH_ROWS, Batcher, joined_text, number_lists, reachable_by_level, terminal_column
from pipeline.games.contract import POSITION_COLUMNS, Size, Space
from pipeline.storage.threads import in_order

#: Positions per block of text building.
BLOCK = 1 << 20
#: Each word of a key stays below this (int64, with room for a move's constant).
WORD_LIMIT = 2**62
#: Ids are 32-bit where the pipeline solves (DuckDB's INTEGER): a start reaching more
#: positions is refused while they are found.
MAX_POSITIONS = 2**31 - 1
#: Bounds past this many positions or moves are beyond any machine (at the estimate's
#: 200 bytes a position, 1.8 EB), and past what the counts below keep exact.
COUNT_LIMIT = 2**53

Pattern = tuple[int, int, int]  # (heap size, heap a left, heap b left)


def size_bound(start: tuple[int, ...], moves_per_size: Callable[[int], list[int]], what: str) -> Size:
    """Upper bounds without building: the multisets of heaps no larger than the start's
    that pass two tests, each with moves_per_size(top)[L] moves per distinct heap size L
    held. No more tokens than the start; and k heaps cut from one start heap of m tokens
    took k - 1 moves, each removing a token, so they hold at most m - k + 1: counting a
    heap of size L as L + 1, a reachable multiset weighs at most the start's tokens plus
    its heaps (for sticks:rows=13 47 M positions where tokens alone allow 115 M).
    RulesetError, in well under a second and bounded memory, where a bound passes
    COUNT_LIMIT: `what` names the ruleset."""
    top, tokens = max(start), sum(start)
    require_countable(top, tokens, what)
    per_size = moves_per_size(top)
    by_tokens = _multisets(top, per_size, tokens, 0)
    by_weight = _multisets(top, per_size, tokens + len(start), 1)
    positions, moves = min(by_tokens[0], by_weight[0]), min(by_tokens[1], by_weight[1])
    if max(positions, moves) >= COUNT_LIMIT:
        raise RulesetError(
            f"{what} is too big for any machine: the estimate bounds it by the multisets of heaps "
            f"within its tokens, {_about(positions)} positions and {_about(moves)} moves "
            f"(more than {COUNT_LIMIT:,})"
        )
    return Size(int(positions), int(moves), ranked=True, by_rank=True)


def require_countable(top: int, tokens: int, what: str) -> None:
    """RulesetError unless heaps up to `top` holding `tokens` in all can be counted at once:
    where even a part of their multisets passes COUNT_LIMIT. Holding at most q heaps of
    each size 1..k, k(k + 3)/2 · q tokens with a token more a heap, they make (q + 1)^k;
    the counting (`_multisets`) then costs at most 52 sizes by half a million tokens."""
    if top < 1:
        return
    q = 1
    while 2 * q <= tokens:
        k = min(top, (math.isqrt(9 + 8 * (tokens // q)) - 3) // 2)  # the largest k with k(k + 3)/2 ≤ tokens/q
        if k * math.log2(q + 1) >= math.log2(COUNT_LIMIT):
            raise RulesetError(
                f"{what} is too big for any machine: the estimate bounds its positions by the "
                f"multisets of heaps within its tokens, more than {COUNT_LIMIT:,} of them"
            )
        q *= 2


def _multisets(top: int, per_size: list[int], capacity: int, extra: int) -> tuple[float, float]:
    """(multisets of heaps 1..top whose sizes, each plus `extra`, sum to at most
    `capacity`, their moves: per_size[L] for each distinct size L held). In floats: exact
    while the totals stay below 2^53 (every value is a sum of smaller whole ones), and at
    least that where they do not."""
    ways = np.zeros(capacity + 1)  # multisets (and their moves) by weight
    ways[0] = 1
    moves = np.zeros(capacity + 1)
    for size in range(1, top + 1):
        unit = size + extra
        # With h ≥ 0 heaps of this size: new_ways[t] = sum over h of ways[t - h*unit], which
        # is ways[t] + new_ways[t - unit]; likewise the moves, where each multiset holding
        # this size (h ≥ 1) gains per_size[size]: of those, the ones with one heap of it,
        # ways[t - unit], are the only ones new_moves[t - unit] does not count already.
        # One pass per size (a sum over h took 33 s for octal:start=1-1-…-1, 9,999 heaps),
        # each a running sum down every residue class of the unit.
        gained = moves.copy()
        if unit <= capacity:
            gained[unit:] += per_size[size] * ways[:-unit]
        ways, moves = _running(ways, unit), _running(gained, unit)
    return float(ways.sum()), float(moves.sum())


def _about(number: float) -> str:
    """A count from `_multisets` for an error line."""
    if number < COUNT_LIMIT:
        return f"{int(number):,}"
    return f"about 10^{int(math.log10(number))}" if math.isfinite(number) else "more than 10^308"


def _running(values: np.ndarray, unit: int) -> np.ndarray:
    """result[t] = values[t] + result[t - unit]."""
    rows = -(-values.size // unit)
    padded = np.zeros(rows * unit)
    padded[: values.size] = values
    return padded.reshape(rows, unit).cumsum(axis=0).reshape(-1)[: values.size]


class HeapSpace(Space):
    """Every position reachable from `start` under `patterns` (see the module docstring)."""

    def __init__(
        self,
        start: tuple[int, ...],
        patterns: list[Pattern],
        label: Callable[[int, int, int], str],
        misere: bool,
        column: str,
        column_type: pa.DataType,
        reach: dict[int, list[tuple[int, int]]] | None = None,
    ):
        """`reach`: optional smaller patterns ({size: [(a, b), …]}) that reach the same
        positions as `patterns` (sticks: one stick at a time), to search with."""
        self.start = start
        self.top = top = max(start)
        self.misere = misere
        self.column, self.column_type = column, column_type
        radix = [1 + sum(n * ((m + 1) // (size + 1)) for m, n in Counter(start).items()) for size in range(1, top + 1)]
        # the smallest sizes' digits first, a word filled before the next, more significant, begins
        place, weight, span, words = [0], [0], 1, 1  # index 0: no heap, worth nothing
        for digits in radix:
            if span * digits >= WORD_LIMIT:
                words, span = words + 1, 1
            place.append(words - 1)
            weight.append(span)
            span *= digits
        self.words = words
        self.radix = np.array(radix, dtype=np.int64)
        self.weight = np.array(weight, dtype=np.int64)  # within its word
        self.word = words - 1 - np.array(place)  # the column of each size's digit: 0 the most significant word
        worth = [0, 1]  # in the key's number, whatever its words: Python ints, exact
        for digits in radix[:-1]:
            worth.append(worth[-1] * digits)
        number = [worth[a] + worth[b] - worth[size] for size, a, b in patterns]
        taken = [size - a - b for size, a, b in patterns]
        order = sorted(range(len(patterns)), key=lambda i: (-taken[i], number[i]))  # ascending child id
        self.patterns = [patterns[i] for i in order]
        self.labels = [label(*pattern) for pattern in self.patterns]
        self.delta = self._deltas([patterns[i] for i in order])
        self.taken = np.array([taken[i] for i in order], dtype=np.int64)
        self.pattern_heap = np.array([size for size, _, _ in self.patterns], dtype=np.int64)
        self.reach = reach or {}
        for size, a, b in patterns:
            if not reach:
                self.reach.setdefault(size, []).append((a, b))
        self._keys: np.ndarray | None = None
        self._first: np.ndarray | None = None  # first[t]: the first id with t tokens left

    def _deltas(self, patterns: list[Pattern]) -> np.ndarray:
        """Each pattern's constant, as words: (patterns,) of one word, (patterns, words) of several."""
        delta = np.zeros((len(patterns), self.words), dtype=np.int64)
        for row, (size, a, b) in enumerate(patterns):
            delta[row, self.word[a]] += self.weight[a]
            delta[row, self.word[b]] += self.weight[b]
            delta[row, self.word[size]] -= self.weight[size]
        return delta[:, 0] if self.words == 1 else delta

    def words_of(self, keys: np.ndarray) -> np.ndarray:
        """Keys as words, to count heaps and move: one word as it is, several as (keys, words) int64."""
        if self.words == 1:
            return keys
        return keys.view(">i8").reshape(-1, self.words).astype(np.int64, order="F")  # a word's column contiguous

    def keys_of(self, words: np.ndarray) -> np.ndarray:
        """Words as keys, to sort and search: one word as it is, several as big-endian bytes."""
        if self.words == 1:
            return words
        return np.ascontiguousarray(words, dtype=">i8").view(f"S{8 * self.words}").reshape(-1)

    def counts(self, words: np.ndarray, size: int) -> np.ndarray:
        """How many heaps of `size` each position has (its key as words)."""
        word = words if words.ndim == 1 else words[:, self.word[size]]
        return (word // self.weight[size]) % self.radix[size - 1]

    # -- positions -------------------------------------------------------------------

    def keys(self) -> np.ndarray:
        """Every reachable position's key, in id order: by tokens left, then ascending."""
        if self._keys is None:
            steps = {
                size: (
                    self._deltas([(size, a, b) for a, b in pairs]),
                    np.array([size - a - b for a, b in pairs], dtype=np.int64),
                )
                for size, pairs in self.reach.items()
            }
            found = 0

            def expand(keys: np.ndarray, level: int) -> Iterator[tuple[int, np.ndarray]]:
                nonlocal found
                found += keys.size
                if found > MAX_POSITIONS:
                    raise RulesetError(
                        f"the heaps {shortened('-'.join(map(str, self.start)))} reach more than "
                        f"{MAX_POSITIONS:,} positions, more than this pipeline numbers (its ids "
                        f"are 32-bit where it solves)"
                    )
                words = self.words_of(keys)
                for size, (deltas, taken) in steps.items():
                    having = words[self.counts(words, size) > 0]
                    for removed in np.unique(taken):
                        chosen = deltas[taken == removed]
                        children = (having[None] + chosen[:, None]).reshape(-1, *having.shape[1:])
                        yield level - int(removed), self.keys_of(children)

            start = np.zeros(self.words, dtype=np.int64)
            for m in self.start:
                start[self.word[m]] += self.weight[m]
            total = sum(self.start)
            found_levels = reachable_by_level(
                {total: self.keys_of(start if self.words == 1 else start[None])}, expand, runs=True
            )  # highest level first
            levels = {int(self.tokens(self.words_of(level[:1]))[0]): level for level in found_levels}
            sizes = np.array([levels[t].size if t in levels else 0 for t in range(total + 1)], dtype=np.int64)
            self._first = np.concatenate(([0], np.cumsum(sizes)))
            self._keys = np.concatenate([levels[t] for t in sorted(levels)])
        return self._keys

    def tokens(self, words: np.ndarray) -> np.ndarray:
        """Tokens left in each position (its key as words): its level, and its rank."""
        return np.sum([size * self.counts(words, size) for size in range(1, self.top + 1)], axis=0)

    def positions(self) -> pa.Table:
        keys = self.keys()
        lists, texts, finished = [], [], []
        sizes = np.arange(1, self.top + 1, dtype=np.int64)
        for lo in range(0, keys.size, BLOCK):
            block = self.words_of(keys[lo : lo + BLOCK])
            columns = [self.counts(block, size) for size in range(1, self.top + 1)]
            counts = np.stack(columns, axis=1)
            values = np.repeat(np.tile(sizes, counts.shape[0]), counts.reshape(-1))
            heaps = number_lists(counts.sum(axis=1), values, self.column_type.value_type)
            lists.append(heaps)
            texts.append(joined_text(heaps))
            # over when no heap can be moved on (all gone, or only heaps no pattern takes from)
            over = np.ones(counts.shape[0], dtype=bool)
            for size in np.unique(self.pattern_heap):
                over &= columns[size - 1] == 0
            finished.append(over)
        over_all = np.concatenate(finished) if finished else np.ones(0, dtype=bool)
        terminal = terminal_column(over_all, "win" if self.misere else "loss")
        return pa.Table.from_arrays(
            [
                pa.array(np.arange(keys.size, dtype=np.int64)),
                pa.chunked_array(texts, pa.string()),
                terminal,
                pa.chunked_array(lists, self.column_type),
            ],
            schema=POSITION_COLUMNS.append(pa.field(self.column, self.column_type)),
        )

    def rank(self) -> np.ndarray:
        """Tokens left: every move removes at least one."""
        first = self._firsts()
        return np.repeat(np.arange(first.size - 1), np.diff(first))

    def _firsts(self) -> np.ndarray:
        """Where each level's keys start (first[t]: the first id with t tokens left)."""
        self.keys()
        assert self._first is not None  # keys() sets it with the keys
        return self._first

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
        first = self._firsts()
        ids = np.asarray(ids, dtype=np.int64)
        batcher = Batcher(self.labels)
        # runs of ids on one level, at most a step of positions each
        cuts = np.union1d(np.searchsorted(ids, first), np.arange(0, ids.size, self._step()))
        runs = (ids[lo:hi] for lo, hi in zip(cuts, np.append(cuts[1:], ids.size)) if hi > lo)
        for moves in in_order(self._moves, runs):
            yield from batcher.add(*moves)
        yield from batcher.finish()

    def _moves(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, pattern) of the moves out of `ids` (ascending, all on one level),
        source by source, each source's in pattern order (ascending child id)."""
        keys, first = self.keys(), self._firsts()
        level = int(np.searchsorted(first, ids[0], side="right")) - 1
        block = self.words_of(keys[ids])
        having = {size: np.flatnonzero(self.counts(block, size) > 0) for size in np.unique(self.pattern_heap)}
        per_source = np.zeros(ids.size, dtype=np.int64)
        for size, rows in having.items():
            per_source[rows] += int(np.count_nonzero(self.pattern_heap == size))
        slot = np.zeros(ids.size + 1, dtype=np.int64)  # where each source's next move goes
        np.cumsum(per_source, out=slot[1:])
        dst = np.empty(int(slot[-1]), dtype=np.int64)
        pattern = np.empty(dst.size, dtype=np.int32)
        for p, (size, delta, taken) in enumerate(zip(self.pattern_heap, self.delta, self.taken)):
            rows = having[size]
            if not rows.size:
                continue
            below = level - int(taken)
            lo, hi = (int(first[below]), int(first[below + 1])) if below >= 0 else (0, 0)
            child = self.keys_of(block[rows] + delta)  # ascending: rows ascend, and so do their keys
            level_keys = keys[lo:hi]
            # the part of the level between the first and last child: a search in cache
            start = int(np.searchsorted(level_keys, child[:1])[0])
            near = level_keys[start : int(np.searchsorted(level_keys, child[-1:], side="right")[0])]
            at = np.searchsorted(near, child)
            if at.size and (at[-1] >= near.size or (near[np.minimum(at, near.size - 1)] != child).any()):
                raise AssertionError(f"a move of pattern {self.patterns[p]} leaves a position never reached")
            at += start
            out = slot[rows]
            dst[out] = lo + at
            pattern[out] = p
            slot[rows] += 1
        return np.repeat(ids, per_source), dst, pattern
