"""Chopsticks (割り箸), the finger game of seeds 000 and 003, with every rule variant.

A player's hands are an unordered multiset of `hands` values 0..fingers-1, so a player's
side is identified by its index among those multisets (`combinations_with_replacement`
order), and a pair of sides by `pair = mover_side * M + opponent_side` where M is the number
of multisets. Positions are numbered by the fingers still to add before every hand dies
(the rank, where the rules have one), then by pair: the order enumerate publishes, so it
renumbers nothing. Moves are generated for runs of positions at once with NumPy.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from itertools import combinations_with_replacement
from math import comb

import numpy as np
import pyarrow as pa

from pipeline.core.errors import PositionError, RulesetError
from pipeline.core.params import BoolParam, ChoiceParam, IntParam
from pipeline.games import _svg
from pipeline.games._bulk import BATCH_ROWS, Batcher, parse_numbers
from pipeline.games.contract import POSITION_COLUMNS, Game, Rules, Size, Space
from pipeline.storage.threads import in_order

#: Spaces above this many positions are refused up front rather than failing slowly.
#: Position ids are 32-bit in the scratch arrays; below that the machine decides (pipeline/stages/estimate.py).
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


def _ranked(rules: Rules) -> bool:
    """Whether moves never return (RankedChopsticksSpace.rank says why)."""
    return rules["overflow"] == "cutoff" and rules["split"] == "none"


class Chopsticks(Game):
    name = "chopsticks"
    summary = "the finger game: attack to add your fingers to an opponent's hand (seeds 000, 003)"
    impartial = True
    params = (
        IntParam("fingers", "5", "a hand reaching this many fingers overflows", minimum=2, maximum=100),
        IntParam("hands", "2", "hands per player", minimum=1, maximum=10),
        ChoiceParam(
            "overflow",
            "cutoff",
            "cutoff: an overflowing hand dies; rollover: it keeps sum mod fingers",
            choices=("cutoff", "rollover"),
        ),
        ChoiceParam(
            "split",
            "none",
            "when the mover may redistribute their own fingers instead of attacking",
            choices=("none", "dead", "any"),
        ),
        BoolParam("split_kill", "true", "whether a split may leave more dead hands than before"),
        BoolParam("self_attack", "false", "whether the mover may add one own live hand to another"),
    )
    columns = {
        "mover": "the hands of the player to move, ascending (list of integers, 0 = dead)",
        "opponent": "the other player's hands, ascending",
    }

    def size(self, rules: Rules) -> Size:
        """Every pair of hands is a position; a position has at most one move per pair of
        hand values attacked (and attacking), and per redistribution of its fingers."""
        fingers, hands = rules["fingers"], rules["hands"]
        sides = comb(fingers + hands - 1, hands)
        moves = hands * hands + (hands * (hands - 1) if rules["self_attack"] else 0)
        if rules["split"] != "none":
            moves += max(_hands_by_total(fingers, hands))
        positions = sides * sides - 1  # every pair of hands but both players' all dead
        ranked = _ranked(rules)
        return Size(positions, positions * moves, exact=True, ranked=ranked, by_rank=ranked)

    def validate(self, values: dict) -> None:
        sides = comb(values["fingers"] + values["hands"] - 1, values["hands"])
        if sides * sides > MAX_POSITIONS:
            raise RulesetError(
                f"chopsticks with fingers={values['fingers']}, hands={values['hands']} has "
                f"{sides * sides:,} positions, more than the {MAX_POSITIONS:,} this pipeline builds"
            )

    def space(self, rules: Rules) -> ChopsticksSpace:
        return (RankedChopsticksSpace if _ranked(rules) else ChopsticksSpace)(rules)

    def start(self, rules: Rules) -> str:
        return "|".join(["-".join(["1"] * rules["hands"])] * 2)

    def sides(self, rules: Rules, text: str) -> tuple[str, str]:
        """The hands: a position is written mover|opponent, so they swap places every ply."""
        mover, opponent = text.split("|")
        return mover, opponent

    def canonical_position(self, rules: Rules, text: str) -> str:
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

    def draw(self, rules: Rules, text: str) -> str:
        """The other player's hands above, fingers down; the mover's below, fingers up."""
        mover, other = ([int(n) for n in side.split("-")] for side in text.split("|"))
        slots = rules["fingers"] - 1
        hand = max(30, 7 * min(slots, MAX_DRAWN_FINGERS) + 8)
        label, gap, row = 58, 8, 46
        width = label + len(mover) * (hand + gap)
        body = [
            _svg.text(2, 20, "other", 11, "start", _svg.OTHER),
            _svg.text(2, row + 34, "to move", 11, "start", _svg.MOVER, "bold"),
        ]
        for i, n in enumerate(other):
            body += _hand(label + i * (hand + gap), 2, hand, n, slots, _svg.OTHER, down=True)
        for i, n in enumerate(mover):
            body += _hand(label + i * (hand + gap), row + 6, hand, n, slots, _svg.MOVER, down=False)
        return _svg.svg(
            width,
            2 * row + 6,
            body,
            f"the player to move holds {'-'.join(map(str, mover))}, the other player {'-'.join(map(str, other))}",
            sides=True,
        )


#: Hands of more fingers than this show their count as a number.
MAX_DRAWN_FINGERS = 9


def _hand(x: float, y: float, width: float, n: int, slots: int, colour: str, down: bool) -> list[str]:
    """One hand in a box 40 high at (x, y): a palm showing its count, and its fingers
    (raised, or folded with only the knuckle showing) where there are few enough."""
    palm_y = y if down else y + 24
    if n == 0:
        return [
            f'<rect x="{x:g}" y="{palm_y:g}" width="{width:g}" height="16" rx="5" fill="none" '
            f'stroke="{_svg.FAINT}" stroke-dasharray="3 2"/>',
            _svg.text(x + width / 2, palm_y + 12, "dead", 10, fill=_svg.FAINT),
        ]
    palm = f'<rect x="{x:g}" y="{palm_y:g}" width="{width:g}" height="16" rx="5" fill="{colour}"/>'
    if slots > MAX_DRAWN_FINGERS:
        return [palm, _svg.text(x + width / 2, palm_y + 12, n, 11, fill="#fff", weight="bold")]
    # the fingers as two dashed lines, raised then folded (only the knuckle past the palm)
    first = x + (width - 7 * slots + 2) / 2
    parts = []
    for start, count, length, opacity in ((0, n, 22, ""), (n, slots - n, 10, ' stroke-opacity="0.3"')):
        if count:
            mid = (palm_y + 12 + length / 2) if down else (palm_y + 4 - length / 2)
            parts.append(
                f'<path d="M{first + 7 * start:g} {mid:g}h{7 * count - 2}" stroke="{colour}" '
                f'stroke-width="{length}" stroke-dasharray="5 2"{opacity}/>'
            )
    return [*parts, palm, _svg.text(x + width / 2, palm_y + 12, n, 11, fill="#fff", weight="bold")]


GAME = Chopsticks()


class ChopsticksSpace(Space):
    """Every pair of sides but both all dead, numbered as the module says; moves may cycle."""

    def __init__(self, rules: Rules):
        self.fingers = fingers = rules["fingers"]
        self.hands = hands = rules["hands"]
        self.rollover = rules["overflow"] == "rollover"
        self.split = rules["split"]
        self.split_kill = rules["split_kill"]
        self.self_attack = rules["self_attack"]
        self.sides = list(combinations_with_replacement(range(fingers), hands))
        self.side_rank = {side: i for i, side in enumerate(self.sides)}
        self.m = m = len(self.sides)
        self.side_text = ["-".join(map(str, side)) for side in self.sides]
        self.side_values = np.array(self.sides, dtype=np.int64).reshape(m, hands)
        # fingers to add before every hand of a side dies: a pair's rank is its sides' sum
        self.side_left = left = np.where(self.side_values > 0, fingers - self.side_values, 0).sum(axis=1)
        count = np.bincount(left)  # sides by fingers left
        pairs = np.convolve(count, count)  # pairs by rank; rank 0 is pair 0 alone (both all dead)
        # id of pair (x, y) = first[rank, x] + within[y]: the rank's first id, plus the pairs
        # of its rank with a lower mover side, plus the sides like y (as many left) before y
        by_left = np.argsort(left, kind="stable")
        self.within = np.empty(m, dtype=np.int64)
        self.within[by_left] = np.arange(m) - np.repeat(np.cumsum(count) - count, count)
        shift = np.arange(pairs.size)[:, None] - left[None, :]
        partners = np.where((shift >= 0) & (shift < count.size), count[np.clip(shift, 0, count.size - 1)], 0)
        first = (np.cumsum(pairs) - pairs - 1)[:, None] + np.cumsum(partners, axis=1) - partners  # -1: no pair 0
        self.first = first.reshape(-1)
        #: each position id's pair (mover side * M + opponent side), and its rank
        self.rank_of = np.repeat(np.arange(pairs.size), pairs)[1:]
        self.pair = np.empty(self.rank_of.size, dtype=np.int64)
        x, y = np.divmod(np.arange(1, m * m, dtype=np.int64), m)
        self.pair[self.id_of(x, y)] = np.arange(1, m * m)

    def id_of(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The position id of the pair of sides (x to move, y), neither both 0."""
        return self.first[(self.side_left[x] + self.side_left[y]) * self.m + x] + self.within[y]

    def overflow(self, total: int) -> int:
        if self.rollover:
            return total % self.fingers
        return 0 if total >= self.fingers else total

    def positions(self) -> pa.Table:
        m = self.m
        mover, opponent = self.pair // m, self.pair % m
        # side 0 is all dead: the mover with no live hand has lost, and a mover facing no
        # live hand has won (it cannot arise from play, but it is a position).
        code = np.where(mover == 0, 0, np.where(opponent == 0, 1, -1))
        import pyarrow.compute as pc  # when used: its import is a tenth of every command's start

        terminal = pc.take(pa.array(["loss", "win"]), pa.array(code, mask=code < 0))
        text_of = pa.array(self.side_text)
        text = pc.binary_join_element_wise(pc.take(text_of, mover), pc.take(text_of, opponent), "|")
        side_values = self.side_values.astype(np.int8)
        return pa.Table.from_arrays(
            [
                pa.array(np.arange(self.pair.size, dtype=np.int64)),
                text,
                terminal.cast(pa.string()),
                self._hand_lists(side_values[mover]),
                self._hand_lists(side_values[opponent]),
            ],
            schema=POSITION_COLUMNS.append(pa.field("mover", pa.list_(pa.int8()))).append(
                pa.field("opponent", pa.list_(pa.int8()))
            ),
        )

    def _hand_lists(self, values: np.ndarray) -> pa.ListArray:
        offsets = np.arange(0, values.size + 1, self.hands, dtype=np.int32)
        return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values.reshape(-1)))

    # -- moves ---------------------------------------------------------------------

    def _attack_table(self) -> np.ndarray:
        """table[o, a, j]: the side o becomes when a hand of value a hits its j-th hand, or -1
        (-1 for a = 0 too).

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
        """For each side: the distinct (new own side, label) of splits and self attacks."""
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

    @functools.cached_property
    def _tables(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, list[str]]:
        """The attack table; each side's own moves as the sides they lead to and their
        labels' codes (padded with -1); every move label."""
        f = self.fingers
        own = self._own_moves()
        labels = [f"{a} hits {b}" for a in range(f) for b in range(f)]
        width = max(map(len, own), default=0)
        own_side = np.full((self.m, width), -1, dtype=np.int64)
        own_label = np.full((self.m, width), -1, dtype=np.int64)
        for side, moves in enumerate(own):
            own_side[side, : len(moves)] = [target for target, _ in moves]
            own_label[side, : len(moves)] = np.arange(len(labels), len(labels) + len(moves))
            labels.extend(label for _, label in moves)
        return self._attack_table().reshape(-1), own_side, own_label, labels

    def _width(self) -> int:
        """Candidate moves per position: every own hand on every opponent's, and own moves."""
        return self.hands * self.hands + self._tables[1].shape[1]

    def _step(self) -> int:
        """Positions per part: about 4 batches of moves each."""
        return max(1, 4 * BATCH_ROWS // self._width())

    def parts(self) -> int:
        return max(1, -(-self.pair.size // self._step()))

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        lo = part * self._step()
        return self._from(np.arange(lo, min(lo + self._step(), self.pair.size), dtype=np.int64))

    def _from(self, ids: np.ndarray) -> Iterator[pa.RecordBatch]:
        """Batches of the moves out of `ids` (ascending), about a batch of moves at a time."""
        ids = np.asarray(ids, dtype=np.int64)
        batcher = Batcher(self._tables[3])
        step = max(1, BATCH_ROWS // self._width())
        for moves in in_order(self._moves, (ids[lo : lo + step] for lo in range(0, ids.size, step))):
            yield from batcher.add(*moves)
        yield from batcher.finish()

    def _moves(self, ids: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, label code) of the moves out of `ids` (ascending), source by source,
        each source's in ascending dst, the first move (in the game's order) of each child."""
        f, h, m = self.fingers, self.hands, self.m
        attack, own_side, own_label, _ = self._tables
        mover, opponent = np.divmod(self.pair[ids], m)
        playing = (mover > 0) & (opponent > 0)  # a side all dead: the game is over
        ids, mover, opponent = ids[playing], mover[playing], opponent[playing]
        own = self.side_values[mover]  # (k, h)
        # attacks, in the game's order (own hand value, opponent hand index); a dead own
        # hand, or one of the value before it, attacks with nothing new (the table's value 0)
        live = own > 0
        live[:, 1:] &= own[:, 1:] != own[:, :-1]
        hit = (opponent[:, None] * f + np.where(live, own, 0)) * h
        child = attack[(hit[:, :, None] + np.arange(h)).reshape(ids.size, h * h)]
        label = (own[:, :, None] * f + self.side_values[opponent][:, None, :]).reshape(ids.size, h * h)
        # the child position: the attacked side moves next, facing the mover's side
        dst = np.where(child >= 0, self.id_of(np.maximum(child, 0), mover[:, None]), -1)
        if own_side.shape[1]:  # splits and self attacks: the opponent moves next, facing the new side
            targets = own_side[mover]
            dst = np.concatenate(
                [dst, np.where(targets >= 0, self.id_of(opponent[:, None], np.maximum(targets, 0)), -1)], axis=1
            )
            label = np.concatenate([label, own_label[mover]], axis=1)
        # each source's children ascending, the first of equal ones (lowest column) kept:
        # sorted as child id and column packed in one integer, no move last
        bits = (dst.shape[1] - 1).bit_length()
        key = np.where(dst >= 0, dst << bits | np.arange(dst.shape[1]), np.iinfo(np.int64).max)
        key.sort(axis=1)
        dst = key >> bits
        keep = key != np.iinfo(np.int64).max
        keep[:, 1:] &= dst[:, 1:] != dst[:, :-1]
        row, _ = np.nonzero(keep)
        column = key[keep] & ((1 << bits) - 1)
        return ids[row], dst[keep], label.reshape(-1)[row * label.shape[1] + column]


class RankedChopsticksSpace(ChopsticksSpace):
    """Attacks only, cut off at the fingers: moves never return, and come rank by rank."""

    def rank(self) -> np.ndarray:
        """Fingers still to add before every hand dies: each attack (and self attack) adds
        at least one or kills a hand, so it falls with every move. (Splits keep it and
        rollover can lower a hand: with those, moves can cycle and there is no rank.)"""
        return self.rank_of

    def transitions_from(self, ids: np.ndarray) -> Iterator[pa.RecordBatch]:
        return self._from(ids)
