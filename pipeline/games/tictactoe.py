"""Tic-tac-toe and the other m,n,k-games: x and o mark cells in turn; k of one's own in a line wins.

A board of N = rows * cols cells (cell i = row * cols + column, row 0 at the top) is held
as two N-bit masks, one per player, in one key: key = x_mask << N | o_mask. Every move
adds one mark, so positions are found level by level by the marks on the board, starting
from the empty one: a level's boards are checked for lines all at once (one AND per line
of k cells), and the unfinished ones give the next level by adding the mover's bit at
each empty cell. Ids number the positions by (marks, key). A move sets a higher bit for a
higher cell, so a position's children come out in ascending key, hence ascending id.
"""

from __future__ import annotations

import functools
from collections.abc import Iterator
from math import comb

import numpy as np
import pyarrow as pa

from pipeline.core.errors import PositionError, RulesetError
from pipeline.core.params import IntParam
from pipeline.core.values import Value
from pipeline.games import _svg
from pipeline.games._bulk import BATCH_ROWS, Batcher, distinct
from pipeline.games.contract import POSITION_COLUMNS, Game, Rules, Size, Space

#: 4×4 has up to 10.2 million positions and 56 million moves; every cell more multiplies
#: both by about 3, so 5×5 would have up to 162 billion positions.
MAX_CELLS = 16
#: Positions per block of text building and of move generation.
BLOCK = 1 << 18
#: Cells of a row whose characters are looked up at once (a table of 4**GROUP rows).
GROUP = 4
#: Directions a line runs in: along a row, down a column, and both diagonals.
DIRECTIONS = ((0, 1), (1, 0), (1, 1), (1, -1))
MARKS = "xo"


@functools.lru_cache(maxsize=64)
def line_masks(rows: int, cols: int, k: int) -> list[int]:
    """Every line of k cells on the board, as a bit mask of its cells."""
    found = set()
    for row in range(rows):
        for col in range(cols):
            for dr, dc in DIRECTIONS:
                end_row, end_col = row + (k - 1) * dr, col + (k - 1) * dc
                if 0 <= end_row < rows and 0 <= end_col < cols:
                    found.add(sum(1 << ((row + i * dr) * cols + col + i * dc) for i in range(k)))
    return sorted(found)


def completed(masks: np.ndarray, lines: list[int]) -> np.ndarray:
    """Whether each mask holds a whole line."""
    found = np.zeros(masks.shape, dtype=bool)
    for line in lines:
        found |= (masks & line) == line
    return found


def cell_name(cell: int, cols: int) -> str:
    """A cell as in a spreadsheet: its column's letter (a is the left) and its row's number (1 is the top)."""
    return f"{chr(ord('a') + cell % cols)}{cell // cols + 1}"


def boards(cells: int) -> list[int]:
    """For each number of marks m: the boards of that many cells with x holding ceil(m/2)
    of them and o the rest (every board play can reach, and some it cannot)."""
    return [comb(cells, (m + 1) // 2) * comb(cells - (m + 1) // 2, m // 2) for m in range(cells + 1)]


class Board(Game):
    """What the m,n,k games share (tictactoe; connect, which adds gravity): a board of
    `rows` strings of x, o and '.', top row first, joined by '/', x moving first, and a
    line of k that must fit the board."""

    piece = "mark"  # what a player puts on the board, as the messages say it
    layout = ""  # what a malformed position's message adds about the rows' order

    def dimensions(self, rows: int, cols: int) -> str:
        """The board's size as this game's messages write it."""
        return f"{rows}×{cols}"

    def require_line_fits(self, rows: int, cols: int, k: int) -> None:
        if k > max(rows, cols):
            raise RulesetError(
                f"{self.name} with k={k} on a {self.dimensions(rows, cols)} board: no line of {k} fits, "
                f"k must be at most max(rows, cols) = {max(rows, cols)}"
            )

    def start(self, rules: Rules) -> str:
        return "/".join(["." * rules["cols"]] * rules["rows"])

    def sides(self, rules: Rules, text: str) -> tuple[str, str]:
        """x moves when both have as many pieces, o when x has one more."""
        return ("x", "o") if text.count("x") == text.count("o") else ("o", "x")

    def board_rows(self, rules: Rules, text: str) -> list[str]:
        """The rows of the board `text`, lower case, spaces around them dropped;
        PositionError where they are not `rows` rows of `cols` cells, or where the counts
        are not x's turn's or o's."""
        rows, cols = rules["rows"], rules["cols"]
        lines = [line.strip().lower() for line in text.strip().split("/")]
        if len(lines) != rows or any(len(line) != cols or set(line) - set("xo.") for line in lines):
            raise PositionError(
                f"malformed {self.name} position {text!r}: expected {rows} row(s) of {cols} cell(s), each x, o "
                f"or '.', {self.layout}joined by '/' (the empty board is {self.start(rules)})"
            )
        return lines

    def require_turns(self, text: str, cells: str) -> tuple[int, int]:
        """The counts of x and o on the board `cells`; PositionError where x, moving first,
        cannot have them."""
        xs, os = cells.count("x"), cells.count("o")
        if xs not in (os, os + 1):
            raise PositionError(
                f"impossible {self.name} position {text!r}: x has {xs} {self.piece}(s) and o {os}; x moves "
                f"first, so x has as many {self.piece}s as o or one more"
            )
        return xs, os


class TicTacToe(Board):
    name = "tictactoe"
    summary = "the m,n,k-game: x and o mark cells in turn; k in a line wins, a full board ties"
    impartial = False
    fixed_texts = True
    params = (
        IntParam("rows", "3", "board height", minimum=1),
        IntParam("cols", "3", "board width", minimum=1),
        IntParam("k", "3", "marks in a line (row, column or diagonal) that win; at most max(rows, cols)", minimum=1),
    )
    columns = {
        "board": "the rows top to bottom, each a string of x, o and . (list of strings)",
        "to_move": "whose turn it is: 'x' (the first player) or 'o'",
        "marks": "marks on the board (int8)",
    }

    def validate(self, values: dict) -> None:
        rows, cols, k = values["rows"], values["cols"], values["k"]
        if rows * cols > MAX_CELLS:
            raise RulesetError(
                f"tictactoe on a {rows}×{cols} board has {rows * cols} cells, more than this pipeline builds: "
                f"at most {MAX_CELLS} (4×4 has up to 10 million positions and every cell more about triples "
                f"that: 5×5 would have up to 162 billion)"
            )
        self.require_line_fits(rows, cols, k)

    def size(self, rules: Rules) -> Size:
        """Every board whose counts of marks play allows (x as many as o or one more), each
        with a move per empty cell; exact when no line fits in the marks a player can make."""
        cells = rules["rows"] * rules["cols"]
        counts = boards(cells)
        moves = sum(count * (cells - m) for m, count in enumerate(counts[:-1]))
        return Size(sum(counts), moves, exact=rules["k"] > (cells + 1) // 2)

    def space(self, rules: Rules) -> TicTacToeSpace:
        return TicTacToeSpace(rules["rows"], rules["cols"], rules["k"])

    def canonical_position(self, rules: Rules, text: str) -> str:
        """Rows top to bottom joined by '/', each cell x, o or '.'; case and spaces around
        the rows do not matter."""
        rows, cols, k = rules["rows"], rules["cols"], rules["k"]
        lines = self.board_rows(rules, text)
        canonical = "/".join(lines)
        cells = "".join(lines)
        xs, os = self.require_turns(text, cells)
        mask = {mark: sum(1 << i for i, cell in enumerate(cells) if cell == mark) for mark in MARKS}
        full = {mark: [line for line in line_masks(rows, cols, k) if mask[mark] & line == line] for mark in MARKS}
        last, other = ("x", "o") if xs > os else ("o", "x")
        if full["x"] and full["o"]:
            raise PositionError(f"impossible tictactoe position {text!r}: both x and o have {k} in a line")
        if full[other]:
            raise PositionError(
                f"impossible tictactoe position {text!r}: {other} has {k} in a line, but {last} moved after "
                f"it, and the game ends at a line"
            )
        common = mask[last]  # a mark of every line of the last mover: the board before it had none
        for line in full[last]:
            common &= line
        if full[last] and not common:
            raise PositionError(
                f"impossible tictactoe position {text!r}: {last} has lines of {k} with no mark in common, "
                f"but the game ends at the first line"
            )
        return canonical

    def draw(self, rules: Rules, text: str) -> str:
        """The board, x in blue and o in orange, whose turn it is beneath."""
        lines = text.split("/")
        cell, pad = 26, 4
        width, height = len(lines[0]) * cell + 2 * pad, len(lines) * cell + 2 * pad + 16
        parts = [
            f'<rect x="{pad}" y="{pad}" width="{width - 2 * pad}" height="{height - 2 * pad - 16}" '
            f'fill="#fff" stroke="{_svg.INK}"/>'
        ]
        grid = [f"M{pad + c * cell} {pad}v{len(lines) * cell}" for c in range(1, len(lines[0]))]
        grid += [f"M{pad} {pad + r * cell}h{len(lines[0]) * cell}" for r in range(1, len(lines))]
        if grid:
            parts.append(f'<path d="{"".join(grid)}" stroke="{_svg.FAINT}"/>')
        for r, line in enumerate(lines):
            for c, mark in enumerate(line):
                x, y = pad + c * cell + cell / 2, pad + r * cell + cell / 2
                if mark == "x":
                    parts.append(
                        f'<path d="M{x - 7:g} {y - 7:g}l14 14m0-14l-14 14" stroke="{_svg.MOVER}" '
                        'stroke-width="3" stroke-linecap="round"/>'
                    )
                elif mark == "o":
                    parts.append(
                        f'<circle cx="{x:g}" cy="{y:g}" r="7.5" fill="none" stroke="{_svg.OTHER}" stroke-width="3"/>'
                    )
        xs, os = text.count("x"), text.count("o")
        parts.append(_svg.text(width / 2, height - 4, f"{'x' if xs == os else 'o'} to move", 10))
        return _svg.svg(width, height, parts, f"board {text}, {'x' if xs == os else 'o'} to move")


GAME = TicTacToe()


class TicTacToeSpace(Space):
    def __init__(self, rows: int, cols: int, k: int):
        self.rows, self.cols, self.k = rows, cols, k
        self.cells = cells = rows * cols
        self.lines = line_masks(rows, cols, k)
        self.bits = np.int64(1) << np.arange(cells, dtype=np.int64)  # o's mark at each cell; x's is << cells
        # chars[g][x bits << g | o bits]: the characters of g cells in a row
        self.chars = {}
        for size in range(1, min(GROUP, cols) + 1):
            pattern = np.arange(1 << (2 * size))[:, None] >> np.arange(size)[None, :]
            self.chars[size] = np.frombuffer(b".ox?", dtype=np.uint8)[(pattern & 1) + 2 * ((pattern >> size) & 1)]
        self._levels: tuple[list[np.ndarray], list[np.ndarray]] | None = None

    def split(self, keys: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """x's and o's masks (int32: half the memory traffic of int64)."""
        return (keys >> self.cells).astype(np.int32), (keys & ((1 << self.cells) - 1)).astype(np.int32)

    def levels(self) -> tuple[list[np.ndarray], list[np.ndarray]]:
        """Per number of marks: the reachable keys (ascending), and which are won by the
        player who just moved."""
        if self._levels is None:
            keys, won = [], []
            frontier = np.zeros(1, dtype=np.int64)
            for marks in range(self.cells + 1):
                x, o = self.split(frontier)
                # with an odd number of marks x moved last, else o (or nobody yet)
                done = completed(x if marks % 2 else o, self.lines) if marks else np.zeros(1, dtype=bool)
                keys.append(frontier)
                won.append(done)
                if marks == self.cells:
                    break
                open_keys = frontier[~done]
                if not open_keys.size:  # every board of this level is won (k=1): nothing follows
                    break
                frontier = distinct(np.concatenate(list(self._children(open_keys, marks))))
            self._levels = keys, won
        return self._levels

    def _children(self, keys: np.ndarray, marks: int) -> Iterator[np.ndarray]:
        """Every child key, cell by cell (in no useful order: the search sorts them)."""
        x, o = self.split(keys)
        taken = x | o
        shift = self.cells if marks % 2 == 0 else 0
        for bit in self.bits.tolist():
            yield keys[(taken & bit) == 0] + (bit << shift)

    def _moves(self, keys: np.ndarray, marks: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(row in keys, cell, child key) of every move, by row then cell (so ascending child)."""
        x, o = self.split(keys)
        empty = ((x | o)[:, None] & self.bits.astype(np.int32)[None, :]) == 0
        row, cell = np.nonzero(empty)
        mark = self.bits[cell] << (self.cells if marks % 2 == 0 else 0)  # x moves when the marks are even
        return row, cell, keys[row] + mark

    # -- positions -------------------------------------------------------------------

    def positions(self) -> pa.Table:
        keys, won = self.levels()
        import pyarrow.compute as pc  # when used: its import is a tenth of every command's start

        texts, board_rows, terminal, to_move, marks = [], [], [], [], []
        for level, (level_keys, level_won) in enumerate(zip(keys, won)):
            for lo in range(0, level_keys.size, BLOCK):
                text, rows = self._texts(level_keys[lo : lo + BLOCK])
                texts.append(text)
                board_rows.append(rows)
            code = np.where(level_won, 0, 1 if level == self.cells else -1)  # 0 loss, 1 tie, -1 not over
            terminal.append(pc.take(pa.array([Value.LOSS.value, Value.TIE.value]), pa.array(code, mask=code < 0)))
            to_move.append(pa.repeat(pa.scalar(MARKS[level % 2]), level_keys.size))
            marks.append(np.full(level_keys.size, level, dtype=np.int8))
        count = sum(level_keys.size for level_keys in keys)
        return pa.Table.from_arrays(
            [
                pa.array(np.arange(count, dtype=np.int64)),
                pa.chunked_array(texts, pa.string()),
                pa.chunked_array(terminal, pa.string()),
                pa.chunked_array(board_rows, pa.list_(pa.string())),
                pa.chunked_array(to_move, pa.string()),
                pa.array(np.concatenate(marks)),
            ],
            schema=POSITION_COLUMNS.append(pa.field("board", pa.list_(pa.string())))
            .append(pa.field("to_move", pa.string()))
            .append(pa.field("marks", pa.int8())),
        )

    def _texts(self, keys: np.ndarray) -> tuple[pa.Array, pa.Array]:
        """The position texts and the board rows of `keys`, written as bytes a few cells at
        a time: up to GROUP cells of a row are looked up at once by their x and o bits."""
        rows, cols, n = self.rows, self.cols, keys.size
        x, o = self.split(keys)
        width = rows * (cols + 1) - 1
        text = np.full((n, width), ord("/"), dtype=np.uint8)
        board = np.empty((n, self.cells), dtype=np.uint8)
        for row in range(rows):
            for col in range(0, cols, GROUP):
                size = min(GROUP, cols - col)
                shift, mask = row * cols + col, (1 << size) - 1
                chars = self.chars[size][(((x >> shift) & mask) << size) | ((o >> shift) & mask)]
                text[:, row * (cols + 1) + col : row * (cols + 1) + col + size] = chars
                board[:, row * cols + col : row * cols + col + size] = chars
        texts = pa.StringArray.from_buffers(n, pa.py_buffer(self.offsets(n, width)), pa.py_buffer(text))
        row_strings = pa.StringArray.from_buffers(
            n * rows, pa.py_buffer(self.offsets(n * rows, cols)), pa.py_buffer(board)
        )
        return texts, pa.ListArray.from_arrays(pa.array(self.offsets(n, rows)), row_strings)

    @staticmethod
    def offsets(count: int, width: int) -> np.ndarray:
        return np.arange(0, count * width + 1, width, dtype=np.int32)

    def rank(self) -> np.ndarray:
        """Empty cells: every move fills one."""
        keys, _ = self.levels()
        return np.concatenate(
            [np.full(level_keys.size, self.cells - level, dtype=np.int64) for level, level_keys in enumerate(keys)]
        )

    # -- moves -----------------------------------------------------------------------

    @functools.cached_property
    def _blocks(self) -> list[tuple[int, int]]:
        """(marks, first row) of each part: blocks of positions with the same marks."""
        keys, _ = self.levels()
        step = self._step()
        return [(marks, lo) for marks in range(len(keys) - 1) for lo in range(0, keys[marks].size, step)]

    def _step(self) -> int:
        return max(1, BATCH_ROWS // max(1, self.cells))

    def parts(self) -> int:
        return max(1, len(self._blocks))

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        if not self._blocks:
            return
        keys, won = self.levels()
        labels = [f"{mark} at {cell_name(cell, self.cols)}" for mark in MARKS for cell in range(self.cells)]
        batcher = Batcher(labels)
        first = np.cumsum([0] + [level_keys.size for level_keys in keys])  # the first id of each level
        marks, lo = self._blocks[part]
        block = keys[marks][lo : lo + self._step()]
        row, cell, child = self._moves(block, marks)
        keep = ~won[marks][lo : lo + self._step()][row]  # a line ends the game: no moves
        row, cell, child = row[keep], cell[keep], child[keep]
        dst = first[marks + 1] + np.searchsorted(keys[marks + 1], child)
        move = cell + (0 if marks % 2 == 0 else self.cells)
        yield from batcher.add(first[marks] + lo + row.astype(np.int64), dst, move)
        yield from batcher.finish()
