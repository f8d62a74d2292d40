"""Tic-tac-toe (the m,n,k-game): the published facts, position texts, bad input, and the
reference solver's ties.

4×4 boards take about a minute to build, so they are measured by `make bench`, not here;
the first player's win on 4×4 with k=3 is checked by a short search of its own instead.
"""

from __future__ import annotations

import functools
import itertools
import logging
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import PositionError, RulesetError
from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from tests import reference
from tests.command import tablebase

ROOT = Path(__file__).resolve().parent.parent
#: Small boards whose every possible filling is compared with the reference's positions.
BOARDS = [
    "tictactoe",
    "tictactoe:k=2,rows=2",
    "tictactoe:cols=4,k=2,rows=1",
    "tictactoe:cols=2,k=2,rows=3",
    "tictactoe:cols=5,rows=1",
    "tictactoe:k=1",
]


def params_of(ruleset: str) -> dict[str, str]:
    _, _, rest = ruleset.partition(":")
    return dict(pair.split("=", 1) for pair in rest.split(",")) if rest else {}


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    folder = tmp_path_factory.mktemp("tictactoe")
    build(Ruleset.parse("tictactoe"), DataDir(folder))
    return folder


# -- the published facts -------------------------------------------------------------


def test_3x3_has_5478_positions_and_is_a_tie_in_9(data):
    files = DataDir(data).ruleset(Ruleset.parse("tictactoe"))
    summary = pq.read_table(files.summary).to_pylist()[0]
    assert summary["positions"] == summary["reachable"] == 5478
    assert (summary["start"], summary["start_value"], summary["start_remoteness"]) == (".../.../...", "tie", 9)
    assert summary["start_grundy"] is None


def test_3x3_tablebase_has_no_grundy_values_and_its_ties_are_the_references(data):
    table = pq.read_table(
        DataDir(data).ruleset(Ruleset.parse("tictactoe")).tablebase,
        columns=["position", "value", "remoteness", "grundy"],
    ).to_pylist()
    assert all(row["grundy"] is None for row in table)
    ties = {row["position"]: row["remoteness"] for row in table if row["value"] == "tie"}
    assert ties == {text: rem for text, (value, rem, _) in reference.solve("tictactoe", {}).items() if value == "tie"}


def test_reference_3x3_has_5478_positions_and_is_a_tie_in_9():
    solved = reference.solve("tictactoe", {})
    assert len(solved) == 5478
    assert solved[".../.../..."] == ("tie", 9, None)


def test_reference_3x3_has_958_finished_boards():
    """626 won by x, 316 by o, 16 full without a line (the published counts)."""
    solved, graph = reference.solve("tictactoe", {}), reference.moves("tictactoe", {})
    finished = [text for text, kids in graph.items() if not kids]
    x_moved_last = {text: text.count("x") > text.count("o") for text in finished}
    assert len(finished) == 958
    assert sum(solved[t][0] == "loss" and x_moved_last[t] for t in finished) == 626
    assert sum(solved[t][0] == "loss" and not x_moved_last[t] for t in finished) == 316
    assert sum(solved[t][0] == "tie" for t in finished) == 16


def forces_line(cells: str, cols: int, k: int, plies: int) -> bool:
    """Whether the player to move can complete k in a line within `plies` plies, whatever
    the other does (a search of its own: no code shared with the pipeline or the reference)."""
    rows = len(cells) // cols

    def mark_at(board: str, r: int, c: int) -> str:
        return board[r * cols + c] if 0 <= r < rows and 0 <= c < cols else ""

    @functools.cache
    def line(board: str, mark: str) -> bool:
        return any(
            all(mark_at(board, r + i * dr, c + i * dc) == mark for i in range(k))
            for r in range(rows)
            for c in range(cols)
            for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1))
        )

    @functools.cache
    def wins(board: str, mover: str, left: int) -> bool:
        other = "o" if mover == "x" else "x"
        for i in (i for i, cell in enumerate(board) if cell == "."):
            after = board[:i] + mover + board[i + 1 :]
            if line(after, mover):
                return True
            if (
                left >= 3
                and "." in after
                and all(
                    not line(reply, other) and wins(reply, mover, left - 2)
                    for j in (j for j, cell in enumerate(after) if cell == ".")
                    for reply in [after[:j] + other + after[j + 1 :]]
                )
            ):
                return True
        return False

    return wins(cells, "x", plies)


def test_4x4_three_in_a_row_is_a_first_player_win_in_5():
    assert forces_line("." * 16, 4, 3, 5)
    assert not forces_line("." * 16, 4, 3, 3)


def test_3x3_first_player_cannot_force_a_line():
    assert not forces_line("." * 9, 3, 3, 9)


# -- the reference solver's ties ---------------------------------------------------------


def test_reference_prefers_a_tie_to_a_draw_and_hurries_to_it():
    """A hand-made graph with a cycle: win > tie > draw > loss, and the quickest tie."""
    graph = {
        "tie": set(),
        "lost": set(),
        "cycle-a": {"cycle-b"},
        "cycle-b": {"cycle-a"},  # endless: draws
        "tie-or-draw": {"cycle-a", "tie"},  # a tie beats a draw
        "win-or-tie": {"lost", "tie"},  # a win beats a tie
        "loop-out": {"loop-back", "tie"},
        "loop-back": {"loop-out"},  # a cycle with a tied way out
        "long-or-short": {"loop-back", "tie-or-draw"},  # ties in 2 and 1: takes the 1
        "all-won": {"win-or-tie"},  # lost
        "won-or-tie": {"win-or-tie", "tie"},  # a tie beats a loss
    }
    game = reference._Game(
        list(graph), lambda pos: sorted(graph[pos]), {"tie": "tie", "lost": "loss"}.get, str, "tie", impartial=False
    )
    value, rem = reference._values(game, graph)
    assert {pos: (value[pos], rem[pos]) for pos in graph} == {
        "tie": ("tie", 0),
        "lost": ("loss", 0),
        "cycle-a": ("draw", None),
        "cycle-b": ("draw", None),
        "tie-or-draw": ("tie", 1),
        "win-or-tie": ("win", 1),
        "loop-out": ("tie", 1),
        "loop-back": ("tie", 2),
        "long-or-short": ("tie", 2),
        "all-won": ("loss", 2),
        "won-or-tie": ("tie", 1),
    }


def test_reference_1x3_can_only_tie():
    solved = reference.solve("tictactoe", {"rows": "1", "k": "3"})
    assert {value for value, _, _ in solved.values()} == {"tie"}
    assert solved["..."] == ("tie", 3, None)


# -- position texts -------------------------------------------------------------------


@pytest.mark.parametrize("ruleset", BOARDS)
def test_exactly_the_reachable_boards_read_back(ruleset):
    """Every filling of the board with x, o and '.': the reachable ones read back unchanged,
    every other one is refused."""
    rules = Ruleset.parse(ruleset)
    rows, cols = rules["rows"], rules["cols"]
    reachable = set(reference.moves("tictactoe", params_of(ruleset)))
    for cells in itertools.product("xo.", repeat=rows * cols):
        text = "/".join("".join(cells[r * cols : (r + 1) * cols]) for r in range(rows))
        if text in reachable:
            assert rules.game.canonical_position(rules, text) == text
        else:
            with pytest.raises(PositionError, match="impossible tictactoe position"):
                rules.game.canonical_position(rules, text)


@pytest.mark.parametrize(
    "ruleset, text, canonical",
    [
        ("tictactoe", "X../.O./...", "x../.o./..."),
        ("tictactoe", "  x.. / .o. / ...  ", "x../.o./..."),
        ("tictactoe", "xxx/xoo/xoo", "xxx/xoo/xoo"),  # two lines through the last x
        ("tictactoe:cols=4,rows=1,k=2", "XO..", "xo.."),
    ],
)
def test_typed_boards_are_canonicalised(ruleset, text, canonical):
    rules = Ruleset.parse(ruleset)
    assert rules.game.canonical_position(rules, text) == canonical


@pytest.mark.parametrize(
    "ruleset, text, message",
    [
        ("tictactoe", "", "malformed tictactoe position"),
        ("tictactoe", "..../.../...", "expected 3 row(s) of 3 cell(s)"),
        ("tictactoe", ".../...", "malformed tictactoe position"),
        ("tictactoe", ".../.x./..-", "malformed tictactoe position"),
        ("tictactoe", ".........", "malformed tictactoe position"),
        ("tictactoe", "o../.../...", "x has 0 mark(s) and o 1"),
        ("tictactoe", "xx./.../...", "x has 2 mark(s) and o 0"),
        ("tictactoe", "xxx/ooo/...", "both x and o have 3 in a line"),
        ("tictactoe", "xxx/oo./o..", "x has 3 in a line, but o moved after it"),
        ("tictactoe", "ooo/xx./xx.", "o has 3 in a line, but x moved after it"),
        ("tictactoe:cols=4,rows=4", "xxxo/oo../..oo/xxx.", "x has lines of 3 with no mark in common"),
    ],
)
def test_bad_boards_are_refused_with_a_reason(ruleset, text, message):
    rules = Ruleset.parse(ruleset)
    with pytest.raises(PositionError, match=message.replace("(", r"\(").replace(")", r"\)")):
        rules.game.canonical_position(rules, text)


# -- rulesets and the command line -------------------------------------------------------


@pytest.mark.parametrize(
    "bad, message",
    [
        ("tictactoe:k=4", "no line of 4 fits, k must be at most max(rows, cols) = 3"),
        ("tictactoe:cols=2,k=3,rows=2", "no line of 3 fits"),
        ("tictactoe:rows=0", "'rows': must be ≥ 1"),
        ("tictactoe:cols=0", "'cols': must be ≥ 1"),
        ("tictactoe:k=0", "'k': must be ≥ 1"),
        ("tictactoe:cols=5,rows=5", "25 cells, more than this pipeline builds: at most 16"),
        ("tictactoe:cols=17,k=3,rows=1", "17 cells"),
    ],
)
def test_bad_rulesets_are_refused_with_a_reason(bad, message):
    with pytest.raises(RulesetError) as error:
        Ruleset.parse(bad)
    assert message in str(error.value) and "\n" not in str(error.value)


def test_a_line_along_the_long_side_only_is_allowed():
    assert Ruleset.parse("tictactoe:cols=4,k=4").id == "tictactoe:cols=4,k=4"
    assert Ruleset.parse("tictactoe:cols=3,k=3,rows=3").id == "tictactoe"


@pytest.mark.parametrize(
    "args, message",
    [
        (["build", "tictactoe:k=4"], "no line of 4 fits"),
        (["build", "tictactoe:rows=0"], "'rows': must be ≥ 1"),
        (["build", "tictactoe:cols=5,rows=5"], "more than this pipeline builds"),
        (["probe", "tictactoe", "xx/.../..."], "malformed tictactoe position"),
        (["probe", "tictactoe", "xxx/ooo/..."], "both x and o have 3 in a line"),
        (["probe", "tictactoe", "xo./.../..o"], "x has 1 mark(s) and o 2"),
    ],
)
def test_bad_input_gives_one_line_and_exit_1(data, args, message):
    result = tablebase(*args, "--data", str(data))
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ") and message in lines[0], result.stderr


def test_probe_names_moves_by_column_letter_and_row_number(data):
    result = tablebase("probe", "tictactoe", "XX./OO./...", "--data", str(data))
    assert result.returncode == 0, result.stderr
    first, best = result.stdout.splitlines()[:2]
    assert first.split()[:3] == ["tictactoe", "xx./oo./...", "wins"]
    assert "x at c1" in best and "xxx/oo./..." in best
