"""Pin the reference solver's Dōbutsu shōgi (tests/reference.py) to independent figures
and to positions checked by hand, so that it can cross-check the pipeline's dobutsu.

The full game (493,573,042 positions) is far beyond a pure-Python solver: its rules are
checked here against the first plies of an independent solver's breadth-first search,
and only rulesets with fewer pieces are solved whole.
"""

import functools
import os

import pytest

from tests import reference
from tests.test_dobutsu import LIMIT_DEPTHS


@functools.cache
def _solve(items):
    return reference.solve("dobutsu", dict(items))


@functools.cache
def _moves(items):
    return reference.moves("dobutsu", dict(items))


def solve(**params):
    return _solve(tuple(sorted(params.items())))


def moves(**params):
    return _moves(tuple(sorted(params.items())))


def first_children(**params):
    rules = reference.rules("dobutsu", params)
    return {rules.text(child) for child in rules.children(rules.start)}


# ----------------------------------------------------------------- the full game, ply by ply


def layers(depth, **params):
    """Per depth from the start: (expanded, new catch, new try, children), counted as
    the independent solver counts them: each position once, at the depth it is first
    reached; terminal ones are classified there and never expanded."""
    rules = reference.rules("dobutsu", params)
    seen = {rules.start}
    layer = {rules.start: rules.children(rules.start)}
    rows = []
    for _ in range(depth + 1):
        following = {}
        catch = tried = children = 0
        for kids in layer.values():
            children += len(kids)
            for child in kids:
                if child in seen:
                    continue
                seen.add(child)
                # a position's children are kept for the next depth: generated once
                grandchildren = rules.children(child)
                if grandchildren:
                    following[child] = grandchildren
                elif rules.no_move(child) == "win":
                    catch += 1
                else:
                    tried += 1
        rows.append((len(layer), catch, tried, children))
        layer = following
    return rows


#: An independent compiled solver's breadth-first table of the full game (pieces=gec,
#: try=on; positions turned to the mover, mirror images apart), kept once beside the game's
#: own tests: per depth, the positions first reached there and expanded, the catch and try
#: terminals first reached from them, and all their moves. The same program counts
#: 493,573,042 positions in all (280,578,165 catch, 14,037,970 try, 5,364,919 draws),
#: 1,877,149,535 moves, at most 38 moves in a position, and the start lost in 77.
FULL_GAME_LAYERS = LIMIT_DEPTHS


def test_dobutsu_full_game_first_plies_match_an_independent_solver():
    # depths 0-7 take a few seconds
    assert layers(7) == FULL_GAME_LAYERS[:8]


@pytest.mark.skipif(not os.environ.get("REFERENCE_SLOW"), reason="slow; set REFERENCE_SLOW=1")
def test_dobutsu_full_game_ply_8_matches_an_independent_solver():
    # depth 8 expands 65,012 positions and classifies 611,850 children: 10 to 30 s more
    assert layers(8) == FULL_GAME_LAYERS


def test_dobutsu_start_text():
    assert reference.start("dobutsu") == "gle/1c1/1C1/ELG b -"
    assert reference.start("dobutsu", {"pieces": "c"}) == "1l1/1c1/1C1/1L1 b -"
    assert reference.start("dobutsu", {"pieces": "g"}) == "gl1/3/3/1LG b -"
    assert reference.start("dobutsu", {"pieces": "ge"}) == "gle/3/3/ELG b -"
    assert reference.start("dobutsu", {"pieces": "ec"}) == "1le/1c1/1C1/EL1 b -"


def test_dobutsu_first_moves_are_turned_to_the_second_player():
    # chick takes chick (the first player's hand, lower case: the second is to move);
    # the lion to a3 or c3; the giraffe to c3.  The second player sees column c on the left.
    assert first_children() == {
        "gle/3/1c1/ELG b c",
        "g1e/1cl/1C1/ELG b -",
        "g1e/lc1/1C1/ELG b -",
        "1le/gc1/1C1/ELG b -",
    }


def test_dobutsu_mirror_images_are_different_positions():
    table = solve(pieces="c")

    def mirrored(text):
        board, _, hands = text.partition(" b ")
        return "/".join(row[::-1] for row in board.split("/")) + " b " + hands

    # the rules are symmetric: each mirror image is a position of its own, of equal value
    assert all(table[mirrored(text)] == value for text, value in table.items())
    assert sum(1 for text in table if mirrored(text) != text) > len(table) / 2


# ----------------------------------------------------------------- terminal positions


def test_dobutsu_catch_is_a_terminal_win():
    # the mover's chick b2 can take the lion b1: won, and not played out
    assert solve(pieces="c")["1l1/1C1/1L1/3 b C"] == ("win", 0, None)
    assert moves(pieces="c")["1l1/1C1/1L1/3 b C"] == set()


def test_dobutsu_try_is_a_terminal_loss():
    # the opponent's lion stands on the mover's back row (b4) out of the mover's reach
    assert solve(pieces="c")["3/1cL/3/1l1 b C"] == ("loss", 0, None)
    assert moves(pieces="c")["3/1cL/3/1l1 b C"] == set()


def test_dobutsu_without_try_a_lion_on_the_far_row_plays_on():
    off = solve(pieces="c", **{"try": "off"})
    assert moves(pieces="c", **{"try": "off"})["3/1cL/3/1l1 b C"]
    assert off["3/1cL/3/1l1 b C"][1] != 0
    # no position is a terminal loss: only a catch ends the game
    assert not any(value == "loss" and remoteness == 0 for value, remoteness, _ in off.values())


# ----------------------------------------------------------------- captures, promotion, drops


def test_dobutsu_captured_hen_goes_to_hand_as_a_chick():
    # the lion b3 takes the hen b2: the mover then holds a chick beside the one in the
    # opponent's hand (after the move the mover's hand is the lower-case one)
    assert "3/3/1l1/1L1 b Cc" in moves(pieces="c")["1l1/1h1/1L1/3 b c"]
    assert not any("h" in child.split()[2].lower() for child in moves(pieces="c")["1l1/1h1/1L1/3 b c"])


def test_dobutsu_chick_promotes_on_entering_the_far_row():
    # the chick b2 steps to b1 and becomes a hen (b4 on the opponent's side)
    assert "2l/L2/3/1h1 b c" in moves(pieces="c")["3/1C1/2l/L2 b C"]


def test_dobutsu_dropped_chick_on_the_far_row_stays_a_chick():
    # dropped on a1 it is the opponent's chick on c4, not a hen
    children = moves(pieces="c")["3/1C1/2l/L2 b C"]
    assert "2l/L2/1c1/2c b -" in children
    assert "2l/L2/1c1/2h b -" not in children


def test_dobutsu_chick_on_the_far_row_never_moves():
    # the chick b1 (dropped there) and the chick b2 behind it are stuck: only the lion moves
    assert moves(pieces="c")["1C1/1C1/2l/L2 b -"] == {
        "1l1/L2/1c1/1c1 b -",
        "3/L1l/1c1/1c1 b -",
        "3/Ll1/1c1/1c1 b -",
    }


def test_dobutsu_drops_go_on_every_empty_square():
    # one drop per empty square (the hands are empty after it), two chicks in one column
    # allowed: on b3 behind the chick b2 and on b1 in front of it
    children = moves(pieces="c")["3/1C1/2l/L2 b C"]
    drops = {child for child in children if child.endswith(" b -")}
    assert len(drops) == 12 - 3
    assert "2l/Lc1/1c1/3 b -" in drops
    assert "2l/L2/1c1/1c1 b -" in drops


# ----------------------------------------------------------------- values checked by hand


def test_dobutsu_unstoppable_try_wins_in_one():
    # the lion a2 steps to a1, out of reach of the lion c3
    assert solve(pieces="c")["3/L2/2l/3 b CC"] == ("win", 1, None)
    assert "3/L2/3/2l b cc" in moves(pieces="c")["3/L2/2l/3 b CC"]


def test_dobutsu_moving_into_check_is_legal_and_loses_in_one():
    # the lion a4 may go to a3 or b3 (the lion b2 takes it) or b4 (the chick b3 takes it),
    # and has nothing else: every move is legal, and every one is caught
    assert moves(pieces="c")["3/1l1/1c1/L2 b c"] == {"1l1/1C1/1L1/3 b C", "3/1Cl/1L1/3 b C", "3/1l1/1L1/3 b Cc"}
    assert solve(pieces="c")["3/1l1/1c1/L2 b c"] == ("loss", 1, None)


def test_dobutsu_stuck_chicks_lose_in_two():
    # only the lion moves: to b3 or b4 it is caught, to a3 the lion c3 tries on c4
    assert solve(pieces="c")["1C1/1C1/2l/L2 b -"] == ("loss", 2, None)


# ----------------------------------------------------------------- the small rulesets

#: The reference's own sizes of the rulesets small enough for it (positions, moves,
#: wins, losses, draws, the start's value and remoteness); pinned so that a change to its
#: rules is seen.  pieces=ge (1,852,578 positions), gc (6,013,568) and ec (6,401,073)
#: are too big for pure Python.
SMALL = {
    "pieces=c": (49346, 139413, 35388, 12494, 1464, "win", 14),
    "pieces=g": (13852, 45554, 9682, 2679, 1491, "draw", None),
    "pieces=e": (14431, 46203, 10377, 3014, 1040, "draw", None),
    "pieces=c,try=off": (82298, 271521, 57868, 15317, 9113, "draw", None),
}


@pytest.mark.parametrize("ruleset", SMALL)
def test_dobutsu_small_ruleset_sizes(ruleset):
    params = dict(pair.split("=") for pair in ruleset.split(","))
    table = solve(**params)
    graph = moves(**params)
    values = [value for value, _, _ in table.values()]
    start = table[reference.start("dobutsu", params)]
    assert (
        len(table),
        sum(len(children) for children in graph.values()),
        values.count("win"),
        values.count("loss"),
        values.count("draw"),
        *start[:2],
    ) == SMALL[ruleset]


@pytest.mark.parametrize(
    "params",
    [{"pieces": ""}, {"pieces": "cg"}, {"pieces": "gecc"}, {"pieces": "l"}, {"try": "yes"}, {"drop": "off"}],
)
def test_dobutsu_bad_parameters_are_refused(params):
    with pytest.raises(ValueError):
        reference.start("dobutsu", params)


def test_dobutsu_a_mover_without_a_move_has_lost():
    """A mover with no move who is neither caught nor tried has lost, as in shogi: RULES.md
    is silent; reachable only with try=off, a lion boxed in on the far row by its own."""
    rules = reference.rules("dobutsu", {"try": "off"})
    boxed = ("LGECC.l.....", "", "GE")  # LGE/CC1/l2/3 b ge
    assert rules.text(boxed) == "LGE/CC1/l2/3 b ge"
    assert rules.children(boxed) == [] and rules.no_move(boxed) == "loss"
