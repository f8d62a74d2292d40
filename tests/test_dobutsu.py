"""Dōbutsu shōgi (the dobutsu game): position texts and keys, the index over every placement,
the moves, the first depths of the full game against an independent solver's, and small
rulesets built end to end.

The full game (493,573,042 positions) is measured with `tablebase enumerate dobutsu`
(BENCHMARKS.md), not here.
"""

from __future__ import annotations

import io
import itertools
import logging
from pathlib import Path

import numpy as np
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import PositionError
from pipeline.datadir.layout import DataDir
from pipeline.games import dobutsu
from pipeline.games.rulesets import Ruleset
from pipeline.products.gamecheck import check_game
from pipeline.products.play import play
from pipeline.products.probe import probe
from pipeline.stages.build import build

GAME = dobutsu.GAME
FULL = Ruleset.parse("dobutsu")

#: The compiled solver's breadth-first table for the full game (/work/shared/limit/dobutsu,
#: `dobutsu -v`; its first 9 depths also equal the independent brute force bfs_check.py
#: there): per depth, the positions expanded, the catches and tries first found among
#: their children, and the children.
LIMIT_DEPTHS = [
    (1, 0, 0, 4),
    (4, 4, 0, 17),
    (13, 24, 0, 96),
    (58, 131, 0, 510),
    (316, 687, 2, 2509),
    (1271, 3005, 15, 10840),
    (4694, 10042, 41, 43237),
    (18503, 41623, 225, 169763),
    (65012, 128584, 794, 611850),
]

#: Every 10th line of the compiled solver's dump of 10,000 reachable positions of the full
#: game (`dobutsu -d 10000`, dobutsu_sample.txt there): `board hand side value remoteness`,
#: the board's 12 cells from the far row, left to right, the mover upper case.
SAMPLE = Path(__file__).parent / "fixtures" / "dobutsu_sample.txt"


def sfen(cells: str, hands: str, side: str = "b") -> str:
    """A position text written from 12 cells (far row first, '.' empty), independently of
    the game module: digits for runs of empty squares."""
    rows = []
    for r in range(4):
        row, run = "", 0
        for cell in cells[3 * r : 3 * r + 3]:
            if cell == ".":
                run += 1
            else:
                row += (str(run) if run else "") + cell
                run = 0
        rows.append(row + (str(run) if run else ""))
    return f"{'/'.join(rows)} {side} {hands or '-'}"


def hand_text(mover: str, other: str) -> str:
    order = "GEC"
    return "".join(sorted(mover, key=order.index)) + "".join(sorted(other, key=lambda c: order.index(c.upper())))


def random_position(rng: np.random.Generator, pieces: str = "gec") -> tuple[str, str, str]:
    """(cells, the mover's hand, the other's) of a random placement of the pieces."""
    cells = ["."] * 12
    squares = [int(s) for s in rng.permutation(12)]
    cells[squares.pop()] = "L"
    cells[squares.pop()] = "l"
    mover = other = ""
    for kind in "GEC":
        if kind.lower() not in pieces:
            continue
        for _ in range(2):
            where = int(rng.integers(4))
            if where == 0:
                mover += kind
            elif where == 1:
                other += kind.lower()
            else:
                letter = "H" if kind == "C" and rng.random() < 0.3 else kind
                cells[squares.pop()] = letter if where == 2 else letter.lower()
    return "".join(cells), mover, other


def turned_text(cells: str, mover: str, other: str) -> str:
    """The position as the other player sees it: cells reversed, owners and hands swapped."""
    return sfen(cells[::-1].swapcase(), hand_text(other.upper(), mover.lower()))


def key_of(text: str, pieces: str = "gec") -> int:
    return dobutsu.read(pieces, text)[0]


# -- texts and keys -------------------------------------------------------------------------


def test_the_start_is_the_sfen_of_the_rules():
    assert GAME.start(FULL) == "gle/1c1/1C1/ELG b -"
    assert GAME.start(Ruleset.parse("dobutsu:pieces=c")) == "1l1/1c1/1C1/1L1 b -"
    assert GAME.start(Ruleset.parse("dobutsu:pieces=ge,try=off")) == "gle/3/3/ELG b -"


def test_texts_and_keys_round_trip_on_random_positions():
    rng = np.random.default_rng(7)
    texts = [
        sfen(cells, hand_text(mover, other)) for cells, mover, other in (random_position(rng) for _ in range(3000))
    ]
    keys = np.array([key_of(text) for text in texts], dtype=np.int64)
    space = GAME.space(FULL)
    assert space.texts(keys).to_pylist() == texts
    assert [GAME.canonical_position(FULL, text) for text in texts] == texts


def test_the_compiled_solvers_positions_read_as_they_are_written():
    """Its board (far row first, the mover upper case) and hands are our text's; its
    terminal positions (value at remoteness 0: a catch won, a try lost) are ours."""
    lines = [line.split() for line in SAMPLE.read_text().splitlines()]
    texts = [sfen(board, hand if hand != "-" else "") for board, hand, *_ in lines]
    keys = np.array([key_of(text) for text in texts], dtype=np.int64)
    assert GAME.space(FULL).texts(keys).to_pylist() == texts
    codes = dobutsu.classify(keys, tries=True)
    expected = [
        dobutsu.CATCH if (value, remoteness) == ("W", "0") else dobutsu.TRY if remoteness == "0" else dobutsu.OPEN
        for _, _, _, value, remoteness in lines
    ]
    assert codes.tolist() == expected
    assert {dobutsu.CATCH, dobutsu.TRY, dobutsu.OPEN} <= set(expected)


def test_a_mover_without_a_move_has_lost():
    """RULES.md gives no value to a mover with no move who is neither caught nor tried: lost,
    as in shogi (reachable only with try=off, a lion boxed in on the far row by its own)."""
    boxed = "LGE/CC1/l2/3 b ge"  # every piece of the mover blocked by its own, nothing in hand
    keys = np.array([key_of(boxed), key_of("LGE/CC1/l2/3 b Eg"), key_of("LGE/C2/l2/3 b Cge")], dtype=np.int64)
    assert dobutsu.classify(keys, tries=False).tolist() == [dobutsu.TRY, dobutsu.OPEN, dobutsu.OPEN]
    assert dobutsu.classify(keys, tries=True).tolist() == [dobutsu.TRY, dobutsu.OPEN, dobutsu.OPEN]
    rows, _, _ = dobutsu.tables("gec").children(keys)
    assert sorted(set(rows.tolist())) == [1, 2]  # the boxed position alone has no move
    # on random positions, exactly those without a move and neither caught nor tried
    rng = np.random.default_rng(11)
    keys = np.array([key_of(sfen(c, hand_text(m, o))) for c, m, o in (random_position(rng) for _ in range(3000))])
    rows, _, _ = dobutsu.tables("gec").children(keys)
    moving = np.zeros(keys.size, dtype=bool)
    moving[rows] = True
    catch_or_try = dobutsu.classify(keys, tries=False) == dobutsu.CATCH
    assert ((dobutsu.classify(keys, tries=False) == dobutsu.TRY) == (~moving & ~catch_or_try)).all()


def test_a_position_with_the_second_player_to_move_is_turned():
    rng = np.random.default_rng(11)
    for _ in range(200):
        cells, mover, other = random_position(rng)
        # the board as the first player (upper case) sees it, the second (lower case) to move
        given = sfen(cells, hand_text(mover, other), side="w")
        assert GAME.canonical_position(FULL, given) == turned_text(cells, mover, other)
        assert GAME.turned(FULL, given) and not GAME.turned(FULL, sfen(cells, hand_text(mover, other)))
    note = GAME.note(FULL, "gle/1c1/1CL/E1G w -")
    assert note is not None and "g1e/lc1/1C1/ELG b -" in note and "\n" not in note
    assert GAME.note(FULL, "gle/1c1/1C1/ELG b -") is None


@pytest.mark.parametrize(
    "text, why",
    [
        ("gle/1c1/1C1/ELG", "expected the board, the side to move and the hands"),
        ("gle/1c1/1C1/ELG b - 1", "expected the board, the side to move and the hands"),
        ("gle/1c1/1C1 b -", "expected 4 rows"),
        ("gle/1c1/1C1/ELG/3 b -", "expected 4 rows"),
        ("gle/1c1/1C1/EL b -", "is 2 squares wide"),
        ("gle/1c1/2C1/ELG b -", "is 4 squares wide"),
        ("gle/1c1/4/ELG b -", "a run of 4 empty squares"),
        ("gle/11c/1C1/ELG b -", "as two digits"),
        ("gle/1c1/1C1/ELX b -", "unknown letter 'X'"),
        ("gle/1c1/1C1/ELG x -", "unknown side letter 'x'"),
        ("gle/1c1/1C1/ELG b L", "unknown letter 'L' in the hands"),
        ("gle/1c1/1C1/ELG b H", "unknown letter 'H' in the hands"),
        ("gle/1c1/1C1/ELL b -", "2 lions L"),
        ("g1e/1c1/1C1/ELG b -", "0 lions l"),
        ("gle/ccc/CCC/ELG b -", "6 chicks (hens counted) on the board and 0 in hand: the game has 2"),
        ("gle/1c1/1CC/ELG b CCCCCC", "6 chicks in one hand"),
        ("gle/1c1/1C1/ELG b G", "2 giraffes on the board and 1 in hand"),
        (
            "gle/1c1/1C1/ELG b c",
            "2 chicks (hens counted) on the board and 1 in hand",
        ),  # a hand the board does not allow
        ("gle/1c1/1C1/EL1 b -", "1 giraffes on the board and 0 in hand: the game has 2, and a piece taken"),
    ],
)
def test_malformed_positions_are_refused_in_one_line(text, why):
    with pytest.raises(PositionError) as error:
        GAME.canonical_position(FULL, text)
    assert why in str(error.value) and "\n" not in str(error.value)


def test_a_piece_the_ruleset_has_not_is_refused():
    with pytest.raises(PositionError, match=r"giraffes are not in this ruleset \(pieces=c\)"):
        GAME.canonical_position(Ruleset.parse("dobutsu:pieces=c"), "gle/1c1/1C1/ELG b -")
    with pytest.raises(PositionError, match="elephants are not in this ruleset"):
        GAME.canonical_position(Ruleset.parse("dobutsu:pieces=gc"), "gl1/1c1/1C1/1LG b E")


# -- the index ------------------------------------------------------------------------------


def test_the_index_counts_tanakas_placements():
    """Tanaka's count of every placement of the full game's pieces."""
    assert dobutsu.tables("gec").count == 1_567_925_964


@pytest.mark.parametrize("pieces", ["g", "c", "e"])
def test_the_index_numbers_every_placement_once_in_key_order(pieces):
    """Every placement of a set of one kind, listed one by one: the index is a bijection
    onto 0..count-1 that orders placements as their keys."""
    kind = pieces.upper()
    faces = {"G": ["G", "g"], "E": ["E", "e"], "C": ["C", "c", "H", "h"]}[kind]
    keys = []
    for lions in itertools.permutations(range(12), 2):
        # each of the two pieces: a free square with a face, or either hand
        free = [s for s in range(12) if s not in lions]
        spots = [(s, f) for s in free for f in faces] + [("hand", "mover"), ("hand", "other")]
        for a, b in itertools.combinations_with_replacement(range(len(spots)), 2):
            (sa, fa), (sb, fb) = spots[a], spots[b]
            if sa == sb and sa != "hand":
                continue
            cells = ["."] * 12
            cells[lions[0]], cells[lions[1]] = "L", "l"
            mover = other = ""
            for square, face in ((sa, fa), (sb, fb)):
                if square == "hand":
                    mover, other = (mover + kind, other) if face == "mover" else (mover, other + kind.lower())
                else:
                    cells[square] = face
            keys.append(key_of(sfen("".join(cells), hand_text(mover, other)), pieces))
    keys_array = np.unique(np.array(keys, dtype=np.int64))
    tables = dobutsu.tables(pieces)
    assert keys_array.size == len(keys) == tables.count
    assert tables.rank_of(keys_array).tolist() == list(range(tables.count))


def test_a_childs_index_comes_from_its_parents_key_as_the_turned_keys():
    rng = np.random.default_rng(5)
    keys = np.array(
        [key_of(sfen(c, hand_text(m, o))) for c, m, o in (random_position(rng) for _ in range(5000))], dtype=np.int64
    )
    tables = dobutsu.tables("gec")
    index = tables.rank_of(keys)
    assert np.unique(index).size == keys.size and index.min() >= 0 and index.max() < tables.count
    assert (tables.rank_of(keys, turned=True) == tables.rank_of(dobutsu.turn(keys))).all()
    assert (dobutsu.turn(dobutsu.turn(keys)) == keys).all()
    assert (tables.rank_of(keys + (15 << 4 * 3)) == -1).sum() > 0  # a code no square holds


# -- moves and the search -----------------------------------------------------------------


def test_the_start_has_four_moves_named_from_the_movers_side():
    tables = dobutsu.tables("gec")
    start = np.array([key_of(GAME.start(FULL))], dtype=np.int64)
    _rows, moves, kids = tables.children(start)
    assert [tables.names[m] for m in moves] == ["b3b2", "b4a3", "b4c3", "c4c3"]
    # each child from its own mover's side: the board turned, the taken chick in the other's hand
    assert dobutsu.texts_of(dobutsu.turn(kids)).to_pylist() == [
        "gle/3/1c1/ELG b c",
        "g1e/1cl/1C1/ELG b -",
        "g1e/lc1/1C1/ELG b -",
        "1le/gc1/1C1/ELG b -",
    ]


def test_moves_are_named_board_moves_first_then_drops():
    names = dobutsu.tables("gec").names
    assert names[:3] == ["a1b1", "a1a2", "a1b2"] and names[-1] == "C*c4"
    assert names.index("G*a1") < names.index("E*a1") < names.index("C*a1")
    assert "G*a1" not in dobutsu.tables("ec").names


def test_a_promotion_a_drop_and_a_capture():
    tables = dobutsu.tables("gec")
    text = "g1e/lC1/1c1/EL1 b G"
    _rows, moves, kids = tables.children(np.array([key_of(text)], dtype=np.int64))
    made = dict(zip((tables.names[m] for m in moves), dobutsu.texts_of(dobutsu.turn(kids)).to_pylist()))
    assert made["b2b1"] == "1le/1C1/2L/EhG b g"  # the chick reaches the far row: a hen
    assert made["G*c2"] == "1le/1C1/gcL/E1G b -"
    assert made["b4b3"] == "2e/1l1/1cL/E1G b gc"  # the chick taken goes to the taker's hand


#: How each piece steps, (rows, columns), rows counted from the far row: for the reference below.
REFERENCE_STEPS = {
    "L": [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)],
    "G": [(-1, 0), (1, 0), (0, -1), (0, 1)],
    "E": [(-1, -1), (-1, 1), (1, -1), (1, 1)],
    "C": [(-1, 0)],
    "H": [(-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, 0)],
}


def reference_moves(cells: str, mover: str, other: str) -> dict[str, str]:
    """Every move of a position and the child it leads to, from the rules one square at a
    time: a move name -> the child's text (turned to its mover)."""
    name = lambda s: "abc"[s % 3] + str(s // 3 + 1)  # noqa: E731
    made = {}
    for s, piece in enumerate(cells):
        if not piece.isupper():
            continue
        for dr, dc in REFERENCE_STEPS[piece]:
            r, c = s // 3 + dr, s % 3 + dc
            if not (0 <= r < 4 and 0 <= c < 3) or cells[3 * r + c].isupper() or cells[3 * r + c] == "l":
                continue
            t = 3 * r + c
            board = list(cells)
            taken = board[t]
            board[s], board[t] = ".", "H" if piece == "C" and r == 0 else piece
            gained = "" if taken == "." else "C" if taken == "h" else taken.upper()
            made[name(s) + name(t)] = turned_text("".join(board), mover + gained, other)
    for kind in sorted(set(mover), key="GEC".index):
        for t in range(12):
            if cells[t] == ".":
                board = list(cells)
                board[t] = kind
                made[f"{kind}*{name(t)}"] = turned_text("".join(board), mover.replace(kind, "", 1), other)
    return made


def test_the_moves_are_the_rules_on_random_positions():
    rng = np.random.default_rng(3)
    tables = dobutsu.tables("gec")
    positions = [random_position(rng) for _ in range(2000)]
    keys = np.array([key_of(sfen(c, hand_text(m, o))) for c, m, o in positions], dtype=np.int64)
    rows, moves, kids = tables.children(keys)
    texts = dobutsu.texts_of(dobutsu.turn(kids)).to_pylist()
    for row, (cells, mover, other) in enumerate(positions):
        mine = [(tables.names[moves[i]], texts[i]) for i in np.flatnonzero(rows == row)]
        assert dict(mine) == reference_moves(cells, mover, other), (cells, mover, other)
        assert [name for name, _ in mine] == sorted((name for name, _ in mine), key=tables.names.index)


def test_the_first_depths_of_the_full_game_are_the_compiled_solvers():
    space = GAME.space(FULL)
    marks = np.zeros(space.tables.count, dtype=np.uint8)  # 1.5 GB reserved, a few MB touched
    levels = itertools.islice(space.levels(marks), len(LIMIT_DEPTHS) + 1)
    found = [
        (level.expanded, level.layers[dobutsu.CATCH].size, level.layers[dobutsu.TRY].size, level.children)
        for level in list(levels)[1:]
    ]
    assert found == LIMIT_DEPTHS


# -- small rulesets through the pipeline ------------------------------------------------------


@pytest.mark.parametrize("ruleset", ["dobutsu:pieces=c", "dobutsu:pieces=e,try=off"])
def test_small_rulesets_keep_the_contract(ruleset):
    assert check_game("dobutsu", ruleset) == []


def test_small_rulesets_build_verify_and_export(tmp_path):
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    data = DataDir(tmp_path)
    for ruleset in ("dobutsu:pieces=c", "dobutsu:pieces=g,try=off"):
        rules = Ruleset.parse(ruleset)
        build(rules, data)
        files = data.ruleset(rules)
        summary = pq.read_table(files.summary).to_pylist()[0]
        assert summary["positions"] == summary["reachable"] > 0
        positions = pq.read_table(files.positions)
        assert positions.column_names[:3] == ["id", "key", "terminal"]
        assert positions["id"][0].as_py() == 0
        assert GAME.space(rules).texts(positions["key"].to_numpy()[:1]).to_pylist() == [GAME.start(rules)]
        assert ("loss" in positions["terminal"].to_pylist()) == (rules["try"] == "on")
        tablebase = pq.read_table(files.tablebase, columns=["position", "value", "remoteness"])
        sample = tablebase["position"].to_pylist()[::97]
        assert [GAME.canonical_position(rules, text) for text in sample] == sample
        # a catch is won at once, a try lost at once
        finished = tablebase.filter(pc.equal(tablebase["remoteness"], 0))
        assert set(finished["value"].to_pylist()) <= {"win", "loss"}
    start = pq.read_table(data.ruleset(Ruleset.parse("dobutsu:pieces=c")).transitions).filter(
        pc.equal(pq.read_table(data.ruleset(Ruleset.parse("dobutsu:pieces=c")).transitions)["src"], 0)
    )
    assert sorted(start["move"].to_pylist()) == ["b3b2", "b4a3", "b4a4", "b4c3", "b4c4"]
    # a position given with the second player to move is probed and played turned, and said so
    turned = probe("dobutsu:pieces=c", "1l1/1C1/3/1L1 w C", tmp_path)
    assert turned.position == "1l1/3/1c1/1L1 b c" and "'1l1/3/1c1/1L1 b c'" in turned.note
    assert probe("dobutsu:pieces=c", "start", tmp_path).note is None
    shown = io.StringIO()
    play("dobutsu:pieces=c", tmp_path, start="1l1/1C1/3/1L1 w C", stdin=io.StringIO("quit\n"), stdout=shown)
    assert shown.getvalue().startswith("note: '1l1/1C1/3/1L1 w C' has the second player (w) to move")


def test_the_size_bounds_what_is_built():
    for ruleset in ("dobutsu:pieces=c", "dobutsu:pieces=g"):
        rules = Ruleset.parse(ruleset)
        space = GAME.space(rules)
        size = GAME.size(rules)
        moves = sum(batch.num_rows for part in range(space.parts()) for batch in space.transitions_part(part))
        positions = sum(depth.size for depth in space.depths)
        assert size.positions == dobutsu.tables(rules["pieces"]).count >= positions
        assert size.transitions >= moves
        # the likely counts, from the shares of the bound the rulesets of one and two kinds reach
        assert 0.9 < size.likely_positions / positions < 1.1
        assert 0.9 < size.likely_transitions / moves < 1.1
