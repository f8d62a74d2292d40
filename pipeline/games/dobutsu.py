"""Dōbutsu shōgi (どうぶつしょうぎ): lions, giraffes, elephants and chicks on a 3×4 board.

The rules are RULES.md's; positions are the mover's: the board turned so that the player to
move plays up it with the upper-case pieces (`tables` holds every rule as data).

A position is one int64 key. Square i = 3·row + column (row 0 the far row, column 0 the
left, both as the mover sees them) holds a 4-bit code at bits 4i..4i+3: 0 empty, 1-5 the
mover's L G E C H, 6-10 the opponent's l g e c h. The hands follow at bit 48: the mover's
giraffes, elephants and chicks, then the opponent's, 2 bits a count. Turning a position to
the other player reverses the squares (i <-> 11 - i), swaps the owners and the hands.

Every placement of the pieces (both lions on the board, every other piece on a square with
an owner, a chick promoted or not, or in either hand: Tanaka's 1,567,925,964 for the full
game) has an index below `Tables.count`, in the order of the keys: the hands, then square
11, square 10, … square 0. The index is a sum of table entries, one per two squares, over
a state that counts the pieces still to place (`Tables.rank_of`): a few gathers from small
tables a position, for a whole array at once. A child's index comes straight from its
parent's key with the move applied, read in the other order with the owners swapped: the
turned board is written only for the positions that are new.

Positions are found breadth first from the start, depth by depth: a byte per index marks
what is found; each depth's frontier is expanded in chunks on two threads, the children
already marked dropped there, and the rest marked, in order, on one thread. Each new
position is classified when found, a catch (the mover can take the opponent's lion: won),
a try (with try=on, the opponent's lion on the mover's back row, safe: lost) or neither;
only the last are expanded. Ids go depth by depth from the start (id 0); within a depth the
positions play goes on from, then the catches, then the tries, each in index order. So a
depth's frontier is a run of ids and the terminal positions come in runs. A child's id is
then looked up by the rank of its index among the positions found: the marks packed to a
bitmap with a count of the set bits before each 64-bit word, and the ids by rank (`Found`),
2.3 GB for the full game.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.core.errors import PositionError
from pipeline.core.params import ChoiceParam
from pipeline.core.values import Value
from pipeline.games import _svg
from pipeline.games._bulk import Batcher, distinct
from pipeline.games.contract import POSITION_COLUMNS, POSITION_KEY, Game, Rules, Search, Size, Space
from pipeline.storage.progress import log
from pipeline.storage.threads import in_order

# -- the rules ----------------------------------------------------------------------------

COLS, ROWS = 3, 4
SQUARES = COLS * ROWS
#: A square's letter by code: 1-5 the mover's pieces, 6-10 the opponent's (code + OTHER).
LETTERS = ".LGECHlgech"
LION, GIRAFFE, ELEPHANT, CHICK, HEN = 1, 2, 3, 4, 5
OTHER = 5
#: The pieces a hand holds, in the order texts and keys write them; their codes.
KINDS = "GEC"
KIND_CODES = (GIRAFFE, ELEPHANT, CHICK)
#: Where the hands start in a key: 2 bits a count, the mover's G E C then the opponent's.
HAND = 48
#: How each piece of the mover steps, as (rows, columns): rows count from the far row, so
#: -1 is forward.
STEPS = {
    LION: ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)),
    GIRAFFE: ((-1, 0), (0, -1), (0, 1), (1, 0)),
    ELEPHANT: ((-1, -1), (-1, 1), (1, -1), (1, 1)),
    CHICK: ((-1, 0),),
    HEN: ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, 0)),
}
#: The start's pieces beside the lions, (square, mover's code), the opponent's turned.
START = {"g": (9 + 2, GIRAFFE), "e": (9, ELEPHANT), "c": (6 + 1, CHICK)}
START_LION = 9 + 1
#: The values of `pieces`: a non-empty subset of g, e, c in that order.
PIECE_SETS = ("gec", "ge", "gc", "ec", "g", "e", "c")


def square_name(square: int) -> str:
    """`b3`: the column's letter (a on the mover's left) and the row (1 the far row)."""
    return f"{'abc'[square % COLS]}{square // COLS + 1}"


def turned_code(code: int) -> int:
    """A square's code seen by the other player: the owner swapped."""
    return code + OTHER if 1 <= code <= OTHER else code - OTHER if code > OTHER else code


def kind_of(code: int) -> int | None:
    """Which of KINDS a captured piece of this code becomes in a hand (a hen a chick);
    None for a lion or an empty square."""
    base = code - OTHER if code > OTHER else code
    return {GIRAFFE: 0, ELEPHANT: 1, CHICK: 2, HEN: 2}.get(base)


def hand_shift(kind: int, mover: bool = True) -> int:
    """The bit of a count in hand in a key."""
    return HAND + 2 * kind + (0 if mover else 6)


# -- the index ------------------------------------------------------------------------------

#: States of the index's walk over the squares: what is still to place, (the mover's lion,
#: the opponent's, giraffes, elephants, chicks), and a dead state for codes no position
#: holds (or more pieces than the set has).
STATES = list(itertools.product((0, 1), (0, 1), range(3), range(3), range(3)))
STATE: dict[tuple[int, ...], int] = {state: i for i, state in enumerate(STATES)}
DEAD = len(STATES)
DONE = STATE[(0, 0, 0, 0, 0)]
#: An index table's entry: the index's share << SHARE | the next state << 8. The state
#: sits just above the byte of two squares it is combined with; the shares of a walk's 7
#: entries add up without the states' bits (< 2**18 together) reaching them.
SHARE = 18
STATE_BITS = 0x7F00


def _after(state: int, code: int) -> int:
    """The state after placing `code` on a square."""
    if state == DEAD or code > 2 * OTHER:
        return DEAD
    if code == 0:
        return state
    left = list(STATES[state])
    kind = kind_of(code)  # None for a lion alone, which the first two slots take
    slot = 0 if code == LION else 1 if code == LION + OTHER else 2 + (kind if kind is not None else -2)
    if not left[slot]:
        return DEAD
    left[slot] -= 1
    return STATE[tuple(left)]


class Tables:
    """Everything about one set of pieces as arrays: the index and the moves."""

    def __init__(self, pieces: str):
        self.pieces = pieces
        #: Pieces of each kind in the set: both players' together.
        self.most = tuple(2 if kind.lower() in pieces else 0 for kind in KINDS)
        self._index_tables()
        self._move_tables()

    # -- the index

    def _index_tables(self) -> None:
        # ways[k][state]: fillings of k squares that place exactly what `state` leaves
        ways = np.zeros((SQUARES + 1, DEAD + 1), dtype=np.int64)
        ways[0, DONE] = 1
        after = np.array([[_after(s, c) for c in range(16)] for s in range(DEAD + 1)])
        for k in range(1, SQUARES + 1):
            ways[k] = ways[k - 1][after].sum(axis=1)
            ways[k, DEAD] = 0
        # below[k][state][code]: fillings of k squares after a smaller code on the first
        below = np.zeros((SQUARES + 1, DEAD + 1, 16), dtype=np.int64)
        for k in range(1, SQUARES + 1):
            below[k][:, 1:] = np.cumsum(ways[k - 1][after], axis=1)[:, :-1]

        states = np.arange(DEAD + 1)[:, None]

        def step(first_square_left: int, codes: np.ndarray) -> np.ndarray:
            """The table of one step over two squares, by state << 8 | byte: `codes[byte]`
            the byte's two codes in the order the walk takes them."""
            a, b = codes[:, 0][None, :], codes[:, 1][None, :]
            middle = after[states, a]
            end = after[middle, b]
            share = below[first_square_left][states, a] + below[first_square_left - 1][middle, b]
            return np.where(end != DEAD, share << SHARE | end << 8, DEAD << 8).reshape(-1)

        low, high = np.arange(256) & 15, np.arange(256) >> 4
        swap = np.array([turned_code(c) if c <= 2 * OTHER else 15 for c in range(16)])
        # a key's own index: the bytes from the top, each its high square first
        self.own = [step(SQUARES - 2 * j, np.stack([high, low], axis=1)) for j in range(SQUARES // 2)]
        # the index of the key turned: the bytes from the bottom, the low square first, owners swapped
        self.turned = [step(SQUARES - 2 * j, np.stack([swap[low], swap[high]], axis=1)) for j in range(SQUARES // 2)]
        # the hands come first: the index of the first placement of each hands field
        start = np.zeros(1 << 12, dtype=np.int64)
        starts = []  # (hands field, the walk's first state) of every hands the set allows
        at = 0
        for hands in range(1 << 12):
            counts = [(hands >> (2 * i)) & 3 for i in range(6)]
            left = [self.most[k] - counts[k] - counts[k + 3] for k in range(3)]
            if min(left) < 0:
                start[hands] = DEAD << 8
                continue
            state = STATE[(1, 1, *left)]
            starts.append((hands, state))
            start[hands] = at << SHARE | state << 8
            at += int(ways[SQUARES][state])
        self.count = at
        self.ways, self.after, self.starts = ways, after, starts
        self.own_start = start
        fields = np.arange(1 << 12)
        self.turned_start = start[(fields >> 6) | ((fields & 63) << 6)]

    def rank_of(self, keys: np.ndarray, turned: bool = False) -> np.ndarray:
        """The index of each key, or with `turned` of each key turned to the other player
        (a parent's key with a move made gives its child's): int64, -1 for a key that is no
        placement of this set of pieces. Walked STRIDE keys at a time: the temporaries stay
        in the cache (twice as quick as whole arrays of a million)."""
        tables, start = (self.turned, self.turned_start) if turned else (self.own, self.own_start)
        out = np.empty(keys.size, dtype=np.int64)
        for lo in range(0, keys.size, STRIDE):
            part = keys[lo : lo + STRIDE]
            total = start[part >> HAND]
            state = total & STATE_BITS
            for j, table in enumerate(tables):
                shift = 8 * j if turned else 8 * (SQUARES // 2 - 1 - j)
                entry = table[state | ((part >> shift) & 255)]
                total += entry
                state = entry & STATE_BITS
            out[lo : lo + part.size] = np.where(state == DONE << 8, total >> SHARE, -1)
        return out

    # -- the moves

    def _move_tables(self) -> None:
        """Every board move (from, to) in the game's order, with the direction it goes in
        and a table of what a key gains by it, by (code on from) << 4 | (code on to); then
        the drops, by kind then square, of the kinds in the set."""
        self.names: list[str] = []
        #: (from, to, the direction's place in DIRECTIONS, the gain table)
        self.steps: list[tuple[int, int, int, np.ndarray]] = []
        for source in range(SQUARES):
            row, col = divmod(source, COLS)
            for target in range(SQUARES):
                d = (target // COLS - row, target % COLS - col)
                if target == source or max(abs(d[0]), abs(d[1])) != 1:
                    continue
                gain = np.zeros(256, dtype=np.int64)
                for piece, steps in STEPS.items():
                    if d not in steps:
                        continue
                    landed = HEN if piece == CHICK and target < COLS else piece
                    for taken in (0, *range(GIRAFFE + OTHER, HEN + OTHER + 1)):  # never a lion: that game is over
                        kind = kind_of(taken)
                        gain[piece << 4 | taken] = (
                            -(piece << 4 * source)
                            + ((landed - taken) << 4 * target)
                            + (0 if kind is None else 1 << hand_shift(kind))
                        )
                self.names.append(square_name(source) + square_name(target))
                self.steps.append((source, target, DIRECTIONS.index(d), gain))
        self.drops = [k for k in range(3) if self.most[k]]
        for k in self.drops:
            self.names += [f"{KINDS[k]}*{square_name(t)}" for t in range(SQUARES)]

    def children(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the parent's row in `keys`, the move's code, the child's key not yet turned)
        for every move from `keys`, move by move. The squares each direction reaches are
        found for all keys at once as bit masks (`holding`); each board move is then one
        test of its target's bit (booleans: NumPy finds the rows that pass 4 times quicker
        than in integers). Quickest on STRIDE * 2 keys at a time."""
        pieces = [holding(keys, code) for code in range(LION + OTHER + 1)]
        # empty, or the opponent's but the lion: a position where the lion can be taken is over
        landing = TOPS & ~(pieces[LION] | pieces[GIRAFFE] | pieces[ELEPHANT] | pieces[CHICK] | pieces[HEN])
        landing &= ~pieces[LION + OTHER]
        reach = []
        for d in DIRECTIONS:
            reach.append(stepped(pieces, keys, d) & landing)
        rows, moves, kids = [], [], []
        for move, (source, target, direction, gain) in enumerate(self.steps):
            hit = np.flatnonzero((reach[direction] & (8 << 4 * target)) != 0)
            if hit.size:
                k = keys[hit]
                rows.append(hit)
                moves.append(np.full(hit.size, move, dtype=np.int8))
                # the gain by (code on source) << 4 | (code on target)
                codes = ((k >> 4 * source << 4) & 0xF0) | ((k >> 4 * target) & 15)
                kids.append(k + gain[codes])
        move = len(self.steps)
        empty = [(pieces[0] & (8 << 4 * target)) != 0 for target in range(SQUARES)]
        for kind in self.drops:
            held = ((keys >> hand_shift(kind)) & 3) != 0
            if held.any():
                for target in range(SQUARES):
                    hit = np.flatnonzero(held & empty[target])
                    if hit.size:
                        rows.append(hit)
                        moves.append(np.full(hit.size, move + target, dtype=np.int8))
                        kids.append(keys[hit] + ((KIND_CODES[kind] << 4 * target) - (1 << hand_shift(kind))))
            move += SQUARES
        if not rows:
            empty_keys = np.zeros(0, dtype=np.int64)
            return empty_keys, empty_keys.astype(np.int8), empty_keys
        return np.concatenate(rows), np.concatenate(moves), np.concatenate(kids)


#: The directions a piece steps in: the lion's, every one.
DIRECTIONS = STEPS[LION]
#: Keys handled at a time in the walks over whole arrays (`Tables.rank_of`, `children`):
#: their temporaries stay in the cache.
STRIDE = 1 << 14


@functools.lru_cache(maxsize=8)
def tables(pieces: str) -> Tables:
    return Tables(pieces)


# -- whole arrays of keys ---------------------------------------------------------------------

#: A bit per square, at the top of its nibble: a square's mask in `holding`.
TOPS = sum(8 << 4 * s for s in range(SQUARES))
_LOW = sum(7 << 4 * s for s in range(SQUARES))
_NIBBLES = sum(1 << 4 * s for s in range(SQUARES))
COLUMN = [sum(8 << 4 * (COLS * r + c) for r in range(ROWS)) for c in range(COLS)]
BACK_ROW = sum(8 << 4 * s for s in range(SQUARES - COLS, SQUARES))
#: A byte of two squares seen by the other player: the squares swapped, the owners too.
TURNED_BYTE = np.array(
    [turned_code(b >> 4) | turned_code(b & 15) << 4 if max(b >> 4, b & 15) <= 2 * OTHER else 0 for b in range(256)],
    dtype=np.int64,
)


def holding(keys: np.ndarray, code: int) -> np.ndarray:
    """The squares that hold `code`, as TOPS bits (SWAR: a nibble is zero exactly when
    adding 7 to its low bits leaves its top bit clear)."""
    x = keys ^ (code * _NIBBLES)
    return ~(((x & _LOW) + _LOW) | x) & TOPS


def strided(work: Callable[[np.ndarray], np.ndarray], keys: np.ndarray) -> np.ndarray:
    """work(keys), STRIDE keys at a time: what each step makes stays in the cache."""
    if keys.size <= STRIDE:
        return work(keys)
    return np.concatenate([work(keys[lo : lo + STRIDE]) for lo in range(0, keys.size, STRIDE)])


def turn(keys: np.ndarray) -> np.ndarray:
    """The keys turned to the other player."""
    out = np.zeros_like(keys)
    for j in range(SQUARES // 2):
        out |= TURNED_BYTE[(keys >> 8 * (SQUARES // 2 - 1 - j)) & 255] << 8 * j
    hands = keys >> HAND
    return out | ((hands >> 6) | (hands & 63) << 6) << HAND


#: Terminal codes: play goes on, a catch (won: the mover can take the opponent's lion), a
#: try (lost: the opponent's lion on the mover's back row, out of reach). A mover without a
#: move, neither caught nor tried, has lost too, as in shogi, and is counted with the tries
#: (RULES.md gives such a position no value; none is reachable with try=on, the compiled
#: solver found: with try=off a lion boxed in on the far row by its own pieces can be).
OPEN, CATCH, TRY = 0, 1, 2


def stepped(pieces: list[np.ndarray] | dict[int, np.ndarray], keys: np.ndarray, d: tuple[int, int]) -> np.ndarray:
    """Each key's squares that its mover's pieces stepping in direction `d` land on, board
    masks as `pieces` holds them (a nibble's bits a square): none off the board's side."""
    movers = np.zeros_like(keys)
    for code, steps in STEPS.items():
        if d in steps:
            movers |= pieces[code]
    if d[1]:  # not off the side of the board
        movers &= ~COLUMN[2 if d[1] > 0 else 0]
    shift = 4 * (COLS * d[0] + d[1])
    return movers << shift if shift > 0 else movers >> -shift


def classify(keys: np.ndarray, tries: bool) -> np.ndarray:
    """Each key's terminal code (int8)."""
    pieces = {code: holding(keys, code) for code in STEPS}
    own = np.zeros_like(keys)
    for mask in pieces.values():
        own |= mask
    attacked = np.zeros_like(keys)
    for d in DIRECTIONS:
        attacked |= stepped(pieces, keys, d)
    lion = holding(keys, LION + OTHER)
    codes = np.where((attacked & lion) != 0, CATCH, OPEN).astype(np.int8)
    if tries:
        codes[(codes == OPEN) & ((lion & BACK_ROW) != 0)] = TRY
    # no move: nothing in hand (a drop always finds one of the four or more empty squares)
    # and every square the pieces reach off the board or the mover's own
    codes[(codes == OPEN) & ((keys >> HAND) & 63 == 0) & (attacked & ~own & TOPS == 0)] = TRY
    return codes


def start_key(pieces: str) -> int:
    """The start's key: each side's pieces on their usual squares, the first player to move."""
    key = LION << 4 * START_LION | (LION + OTHER) << 4 * (SQUARES - 1 - START_LION)
    for letter, (square, code) in START.items():
        if letter in pieces:
            key |= code << 4 * square | (code + OTHER) << 4 * (SQUARES - 1 - square)
    return key


# -- position texts -------------------------------------------------------------------------

#: Positions whose texts are made at a time (DobutsuSpace.texts): what each step writes
#: stays in the cache.
TEXT_ROWS = 1 << 16
#: The byte no text holds: the padding dropped when a text is put together.
_PAD = 0


def _row_text(cells: list[int]) -> str:
    """A row's SFEN: its letters, a digit for each run of empty squares."""
    text, run = "", 0
    for code in cells:
        if code == 0:
            run += 1
            continue
        text += (str(run) if run else "") + LETTERS[code]
        run = 0
    return text + (str(run) if run else "")


def _hands_text(field: int) -> str:
    """The hands of a key's 12-bit field as a text writes them: the mover's upper case,
    then the opponent's lower case, G E C, `-` when both are empty."""
    counts = [(field >> (2 * i)) & 3 for i in range(6)]
    text = "".join(KINDS[k] * counts[k] for k in range(3)) + "".join(KINDS[k].lower() * counts[k + 3] for k in range(3))
    return text or "-"


def _byte_table(texts: list[str], width: int) -> np.ndarray:
    """The texts as rows of `width` bytes, padded with _PAD."""
    table = np.full((len(texts), width), _PAD, dtype=np.uint8)
    for i, text in enumerate(texts):
        table[i, : len(text)] = np.frombuffer(text.encode(), dtype=np.uint8)
    return table


@functools.cache
def text_strings() -> tuple[list[str], list[str]]:
    """A row's text by its 12 bits (3 squares); the side and the hands by the hands' bits.
    Made when first needed: every command loads the games, few write dobutsu's texts."""
    rows = [
        _row_text([(bits >> 4 * c) & 15 if (bits >> 4 * c) & 15 <= 2 * OTHER else 0 for c in range(COLS)])
        for bits in range(1 << 12)
    ]
    return rows, [" b " + _hands_text(field) for field in range(1 << 12)]


@functools.cache
def text_tables() -> tuple[np.ndarray, np.ndarray]:
    """text_strings as bytes, padded (0.1 s), for texts_of."""
    rows, tails = text_strings()
    return _byte_table(rows, COLS), _byte_table(tails, 3 + 18)


def texts_of(keys: np.ndarray) -> pa.Array:
    """The position texts of `keys`, laid out as bytes with NumPy: each row's text and the
    tail (side and hands) from tables, the padding then dropped."""
    n = keys.size
    row_bytes, tail_bytes = text_tables()
    width = ROWS * (COLS + 1) + tail_bytes.shape[1] - 1
    text = np.empty((n, width), dtype=np.uint8)
    for r in range(ROWS):
        text[:, r * (COLS + 1) : r * (COLS + 1) + COLS] = row_bytes[(keys >> 4 * COLS * r) & 0xFFF]
        if r < ROWS - 1:
            text[:, r * (COLS + 1) + COLS] = ord("/")
    text[:, ROWS * (COLS + 1) - 1 :] = tail_bytes[(keys >> HAND) & 0xFFF]
    kept = text != _PAD
    offsets = np.zeros(n + 1, dtype=np.int32)
    np.cumsum(kept.sum(axis=1), out=offsets[1:])
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(text[kept]))


def text_of(key: int) -> str:
    """texts_of for one key, from the same strings without NumPy: a position read or made
    one at a time (check-game, probe) took 0.14 ms in texts_of, most of it arrays of one."""
    rows, tails = text_strings()
    return "/".join(rows[(key >> 4 * COLS * r) & 0xFFF] for r in range(ROWS)) + tails[(key >> HAND) & 0xFFF]


#: What the estimate (pipeline/stages/estimate.py) is told beside the bounds of size_bound
#: (for the full game 1.57 billion placements, 14.5 billion moves). The share of the bound a
#: build reaches, measured on the rulesets of one kind of piece (c, g, e: 0.466-0.490 of the
#: placements, 0.214-0.249 of the moves) and of two (ge, gc, ec: 0.376-0.407 and
#: 0.156-0.186), falls by a like factor with each kind added: the likely counts carry it to
#: any number of kinds (for three, 0.327 and 0.131: 512.7 million positions and 1.89
#: billion moves, where the full game has 493.6 million and 1.88 billion). try=off reaches
#: 1.66-1.73 times the positions (c, g, e, ge) and 1.89-1.95 times the moves.
REACHED_ONE_KIND = (0.476, 0.229)
REACHED_TWO_KINDS = (0.394, 0.173)
TRY_OFF = (1.7, 1.9)
#: Enumerate holds a byte a placement (the marks) during its search, then the ids by rank,
#: 4 B a position, and a bitmap: it peaked at 4.37 GB on the full game, which the
#: estimate's 32 B a position of a window gives for a twelfth of the placements. On disk,
#: per likely position and move: positions.parquet 2.5 B, solution.parquet 0.3 B and
#: tablebase.parquet 4.5 B a position; transitions.parquet 4.4 B a move (each child an id
#: anywhere in the ruleset, which delta encoding cannot shrink) and the solver's reverse
#: lists in scratch, 4.2 B a move (7.9 GB): the full game's data folder peaked at 17.3 GB,
#: while it was solved (BENCHMARKS.md, "Dōbutsu shōgi: the full game").
WINDOW_SHARE = 12
DISK_PER_POSITION = 8
DISK_PER_MOVE = 9


# -- the space ----------------------------------------------------------------------------------

#: Parents a thread expands at a time in the search.
CHUNK = 1 << 16
#: Positions a part holds: those played on have 9.4 moves on average (38 at most), so a
#: part's moves fill about a batch; terminal positions have none.
OPEN_PART = 1 << 17
TERMINAL_PART = 1 << 20
#: Placements (Tables.count) beyond which the depths' keys go to the scratch folder the
#: pipeline gives (Space.scratch), 8 B a position, rather than stay in memory: the full
#: game's 493 million would take 3.9 GB.
SPILL = 1 << 26
#: The terminal column's words, by terminal code less one.
TERMINAL_WORDS = pa.array([Value.WIN.value, Value.LOSS.value])
#: A move's source (within its part), child and code packed in one int64 to sort them by
#: (source, child): the code takes the low MOVE_BITS, the child the ID_BITS above.
MOVE_BITS = 7
ID_BITS = 31


@dataclass
class Depth:
    """The positions first reached after `depth` plies: `counts` of those played on, the
    catches and the tries, in that order from id `first`, each of the three by key."""

    depth: int
    first: int
    counts: tuple[int, int, int]
    keys: np.ndarray | None  # None: in the scratch folder

    @property
    def size(self) -> int:
        return sum(self.counts)


@dataclass
class Level:
    """The positions first reached after `depth` plies, found by expanding the `expanded`
    positions played on of the depth before, which have `children` moves: `layers` of
    those played on, the catches and the tries, each by key."""

    depth: int
    layers: list[np.ndarray]
    expanded: int
    children: int


class Found:
    """The positions found, by index (Tables.rank_of): each one's rank among them, from
    the marks packed to a bitmap with the count of marks before each 64-bit word; and the
    ids, by rank (`ids`, filled by the caller)."""

    def __init__(self, marks: np.ndarray):
        bits = np.packbits(marks, bitorder="little")
        words = np.concatenate([bits, np.zeros(-bits.size % 8, dtype=np.uint8)]).view(np.uint64)
        before = np.zeros(words.size, dtype=np.uint64)
        np.cumsum(np.bitwise_count(words[:-1]), dtype=np.uint64, out=before[1:])
        self.count = int(before[-1]) + int(np.bitwise_count(words[-1]))
        # a word beside its count as one 16-byte item (a complex number, which NumPy gathers
        # in one step): one cache line read for both
        self._words = np.stack([words, before], axis=1).view(np.complex128).reshape(-1)
        self.ids = np.empty(self.count, dtype=np.int32)

    def rank(self, index: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(each index's rank among the positions found, whether it is one)."""
        rank, found = np.empty(index.size, dtype=np.int64), np.empty(index.size, dtype=bool)
        for lo in range(0, index.size, STRIDE):
            part = index[lo : lo + STRIDE]
            entry = self._words[part >> 6].view(np.uint64).reshape(-1, 2)
            bit = (part & 63).astype(np.uint64)
            word = entry[:, 0]
            below = word & ((np.uint64(1) << bit) - np.uint64(1))
            rank[lo : lo + part.size] = entry[:, 1] + np.bitwise_count(below)
            found[lo : lo + part.size] = ((word >> bit) & np.uint64(1)) == 1
        return rank, found


class DobutsuSpace(Space):
    keyed = True  # positions hold the keys; the tablebase's texts are made from them

    def __init__(self, pieces: str, tries: bool):
        self.pieces, self.tries = pieces, tries
        self.tables = tables(pieces)
        self._depths: list[Depth] | None = None
        self._found: Found | None = None
        self._lock = threading.Lock()

    # -- the search

    def _search(self) -> None:
        """Every position reachable from the start, depth by depth, then the ids of the
        positions found by their rank."""
        with self._lock:
            if self._depths is not None:
                return
            began = time.perf_counter()
            spill = self.scratch is not None and self.tables.count > SPILL
            marks = np.zeros(self.tables.count, dtype=np.uint8)
            depths: list[Depth] = []
            for level in self.levels(marks):
                if level.depth:  # the columns of the independent solver's table (tests/test_dobutsu.py)
                    log.info(
                        "dobutsu %s depth %d: %s expanded, %s new catch, %s new try, %s children",
                        self.pieces,
                        level.depth - 1,
                        f"{level.expanded:,}",
                        f"{level.layers[CATCH].size:,}",
                        f"{level.layers[TRY].size:,}",
                        f"{level.children:,}",
                    )
                if sum(layer.size for layer in level.layers):
                    first = depths[-1].first + depths[-1].size if depths else 0
                    depths.append(self._keep(level.depth, first, level.layers, spill))
            searched = time.perf_counter()
            total = depths[-1].first + depths[-1].size
            log.info("dobutsu %s: %s positions found in %.1f s", self.pieces, f"{total:,}", searched - began)
            self._found = self._number(marks, depths)
            self._depths = depths
            log.info("dobutsu %s: numbered in %.1f s", self.pieces, time.perf_counter() - searched)

    def levels(self, marks: np.ndarray) -> Iterator[Level]:
        """The positions first reached at each depth from the start, in turn, as the
        positions of the depth before are expanded, until one has none to play on; `marks`
        (a byte a placement, zero) marks those found."""
        start = np.array([start_key(self.pieces)], dtype=np.int64)
        marks[self.tables.rank_of(start)] = 1
        terminal = classify(start, self.tries)
        level = Level(0, [start[terminal == code] for code in (OPEN, CATCH, TRY)], 0, 0)
        yield level
        while level.layers[OPEN].size:
            frontier = level.layers[OPEN]
            found: list[list[np.ndarray]] = [[], [], []]
            made = 0
            for keys, codes, children in in_order(
                lambda lo: self._expand(frontier[lo : lo + CHUNK], marks),  # noqa: B023
                range(0, frontier.size, CHUNK),
            ):
                for code in (OPEN, CATCH, TRY):
                    found[code].append(keys[codes == code])
                made += children
            # each chunk's keys ascend: a merging sort takes the runs as they are
            level = Level(
                level.depth + 1, [distinct(np.concatenate(part), runs=True) for part in found], frontier.size, made
            )
            del found, frontier
            yield level

    def _keep(self, depth: int, first: int, layers: list[np.ndarray], spill: bool) -> Depth:
        keys = np.concatenate(layers)
        counts = (layers[OPEN].size, layers[CATCH].size, layers[TRY].size)
        if not spill:
            return Depth(depth, first, counts, keys)
        assert self.scratch is not None
        np.save(self.scratch / f"depth-{depth}.npy", keys)
        return Depth(depth, first, counts, None)

    def _expand(self, parents: np.ndarray, marks: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
        """(the keys and terminal codes of the children of `parents` not found before,
        ascending; how many children there are). The children found are marked at once,
        so that the other thread and the chunks after skip them; the two threads may both
        take a child they reach at the same moment, which the depth's `distinct` drops."""
        indices, kept, made = [], [], 0
        for lo in range(0, parents.size, 2 * STRIDE):
            _, _, kids = self.tables.children(parents[lo : lo + 2 * STRIDE])
            made += kids.size
            index = self.tables.rank_of(kids, turned=True)
            fresh = marks[index] == 0  # most children are found already
            index = index[fresh]
            marks[index] = 1
            indices.append(index)
            kept.append(kids[fresh])
        index = np.concatenate(indices)
        keys = strided(turn, np.concatenate(kept))
        # the index orders positions as their keys do: both sorted, they stay side by side
        index.sort()
        keys.sort()
        first = np.ones(index.size, dtype=bool)
        first[1:] = index[1:] != index[:-1]
        keys = keys[first]
        return keys, strided(lambda part: classify(part, self.tries), keys), made

    def _number(self, marks: np.ndarray, depths: list[Depth]) -> Found:
        """The ids of the positions found, by their rank among them."""
        found = Found(marks)
        del marks

        def number(at: tuple[Depth, int]) -> None:
            depth, lo = at
            keys = self.keys(depth)[lo : lo + CHUNK]
            rank, _ = found.rank(self.tables.rank_of(keys))
            found.ids[rank] = np.arange(depth.first + lo, depth.first + lo + keys.size, dtype=np.int32)

        for _ in in_order(number, [(depth, lo) for depth in depths for lo in range(0, depth.size, CHUNK)]):
            pass
        return found

    def keys(self, depth: Depth) -> np.ndarray:
        """The keys of a depth's positions, by id."""
        if depth.keys is not None:
            return depth.keys
        assert self.scratch is not None
        return np.load(self.scratch / f"depth-{depth.depth}.npy", mmap_mode="r")

    @property
    def depths(self) -> list[Depth]:
        """The positions by depth, from the start."""
        self._search()
        assert self._depths is not None
        return self._depths

    def ids(self, kids: np.ndarray) -> np.ndarray:
        """The ids of the children `kids` (keys with a move made, not turned)."""
        assert self._found is not None
        rank, found = self._found.rank(self.tables.rank_of(kids, turned=True))
        if not found.all():
            raise AssertionError("a move leads to a position the search did not find")
        return self._found.ids[rank].astype(np.int64)

    # -- parts: blocks of one depth's positions of one terminal code, by id

    @functools.cached_property
    def _blocks(self) -> list[tuple[Depth, int, int, int]]:
        """(depth, terminal code, first row, end row) of each part."""
        blocks = []
        for depth in self.depths:
            lo = 0
            for code, count in enumerate(depth.counts):
                step = OPEN_PART if code == OPEN else TERMINAL_PART
                blocks += [(depth, code, at, min(at + step, lo + count)) for at in range(lo, lo + count, step)]
                lo += count
        return blocks

    def parts(self) -> int:
        return len(self._blocks)

    def part_rank(self, part: int) -> None:
        """None: moves return to earlier positions."""
        return None

    def positions_part(self, part: int) -> pa.Table:
        depth, code, lo, hi = self._blocks[part]
        keys = np.ascontiguousarray(self.keys(depth)[lo:hi])
        return table(np.arange(depth.first + lo, depth.first + hi, dtype=np.int64), keys, np.full(keys.size, code))

    def search(self) -> DobutsuSearch:
        return DobutsuSearch(self)

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        depth, code, lo, hi = self._blocks[part]
        if code != OPEN:  # the game is over: no moves
            return
        keys = self.keys(depth)
        packed = []
        for at in range(lo, hi, 2 * STRIDE):
            rows, moves, kids = self.tables.children(np.ascontiguousarray(keys[at : min(hi, at + 2 * STRIDE)]))
            part_moves = ((rows + (at - lo)) << (ID_BITS + MOVE_BITS)) | (self.ids(kids) << MOVE_BITS) | moves
            part_moves.sort()  # by source, then child: each run of sources follows the one before
            packed.append(part_moves)
        moves = np.concatenate(packed)
        pairs = moves >> MOVE_BITS
        if (pairs[1:] == pairs[:-1]).any():
            raise AssertionError("two moves from one position lead to the same child")
        batcher = Batcher(self.tables.names)
        src = depth.first + lo + (moves >> (ID_BITS + MOVE_BITS))
        yield from batcher.add(src, pairs & ((1 << ID_BITS) - 1), moves & ((1 << MOVE_BITS) - 1))
        yield from batcher.finish()

    def texts(self, keys: np.ndarray) -> pa.Array:
        keys = np.asarray(keys, dtype=np.int64)
        if keys.size <= TEXT_ROWS:
            return texts_of(keys)
        return pa.concat_arrays([texts_of(keys[lo : lo + TEXT_ROWS]) for lo in range(0, keys.size, TEXT_ROWS)])


#: A hand's counts (6 bits: G E C, 2 each) as an index into the hand words.
HAND_CODE = np.array(
    [
        (f & 3) * 9 + ((f >> 2) & 3) * 3 + ((f >> 4) & 3) if max(f & 3, (f >> 2) & 3, f >> 4) <= 2 else 0
        for f in range(64)
    ],
    dtype=np.int8,
)
HAND_WORDS = pa.array(["G" * (i // 9) + "E" * (i // 3 % 3) + "C" * (i % 3) for i in range(27)])
OTHER_HAND_WORDS = pa.array([word.lower() for word in HAND_WORDS.to_pylist()])
_WORDS = pa.dictionary(pa.int8(), pa.string())
SCHEMA = (
    POSITION_COLUMNS.set(
        POSITION_COLUMNS.get_field_index("terminal"), POSITION_COLUMNS.field("terminal").with_type(_WORDS)
    )
    .set(POSITION_COLUMNS.get_field_index("text"), POSITION_KEY)
    .append(pa.field("on_board", pa.int8()))
    .append(pa.field("mover_hand", _WORDS))
    .append(pa.field("other_hand", _WORDS))
)


def table(ids: np.ndarray, keys: np.ndarray, codes: np.ndarray) -> pa.Table:
    """The positions' rows from their ids, keys and terminal codes."""
    hands = (keys >> HAND) & 0xFFF
    return pa.Table.from_arrays(
        [
            pa.array(ids, pa.int64()),
            pa.array(keys, pa.int64()),  # the texts are made from them for the tablebase (texts)
            pa.DictionaryArray.from_arrays(pa.array((codes - 1).astype(np.int8), mask=codes == OPEN), TERMINAL_WORDS),
            pa.array(np.bitwise_count(TOPS & ~holding(keys, 0)).astype(np.int8)),
            pa.DictionaryArray.from_arrays(HAND_CODE[hands & 63], HAND_WORDS),
            pa.DictionaryArray.from_arrays(HAND_CODE[hands >> 6], OTHER_HAND_WORDS),
        ],
        schema=SCHEMA,
    )


class DobutsuSearch(Search):
    """The depths from the start as the levels of a Search (DobutsuSpace's ids: depth by
    depth, each by terminal code, then key): the steps of DobutsuSpace.levels, with the
    children found before dropped by the engine rather than by marks."""

    by_code = True

    def __init__(self, space: DobutsuSpace):
        self.space, self.tables = space, space.tables
        self.moves = list(space.tables.names)

    def starts(self) -> np.ndarray:
        return np.array([start_key(self.space.pieces)], dtype=np.int64)

    def codes(self, keys: np.ndarray, level: int) -> np.ndarray:
        return strided(lambda part: classify(part, self.space.tries), keys).astype(np.int8)

    def children(self, keys: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows, moves, kids = [], [], []
        for at in range(0, keys.size, 2 * STRIDE):
            found = self.tables.children(np.ascontiguousarray(keys[at : at + 2 * STRIDE]))
            rows.append(found[0] + at)
            moves.append(found[1].astype(np.int32))
            kids.append(strided(turn, found[2]))
        if not rows:
            return np.zeros(0, np.int64), np.zeros(0, np.int32), np.zeros(0, np.int64)
        return np.concatenate(rows), np.concatenate(moves), np.concatenate(kids)

    def positions(self, ids: np.ndarray, keys: np.ndarray, codes: np.ndarray, levels: np.ndarray) -> pa.Table:
        return table(ids, keys, codes)

    def rank(self, level: int) -> None:
        """None: moves return to earlier positions."""
        return None


# -- the size, before building ------------------------------------------------------------


@functools.lru_cache(maxsize=8)
def size_bound(pieces: str) -> Size:
    """Bounds without building: the positions by every placement of the pieces (the
    index's count: 1,567,925,964 for the full game, 3.2 times the 493,573,042 reachable),
    the transitions by the moves of every placement, terminal or not (14,453,319,600 for
    the full game, 7.7 times the 1,877,149,535 from reachable positions). The squares are
    alike to a placement (a chick may stand on any row, a lion anywhere), so the
    placements with given codes on two squares do not depend on which squares: the moves
    of every placement are, for each board move and each pair of codes that makes it one,
    the placements with those codes, and for each drop, those with the square empty and
    the kind in the mover's hand."""
    t = tables(pieces)
    ways, after = t.ways, t.after

    def placements(squares_left: int, codes: tuple[int, ...]) -> int:
        total = 0
        for _, state in t.starts:
            for code in codes:
                state = after[state, code]
            total += int(ways[squares_left][state])
        return total

    moves = sum(
        placements(SQUARES - 2, (piece, taken))
        for _, _, direction, _ in t.steps
        for piece in STEPS
        if DIRECTIONS[direction] in STEPS[piece]
        for taken in (0, *range(GIRAFFE + OTHER, HEN + OTHER + 1))
    )
    for kind in t.drops:
        held = sum(int(ways[SQUARES - 1][state]) for hands, state in t.starts if (hands >> 2 * kind) & 3)
        moves += SQUARES * held
    return Size(t.count, moves, window=t.count // WINDOW_SHARE)


def likely_size(pieces: str, tries: bool) -> Size:
    """size_bound, with the counts a build likely reaches and the disk they take
    (REACHED_ONE_KIND, REACHED_TWO_KINDS, TRY_OFF)."""
    bound = size_bound(pieces)
    kinds = len(pieces)
    positions, moves = (
        one * (two / one) ** (kinds - 1) * (1 if tries else off)
        for one, two, off in zip(REACHED_ONE_KIND, REACHED_TWO_KINDS, TRY_OFF)
    )
    return dataclasses.replace(
        bound,
        likely_positions=min(bound.positions, int(positions * bound.positions)),
        likely_transitions=min(bound.transitions, int(moves * bound.transitions)),
        disk_per_position=DISK_PER_POSITION,
        disk_per_transition=DISK_PER_MOVE,
    )


# -- the game -----------------------------------------------------------------------------------

#: What a position text's board may hold, and its hands.
BOARD_LETTERS = set(LETTERS[1:])
HAND_LETTERS = set(KINDS + KINDS.lower())
DIGITS = "0123456789"
KIND_NAMES = ("giraffe", "elephant", "chick")


class Dobutsu(Game):
    name = "dobutsu"
    summary = "Dōbutsu shōgi: lions, giraffes, elephants and chicks on a 3×4 board; catch the lion or reach the far row"
    impartial = False
    params = (
        ChoiceParam(
            "try",
            "on",
            "on: a lion that reaches the far row and cannot be taken wins (a try); off: only catching the lion wins",
            choices=("on", "off"),
        ),
        ChoiceParam(
            "pieces",
            "gec",
            "the pieces each side has beside its lion: giraffe, elephant, chick",
            choices=PIECE_SETS,
        ),
    )
    columns = {
        "on_board": "pieces on the board, both lions included (int8)",
        "mover_hand": "the pieces the player to move holds, as the text writes them: upper case, G E C, e.g. 'GCC'; '' for none",
        "other_hand": "the other player's pieces in hand, lower case, e.g. 'ec'; '' for none",
    }

    def space(self, rules: Rules) -> DobutsuSpace:
        return DobutsuSpace(rules["pieces"], rules["try"] == "on")

    def start(self, rules: Rules) -> str:
        return text_of(start_key(rules["pieces"]))

    def size(self, rules: Rules) -> Size:
        return likely_size(rules["pieces"], rules["try"] == "on")

    def canonical_position(self, rules: Rules, text: str) -> str:
        """SFEN turned to the mover: the rows from the far row joined by '/', `b`, the
        hands (`-` for none); a position given with `w` to move is turned."""
        return text_of(read(rules["pieces"], text)[0])

    def turned(self, rules: Rules, text: str) -> bool:
        """Whether `text` gives the second player to move (`w`): its canonical text is the
        board turned to them."""
        return read(rules["pieces"], text)[1]

    def note(self, rules: Rules, text: str) -> str | None:
        """A text with the second player to move (`w`) is read turned to them: said in one line."""
        if not self.turned(rules, text):
            return None
        return (
            f"{text.strip()!r} has the second player (w) to move: positions are written from the side to "
            f"move, so it is {self.canonical_position(rules, text)!r}"
        )

    def sides(self, rules: Rules, text: str) -> tuple[str, str]:
        """The mover plays the upper-case pieces up the board, always: the texts are turned."""
        return "upper case, playing up the board", "lower case"

    def draw(self, rules: Rules, text: str) -> str:
        """The board from the mover's side: the mover's pieces blue at the bottom, the
        other's orange and upside down, hens ringed; each hand beside its side."""
        rows, hands = text.split(" ")[0].split("/"), text.split(" ")[2]
        cell, pad, side = 30, 4, 70
        width, height = 2 * pad + COLS * cell + side, 2 * pad + ROWS * cell + 16
        body = [
            f'<rect x="{pad}" y="{pad}" width="{COLS * cell}" height="{ROWS * cell}" fill="#f3ead7" stroke="{_svg.INK}"/>'
        ]
        for r in range(1, ROWS):
            body.append(f'<path d="M{pad} {pad + r * cell}h{COLS * cell}" stroke="{_svg.FAINT}"/>')
        for c in range(1, COLS):
            body.append(f'<path d="M{pad + c * cell} {pad}v{ROWS * cell}" stroke="{_svg.FAINT}"/>')
        for r, row in enumerate(rows):
            c = 0
            for letter in row:
                if letter.isdigit():
                    c += int(letter)
                    continue
                x, y = pad + c * cell + cell / 2, pad + r * cell + cell / 2
                body.append(_piece(x, y, letter))
                c += 1
        mine = "".join(ch for ch in hands if ch.isupper())
        theirs = "".join(ch for ch in hands if ch.islower())
        left = pad + COLS * cell + 8
        body.append(_svg.text(left, pad + 10, "in hand", 9, "start", _svg.OTHER, kind="words other"))
        body += [_piece(left + 10 + 20 * i, pad + 26, letter, 8) for i, letter in enumerate(theirs)]
        body.append(_svg.text(left, pad + ROWS * cell - 30, "in hand", 9, "start", _svg.MOVER, kind="words mover"))
        body += [_piece(left + 10 + 20 * i, pad + ROWS * cell - 14, letter, 8) for i, letter in enumerate(mine)]
        body.append(_svg.text(width / 2, height - 3, "upper case to move", 10, kind="words"))
        # the pages turn it where the second player moves, as the first player sees the board
        return _svg.svg(width, height, body, f"dobutsu position {text}, the upper-case pieces to move", board=True)


def _piece(x: float, y: float, letter: str, radius: float = 12) -> str:
    """A piece: a disc of its owner's colour with its letter, upside down for the other
    player's, a ring round a hen."""
    mover = letter.isupper()
    colour = _svg.MOVER if mover else _svg.OTHER
    ring = ' stroke="#f9a825" stroke-width="3"' if letter in "Hh" else ""
    turn = "" if mover else f' transform="rotate(180 {x:g} {y:g})"'
    return (
        f'<circle class="{"mover" if mover else "other"}" cx="{x:g}" cy="{y:g}" r="{radius:g}" fill="{colour}"{ring}/>'
        f'<text x="{x:g}" y="{y + radius / 3:g}" font-size="{radius:g}" text-anchor="middle" fill="#fff" '
        f'font-weight="bold"{turn}>{letter}</text>'
    )


def read(pieces: str, text: str) -> tuple[int, bool]:
    """(the key of a position text, whether it was given with the second player to move);
    PositionError, in one line, for anything that is not a position of the set `pieces`."""

    def fail(why: str) -> PositionError:
        return PositionError(f"malformed dobutsu position {text.strip()!r}: {why}")

    fields = text.split()
    if len(fields) != 3:
        raise fail(f"expected the board, the side to move and the hands, e.g. {text_of(start_key('gec'))!r}")
    board, side, hands = fields
    rows = board.split("/")
    if len(rows) != ROWS:
        raise fail(f"expected {ROWS} rows joined by '/', from the far row, not {len(rows)}")
    key = 0
    # the pieces on the board by code, counted as they are read: a set of NumPy holding()
    # calls on an array of one key took half of check-game's time on dobutsu
    placed = [0] * len(LETTERS)
    for r, row in enumerate(rows):
        c = 0
        for i, letter in enumerate(row):
            if letter in DIGITS:
                if i and row[i - 1] in DIGITS:
                    raise fail(f"row {r + 1} ({row!r}) writes a run of empty squares as two digits")
                if not 1 <= int(letter) <= COLS:
                    raise fail(f"row {r + 1} ({row!r}) has a run of {letter} empty squares: a row has {COLS}")
                c += int(letter)
                continue
            if letter not in BOARD_LETTERS:
                raise fail(
                    f"unknown letter {letter!r} in row {r + 1}: the pieces are L G E C H, upper case the first player's"
                )
            if c < COLS:
                code = LETTERS.index(letter)
                key |= code << 4 * (COLS * r + c)
                placed[code] += 1
            c += 1
        if c != COLS:
            raise fail(f"row {r + 1} ({row!r}) is {c} squares wide, not {COLS}")
    if side not in ("b", "w"):
        raise fail(f"unknown side letter {side!r}: b (the first player) or w (the second) is to move")
    if hands != "-":
        for letter in hands:
            if letter not in HAND_LETTERS:
                raise fail(
                    f"unknown letter {letter!r} in the hands: a hand holds G, E and C (upper case the first player's), '-' for none"
                )
        for k, kind in enumerate(KINDS):
            for mover, letter in ((True, kind), (False, kind.lower())):
                count = hands.count(letter)
                if count > 2:
                    raise fail(f"{count} {KIND_NAMES[k]}s in one hand: the game has 2")
                key |= count << hand_shift(k, mover)
    for lion in (LION, LION + OTHER):
        count = placed[lion]
        if count != 1:
            raise fail(f"{count} lions {LETTERS[lion]}: each side has one lion on the board")
    for k, kind in enumerate(KINDS):
        codes = [KIND_CODES[k], KIND_CODES[k] + OTHER] + ([HEN, HEN + OTHER] if k == 2 else [])
        on_board = sum(placed[code] for code in codes)
        in_hand = ((key >> hand_shift(k)) & 3) + ((key >> hand_shift(k, False)) & 3)
        most = 2 if kind.lower() in pieces else 0
        name = KIND_NAMES[k] + ("s (hens counted)" if k == 2 else "s")
        if on_board + in_hand and not most:
            raise fail(f"{KIND_NAMES[k]}s are not in this ruleset (pieces={pieces})")
        if on_board + in_hand > most:
            raise fail(f"{on_board} {name} on the board and {in_hand} in hand: the game has {most}")
        if on_board + in_hand < most:
            raise fail(
                f"{on_board} {name} on the board and {in_hand} in hand: the game has {most}, and a piece taken goes to its taker's hand"
            )
    if side == "w":  # the board as the first player sees it: turned to the second, who moves
        return int(turn(np.array([key], dtype=np.int64))[0]), True
    return key, False


GAME = Dobutsu()
