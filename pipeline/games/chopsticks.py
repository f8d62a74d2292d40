"""Chopsticks (割り箸), the finger game of seeds 000 and 003, with every rule variant.

A player's hands are an unordered multiset of `hands` values 0..fingers-1, so a player's
side is identified by its rank among those multisets (`combinations_with_replacement`
order), and a position by `id = mover_rank * M + opponent_rank` where M is the number of
multisets. Moves are generated per mover rank for all opponents at once with NumPy.
"""

from __future__ import annotations

import functools

from itertools import combinations_with_replacement
from math import comb
from typing import TYPE_CHECKING, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.errors import PositionError, RulesetError
from pipeline.games import POSITION_COLUMNS, Game, Size, Space, _svg
from pipeline.games._bulk import BATCH_ROWS, Batcher, first_per_pair, parse_numbers
from pipeline.params import BoolParam, ChoiceParam, IntParam

if TYPE_CHECKING:  # games need rulesets for annotations only: no import cycle
    from pipeline.rulesets import Ruleset

#: Spaces above this many positions are refused up front rather than failing slowly.
#: Position ids are 32-bit in the scratch arrays; below that the machine decides (pipeline/estimate.py).
MAX_POSITIONS = 2**31 - 1


def _hands_by_total(fingers: int, hands: int) -> list[int]:
    """For each total t, how many sorted hands (values 0..fingers-1) hold t fingers."""
    # ways[k][t]: sorted k hands, each value < the current bound, summing to t
    top = (fingers - 1) * hands
    ways = [[1] + [0] * top] + [[0] * (top + 1) for _ in range(hands)]
    for value in range(fingers):
        for k in range(1, hands + 1):
            for total in range(value, top + 1):
                ways[k][total] += ways[k - 1][total - value]
    return ways[hands]


class Chopsticks(Game):
    name = "chopsticks"
    summary = "the finger game: attack to add your fingers to an opponent's hand (seeds 000, 003)"
    impartial = True
    params = (
        IntParam("fingers", "5", "a hand reaching this many fingers overflows", minimum=2, maximum=100),
        IntParam("hands", "2", "hands per player", minimum=1, maximum=10),
        ChoiceParam(
            "overflow", "cutoff", "cutoff: an overflowing hand dies; rollover: it keeps sum mod fingers",
            choices=("cutoff", "rollover"),
        ),
        ChoiceParam(
            "split", "none", "when the mover may redistribute their own fingers instead of attacking",
            choices=("none", "dead", "any"),
        ),
        BoolParam("split_kill", "true", "whether a split may leave more dead hands than before"),
        BoolParam("self_attack", "false", "whether the mover may add one own live hand to another"),
    )
    columns = {
        "mover": "the hands of the player to move, ascending (list of integers, 0 = dead)",
        "opponent": "the other player's hands, ascending",
    }

    def size(self, rules: Ruleset) -> Size:
        """Every pair of hands is a position; a position has at most one move per pair of
        hand values attacked (and attacking), and per redistribution of its fingers."""
        fingers, hands = rules["fingers"], rules["hands"]
        sides = comb(fingers + hands - 1, hands)
        moves = hands * hands + (hands * (hands - 1) if rules["self_attack"] else 0)
        if rules["split"] != "none":
            moves += max(_hands_by_total(fingers, hands))
        positions = sides * sides - 1  # every pair of hands but both players' all dead
        return Size(positions, positions * moves, exact=True)

    def validate(self, values: dict) -> None:
        sides = comb(values["fingers"] + values["hands"] - 1, values["hands"])
        if sides * sides > MAX_POSITIONS:
            raise RulesetError(
                f"chopsticks with fingers={values['fingers']}, hands={values['hands']} has "
                f"{sides * sides:,} positions, more than the {MAX_POSITIONS:,} this pipeline builds"
            )

    def space(self, rules: Ruleset) -> "ChopsticksSpace":
        return ChopsticksSpace(rules)

    def start(self, rules: Ruleset) -> str:
        return "|".join(["-".join(["1"] * rules["hands"])] * 2)

    def sides(self, rules: Ruleset, text: str) -> tuple[str, str]:
        """The hands: a position is written mover|opponent, so they swap places every ply."""
        mover, opponent = text.split("|")
        return mover, opponent

    def canonical_position(self, rules: Ruleset, text: str) -> str:
        fingers, hands = rules["fingers"], rules["hands"]
        shape = f"expected mover|opponent, each {hands} hand(s) of 0..{fingers - 1} joined by '-'"
        sides = text.strip().split("|")
        if len(sides) != 2:
            raise PositionError(f"malformed chopsticks position {text!r}: {shape}")
        parsed = []
        for side in sides:
            numbers = parse_numbers(side)
            if numbers is None or len(numbers) != hands:
                raise PositionError(f"malformed chopsticks position {text!r}: {shape}")
            values = sorted(numbers)
            if values[-1] >= fingers:
                raise PositionError(
                    f"impossible chopsticks position {text!r}: a hand holds at most {fingers - 1} fingers"
                )
            parsed.append(values)
        if max(parsed[0]) == 0 and max(parsed[1]) == 0:
            raise PositionError(f"impossible chopsticks position {text!r}: both players' hands are all dead")
        return "|".join("-".join(map(str, side)) for side in parsed)

    def draw(self, rules: Ruleset, text: str) -> str:
        """The other player's hands above, fingers down; the mover's below, fingers up."""
        mover, other = ([int(n) for n in side.split("-")] for side in text.split("|"))
        slots = rules["fingers"] - 1
        hand = max(30, 7 * min(slots, MAX_DRAWN_FINGERS) + 8)
        label, gap, row = 58, 8, 46
        width = label + len(mover) * (hand + gap)
        body = [_svg.text(2, 20, "other", 11, "start", _svg.OTHER),
                _svg.text(2, row + 34, "to move", 11, "start", _svg.MOVER, "bold")]
        for i, n in enumerate(other):
            body += _hand(label + i * (hand + gap), 2, hand, n, slots, _svg.OTHER, down=True)
        for i, n in enumerate(mover):
            body += _hand(label + i * (hand + gap), row + 6, hand, n, slots, _svg.MOVER, down=False)
        return _svg.svg(width, 2 * row + 6, body, f"the player to move holds {'-'.join(map(str, mover))}, "
                        f"the other player {'-'.join(map(str, other))}")


#: Hands of more fingers than this show their count as a number.
MAX_DRAWN_FINGERS = 9


def _hand(x: float, y: float, width: float, n: int, slots: int, colour: str, down: bool) -> list[str]:
    """One hand in a box 40 high at (x, y): a palm showing its count, and its fingers
    (raised, or folded with only the knuckle showing) where there are few enough."""
    palm_y = y if down else y + 24
    if n == 0:
        return [f'<rect x="{x:g}" y="{palm_y:g}" width="{width:g}" height="16" rx="5" fill="none" '
                f'stroke="{_svg.FAINT}" stroke-dasharray="3 2"/>',
                _svg.text(x + width / 2, palm_y + 12, "dead", 10, fill=_svg.FAINT)]
    palm = f'<rect x="{x:g}" y="{palm_y:g}" width="{width:g}" height="16" rx="5" fill="{colour}"/>'
    if slots > MAX_DRAWN_FINGERS:
        return [palm, _svg.text(x + width / 2, palm_y + 12, n, 11, fill="#fff", weight="bold")]
    # the fingers as two dashed lines, raised then folded (only the knuckle past the palm)
    first = x + (width - 7 * slots + 2) / 2
    parts = []
    for start, count, length, opacity in ((0, n, 22, ""), (n, slots - n, 10, ' stroke-opacity="0.3"')):
        if count:
            mid = (palm_y + 12 + length / 2) if down else (palm_y + 4 - length / 2)
            parts.append(f'<path d="M{first + 7 * start:g} {mid:g}h{7 * count - 2}" stroke="{colour}" '
                         f'stroke-width="{length}" stroke-dasharray="5 2"{opacity}/>')
    return [*parts, palm, _svg.text(x + width / 2, palm_y + 12, n, 11, fill="#fff", weight="bold")]

GAME = Chopsticks()


class ChopsticksSpace(Space):
    def __init__(self, rules: Ruleset):
        self.fingers = fingers = rules["fingers"]
        self.hands = hands = rules["hands"]
        self.rollover = rules["overflow"] == "rollover"
        self.split = rules["split"]
        self.split_kill = rules["split_kill"]
        self.self_attack = rules["self_attack"]
        self.sides = list(combinations_with_replacement(range(fingers), hands))
        self.side_rank = {side: i for i, side in enumerate(self.sides)}
        self.m = len(self.sides)
        self.side_text = ["-".join(map(str, side)) for side in self.sides]

    def overflow(self, total: int) -> int:
        if self.rollover:
            return total % self.fingers
        return 0 if total >= self.fingers else total

    def positions(self) -> pa.Table:
        m = self.m
        ids = np.arange(1, m * m, dtype=np.int64)  # id 0 is both sides all dead: no position
        mover, opponent = ids // m, ids % m
        # rank 0 is the all-dead side: the mover with no live hand has lost, and a mover
        # facing no live hand has won (it cannot arise from play, but it is a position).
        code = np.where(mover == 0, 0, np.where(opponent == 0, 1, -1))
        terminal = pc.take(pa.array(["loss", "win"]), pa.array(code, mask=code < 0))
        text_of = pa.array(self.side_text)
        text = pc.binary_join_element_wise(pc.take(text_of, mover), pc.take(text_of, opponent), "|")
        side_values = np.array(self.sides, dtype=np.int8).reshape(m, self.hands)
        return pa.Table.from_arrays(
            [pa.array(ids), text, terminal.cast(pa.string()),
             self._hand_lists(side_values[mover]), self._hand_lists(side_values[opponent])],
            schema=POSITION_COLUMNS.append(pa.field("mover", pa.list_(pa.int8())))
            .append(pa.field("opponent", pa.list_(pa.int8()))),
        )

    def rank(self) -> np.ndarray | None:
        """Fingers still to add before every hand dies: each attack (and self attack) adds
        at least one or kills a hand, so it falls with every move. Splits keep it and
        rollover can lower a hand: with those, moves can cycle and there is no rank."""
        if self.rollover or self.split != "none":
            return None
        values = np.array(self.sides, dtype=np.int64).reshape(self.m, self.hands)
        side = np.where(values > 0, self.fingers - values, 0).sum(axis=1)
        ids = np.arange(1, self.m * self.m, dtype=np.int64)  # as in positions()
        return side[ids // self.m] + side[ids % self.m]

    def _hand_lists(self, values: np.ndarray) -> pa.ListArray:
        offsets = np.arange(0, values.size + 1, self.hands, dtype=np.int32)
        return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.reshape(-1)))

    # -- moves ---------------------------------------------------------------------

    def _attack_table(self) -> np.ndarray:
        """table[o, a, j]: rank of side o after a hand of value a hits its j-th hand, or -1.

        -1 where the j-th hand is dead or repeats the (j-1)-th (same value, same result).
        """
        f, h = self.fingers, self.hands
        table = np.full((self.m, f, h), -1, dtype=np.int64)
        for rank, side in enumerate(self.sides):
            for j, b in enumerate(side):
                if b == 0 or (j > 0 and side[j - 1] == b):
                    continue
                for a in range(1, f):
                    hit = list(side)
                    hit[j] = self.overflow(a + b)
                    table[rank, a, j] = self.side_rank[tuple(sorted(hit))]
        return table

    def _own_moves(self) -> list[list[tuple[int, str]]]:
        """For each side rank: the distinct (new own side rank, label) of splits and self attacks."""
        by_total: dict[int, list[int]] = {}
        for rank, side in enumerate(self.sides):
            by_total.setdefault(sum(side), []).append(rank)
        result = []
        for rank, side in enumerate(self.sides):
            found: dict[int, str] = {}
            dead = side.count(0)
            if self.split == "any" or (self.split == "dead" and dead > 0):
                for target in by_total[sum(side)]:
                    if target == rank:
                        continue
                    if not self.split_kill and self.sides[target].count(0) > dead:
                        continue
                    found.setdefault(target, f"split {self.side_text[rank]} to {self.side_text[target]}")
            if self.self_attack:
                for i, a in enumerate(side):
                    for j, c in enumerate(side):
                        if i == j or a == 0 or c == 0:
                            continue
                        hit = list(side)
                        hit[j] = self.overflow(a + c)
                        target = self.side_rank[tuple(sorted(hit))]
                        if target != rank:
                            found.setdefault(target, f"{a} hits own {c}")
            result.append(sorted(found.items()))
        return result

    def _movers(self) -> int:
        """Movers per part: about 4 batches of moves each (a mover's side has m positions)."""
        return max(1, 4 * BATCH_ROWS // (self.m * self.hands * self.hands))

    def parts(self) -> int:
        return max(1, -(-(self.m - 1) // self._movers()))

    @functools.cached_property
    def _tables(self) -> tuple[np.ndarray, list, list[str], list[np.ndarray]]:
        """The attack table, the own moves, every move label and each side's own labels' codes."""
        f = self.fingers
        own = self._own_moves()
        labels = [f"{a} hits {b}" for a in range(f) for b in range(f)]
        own_label_ids: list[np.ndarray] = []
        for moves in own:
            start = len(labels)
            labels.extend(label for _, label in moves)
            own_label_ids.append(np.arange(start, len(labels), dtype=np.int32))
        return self._attack_table(), own, labels, own_label_ids

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        f, h, m = self.fingers, self.hands, self.m
        n = m * m
        table, own, labels, own_label_ids = self._tables
        batcher = Batcher(labels)
        side_values = np.array(self.sides, dtype=np.int64).reshape(m, h)
        opponents = np.arange(1, m, dtype=np.int64)  # opponent all dead: game over, no moves

        first = 1 + part * self._movers()  # mover all dead (side 0): lost, no moves
        for mover in range(first, min(m, first + self._movers())):
            live = np.unique(side_values[mover][side_values[mover] > 0])
            # attacks, in the order (own hand value, opponent hand index)
            child_side = table[opponents][:, live, :].reshape(len(opponents), -1)
            hit_values = side_values[opponents]  # value of the opponent hand at each index
            label = (live[None, :, None] * f + hit_values[:, None, :]).reshape(len(opponents), -1)
            row = np.broadcast_to(np.arange(len(opponents))[:, None], child_side.shape)
            ok = child_side >= 0
            src_o = opponents[row[ok]]
            dst = child_side[ok] * m + mover
            move = label[ok].astype(np.int32)
            # own moves (splits, self attacks): the opponent's side stays, the mover's changes
            targets = np.array([t for t, _ in own[mover]], dtype=np.int64)
            if targets.size:
                src_o = np.concatenate([src_o, np.repeat(opponents, targets.size)])
                dst = np.concatenate([dst, (opponents[:, None] * m + targets[None, :]).reshape(-1)])
                move = np.concatenate([move, np.tile(own_label_ids[mover], len(opponents))])
            # distinct (src, dst), first move kept; ascending src then dst
            src_o, dst, move = first_per_pair(src_o, dst, move, n)
            yield from batcher.add(mover * m + src_o, dst, move)
        yield from batcher.finish()
