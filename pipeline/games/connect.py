"""Connect-Four on any board (gravity m,n,k): drop discs into columns; k in a line wins.

A position is John Tromp's key (tromp.github.io/c4/c4.html): column c owns the F = rows + 1
bits from c·F, holding the first player's (x's) discs of that column plus a marker bit
just above its top disc. The key of the empty board is one marker per column (`bottom`);
distinct positions have distinct keys. The spare bit at the top of every column keeps a
line from running from one column into the next, so a line of k is found for all
positions at once with k - 1 shifts and ANDs per direction.

Dropping a disc into column c moves the column's marker up one cell: the key grows by
the marker's bit (o's disc) or twice it (x's disc, which keeps the old marker's bit).
Every move adds one disc, so positions are found ply by ply from the empty board, each
ply's keys sorted. Ids number them by rank (empty cells: every move fills one), so the
last ply comes first, then by key: the published order, which needs no renumbering. A
position's children through columns left to right have ascending keys, hence ascending
ids; a child's id is its index in the next ply's keys, found by a binary search with
the sorted needles of one column at a time.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Iterator
from typing import NamedTuple

import numpy as np
import pyarrow as pa

from pipeline.core.errors import PositionError, RulesetError
from pipeline.core.params import IntParam
from pipeline.core.values import Value
from pipeline.games import _svg
from pipeline.games._bulk import BATCH_ROWS, Batcher
from pipeline.games.contract import POSITION_COLUMNS, POSITION_KEY, Rules, Search, Size, Space
from pipeline.games.tictactoe import Board
from pipeline.storage.threads import in_order

#: Keys are int64 and stay positive: cols * (rows + 1) bits at most.
KEY_BITS = 63
#: Boards of more positions than this (by size_bound) keep their plies in the scratch folder
#: the pipeline gives (Space.scratch), and only HELD plies in memory at a time. Below it
#: every ply stays in memory, 9 bytes a position (at most 2.4 GB): 5×5 and 6×4 (bounds of
#: 123 M and 141 M) build 1.3 s quicker unspilled; 5×6 (2.7 G) spills.
SPILL = 1 << 28
HELD = 3
#: What a position and a move take on disk at a build's peak (Size.disk_per_position and
#: disk_per_transition, pipeline/stages/estimate.py), measured on 4×6, 5×5, 6×4 and 5×6: a
#: board takes 2.8-3.4 B in positions.parquet as a text (0.7 B as a key, since), 3.1-3.7 B
#: in tablebase.parquet, 0.4 B in solution.parquet, a move 1.0-1.1 B in transitions.parquet.
#: Plies kept in scratch (past SPILL) take 9 B a position until enumerate ends, beside the
#: positions and transitions files: 5×6's data folder peaked there, at 14.7 GB, 12.0 B a
#: position and 1.0 B a move (solve's scratch added under 0.9 GB to its files later); the
#: boards that keep their plies in memory peak as they end, at 6.3-7.4 B and 1.0-1.1 B
#: (4.2 B and 1.1 B on 6×4 with keys; 5×6 with keys peaked at 12.3 GB, 11.8 B a position
#: with its moves). Counted on the likely counts (likely_size, within 1.1 times the real
#: ones), hence 10 B a position where the plies spill (their 9 B and the keys beside them),
#: 5 B where they do not, and 1.1 B a move; the figures for any game (40 B and 4 B) asked
#: 125.5 GiB for 5×6, 13 B and 2 B on the bound 45.0 GiB. Since 0.15.0 export sorts every
#: position's text hash for index.parquet (4.5 B a position), and a billion of them spill
#: DuckDB's sort to scratch: 5×6's data folder now peaks there, at 22.3 GB (21.4 B a
#: position with its moves; 11 GB of it the sort's), hence 20 B where the plies spill; the
#: smaller boards' sorts fit in memory and add the index's 4.5 B to their 5 B. Since 0.16.0
#: export then writes lookup.parquet, 5.7 B a position, once the sort's scratch is gone:
#: the smaller boards, which peak as they end, add it (16 B); 5×6's folder holds 17.1 GB
#: then, below its peak during the sort.
DISK_PER_POSITION = 20
DISK_PER_POSITION_HELD = 16
DISK_PER_MOVE = 1.1
#: Parts a ply is expanded in, on two threads.
GENERATE_PARTS = 4
#: A column's cells are written by one table lookup of its bits while the table (2**F
#: rows of `rows` characters) stays small; taller columns are written cell by cell.
TABLE_BITS = 16
#: Positions whose texts are made at a time (ConnectSpace.texts).
TEXT_ROWS = 1 << 16
MARKS = "xo"
#: A position's terminal code (Search.codes): play goes on, lost by the player to move (the
#: other made a line), a tie (the board full); the words of the last two.
PLAYED_ON, LOST, TIED = 0, 1, 2
TERMINAL_WORDS = [Value.LOSS.value, Value.TIE.value]


def shifts(rows: int) -> tuple[int, ...]:
    """The directions a line runs in, as the shift between neighbouring cells' bits: up a
    column, along a row (to the next column), and the two diagonals."""
    field = rows + 1
    return (1, field, field + 1, field - 1)


def column_name(column: int) -> str:
    return chr(ord("a") + column) if column < 26 else f"c{column + 1}"


class Connect(Board):
    name = "connect"
    summary = "Connect-Four on any board: drop discs into columns in turn; k in a line wins, a full board ties"
    impartial = False
    fixed_texts = True
    piece = "disc"
    layout = "top row first, "
    params = (
        IntParam("cols", "7", "board width (columns)", minimum=1),
        IntParam("rows", "6", "board height (rows)", minimum=1),
        IntParam("k", "4", "discs in a line (row, column or diagonal) that win; at most max(rows, cols)", minimum=1),
    )
    columns = {
        "to_move": "whose turn it is: 'x' (the first player) or 'o'",
        "discs": "discs on the board (int8)",
    }

    def validate(self, values: dict) -> None:
        rows, cols, k = values["rows"], values["cols"], values["k"]
        if cols * (rows + 1) > KEY_BITS:
            raise RulesetError(
                f"connect on a {cols}×{rows} board needs {cols * (rows + 1)} bits a position, more than "
                f"this pipeline's {KEY_BITS}-bit keys hold: cols × (rows + 1) must be at most {KEY_BITS}"
            )
        self.require_line_fits(rows, cols, k)

    def size(self, rules: Rules) -> Size:
        plies, transitions = size_bound(rules["cols"], rules["rows"], rules["k"])
        likely, likely_moves = likely_size(rules["cols"], rules["rows"], rules["k"])

        def window(plies: list[int]) -> int:  # every move leads to the next ply: a stage holds two plies
            return max((a + b for a, b in zip(plies, plies[1:])), default=sum(plies))

        return Size(
            sum(plies),
            transitions,
            ranked=True,
            by_rank=True,
            window=window(plies),
            disk_per_position=DISK_PER_POSITION if sum(plies) > SPILL else DISK_PER_POSITION_HELD,
            disk_per_transition=DISK_PER_MOVE,
            likely_positions=sum(likely),
            likely_transitions=likely_moves,
            likely_window=window(likely),
        )

    def space(self, rules: Rules) -> ConnectSpace:
        return ConnectSpace(rules["cols"], rules["rows"], rules["k"])

    def dimensions(self, rows: int, cols: int) -> str:
        return f"{cols}×{rows}"  # width × height, as Tromp's table writes boards

    def canonical_position(self, rules: Rules, text: str) -> str:
        """Rows top to bottom joined by '/', each cell x, o or '.'; case and spaces around
        the rows do not matter. PositionError for a board play cannot reach: a disc over
        an empty cell, counts x moving first cannot give, or lines the game would have
        stopped at."""
        rows, cols, k = rules["rows"], rules["cols"], rules["k"]
        lines = self.board_rows(rules, text)
        canonical = "/".join(lines)
        # each column bottom up
        stacks = ["".join(lines[rows - 1 - h][c] for h in range(rows)) for c in range(cols)]
        for c, stack in enumerate(stacks):
            if "." in stack.rstrip("."):
                raise PositionError(
                    f"impossible connect position {text!r}: column {column_name(c)} has a disc "
                    f"above an empty cell, but discs fall to the lowest empty cell"
                )
        self.require_turns(text, canonical)
        problem = unreachable([stack.rstrip(".") for stack in stacks], k)
        if problem:
            raise PositionError(f"impossible connect position {text!r}: {problem}")
        return canonical

    def draw(self, rules: Rules, text: str) -> str:
        """The board standing up: x's discs blue, o's orange, whose turn it is beneath."""
        lines = text.split("/")
        cell, pad = 22, 4
        cols, rows = len(lines[0]), len(lines)
        width, height = cols * cell + 2 * pad, rows * cell + 2 * pad + 16
        parts = [
            f'<rect x="{pad}" y="{pad}" width="{cols * cell}" height="{rows * cell}" rx="3" '
            f'fill="#eceff1" stroke="{_svg.INK}"/>'
        ]
        fill = {"x": _svg.MOVER, "o": _svg.OTHER, ".": "#fff"}
        for r, line in enumerate(lines):
            for c, mark in enumerate(line):
                x, y = pad + c * cell + cell / 2, pad + r * cell + cell / 2
                parts.append(f'<circle cx="{x:g}" cy="{y:g}" r="8" fill="{fill[mark]}" stroke="{_svg.FAINT}"/>')
        mover = "x" if text.count("x") == text.count("o") else "o"
        parts.append(_svg.text(width / 2, height - 4, f"{mover} to move", 10))
        return _svg.svg(width, height, parts, f"board {text}, {mover} to move")


GAME = Connect()


def unreachable(stacks: list[str], k: int) -> str | None:
    """Why play from the empty board cannot reach the columns `stacks` (each bottom up,
    x moving first, play stopping at a line of k), or None if it can. Gravity and the
    counts are checked already."""
    lines = {mark: _lines_of(stacks, mark, k) for mark in MARKS}
    xs = sum(stack.count("x") for stack in stacks)
    os = sum(stack.count("o") for stack in stacks)
    last, other = ("x", "o") if xs > os else ("o", "x")
    if lines["x"] and lines["o"]:
        return f"both x and o have {k} in a line"
    if lines[other]:
        return f"{other} has {k} in a line, but {last} moved after it, and the game ends at a line"
    if not lines[last]:
        return None if _playable(stacks) else "no order of moves, x first and taking turns, builds its columns"
    # the last move completed every line of the last mover: a top disc that all of them hold
    for c, stack in enumerate(stacks):
        top = (len(stack) - 1, c)
        if stack and stack[-1] == last and all(top in line for line in lines[last]):
            before = [s[:-1] if i == c else s for i, s in enumerate(stacks)]
            if not _lines_of(before, last, k) and _playable(before):
                return None
    return f"{last} has lines of {k} that no last move could have made together"


def _lines_of(stacks: list[str], mark: str, k: int) -> list[set[tuple[int, int]]]:
    """Every line of k cells (height, column) that `mark` holds, from the cells it holds."""
    cols = len(stacks)

    def holds(h: int, c: int) -> bool:
        return 0 <= c < cols and 0 <= h < len(stacks[c]) and stacks[c][h] == mark

    found = []
    for c, stack in enumerate(stacks):
        for h, cell in enumerate(stack):
            if cell != mark:
                continue
            for dh, dc in ((1, 0), (0, 1), (1, 1), (-1, 1)):
                if all(holds(h + i * dh, c + i * dc) for i in range(1, k)):
                    found.append({(h + i * dh, c + i * dc) for i in range(k)})
    return found


def _playable(stacks: list[str]) -> bool:
    """Whether the columns (bottom up) can be dropped in turn, x first: a search over how
    far each column is built, remembering the states that led nowhere."""
    total = sum(len(s) for s in stacks)
    dead: set[tuple[int, ...]] = set()

    def search(built: tuple[int, ...], placed: int) -> bool:
        if placed == total:
            return True
        if built in dead:
            return False
        mark = MARKS[placed % 2]
        for c, stack in enumerate(stacks):
            if (
                built[c] < len(stack)
                and stack[built[c]] == mark
                and search(built[:c] + (built[c] + 1,) + built[c + 1 :], placed + 1)
            ):
                return True
        dead.add(built)
        return False

    import sys

    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(max(limit, total + 100))
    try:
        return search(tuple(0 for _ in stacks), 0)
    finally:
        sys.setrecursionlimit(limit)


def size_bound(cols: int, rows: int, k: int) -> tuple[list[int], int]:
    """(positions by ply, transitions) bounds without building, never below the real counts
    (the estimate shows them as "at most", and a board's plies spill to scratch by them):
    boards whose columns stand on the ground, x holding as many discs as o or one more,
    where no column holds k of one player in a row except at its top, and one column at
    most does that, with the discs of the player who moved last (the game stops at the
    first line: the move that made it was the last, and a vertical line is made in the
    column played); one move per column that is not full, none where a column ends in a
    line. Besides, play alternates: two discs of one player on top of each other in a
    column (a repeat) had a move elsewhere between them, so a column's repeats (counted up
    to REPEATS_COUNTED) are at most the discs of the other columns; and x's first disc lies
    at the bottom of some column.
    One column is so counted exactly (41 positions for 1×40, where the rest alone allow
    2.2e10); two drift above the truth as they grow taller (1.2 times on 2×4, 2.1 on 2×8)."""
    classes = _column_classes(rows, k)
    every = _boards(cols, rows, classes)
    # boards whose every column is empty or has o's disc at the bottom: of them only the
    # empty board is a position
    o_under = _boards(cols, rows, [c for c in classes if not c.x_under])
    plies = [0] * (cols * rows + 1)
    transitions = 0
    for discs, (boards, moves) in every.items():
        others, other_moves = o_under.get(discs, (0, 0)) if discs else (0, 0)
        plies[discs] += boards - others
        transitions += moves - other_moves
    return plies, transitions


class ColumnClass(NamedTuple):
    """Columns alike for size_bound: their discs, x's, whose line of k tops them (NO_LINE,
    X_LINE, O_LINE), repeats (a disc on one of its own player's), whether x's is at the
    bottom; and how many columns are of the class."""

    height: int
    xs: int
    top: int
    repeats: int
    x_under: bool
    columns: int


def _boards(cols: int, rows: int, classes: list[ColumnClass]) -> dict[int, tuple[int, int]]:
    """discs -> (boards, moves) of the boards of `cols` columns of these classes that meet
    size_bound's rules but the first disc's: x's discs as many as o's or one more, a line of
    the last mover at most, no column's repeats more than the other columns' discs. Moves:
    open columns, where no line tops a column."""
    summed: dict[tuple[int, int, int], int] = {}
    for c in classes:
        summed[c.height, c.xs, c.top] = summed.get((c.height, c.xs, c.top), 0) + c.columns
    # past the most repeats a column has, a new column's own never wait for more discs
    most_repeats = max(c.repeats for c in classes)
    few = [(c.height, c.xs, c.top, c.repeats, c.columns) for c in classes]
    many = [(height, xs, top, 0, count) for (height, xs, top), count in summed.items()]
    # (discs, x's, whose line tops a column, discs the columns to come must still bring:
    # the most any column's repeats exceed the discs of the others so far) -> (boards, moves)
    ways: dict[tuple[int, int, int, int], tuple[int, int]] = {(0, 0, NO_LINE, 0): (1, 0)}
    for _ in range(cols):
        new: dict[tuple[int, int, int, int], tuple[int, int]] = {}
        for (discs, xs, line, waiting), (boards, moves) in ways.items():
            for height, x_here, top, repeats, count in many if discs >= most_repeats else few:
                if top != NO_LINE and line != NO_LINE:
                    continue
                key = (
                    discs + height,
                    xs + x_here,
                    line if top == NO_LINE else top,
                    max(0, waiting - height, repeats - discs),
                )
                open_ = 1 if height < rows else 0
                old = new.get(key, (0, 0))
                new[key] = (old[0] + boards * count, old[1] + (moves + boards * open_) * count)
        ways = new
    found: dict[int, tuple[int, int]] = {}
    for (discs, xs, line, waiting), (boards, moves) in ways.items():
        last = X_LINE if discs % 2 else O_LINE  # x moves first
        if waiting or xs != (discs + 1) // 2 or line not in (NO_LINE, last):
            continue
        old = found.get(discs, (0, 0))
        found[discs] = (old[0] + boards, old[1] + (moves if line == NO_LINE else 0))
    return found


#: Whose line of k, if any, stands at the top of a column (size_bound).
NO_LINE, X_LINE, O_LINE = 0, 1, 2
#: Boards drawn at random for each ply of the bound (likely_size), with a fixed seed so that
#: the same board gets the same figures: about 1 % error on the share of each ply's boards
#: that are positions.
SAMPLES = 20_000
#: The tallest board whose columns likely_size lists (2^(rows + 1) patterns: 131,072 at 16 rows,
#: listed in a second; 40 rows ran for hours): taller boards are sized by their bounds.
TALLEST_SAMPLED = 16
SEED = 20091124
#: Repeats size_bound counts a column to have, at most (a column of more is taken for one
#: of this many, which keeps the bound a bound): each counted adds states to its sums, and
#: past 2 they tightened no bound measured by 1 % (2×8, 2×10, 3×5) but slowed 2×30 and 3×20.
REPEATS_COUNTED = 2


def likely_size(cols: int, rows: int, k: int) -> tuple[list[int], int]:
    """(positions by ply, transitions) as they likely are: size_bound's counts, each ply's
    times the share of its boards that are positions, found by drawing SAMPLES boards of the
    ply at random from the bound's boards, uniformly: a column at a time from the columns
    the bound allows, weighted by λ^height with λ chosen so that the boards' discs centre on
    the ply (within a ply every board weighs the same, so the kept boards are uniform), kept
    where they are of the ply and meet the bound's rules (repeats and x's bottom disc among
    them: the share is of the bound's boards). A board is taken for a position
    where neither player has k in a line in any direction, or only the last mover has (the
    game ended there): the bound left out only horizontal and diagonal lines. Transitions:
    the kept positions' open columns, where play goes on. What the estimate sizes a build
    by (pipeline/stages/estimate.py); the bounds stay what a build is checked against."""
    plies, transitions = size_bound(cols, rows, k)
    if rows > TALLEST_SAMPLED:  # every column of 2^rows patterns would be listed: the bounds
        return plies, transitions
    field = rows + 1
    columns = [  # (height, x's discs as bits from the bottom, whose line tops it)
        (height, bits, top)
        for height in range(rows + 1)
        for bits in range(1 << height)
        if (top := _column_top(height, bits, k)) is not None
    ]
    heights = np.array([c[0] for c in columns])
    xbits = np.array([c[1] for c in columns], dtype=np.int64)
    tops = np.array([c[2] for c in columns])
    # a disc on one of its own player's: the bits of neighbours that agree, below the top
    below = (np.int64(1) << np.maximum(heights - 1, 0)) - 1
    repeats = np.minimum(np.bitwise_count(~(xbits ^ (xbits >> 1)) & below), REPEATS_COUNTED)
    x_under = (heights > 0) & (xbits & 1 == 1)
    space = ConnectSpace(cols, rows, k)
    rng = np.random.default_rng(SEED)
    likely = [0] * len(plies)
    moves = 0.0
    for ply, bound in enumerate(plies):
        if not bound:
            continue
        weights = _tilted(heights, ply / cols)
        pick = rng.choice(len(columns), size=(SAMPLES, cols), p=weights)
        discs = heights[pick].sum(axis=1)
        xs = np.bitwise_count(xbits[pick]).sum(axis=1)
        line_tops = tops[pick]
        lines = (line_tops != NO_LINE).sum(axis=1)
        last = X_LINE if ply % 2 else O_LINE
        kept = (
            (discs == ply)
            & (xs == (ply + 1) // 2)
            & ((lines == 0) | ((lines == 1) & (line_tops.max(axis=1) == last)))
            & (repeats[pick] <= ply - heights[pick]).all(axis=1)
            & (x_under[pick].any(axis=1) | (ply == 0))
        )
        if not kept.any():
            likely[ply] = bound  # none drawn: the bound
            continue
        pick = pick[kept]
        shift = np.arange(cols, dtype=np.int64) * field
        x = (xbits[pick] << shift).sum(axis=1)
        filled = (((np.int64(1) << heights[pick]) - 1) << shift).sum(axis=1)
        mine = x if ply % 2 else filled ^ x  # the last mover's discs
        last_won, other_won = space.won(mine), space.won(filled ^ mine)
        # where the last mover has a line, one move made them all: some top disc of theirs
        # without which they have none
        made = np.zeros(pick.shape[0], dtype=bool)
        for c in range(cols):
            disc = np.where(heights[pick[:, c]] > 0, np.int64(1) << (c * field + heights[pick[:, c]] - 1), 0)
            made |= ((mine & disc) != 0) & ~space.won(mine & ~disc)
        position = ~other_won & (~last_won | made)
        share = position.mean()
        likely[ply] = round(float(bound * share))
        going_on = position & ~last_won
        open_columns = (heights[pick] < rows).sum(axis=1)
        moves += bound * (open_columns * going_on).sum() / pick.shape[0]
    return likely, round(float(moves))


def _column_top(height: int, bits: int, k: int) -> int | None:
    """Whose line of k tops a column of `height` discs (x's the set `bits`, from the
    bottom): NO_LINE, X_LINE or O_LINE; None where k in a row stands below its top."""
    run, top = 0, NO_LINE
    for at in range(height):
        disc = bits >> at & 1
        run = run + 1 if at and disc == (bits >> (at - 1) & 1) else 1
        if run >= k:
            if at < height - 1:
                return None
            top = X_LINE if disc else O_LINE
    return top


def _tilted(heights: np.ndarray, mean: float) -> np.ndarray:
    """Weights λ^height over the columns, λ found by bisection so that a column's expected
    height is `mean` (at either end of the heights, the extreme λ)."""
    low, high = 1e-6, 1e6
    for _ in range(100):
        middle = (low * high) ** 0.5
        weights = middle ** heights.astype(float)
        if (weights * heights).sum() / weights.sum() < mean:
            low = middle
        else:
            high = middle
    weights = ((low * high) ** 0.5) ** heights.astype(float)
    return weights / weights.sum()


def _column_classes(rows: int, k: int) -> list[ColumnClass]:
    """Every column with no k in a row of one player below its top, by class."""
    counts: dict[tuple[int, int, int, int, bool], int] = {(0, 0, NO_LINE, 0, False): 1}
    # (x's, last disc, its run, repeats, x's at the bottom) -> columns of the height reached
    states: dict[tuple[int, int, int, int, bool], int] = {(0, -1, 0, 0, False): 1}
    for height in range(1, rows + 1):
        new: dict[tuple[int, int, int, int, bool], int] = {}
        for (xs, last, run, repeats, x_under), count in states.items():
            if run >= k:
                continue  # a line of k with a disc above it: play had stopped
            for disc in (0, 1):
                again = disc == last
                key = (
                    xs + disc,
                    disc,
                    run + 1 if again else 1,
                    min(REPEATS_COUNTED, repeats + again),
                    x_under or (height == 1 and disc == 1),
                )
                new[key] = new.get(key, 0) + count
        states = new
        for (xs, last, run, repeats, x_under), count in states.items():
            top = NO_LINE if run < k else X_LINE if last == 1 else O_LINE
            counts[height, xs, top, repeats, x_under] = counts.get((height, xs, top, repeats, x_under), 0) + count
    return [ColumnClass(*key, count) for key, count in counts.items()]


class ConnectSpace(Space):
    keyed = True  # positions hold Tromp's key; the tablebase's texts are made from it

    def __init__(self, cols: int, rows: int, k: int):
        self.cols, self.rows, self.k = cols, rows, k
        self.cells = cols * rows
        self.field = rows + 1
        self.bottom = np.int64(sum(1 << (c * self.field) for c in range(cols)))
        self.column_bits = np.int64((1 << self.field) - 1)
        # clear the bits that a right shift by s brings into a column from the next one
        self.keep = {}
        for s in (1, 2, 4, 8, 16, 32):
            if s < self.field:
                mask = (1 << (cols * self.field)) - 1
                for c in range(cols):
                    for j in range(s):
                        mask &= ~(1 << ((c + 1) * self.field - 1 - j))
                self.keep[s] = np.int64(mask)
        self._sizes: list[int] | None = None
        self._held: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self._spilled = False
        self._lock = threading.Lock()

    # -- keys --------------------------------------------------------------------------

    def split(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(x's discs, every disc) as bit masks: each column's marker is its highest bit,
        found by smearing every bit down its column."""
        smeared = keys.copy()
        for s, keep in self.keep.items():
            smeared |= (smeared >> s) & keep
        markers = smeared ^ ((smeared >> 1) & self.keep[1]) if 1 in self.keep else smeared
        return keys - markers, smeared - markers

    def won(self, discs: np.ndarray) -> np.ndarray:
        """Whether each mask of one player's discs holds k in a line."""
        found = np.zeros(discs.shape, dtype=bool)
        for step in shifts(self.rows):
            run = discs.copy()
            for i in range(1, self.k):
                run &= discs >> (i * step)
            found |= run != 0
        return found

    def lost(self, keys: np.ndarray, ply: int) -> tuple[np.ndarray, np.ndarray]:
        """(whether the player who just moved has a line: the game is lost for the player to
        move, every disc): a ply's keys."""
        x, discs = self.split(keys)
        # after an odd number of discs x moved last
        return (self.won(x if ply % 2 else discs ^ x) if ply else np.zeros(keys.size, dtype=bool)), discs

    def _generate(self) -> None:
        """Every ply's keys (ascending) and which are won by the player who just moved,
        found from the empty board forwards; each ply kept in memory, or where the board is
        large and the pipeline gave a scratch folder, written there and read back as needed.
        A ply is expanded in parts on two threads; their children are merged."""
        if self._sizes is not None:
            return
        spill = self.scratch is not None and sum(size_bound(self.cols, self.rows, self.k)[0]) > SPILL
        sizes = []
        frontier = np.array([self.bottom], dtype=np.int64)
        for ply in range(self.cells + 1):
            sizes.append(frontier.size)
            cuts = range(0, frontier.size, max(1, -(-frontier.size // GENERATE_PARTS)))
            # list() runs every call before the loop moves on
            found = list(
                in_order(
                    lambda lo: self._expand(frontier[lo : lo + -(-frontier.size // GENERATE_PARTS)], ply),  # noqa: B023
                    cuts,
                )
            )
            done = np.concatenate([won for won, _ in found])
            if spill:
                assert self.scratch is not None
                np.save(self.scratch / f"keys-{ply}.npy", frontier)
                np.save(self.scratch / f"won-{ply}.npy", done)
            else:
                self._held[ply] = (frontier, done)
            children = np.concatenate([part for _, part in found])
            del found
            if ply == self.cells or not children.size:  # the board is full, or every game of this ply won (k=1)
                break
            # each part's children ascend: the runs are merged (a stable sort), then repeats dropped
            children.sort(kind="stable")
            keep = np.ones(children.size, dtype=bool)
            keep[1:] = children[1:] != children[:-1]
            frontier = children[keep]
            del children, keep
        self._spilled = spill
        self._sizes = sizes

    def ply(self, ply: int) -> tuple[np.ndarray, np.ndarray]:
        """One ply's keys, ascending, and which are won by the player who just moved."""
        self._generate()
        if not self._spilled:
            return self._held[ply]
        with self._lock:
            found = self._held.get(ply)
            if found is None:
                assert self.scratch is not None
                found = np.load(self.scratch / f"keys-{ply}.npy"), np.load(self.scratch / f"won-{ply}.npy")
                self._held[ply] = found
                while len(self._held) > HELD:  # parts go down the plies: the highest is done with
                    self._held.pop(max(self._held))
            return found

    @property
    def sizes(self) -> list[int]:
        """Positions in each ply, from the empty board on (fewer than cells + 1 plies where
        every game is over before the board is full)."""
        self._generate()
        assert self._sizes is not None
        return self._sizes

    def _expand(self, keys: np.ndarray, ply: int) -> tuple[np.ndarray, np.ndarray]:
        """(which of a ply's `keys` are won by the player who just moved, their children's
        keys ascending with repeats)."""
        won, discs = self.lost(keys, ply)
        if ply == self.cells:
            return won, np.zeros(0, dtype=np.int64)
        open_keys, open_discs = keys[~won], discs[~won]
        # the children through one column of ascending parents ascend: the runs are merged
        children = np.concatenate([child for _, _, child in self.column_children(open_keys, open_discs, ply)])
        children.sort(kind="stable")
        return won, children

    def column_children(
        self, keys: np.ndarray, discs: np.ndarray, ply: int
    ) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """(column, which keys can drop there, child keys) for each column."""
        for c in range(self.cols):
            yield c, *self._column(keys, discs, ply, c)

    def _column(self, keys: np.ndarray, discs: np.ndarray, ply: int, c: int) -> tuple[np.ndarray, np.ndarray]:
        """(which keys can drop a disc into column c, their children's keys)."""
        top = np.int64(1) << (c * self.field + self.rows - 1)
        free = (discs & top) == 0
        # the marker of column c is the bit above its discs
        marker = ((discs[free] >> (c * self.field)) & self.column_bits) + 1
        marker <<= c * self.field
        return free, keys[free] + (marker << 1 if ply % 2 == 0 else marker)  # x's disc keeps the old marker's bit

    # -- parts: blocks of one ply's positions, in id order ---------------------------------

    @functools.cached_property
    def _first(self) -> list[int]:
        """The first id of each ply (ids run from the last ply to the first)."""
        first, at = [0] * len(self.sizes), 0
        for ply in reversed(range(len(self.sizes))):
            first[ply] = at
            at += self.sizes[ply]
        return first

    @functools.cached_property
    def _blocks(self) -> list[tuple[int, int]]:
        """(ply, first row) of each part: at most `_step()` positions of one ply, by id."""
        step = self._step()
        return [(ply, lo) for ply in reversed(range(len(self.sizes))) for lo in range(0, self.sizes[ply], step)]

    def _step(self) -> int:
        """Positions a part: their moves fill about one batch."""
        return max(1, BATCH_ROWS // max(1, self.cols))

    def parts(self) -> int:
        return len(self._blocks)

    def part_rank(self, part: int) -> int:
        """Empty cells: every move fills one."""
        return self.cells - self._blocks[part][0]

    def positions_part(self, part: int) -> pa.Table:
        ply, lo = self._blocks[part]
        keys, won = self.ply(ply)
        hi = lo + self._step()
        return self._positions(keys[lo:hi], won[lo:hi], ply, self._first[ply] + lo)

    def _positions(self, keys: np.ndarray, won: np.ndarray, ply: int, first: int) -> pa.Table:
        n = keys.size
        codes = np.where(won, LOST, TIED if ply == self.cells else PLAYED_ON).astype(np.int8)
        ids = np.arange(first, first + n, dtype=np.int64)
        return self.table(ids, keys, codes, np.full(n, ply, dtype=np.int8))

    def table(self, ids: np.ndarray, keys: np.ndarray, codes: np.ndarray, plies: np.ndarray) -> pa.Table:
        """The positions' rows from their ids, keys, terminal codes (ConnectSearch.codes) and plies."""
        # the words as codes: the positions file's writer takes them as they are
        terminal = pa.DictionaryArray.from_arrays(
            pa.array((codes - 1).astype(np.int8), mask=codes == PLAYED_ON), pa.array(TERMINAL_WORDS)
        )
        return pa.Table.from_arrays(
            [
                pa.array(ids, pa.int64()),
                pa.array(keys, pa.int64()),  # the texts are made from them for the tablebase (texts)
                terminal,
                pa.DictionaryArray.from_arrays((plies % 2).astype(np.int8), pa.array(list(MARKS))),
                pa.array(plies.astype(np.int8)),
            ],
            schema=self.schema,
        )

    def search(self) -> ConnectSearch:
        return ConnectSearch(self)

    @functools.cached_property
    def schema(self) -> pa.Schema:
        words = pa.dictionary(pa.int8(), pa.string())
        head = POSITION_COLUMNS.set(
            POSITION_COLUMNS.get_field_index("terminal"), POSITION_COLUMNS.field("terminal").with_type(words)
        ).set(POSITION_COLUMNS.get_field_index("text"), POSITION_KEY)
        return head.append(pa.field("to_move", words)).append(pa.field("discs", pa.int8()))

    def texts(self, keys: np.ndarray) -> pa.Array:
        """The texts of any keys, made TEXT_ROWS at a time (what each step writes stays in
        the cache: a quarter quicker than a million at once)."""
        keys = np.asarray(keys, dtype=np.int64)
        if keys.size <= TEXT_ROWS:
            return self._texts(*self.split(keys))
        return pa.concat_arrays(
            [self._texts(*self.split(keys[lo : lo + TEXT_ROWS])) for lo in range(0, keys.size, TEXT_ROWS)]
        )

    def _texts(self, x: np.ndarray, discs: np.ndarray) -> pa.Array:
        """The position texts: rows top to bottom joined by '/', written as bytes cell by
        cell from one table lookup of each column's bits, into a text a row each (every
        write contiguous), turned into one text a position at the end."""
        rows, cols, n = self.rows, self.cols, x.size
        width = rows * (cols + 1) - 1
        text = np.empty((width, n), dtype=np.uint8)
        text[cols :: cols + 1] = ord("/")
        for c in range(cols):
            shift = c * self.field
            column = ((x >> shift) & self.column_bits) | (((discs >> shift) & self.column_bits) + 1)
            if self.field <= TABLE_BITS:  # the column's bits, as in the key: x's discs and the marker
                for h in range(rows):
                    text[(rows - 1 - h) * (cols + 1) + c] = self._column_chars[h][column]
            else:
                for h in range(rows):
                    bit = np.int64(1) << (shift + h)
                    text[(rows - 1 - h) * (cols + 1) + c] = np.where(
                        (discs & bit) == 0, ord("."), np.where((x & bit) != 0, ord("x"), ord("o"))
                    )
        offsets = np.arange(0, n * width + 1, width, dtype=np.int32)
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(np.ascontiguousarray(text.T)))

    @functools.cached_property
    def _column_chars(self) -> np.ndarray:
        """chars[h, bits]: the cell at height h of a column with these bits (x's discs and
        the marker above the top disc)."""
        table = np.full((self.rows, 1 << min(self.field, TABLE_BITS)), ord("."), dtype=np.uint8)
        for bits in range(1, table.shape[1]):
            height = bits.bit_length() - 1
            for h in range(min(height, self.rows)):
                table[h, bits] = ord("x") if bits >> h & 1 else ord("o")
        return table

    # -- moves -------------------------------------------------------------------------

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        ply, lo = self._blocks[part]
        if ply + 1 >= len(self.sizes):  # the last ply: every game is over
            return
        batcher = Batcher([column_name(c) for c in range(self.cols)])
        yield from batcher.add(*self._moves(ply, lo, lo + self._step()))
        yield from batcher.finish()

    def _moves(self, ply: int, lo: int, hi: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(src, dst, column) of the moves out of rows lo..hi of a ply, by source then
        column, so by ascending child."""
        keys, won = self.ply(ply)
        block = keys[lo:hi]
        live = np.flatnonzero(~won[lo:hi])
        _, discs = self.split(block[live])
        dst = np.full((block.size, self.cols), -1, dtype=np.int64)
        following, base = self.ply(ply + 1)[0], self._first[ply + 1]
        for c, free, child in self.column_children(block[live], discs, ply):
            if child.size:  # searched in the slice of the next ply they fall in: in cache
                first = int(np.searchsorted(following, child[0]))
                last = int(np.searchsorted(following, child[-1], side="right"))
                dst[live[free], c] = base + first + np.searchsorted(following[first:last], child)
        flat = dst.reshape(-1)
        valid = flat >= 0
        src = np.repeat(
            np.arange(self._first[ply] + lo, self._first[ply] + lo + block.size, dtype=np.int64), self.cols
        )[valid]
        column = np.tile(np.arange(self.cols, dtype=np.int32), block.size)[valid]
        return src, flat[valid], column


class ConnectSearch(Search):
    """The plies as the levels of a Search (ConnectSpace's ids: the full boards first, each
    ply by key): the same steps as ConnectSpace's own search, a frontier at a time."""

    descending = True

    def __init__(self, space: ConnectSpace):
        self.space = space
        self.moves = [column_name(c) for c in range(space.cols)]

    def starts(self) -> np.ndarray:
        return np.array([self.space.bottom], dtype=np.int64)

    def codes(self, keys: np.ndarray, level: int) -> np.ndarray:
        won, _ = self.space.lost(keys, level)
        return np.where(won, LOST, TIED if level == self.space.cells else PLAYED_ON).astype(np.int8)

    def children(self, keys: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        _, discs = self.space.split(keys)
        rows, moves, kids = [], [], []
        for c, free, child in self.space.column_children(keys, discs, level):
            rows.append(np.flatnonzero(free))
            moves.append(np.full(child.size, c, dtype=np.int32))
            kids.append(child)
        return np.concatenate(rows), np.concatenate(moves), np.concatenate(kids)

    def positions(self, ids: np.ndarray, keys: np.ndarray, codes: np.ndarray, levels: np.ndarray) -> pa.Table:
        return self.space.table(ids, keys, codes, levels)

    def rank(self, level: int) -> int:
        """Empty cells, as ConnectSpace.part_rank."""
        return self.space.cells - level
