"""Nim (石取りゲーム) and the five variants of seed 002, in normal or misère play.

A position's heaps are held as a sorted vector of k = len(start) sizes, empty heaps as
leading zeros. Every move lowers one heap, so the sorted vector stays below the sorted
start entry by entry, and such vectors are ranked densely in lexicographic order by a
small counting table (`HeapRanks`). The key of a position is rank * factor + state, the
state being the arrow (index of the first heap of the pointed size) or the coin (0 heads,
1 tails). Moves lower the total, so the space is searched level by level by stones left;
moves are generated for whole arrays of positions, one heap index at a time.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator

import numpy as np
import pyarrow as pa

from pipeline.core.errors import PositionError, RulesetError
from pipeline.core.params import ChoiceParam, TextParam, is_number, shortened
from pipeline.games import _svg
from pipeline.games._bulk import (
    Batcher,
    first_per_pair,
    joined_text,
    number_lists,
    parse_numbers,
    reachable_by_level,
    terminal_column,
)
from pipeline.games.contract import POSITION_COLUMNS, Game, Rules, Size, Space

#: Position ids are 32-bit in the scratch arrays; below that the machine decides (pipeline/stages/estimate.py).
MAX_POSITIONS = 2**31 - 1
#: An upper bound on the moves (positions × stones × states) above which a ruleset is refused.
MAX_MOVES = 4_000_000_000
#: Positions per block of move generation.
CHUNK = 1 << 14

VARIANTS = ("normal", "largest", "distinct", "arrow", "arrow-other", "coin")
ARROWS = ("arrow", "arrow-other")


def parse_heaps(text: str) -> tuple[int, ...]:
    numbers = parse_numbers(text)
    if numbers is None or not numbers or min(numbers) < 1:
        raise ValueError("expected positive heap sizes joined by '-', e.g. 3-4-5")
    return tuple(sorted(numbers))


class Nim(Game):
    name = "nim"
    summary = "take stones from heaps; six variants of which heap and how many (seed 002)"
    impartial = True
    params = (
        TextParam(
            "start",
            "3-4-5",
            "the start's heap sizes",
            parser=parse_heaps,
            formatter=lambda heaps: "-".join(map(str, heaps)),
            shape="heap sizes joined by -",
        ),
        ChoiceParam(
            "variant",
            "normal",
            "which heap a move takes from and how much: seed 002's variants 1-6, see docs/reference/games.md",
            choices=VARIANTS,
        ),
        ChoiceParam(
            "play", "normal", "normal: a player who cannot move loses; misere: wins", choices=("normal", "misere")
        ),
    )
    columns = {
        "heaps": "the heap sizes, ascending (list of int32; empty when no heap is left)",
        "arrow": "arrow variants: the size of the pointed heap (int32; NULL in other variants or with no heap)",
        "coin": "variant coin: 'H' or 'T' (NULL in the other variants)",
    }

    def validate(self, values: dict) -> None:
        heaps, variant = values["start"], values["variant"]
        start = shortened("-".join(map(str, heaps)))
        if variant == "distinct" and len(set(heaps)) != len(heaps):
            equal = sorted(h for h, n in Counter(heaps).items() if n > 1)
            raise RulesetError(
                f"nim with variant=distinct needs distinct heap sizes, but start "
                f"{start} has equal heaps of {shortened(', '.join(map(str, equal)))}"
            )
        states = len(heaps) if variant in ARROWS else 2 if variant == "coin" else 1
        # Counting the vectors takes time and memory in the largest heap: refuse first what
        # is too big by a bound that costs nothing, at least k * top + 1 vectors
        # (HeapRanks.least), so that counting stays within a few million steps.
        least = HeapRanks.least(heaps)
        if least * states > MAX_POSITIONS or least * states * sum(heaps) > MAX_MOVES:
            raise RulesetError(
                f"nim from {start} is more than this pipeline builds: at least {least * states:,} positions "
                f"and {least * states * sum(heaps):,} moves (the limits are {MAX_POSITIONS:,} positions, "
                f"{MAX_MOVES:,} moves)"
            )
        vectors = HeapRanks.count(heaps, limit=MAX_POSITIONS)
        positions, moves = vectors * states, vectors * states * sum(heaps)  # as before: one move per stone count
        if positions > MAX_POSITIONS or moves > MAX_MOVES:
            size = f"over {MAX_POSITIONS:,}" if vectors > MAX_POSITIONS else f"up to {positions:,}"
            raise RulesetError(
                f"nim from {start} is more than this pipeline builds: {size} positions "
                f"and {moves:,} moves (the limits are {MAX_POSITIONS:,} positions, {MAX_MOVES:,} moves)"
            )

    def size(self, rules: Rules) -> Size:
        """Bounded by every sorted heap vector below the start, in every arrow or coin state."""
        heaps = rules["start"]
        positions, moves = self._bounds(heaps, rules["variant"], HeapRanks.count(heaps, limit=MAX_POSITIONS))
        return Size(positions, moves)

    @staticmethod
    def _bounds(heaps: tuple[int, ...], variant: str, vectors: int) -> tuple[int, int]:
        """(positions, moves) at most: states per vector; per position, one move per stone
        count of each heap it may take from (only one heap, the largest or the pointed,
        in the largest, distinct and arrow variants), times the arrow's new targets or
        the coin's two sides."""
        states = len(heaps) if variant in ARROWS else 2 if variant == "coin" else 1
        takes = max(heaps) if variant in ("largest", "distinct", *ARROWS) else sum(heaps)
        targets = len(heaps) if variant in ARROWS else 2 if variant == "coin" else 1
        return vectors * states, vectors * states * takes * targets

    def space(self, rules: Rules) -> NimSpace:
        return NimSpace(rules)

    def start(self, rules: Rules) -> str:
        heaps = "-".join(map(str, rules["start"]))
        if rules["variant"] in ARROWS:
            return f"{heaps}@{min(rules['start'])}"
        return f"{heaps} H" if rules["variant"] == "coin" else heaps

    def starts(self, rules: Rules) -> list[str]:
        """In the arrow variants the first player points at any heap size to begin."""
        heaps = "-".join(map(str, rules["start"]))
        if rules["variant"] in ARROWS:
            return [f"{heaps}@{size}" for size in sorted(set(rules["start"]))]
        return [self.start(rules)]

    def canonical_position(self, rules: Rules, text: str) -> str:
        variant = rules["variant"]
        if variant in ARROWS:
            shape = "heap sizes joined by '-', '@' and the pointed heap's size, e.g. 3-4-5@4; 0 for no heap"
        elif variant == "coin":
            shape = "heap sizes joined by '-', a space and H or T, e.g. 3-4-5 H; 0 H for no heap"
        else:
            shape = "heap sizes joined by '-', e.g. 3-4-5; 0 for no heap"
        bad = PositionError(f"malformed nim position {text!r}: expected {shape}")
        body, suffix = text.strip(), ""
        if variant in ARROWS:
            body, at, pointed = body.partition("@")
            if at:
                if not is_number(pointed.strip()):
                    raise bad
                suffix = f"@{int(pointed)}"
        elif variant == "coin":
            parts = body.split()
            if len(parts) != 2 or parts[1].upper() not in ("H", "T"):
                raise bad
            body, suffix = parts[0], " " + parts[1].upper()
        numbers = parse_numbers(body)
        if numbers is None:
            raise bad
        heaps = sorted(n for n in numbers if n > 0)
        if variant in ARROWS:
            if heaps and not suffix:
                raise bad
            if not heaps and suffix:
                raise PositionError(f"impossible nim position {text!r}: with no heap there is no arrow (write 0)")
            if heaps and int(suffix[1:]) not in heaps:
                raise PositionError(f"impossible nim position {text!r}: the arrow must point at one of the heaps")
        return ("-".join(map(str, heaps)) or "0") + suffix

    def draw(self, rules: Rules, text: str) -> str:
        """Heaps as columns of stones, the arrow under the heap it points at (the first of
        that size), the coin beside them."""
        body_text, _, pointed = text.partition("@")
        body_text, _, coin = body_text.partition(" ")
        heaps = [int(n) for n in body_text.split("-") if int(n) > 0]
        per, step = 10, 9  # stones in a column of a heap, and their spacing
        widths = [step * -(-n // per) + 10 for n in heaps]
        tall = max(step * min(per, max(heaps, default=1)), 36)
        width = max(sum(widths) + 8, 110) + (54 if coin else 0)
        height = tall + 44
        parts, x = [], 6
        arrow_at = next((i for i, n in enumerate(heaps) if pointed and n == int(pointed)), None)
        for i, n in enumerate(heaps):
            for column in range(0, n, per):
                parts.append(
                    _svg.stones(
                        x + 5 + column // per * step, tall + 2, min(per, n - column), step, _svg.MOVER, upwards=True
                    )
                )
            middle = x + (widths[i] - 10) / 2 + 4
            parts.append(_svg.text(middle, tall + 20, n, 11))
            if i == arrow_at:
                parts.append(f'<path d="M{middle:g} {tall + 24:g} l-6 10 h12 z" fill="{_svg.OTHER}"/>')
            x += widths[i]
        if not heaps:
            parts.append(_svg.text(55, tall / 2 + 10, "no stones left", 12, fill=_svg.FAINT))
        if coin:
            cx = width - 28
            parts += [
                f'<circle cx="{cx}" cy="{tall / 2 + 4:g}" r="16" fill="#ffd54f" stroke="#bf8f00"/>',
                _svg.text(cx, tall / 2 + 9, coin, 14, weight="bold"),
                _svg.text(cx, tall / 2 + 34, "heads" if coin == "H" else "tails", 10),
            ]
        described = ", ".join(map(str, heaps)) or "no heap"
        if pointed:
            described += f"; the arrow at a heap of {pointed}"
        if coin:
            described += f"; the coin shows {'heads' if coin == 'H' else 'tails'}"
        return _svg.svg(width, height, parts, f"heaps {described}")


GAME = Nim()


class HeapRanks:
    """Dense lexicographic ranks of sorted vectors x (x[0] ≤ … ≤ x[k-1]) with x[i] ≤ s[i].

    table[i][v] is the number of valid tails x[i:] with x[i] ≥ v, so the vectors sharing
    x[:i] whose entry i lies in [x[i-1], x[i]) number table[i][x[i-1]] - table[i][x[i]].
    """

    def __init__(self, bound: tuple[int, ...]):
        k, top = len(bound), max(bound)
        table = np.zeros((k + 1, top + 2), dtype=np.int64)
        table[k, :] = 1
        for i in range(k - 1, -1, -1):
            upto = table[i + 1, : bound[i] + 1]
            table[i, : bound[i] + 1] = np.cumsum(upto[::-1])[::-1]
        self.table = table

    @staticmethod
    def least(bound: tuple[int, ...]) -> int:
        """A lower bound on the number of vectors, in no time: k * top + 1 (bound sorted, all
        ≥ 1). The zero vector, and (0…0, 1…1, v) with j ones for j < k and 1 ≤ v ≤ top."""
        return len(bound) * max(bound) + 1

    @staticmethod
    def count(bound: tuple[int, ...], limit: int) -> int:
        """The number of vectors (at least `limit` + 1 if there are more), without overflow.
        Its work and memory grow as k * top: above `limit`, not counted."""
        if HeapRanks.least(bound) > limit:
            return limit + 1
        row = np.ones(max(bound) + 2)
        for b in reversed(bound):
            tail = np.zeros_like(row)
            tail[: b + 1] = np.cumsum(row[: b + 1][::-1])[::-1]
            row = np.minimum(tail, float(limit + 1))
        return int(row[0])

    def rank(self, x: np.ndarray) -> np.ndarray:
        result = np.zeros(len(x), dtype=np.int64)
        previous = np.zeros(len(x), dtype=np.int64)
        for i in range(x.shape[1]):
            result += self.table[i, previous] - self.table[i, x[:, i]]
            previous = x[:, i]
        return result

    def unrank(self, rank: np.ndarray) -> np.ndarray:
        rank = rank.astype(np.int64, copy=True)
        k = self.table.shape[0] - 1
        x = np.zeros((len(rank), k), dtype=np.int64)
        previous = np.zeros(len(rank), dtype=np.int64)
        for i in range(k):
            # the largest v with table[i][previous] - table[i][v] ≤ rank (table[i] never rises)
            target = self.table[i, previous] - rank
            x[:, i] = np.searchsorted(-self.table[i], -target, side="right") - 1
            rank -= self.table[i, previous] - self.table[i, x[:, i]]
            previous = x[:, i]
        return x


class NimSpace(Space):
    def __init__(self, rules: Rules):
        self.heaps = heaps = rules["start"]
        self.variant = rules["variant"]
        self.misere = rules["play"] == "misere"
        self.k = len(heaps)
        self.top = max(heaps)
        self.ranks = HeapRanks(heaps)
        self.states = self.k if self.variant in ARROWS else 2 if self.variant == "coin" else 1
        # label codes: (heap size * (top + 1) + taken) * extras + extra
        self.extras = self.top + 1 if self.variant in ARROWS else self.states
        self._keys: np.ndarray | None = None

    def decode(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Sorted heap vectors and states of `keys`."""
        return self.ranks.unrank(keys // self.states), keys % self.states

    def encode(self, x: np.ndarray, state: np.ndarray) -> np.ndarray:
        return self.ranks.rank(x) * self.states + state

    # -- moves -----------------------------------------------------------------------

    def moves(self, keys: np.ndarray) -> tuple[np.ndarray, ...]:
        """Every move from `keys`: (source index, child key, stones taken, label code)."""
        x, state = self.decode(keys)
        k, variant = self.k, self.variant
        found = []
        for i in range(k):
            if variant in ("largest", "distinct") and i < k - 1:
                continue  # only the last entry is a largest heap
            size = x[:, i]
            # equal heaps are interchangeable: take from the last of each run
            can = size > 0 if i == k - 1 else (size > 0) & (x[:, i + 1] != size)
            if variant in ARROWS:
                can &= size == x[np.arange(len(x)), state]
            rows = np.flatnonzero(can)
            if not rows.size:
                continue
            # one entry per (row, stones taken 1..size), taken ascending
            counts = size[rows]
            row = np.repeat(rows, counts)
            taken = np.arange(row.size) - np.repeat(np.cumsum(counts) - counts, counts) + 1
            if variant == "coin":  # heads (0) takes an even number, tails an odd one
                keep = taken % 2 == state[row]
                row, taken = row[keep], taken[keep]
            left = x[row, i] - taken
            others = np.delete(x, i, axis=1)[row]
            if variant == "distinct":
                keep = (left == 0) | ~(others == left[:, None]).any(axis=1)
                row, taken, left, others = row[keep], taken[keep], left[keep], others[keep]
            child = np.sort(np.concatenate([others, left[:, None]], axis=1), axis=1)
            rank = self.ranks.rank(child)
            base = (x[row, i] * (self.top + 1) + taken) * self.extras
            if variant == "coin":
                for turn in (0, 1):
                    found.append((row, rank * 2 + (state[row] ^ turn), taken, base + turn))
            elif variant in ARROWS:
                empty = child[:, k - 1] == 0
                found.append((row[empty], rank[empty] * k, taken[empty], base[empty]))
                for j in range(k):
                    target = child[:, j]
                    ok = (target > 0) & ((child[:, j - 1] != target) if j else True)
                    if variant == "arrow-other":  # the heap just taken from is no target
                        ok &= (others == target[:, None]).any(axis=1)
                    found.append((row[ok], rank[ok] * k + j, taken[ok], base[ok] + target[ok]))
            else:
                found.append((row, rank, taken, base))
        if not found:
            return tuple(np.zeros(0, np.int64) for _ in range(4))
        return tuple(np.concatenate(column) for column in zip(*found))

    def label(self, codes: np.ndarray) -> list[str]:
        result = []
        for code in codes.tolist():
            rest, extra = divmod(code, self.extras)
            size, taken = divmod(rest, self.top + 1)
            text = f"take {taken} from a heap of {size}"
            if self.variant in ARROWS and extra:
                text += f", point at {extra}"
            elif self.variant == "coin" and extra:
                text += ", turn the coin"
            result.append(text)
        return result

    # -- positions -------------------------------------------------------------------

    def start_keys(self) -> np.ndarray:
        x = np.array([self.heaps], dtype=np.int64)
        if self.variant in ARROWS:
            firsts = [self.heaps.index(size) for size in sorted(set(self.heaps))]
            return self.encode(np.repeat(x, len(firsts), axis=0), np.array(firsts))
        return self.encode(x, np.zeros(1, dtype=np.int64))

    def keys(self) -> np.ndarray:
        """Every reachable position's key, ascending (the id is the index)."""
        if self._keys is None:

            def expand(keys: np.ndarray, level: int) -> Iterator[tuple[int | np.ndarray, np.ndarray]]:
                _, child, taken, _ = self.moves(keys)
                yield level - taken, child

            found = reachable_by_level({sum(self.heaps): self.start_keys()}, expand)
            self._keys = np.sort(np.concatenate(found))
        return self._keys

    def positions(self) -> pa.Table:
        import pyarrow.compute as pc  # when used: its import is a tenth of every command's start

        keys = self.keys()
        x, state = self.decode(keys)
        nonzero = x > 0
        heaps = number_lists(nonzero.sum(axis=1), x[nonzero], pa.int32())
        text = joined_text(heaps)
        empty = ~nonzero[:, -1]
        arrow, coin = pa.nulls(len(keys), pa.int32()), pa.nulls(len(keys), pa.string())
        if self.variant in ARROWS:
            arrow = pa.array(x[np.arange(len(x)), state], pa.int32(), mask=empty)
            text = pc.if_else(empty, text, pc.binary_join_element_wise(text, arrow.cast(pa.string()), "@"))
            finished = empty
        elif self.variant == "coin":
            coin = pa.array(np.where(state == 0, "H", "T"))
            text = pc.binary_join_element_wise(text, coin, " ")
            finished = np.where(state == 0, x[:, -1] <= 1, empty)
        else:
            finished = empty
        terminal = terminal_column(finished, "win" if self.misere else "loss")
        return pa.Table.from_arrays(
            [pa.array(np.arange(len(keys), dtype=np.int64)), text, terminal, heaps, arrow, coin],
            schema=POSITION_COLUMNS.append(pa.field("heaps", pa.list_(pa.int32())))
            .append(pa.field("arrow", pa.int32()))
            .append(pa.field("coin", pa.string())),
        )

    def rank(self) -> np.ndarray:
        """Stones left: every move of every variant takes at least one."""
        return self.decode(self.keys())[0].sum(axis=1)

    def parts(self) -> int:
        return max(1, -(-len(self.keys()) // CHUNK))

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        keys = self.keys()
        batcher = Batcher(self.label)
        lo = part * CHUNK
        source, child, _, label = self.moves(keys[lo : lo + CHUNK])
        dst = np.searchsorted(keys, child)
        yield from batcher.add(*first_per_pair(lo + source, dst, label, len(keys)))
        yield from batcher.finish()
