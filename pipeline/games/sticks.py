"""Sticks (棒消し), seed 001: remove adjacent sticks from a row, splitting it in two.

A position is a multiset of row lengths 1..rows; the positions and moves are those of the
heap engine (pipeline/games/_heaps.py) with sticks' move patterns.
"""

from __future__ import annotations

import pyarrow as pa

from pipeline.core.errors import PositionError
from pipeline.core.params import ChoiceParam, IntParam
from pipeline.games import _svg
from pipeline.games._bulk import parse_numbers
from pipeline.games._heaps import HeapSpace, require_countable, size_bound
from pipeline.games.contract import Game, Rules, Size


class Sticks(Game):
    name = "sticks"
    summary = "remove adjacent sticks from one row; the gap splits the row (seed 001)"
    impartial = True
    params = (
        IntParam("rows", "3", "the start has rows of 1, 2, …, rows sticks", minimum=1),
        ChoiceParam(
            "play",
            "misere",
            "misere: whoever takes the last stick loses; normal: whoever takes it wins",
            choices=("misere", "normal"),
        ),
        IntParam("max_take", "none", "most sticks removed in one move (none: a whole row)", minimum=1, none_ok=True),
    )
    columns = {"rows": "the row lengths, ascending (list of int8; empty when no stick is left)"}

    def validate(self, values: dict) -> None:
        """Refuses, quickly, rows too many for any machine; the estimate judges the rest (rows=13
        has 32 million positions and 3 billion moves, about 15 minutes and 9 GiB; each row more
        multiplies the moves by ~6)."""
        bound(values)

    def size(self, rules: Rules) -> Size:
        return bound(rules)

    def space(self, rules: Rules) -> HeapSpace:
        return sticks_space(rules)

    def start(self, rules: Rules) -> str:
        return "-".join(str(n) for n in range(1, rules["rows"] + 1))

    def canonical_position(self, rules: Rules, text: str) -> str:
        numbers = parse_numbers(text)
        if numbers is None:
            raise PositionError(
                f"malformed sticks position {text!r}: expected row lengths joined by '-', or 0 for no sticks"
            )
        return "-".join(str(n) for n in sorted(n for n in numbers if n > 0)) or "0"

    def draw(self, rules: Rules, text: str) -> str:
        """One row of sticks per row."""
        return _svg.heap_rows(text, "stick", "sticks")


GAME = Sticks()


def sticks_space(rules: Rules) -> HeapSpace:
    """Rows 1..rows; a move takes 1..max_take adjacent sticks of one row, leaving the two
    pieces either side (the octal game 0.777…). Taking k sticks reaches the same positions
    as taking them one at a time from the gap, so positions are searched with one-stick
    moves only."""
    n = rules["rows"]
    patterns = sticks_patterns(rules)
    one_stick = {length: [(a, length - 1 - a) for a in range((length + 1) // 2)] for length in range(1, n + 1)}
    return HeapSpace(
        tuple(range(1, n + 1)), patterns, label, rules["play"] == "misere", "rows", pa.list_(pa.int8()), reach=one_stick
    )


def bound(rules: Rules | dict) -> Size:
    rows, what = rules["rows"], f"sticks with rows={rules['rows']}"
    require_countable(rows, rows * (rows + 1) // 2, what)  # before a tuple of the rows is made

    def moves_per_size(top: int) -> list[int]:
        found = [0] * (top + 1)
        for length, _, _ in sticks_patterns(rules):
            found[length] += 1
        return found

    return size_bound(tuple(range(1, rows + 1)), moves_per_size, what)


def sticks_patterns(rules: Rules | dict) -> list[tuple[int, int, int]]:
    """(row, a, b): a row of that length leaves rows a and b (a ≤ b, 0 for none)."""
    n = rules["rows"]
    max_take = rules["max_take"] or n
    return [
        (length, a, b)
        for length in range(1, n + 1)
        for a in range(length)
        for b in range(a, length - a)
        if 1 <= length - a - b <= max_take
    ]


def label(length: int, a: int, b: int) -> str:
    taken = f"take {length - a - b} from a row of {length}"
    if b == 0:
        return taken
    return f"{taken} leaving {b}" if a == 0 else f"{taken} leaving {a} and {b}"
