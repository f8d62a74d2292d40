"""Pin the reference solver (tests/reference.py) to published results.

These tests only exercise the reference; they make it trustworthy enough to serve
as a cross-check of the pipeline elsewhere.  Set REFERENCE_SLOW=1 to also run the
slow sticks cases (rows 8..10, a few minutes).
"""

import functools
import os
import sys
from collections import deque

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import reference


@functools.cache
def _solve(game, items=()):
    return reference.solve(game, dict(items))


@functools.cache
def _moves(game, items=()):
    return reference.moves(game, dict(items))


def solve(game, **params):
    return _solve(game, tuple(sorted(params.items())))


def moves(game, **params):
    return _moves(game, tuple(sorted(params.items())))


def start_value(game, **params):
    return solve(game, **params)[reference.start(game, params)][0]


def heaps(text):
    return [] if text == "0" else [int(x) for x in text.split("-")]


# ----------------------------------------------------------------- chopsticks


def test_chopsticks_start_text():
    assert reference.start("chopsticks", {}) == "1-1|1-1"
    assert reference.start("chopsticks", {"hands": "3"}) == "1-1-1|1-1-1"


def test_chopsticks_default_second_player_wins():
    assert start_value("chopsticks") == "loss"


def test_chopsticks_seed_003_graph_counts():
    """Seed 003's graph: nodes (whose turn, first's hands, second's hands) reachable
    from the start, distinct edges; 165 nodes, 273 edges, 8 finished nodes each."""
    graph = moves("chopsticks")
    first = (0, reference.start("chopsticks", {}))  # (parity, mover-relative text)
    nodes, edges = {first}, set()
    todo = deque([first])
    while todo:
        parity, pos = todo.popleft()
        for child in graph[pos]:
            node = (1 - parity, child)
            edges.add(((parity, pos), node))
            if node not in nodes:
                nodes.add(node)
                todo.append(node)
    assert len(nodes) == 165
    assert len(edges) == 273

    def dead(hands):
        return all(h == "0" for h in hands.split("-"))

    finished = [(parity, pos) for parity, pos in nodes if dead(pos.split("|")[0])]
    # the mover is dead, so the other player has won: parity 0 -> second player won
    assert sum(1 for parity, _ in finished if parity == 0) == 8
    assert sum(1 for parity, _ in finished if parity == 1) == 8
    # finished nodes are exactly the nodes without moves
    assert {n for n in nodes if not graph[n[1]]} == set(finished)


def test_chopsticks_every_position():
    table = solve("chopsticks")
    # pairs of multisets of 2 values in 0..4 (15 each), minus both all dead
    assert len(table) == 15 * 15 - 1
    assert "0-0|0-0" not in table
    assert table["0-0|1-2"] == ("loss", 0, 0)
    assert table["1-2|0-0"][:2] == ("win", 0)
    assert moves("chopsticks")["1-2|0-0"] == set()


def test_chopsticks_start_moves():
    assert moves("chopsticks")["1-1|1-1"] == {"1-2|1-1"}
    assert moves("chopsticks", split="any")["1-1|1-1"] == {"1-2|1-1", "1-1|0-2"}
    assert moves("chopsticks", split="any", split_kill="false")["1-1|1-1"] == {"1-2|1-1"}
    assert moves("chopsticks", split="dead")["1-1|1-1"] == {"1-2|1-1"}
    assert moves("chopsticks", split="dead")["0-2|1-1"] == {"1-3|0-2", "1-1|1-1"}
    # self attack: one own 1 onto the other own 1 -> mover has 1-2
    assert moves("chopsticks", self_attack="true")["1-1|1-1"] == {"1-2|1-1", "1-1|1-2"}
    # 3 onto 1 -> 4; 3 onto 2 -> 5: dead; 4 onto 1 -> 5: dead; 4 onto 2 -> 6: dead / 1
    assert moves("chopsticks")["3-4|1-2"] == {"2-4|3-4", "0-1|3-4", "0-2|3-4"}
    assert moves("chopsticks", overflow="rollover")["3-4|1-2"] == {
        "2-4|3-4",
        "0-1|3-4",
        "0-2|3-4",
        "1-1|3-4",
    }


def test_chopsticks_split_any_second_player_wins():
    assert start_value("chopsticks", split="any") == "loss"


def test_chopsticks_rollover_is_draw():
    assert start_value("chopsticks", overflow="rollover") == "draw"


def test_chopsticks_split_dead_is_draw():
    assert start_value("chopsticks", split="dead") == "draw"


# ----------------------------------------------------------------- sticks

SEED_001_FIRST_WINS = {2, 4, 5, 6, 8, 9, 10}


@pytest.mark.parametrize("rows", range(1, 8))
def test_sticks_misere_seed_001(rows):
    expected = "win" if rows in SEED_001_FIRST_WINS else "loss"
    assert start_value("sticks", rows=str(rows)) == expected


@pytest.mark.skipif(not os.environ.get("REFERENCE_SLOW"), reason="slow; set REFERENCE_SLOW=1")
@pytest.mark.parametrize("rows", range(8, 11))
def test_sticks_misere_seed_001_slow(rows):
    expected = "win" if rows in SEED_001_FIRST_WINS else "loss"
    assert start_value("sticks", rows=str(rows)) == expected


def test_sticks_small_space():
    assert reference.start("sticks", {}) == "1-2-3"
    assert moves("sticks", rows="2") == {
        "1-2": {"2", "1-1", "1"},
        "2": {"1", "0"},
        "1-1": {"1"},
        "1": {"0"},
        "0": set(),
    }
    assert moves("sticks", rows="3", max_take="1")["3"] == {"2", "1-1"}
    misere = solve("sticks", rows="2")
    assert misere["0"] == ("win", 0, 0)
    assert misere["1"] == ("loss", 1, 1)
    normal = solve("sticks", rows="2", play="normal")
    assert normal["0"] == ("loss", 0, 0)
    assert normal["1"] == ("win", 1, 1)


def test_sticks_normal_play_is_octal_game_077():
    """Normal-play sticks with max_take=2 is Kayles: Grundy values of one row of
    n sticks are 0 1 2 3 1 4 3 (n = 0..6); rows add up by XOR."""
    table = solve("sticks", rows="6", play="normal", max_take="2")
    kayles = [0, 1, 2, 3, 1, 4, 3]
    for n, g in enumerate(kayles):
        assert table[str(n)][2] == g
    assert table["1-2-3-4-5-6"][2] == 1 ^ 2 ^ 3 ^ 1 ^ 4 ^ 3


# ----------------------------------------------------------------- nim


def test_nim_normal_xor_rule():
    table = solve("nim")
    assert reference.start("nim", {}) == "3-4-5"
    expected = set()
    for a in range(4):
        for b in range(5):
            for c in range(6):
                expected.add("-".join(str(x) for x in sorted(x for x in (a, b, c) if x)) or "0")
    assert set(table) == expected
    for text, (value, remoteness, grundy) in table.items():
        x = 0
        for h in heaps(text):
            x ^= h
        assert grundy == x, text
        assert value == ("loss" if x == 0 else "win"), text
        assert remoteness is not None


def test_nim_misere_terminal_and_single_heaps():
    table = solve("nim", play="misere")
    assert table["0"][:2] == ("win", 0)
    assert table["1"][:2] == ("loss", 1)
    assert table["1-1"][:2] == ("win", 2)


def test_nim_variant_texts_and_moves():
    assert reference.start("nim", {"variant": "arrow"}) == "3-4-5@3"
    assert reference.start("nim", {"variant": "arrow-other"}) == "3-4-5@3"
    assert reference.start("nim", {"variant": "coin"}) == "3-4-5 H"
    arrow = moves("nim", variant="arrow", start="2-2")
    assert arrow["2-2@2"] == {"1-2@1", "1-2@2", "2@2"}
    other = moves("nim", variant="arrow-other", start="2-2")
    assert other["2-2@2"] == {"1-2@2", "2@2"}
    assert other["2@2"] == {"0"}
    # the arrow may start at any heap: every such start belongs to the space
    assert {"3-4-5@3", "3-4-5@4", "3-4-5@5"} <= set(moves("nim", variant="arrow"))
    coin = moves("nim", variant="coin", start="3")
    assert coin["3 H"] == {"1 H", "1 T"}
    assert "3 T" not in coin  # the coin turns only after a move
    assert coin["1 T"] == {"0 H", "0 T"}
    assert coin["1 H"] == set()
    assert moves("nim", variant="largest", start="2-2")["2-2"] == {"1-2", "2"}
    assert moves("nim", variant="distinct", start="1-3")["1-3"] == {"1-2", "1"}
    with pytest.raises(ValueError):
        reference.solve("nim", {"variant": "distinct", "start": "2-2"})


# ----------------------------------------------------------------- hackenbush


def test_hackenbush_seed_004():
    table = solve("hackenbush")
    start = reference.start("hackenbush", {})
    assert start == "2-3-4-5-6-7"
    assert table[start][2] == 6
    zero = [c for c in moves("hackenbush")[start] if table[c][2] == 0]
    assert zero == ["2-3-5-6"]  # cut the edge to 4: node 7 above it falls too
    assert table["0"] == ("loss", 0, 0)


def test_hackenbush_fib_tree():
    # T(4): 1 -> (T3 rooted at 2: 2 -> (3 -> 4), 5), (T2 rooted at 6: 6 -> 7)
    assert reference.start("hackenbush", {"fib": "4"}) == "2-3-4-5-6-7"
    m = moves("hackenbush", fib="4")
    assert "6-7" in m["2-3-4-5-6-7"]  # cutting 2 drops 3, 4, 5
    assert "2-3-4-5" in m["2-3-4-5-6-7"]  # cutting 6 drops 7
    assert "2-5-6-7" in m["2-3-4-5-6-7"]  # cutting 3 drops 4
    assert reference.start("hackenbush", {"fib": "1"}) == "0"


# ----------------------------------------------------------------- general

NORMAL_PLAY_RULESETS = [
    ("chopsticks", {}),
    ("chopsticks", {"split": "any"}),
    ("chopsticks", {"fingers": "3", "hands": "3", "self_attack": "true"}),
    ("sticks", {"rows": "4", "play": "normal"}),
    ("hackenbush", {}),
    ("hackenbush", {"fib": "6"}),
] + [("nim", {"variant": v}) for v in ("normal", "largest", "distinct", "arrow", "arrow-other", "coin")]

ALL_RULESETS = NORMAL_PLAY_RULESETS + [
    ("chopsticks", {"overflow": "rollover"}),
    ("chopsticks", {"split": "dead", "split_kill": "false"}),
    ("sticks", {"rows": "4"}),
    ("nim", {"play": "misere", "variant": "arrow"}),
    ("nim", {"play": "misere", "variant": "coin"}),
    # not impartial, and finished games may be ties
    ("tictactoe", {}),
    ("tictactoe", {"rows": "1", "cols": "5", "k": "3"}),
    ("tictactoe", {"rows": "2", "cols": "3", "k": "2"}),
    ("connect", {"rows": "3", "cols": "3", "k": "3"}),
    ("connect", {"rows": "2", "cols": "4", "k": "2"}),
    # not impartial, and draws by repetition
    ("dobutsu", {"pieces": "g"}),
]
#: Games without Grundy values: the reference gives None everywhere.
PARTISAN = {"tictactoe", "connect", "dobutsu"}


def _id(ruleset):
    game, params = ruleset
    return game + "".join(f",{k}={v}" for k, v in sorted(params.items()))


@pytest.mark.parametrize("ruleset", NORMAL_PLAY_RULESETS, ids=_id)
def test_grundy_zero_iff_lost_under_normal_play(ruleset):
    game, params = ruleset
    table = solve(game, **params)
    graph = moves(game, **params)
    for text, (value, _, grundy) in table.items():
        if grundy is None:
            continue
        if not graph[text] and value == "win":
            # chopsticks: opponent all dead, a terminal won position (not reachable by play)
            assert game == "chopsticks" and grundy == 0
            continue
        assert (grundy == 0) == (value == "loss"), text


@pytest.mark.parametrize("ruleset", ALL_RULESETS, ids=_id)
def test_solution_is_self_consistent(ruleset):
    """Every value/remoteness/grundy obeys its defining equation on the move graph."""
    game, params = ruleset
    table = solve(game, **params)
    graph = moves(game, **params)
    assert set(table) == set(graph)
    for text, kids in graph.items():
        value, rem, grundy = table[text]
        kid_rows = [table[k] for k in kids]
        if game in PARTISAN:
            assert grundy is None, text
        if not kids:
            assert value in ("win", "loss", "tie") and rem == 0, text
            assert game in PARTISAN or grundy == 0, text
            continue
        loss_kids = [r for v, r, _ in kid_rows if v == "loss"]
        tie_kids = [r for v, r, _ in kid_rows if v == "tie"]
        if value == "win":
            assert rem == 1 + min(loss_kids), text
        elif value == "loss":
            assert all(v == "win" for v, _, _ in kid_rows), text
            assert rem == 1 + max(r for _, r, _ in kid_rows), text
        elif value == "tie":
            # no win, but a tie beats a draw or a loss: the quickest tied end
            assert not loss_kids and tie_kids, text
            assert rem == 1 + min(tie_kids), text
        else:
            assert rem is None and not loss_kids and not tie_kids, text
            assert any(v == "draw" for v, _, _ in kid_rows), text
        if game in PARTISAN:
            continue
        if grundy is not None:
            gs = {g for _, _, g in kid_rows}
            assert None not in gs, text
            assert grundy == min(set(range(len(gs) + 1)) - gs), text
        else:
            # a cycle is reachable: through a child with no Grundy value, or the
            # position itself lies on a cycle
            assert any(g is None for _, _, g in kid_rows), text


def test_bad_parameters():
    with pytest.raises(ValueError):
        reference.solve("chopsticks", {"colour": "red"})
    with pytest.raises(ValueError):
        reference.solve("chopsticks", {"overflow": "wrap"})
    with pytest.raises(ValueError):
        reference.solve("go", {})
