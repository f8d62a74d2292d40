"""The octal games (Kayles 0.77, Dawson's Kayles 0.07, Dawson's chess 0.137, …).

Code `0.d1d2…`: digit dk says what removing k tokens from one heap may leave of it, as
a sum of 1 (nothing: the heap was exactly k), 2 (one heap), 4 (two non-empty heaps).
Positions are multisets of heaps, the heap engine's (pipeline/games/_heaps.py) with the
code's move patterns.
"""

from __future__ import annotations

import re

import pyarrow as pa

from pipeline.core.errors import PositionError
from pipeline.core.params import ChoiceParam, TextParam, shortened
from pipeline.games import _svg
from pipeline.games._bulk import parse_numbers
from pipeline.games._heaps import HeapSpace, Pattern, size_bound
from pipeline.games.contract import Game, Rules, Size

CODE = re.compile(r"0\.[0-7]{0,31}[1-7]")


def parse_code(text: str) -> str:
    if not CODE.fullmatch(text):
        raise ValueError("expected 0. followed by 1 to 32 octal digits (0-7), the last not 0, e.g. 0.77")
    return text


def parse_start(text: str) -> tuple[int, ...]:
    numbers = parse_numbers(text)
    if not numbers or min(numbers) < 1:
        raise ValueError("expected heap sizes ≥ 1 joined by '-', e.g. 10 or 3-5-7")
    return tuple(sorted(numbers))


def patterns(code: str, top: int) -> list[Pattern]:
    """Every (heap, left a, left b) move the code allows on heaps up to `top`."""
    digits = [int(d) for d in code[2:]]
    found = []
    for size in range(1, top + 1):
        for taken, digit in enumerate(digits[:size], start=1):
            rest = size - taken
            if digit & 1 and rest == 0:
                found.append((size, 0, 0))
            if digit & 2 and rest >= 1:
                found.append((size, 0, rest))
            if digit & 4 and rest >= 2:
                found += [(size, a, rest - a) for a in range(1, rest // 2 + 1)]
    return found


def moves_per_size(code: str, top: int) -> list[int]:
    """How many patterns the code has on a heap of each size 0..top: `patterns` counted, not
    listed (the 17 million of code 0.777… on heaps up to 1,484 took 5.5 s)."""
    digits = [int(d) for d in code[2:]]
    found = [0] * (top + 1)
    for size in range(1, top + 1):
        for taken, digit in enumerate(digits[:size], start=1):
            rest = size - taken
            found[size] += (digit & 1 and rest == 0) + (digit & 2 and rest >= 1) + (rest // 2 if digit & 4 else 0)
    return found


def label(size: int, a: int, b: int) -> str:
    taken = f"take {size - a - b} from a heap of {size}"
    if b == 0:
        return taken
    return f"{taken} leaving {b}" if a == 0 else f"{taken} leaving {a} and {b}"


class Octal(Game):
    name = "octal"
    summary = "take tokens from a heap as an octal code allows, maybe splitting it in two (Kayles 0.77, …)"
    impartial = True
    params = (
        TextParam(
            "code",
            "0.77",
            "the octal code 0.d1d2…: digit dk (a sum of 1, 2, 4) says what taking k "
            "tokens may leave: nothing, one heap, two heaps",
            parser=parse_code,
            formatter=str,
            shape="0. and octal digits",
        ),
        TextParam(
            "start",
            "10",
            "the start's heap sizes",
            parser=parse_start,
            formatter=lambda heaps: "-".join(map(str, heaps)),
            shape="heap sizes joined by -",
        ),
        ChoiceParam(
            "play", "normal", "normal: a player who cannot move loses; misere: wins", choices=("normal", "misere")
        ),
    )
    columns = {"heaps": "the heap sizes, ascending (list of int32, as in nim; empty when no heap is left)"}

    def validate(self, values: dict) -> None:
        """Refuses, quickly, a start too big for any machine; the estimate judges the rest."""
        bound(values["code"], values["start"])

    def size(self, rules: Rules) -> Size:
        return bound(rules["code"], rules["start"])

    def space(self, rules: Rules) -> HeapSpace:
        start = rules["start"]
        return HeapSpace(
            start, patterns(rules["code"], max(start)), label, rules["play"] == "misere", "heaps", pa.list_(pa.int32())
        )

    def start(self, rules: Rules) -> str:
        return "-".join(map(str, rules["start"]))

    def canonical_position(self, rules: Rules, text: str) -> str:
        numbers = parse_numbers(text)
        if numbers is None:
            raise PositionError(f"malformed octal position {text!r}: expected heap sizes joined by '-', or 0 for none")
        return "-".join(str(n) for n in sorted(n for n in numbers if n > 0)) or "0"

    def draw(self, rules: Rules, text: str) -> str:
        """One row of tokens per heap."""
        return _svg.heap_rows(text, "stone", "tokens")


GAME = Octal()


def bound(code: str, start: tuple[int, ...]) -> Size:
    what = f"octal from {shortened('-'.join(map(str, start)))}"
    return size_bound(start, lambda top: moves_per_size(code, top), what)
