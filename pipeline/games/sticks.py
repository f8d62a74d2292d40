"""Sticks (棒消し), seed 001: remove adjacent sticks from a row, splitting it in two.

A position is a multiset of row lengths 1..rows, stored as a count vector: key =
sum(count[L] * weight[L]) in a mixed radix whose digit L is large enough for any
reachable count of rows of length L. A move replaces one row of length L by rows a and b
(a ≤ b, a + b < L, 0 meaning no row), so the child's key is the parent's plus a constant
`-weight[L] + weight[a] + weight[b]` that depends on the move pattern only: children come
from whole arrays of keys at once. Every move takes at least one stick, so positions are
found level by level by the number of sticks left. Ids are the keys' ranks (dense, in key
order; a child's id is found by binary search). A position's children are distinct (no
two patterns leave the same multiset), and ascending in the pattern's constant.
"""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pyarrow as pa

from pipeline.errors import PositionError, RulesetError
from pipeline.games import POSITION_COLUMNS, Size
from pipeline.games._bulk import (
    BATCH_ROWS, Batcher, joined_text, number_lists, parse_numbers, reachable_by_level, terminal_column,
)
from pipeline.params import ChoiceParam, IntParam
from pipeline.rulesets import Ruleset

#: rows=12 has 6.9 million positions and 512 million moves; each row more multiplies that by ~25.
MAX_ROWS = 12
#: Positions per block of text building.
BLOCK = 1 << 20


class Sticks:
    name = "sticks"
    summary = "remove adjacent sticks from one row; the gap splits the row (seed 001)"
    params = (
        IntParam("rows", "3", "the start has rows of 1, 2, …, rows sticks", minimum=1),
        ChoiceParam(
            "play", "misere", "misere: whoever takes the last stick loses; normal: whoever takes it wins",
            choices=("misere", "normal"),
        ),
        IntParam("max_take", "none", "most sticks removed in one move (none: a whole row)",
                 minimum=1, none_ok=True),
    )
    columns = {"rows": "the row lengths, ascending (list of int8; empty when no stick is left)"}

    def validate(self, values: dict) -> None:
        if values["rows"] > MAX_ROWS:
            raise RulesetError(
                f"sticks with rows={values['rows']} is more than this pipeline builds: rows ≤ {MAX_ROWS} "
                f"(rows=12 already has 6.9 million positions and 512 million moves; each row more ×25)"
            )

    def size(self, rules: Ruleset) -> Size:
        """Bounded: every multiset of rows of 1..rows sticks holding no more sticks than the
        start, each with one move per distinct row length and distinct pair of rows left."""
        n, take = rules["rows"], rules["max_take"] or rules["rows"]
        total = n * (n + 1) // 2
        ways, moves = [1] + [0] * total, [0] * (total + 1)
        for length in range(1, n + 1):
            splits = sum(1 for a in range(length) for b in range(a, length) if 1 <= length - a - b <= take)
            new_ways, new_moves = [0] * (total + 1), [0] * (total + 1)
            for s in range(total + 1):
                for rows in range(s // length + 1):  # how many rows of this length
                    w = ways[s - rows * length]
                    new_ways[s] += w
                    new_moves[s] += moves[s - rows * length] + (splits * w if rows else 0)
            ways, moves = new_ways, new_moves
        return Size(sum(ways), sum(moves))

    def space(self, rules: Ruleset) -> "SticksSpace":
        return SticksSpace(rules)

    def start(self, rules: Ruleset) -> str:
        return "-".join(str(n) for n in range(1, rules["rows"] + 1))

    def canonical_position(self, rules: Ruleset, text: str) -> str:
        numbers = parse_numbers(text)
        if numbers is None:
            raise PositionError(
                f"malformed sticks position {text!r}: expected row lengths joined by '-', or 0 for no sticks"
            )
        return "-".join(str(n) for n in sorted(n for n in numbers if n > 0)) or "0"


GAME = Sticks()


class SticksSpace:
    def __init__(self, rules: Ruleset):
        self.n = n = rules["rows"]
        self.misere = rules["play"] == "misere"
        max_take = rules["max_take"] or n
        # the most rows of length L: each start row m holds (m + 1) // (L + 1) of them
        radix = np.array([1 + sum((m + 1) // (length + 1) for m in range(1, n + 1)) for length in range(1, n + 1)])
        self.radix = radix.astype(np.int64)
        self.weight = np.concatenate([[0], np.cumprod(np.concatenate([[1], radix[:-1]]))]).astype(np.int64)
        assert float(np.prod(radix.astype(float))) < 2.0**62, "keys fit in int64 (1.4e11 at rows=12)"
        # move patterns (row L -> rows a, b), sorted by the key change they cause
        patterns = [
            (length, a, b)
            for length in range(1, n + 1)
            for a in range(length)
            for b in range(a, length - a)
            if 1 <= length - a - b <= max_take
        ]
        delta = np.array([self.weight[a] + self.weight[b] - self.weight[length] for length, a, b in patterns])
        order = np.argsort(delta, kind="stable")
        self.patterns = [patterns[i] for i in order]
        self.delta = delta[order].astype(np.int64)
        self.pattern_row = np.array([length for length, _, _ in self.patterns], dtype=np.int64)
        self._keys: np.ndarray | None = None

    @staticmethod
    def label(length: int, a: int, b: int) -> str:
        taken = f"take {length - a - b} from a row of {length}"
        if b == 0:
            return taken
        return f"{taken} leaving {b}" if a == 0 else f"{taken} leaving {a} and {b}"

    def counts(self, keys: np.ndarray, length: int) -> np.ndarray:
        """How many rows of `length` each position has."""
        return (keys // self.weight[length]) % self.radix[length - 1]

    # -- positions -------------------------------------------------------------------

    def keys(self) -> np.ndarray:
        """Every reachable position's key, ascending (the id is the index)."""
        if self._keys is None:
            n, w = self.n, self.weight
            # Taking k sticks is the same as taking them one at a time from the gap, so
            # every max_take reaches the same positions: search with one-stick moves only.
            one_stick = {
                length: np.array([w[a] + w[length - 1 - a] - w[length] for a in range(0, (length + 1) // 2)])
                for length in range(1, n + 1)
            }

            def expand(keys: np.ndarray, level: int):
                for length, deltas in one_stick.items():
                    having = keys[self.counts(keys, length) > 0]
                    yield level - 1, (having[:, None] + deltas[None, :]).reshape(-1)

            start = int(w[1 : n + 1].sum())
            self._keys = np.sort(np.concatenate(reachable_by_level({n * (n + 1) // 2: np.array([start])}, expand)))
        return self._keys

    def positions(self) -> pa.Table:
        keys = self.keys()
        rows_lists, texts = [], []
        lengths = np.arange(1, self.n + 1, dtype=np.int8)
        for lo in range(0, keys.size, BLOCK):
            block = keys[lo : lo + BLOCK]
            counts = np.stack([self.counts(block, length) for length in range(1, self.n + 1)], axis=1)
            values = np.repeat(np.tile(lengths, block.size), counts.reshape(-1))
            lists = number_lists(counts.sum(axis=1), values, pa.int8())
            rows_lists.append(lists)
            texts.append(joined_text(lists))
        terminal = terminal_column(keys == 0, "win" if self.misere else "loss")
        return pa.Table.from_arrays(
            [pa.array(np.arange(keys.size, dtype=np.int64)), pa.chunked_array(texts, pa.string()), terminal,
             pa.chunked_array(rows_lists, pa.list_(pa.int8()))],
            schema=POSITION_COLUMNS.append(pa.field("rows", pa.list_(pa.int8()))),
        )

    def rank(self) -> np.ndarray:
        """Sticks left: every move takes at least one."""
        keys = self.keys()
        return sum(length * self.counts(keys, length) for length in range(1, self.n + 1))

    # -- moves -----------------------------------------------------------------------

    def transitions(self) -> Iterator[pa.RecordBatch]:
        keys = self.keys()
        batcher = Batcher([self.label(*pattern) for pattern in self.patterns])
        step = max(1, 4 * BATCH_ROWS // len(self.patterns))  # at most ~4 batches of moves per block
        for lo in range(0, keys.size, step):
            block = keys[lo : lo + step]
            present = np.stack([self.counts(block, length) > 0 for length in range(1, self.n + 1)], axis=1)
            # row-major nonzero: ascending source, then ascending key change = ascending child
            source, pattern = np.nonzero(present[:, self.pattern_row - 1])
            child = block[source] + self.delta[pattern]
            dst = np.searchsorted(keys, child)
            yield from batcher.add(lo + source.astype(np.int64), dst, pattern)
        yield from batcher.finish()
