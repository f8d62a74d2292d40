"""sticks, nim, hackenbush, octal, tictactoe, connect and dobutsu against the independent reference solver (tests/reference.py).

Every ruleset below is compared on its spaces (position texts, the move graph, the start);
a few are also built by the pipeline and compared position by position on value,
remoteness and Grundy value.
"""

from __future__ import annotations

import logging
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import PositionError, RulesetError
from pipeline.datadir.layout import DataDir
from pipeline.games import TRANSITION_SCHEMA, position_texts
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from tests import reference

#: dobutsu's rulesets small enough for the reference (a few seconds each): lions and
#: chicks (promotion, drops), giraffes alone, elephants alone, and no try.  The full game
#: and pieces=ge, gc, ec (1.9 to 6.4 million positions) are far beyond it.
DOBUTSU = ["dobutsu:pieces=c", "dobutsu:pieces=g", "dobutsu:pieces=e", "dobutsu:pieces=c,try=off"]

SPACES = [
    # sticks: every play and max_take, the smallest and a few larger starts
    "sticks",
    "sticks:rows=1",
    "sticks:rows=2",
    "sticks:rows=4,play=normal",
    "sticks:rows=5",
    "sticks:max_take=1",
    "sticks:max_take=2,rows=5",
    "sticks:max_take=3,play=normal,rows=6",
    # nim: every variant in both plays, equal heaps, one heap
    *(
        f"nim:start={start},variant={variant}{play}"
        for variant in ("normal", "largest", "arrow", "arrow-other", "coin")
        for start in ("3-4-5", "1", "2-2-3", "1-1-1-4")
        for play in ("", ",play=misere")
    ),
    *(
        f"nim:start={start},variant=distinct{play}"
        for start in ("3-4-5", "1", "1-2-6")
        for play in ("", ",play=misere")
    ),
    # hackenbush: the seed's tree, Fibonacci trees, a path, a star, an unordered tree
    "hackenbush",
    "hackenbush:fib=1",
    "hackenbush:fib=2",
    "hackenbush:fib=3",
    "hackenbush:fib=5",
    "hackenbush:tree=1:2",
    "hackenbush:tree=1:2;2:3;3:4;4:5",
    "hackenbush:tree=1:2/3/4/5/6",
    "hackenbush:tree=1:5/3/9;9:2/4;4:6;3:7/8",
    # octal: Kayles, Dawson's Kayles and chess, splits only, whole heaps only, both plays
    "octal",
    "octal:start=1",
    "octal:code=0.07,start=9",
    "octal:code=0.07,start=2-5",
    "octal:code=0.137,start=6",
    "octal:code=0.6,start=7",
    "octal:code=0.4,start=8",
    "octal:code=0.31,start=7",
    "octal:code=0.2,start=5",
    "octal:play=misere,start=3-4",
    "octal:code=0.07,play=misere,start=3-6",
    # octal whose keys take two 64-bit words (a heap of 39 or more): Dawson's chess, Dawson's
    # Kayles, splits only, one heap taken down a token at a time
    "octal:code=0.137,start=40",
    "octal:code=0.07,start=42",
    "octal:code=0.4,start=41",
    "octal:code=0.2,start=50",
    # tictactoe: the 3×3 game, wins, ties, k=1, one row, one column, a line on the long side only
    "tictactoe",
    "tictactoe:cols=2,k=2,rows=2",
    "tictactoe:k=2,rows=2",
    "tictactoe:cols=4,k=2,rows=1",
    "tictactoe:rows=1",
    "tictactoe:k=1",
    "tictactoe:cols=1,k=3,rows=4",
    "tictactoe:cols=4,k=4,rows=2",
    # connect: three in a row on 3×3 and 4×3, k=1 and 2, one column, one row, a line only upwards
    "connect:cols=3,k=3,rows=3",
    "connect:cols=4,k=3,rows=3",
    "connect:cols=3,k=1,rows=2",
    "connect:cols=3,k=2,rows=2",
    "connect:cols=1,k=3,rows=5",
    "connect:cols=5,k=3,rows=1",
    "connect:cols=2,k=3,rows=4",
    # dobutsu: catch and try terminals, drops, promotion, draws
    *DOBUTSU,
]

BUILT = [
    "sticks:rows=4",
    "sticks:max_take=2,play=normal,rows=5",
    "nim:play=misere,start=2-2-3",
    "nim:start=1-2-5,variant=largest",
    "nim:play=misere,variant=distinct",
    "nim:start=1-2-3,variant=arrow",
    "nim:play=misere,start=1-2-2,variant=arrow-other",
    "nim:start=2-3-4,variant=coin",
    "hackenbush",
    "hackenbush:fib=5",
    "octal:code=0.07,start=10",
    "octal:play=misere,start=8",
    "octal:code=0.137,start=3-6",
    # ties and no Grundy values
    "tictactoe",
    "tictactoe:cols=2,k=2,rows=2",
    "tictactoe:k=2,rows=2",
    "tictactoe:cols=4,k=2,rows=1",
    "tictactoe:rows=1",
    "tictactoe:cols=4,k=4,rows=2",
    "connect:cols=3,k=3,rows=3",
    "connect:cols=4,k=3,rows=3",
    "connect:cols=3,k=2,rows=2",
    "connect:cols=1,k=3,rows=5",
    "connect:cols=2,k=3,rows=4",
    # dobutsu: catch and try terminals, drops, promotion, draws
    *DOBUTSU,
]


def params_of(ruleset: str) -> dict[str, str]:
    _, _, rest = ruleset.partition(":")
    return dict(pair.split("=", 1) for pair in rest.split(",")) if rest else {}


@pytest.mark.parametrize("ruleset", SPACES)
def test_space_is_the_references_move_graph(ruleset):
    rules = Ruleset.parse(ruleset)
    space = rules.game.space(rules)
    positions = space.positions()
    text_of = dict(zip(positions["id"].to_pylist(), position_texts(space, positions).to_pylist()))
    transitions = pa.Table.from_batches(list(space.transitions()), schema=TRANSITION_SCHEMA)
    graph: dict[str, set[str]] = {text: set() for text in text_of.values()}
    for src, dst in zip(transitions["src"].to_pylist(), transitions["dst"].to_pylist()):
        graph[text_of[src]].add(text_of[dst])
    params = params_of(ruleset)
    assert graph == reference.moves(rules.game_name, params)
    assert rules.game.start(rules) == reference.start(rules.game_name, params)


@pytest.mark.parametrize("ruleset", BUILT)
def test_built_values_are_the_references(ruleset, tmp_path):
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    rules = Ruleset.parse(ruleset)
    build(rules, DataDir(tmp_path))
    table = pq.read_table(
        DataDir(tmp_path).ruleset(rules).tablebase, columns=["position", "value", "remoteness", "grundy"]
    ).to_pylist()
    ours = {r["position"]: (r["value"], r["remoteness"], r["grundy"]) for r in table}
    assert ours == reference.solve(rules.game_name, params_of(ruleset))


def test_seed_004_tree_has_one_winning_move_cut_4():
    rules = Ruleset.parse("hackenbush")
    space = rules.game.space(rules)
    text_of = dict(zip(space.positions()["id"].to_pylist(), space.positions()["text"].to_pylist()))
    solved = reference.solve("hackenbush", {})
    start = rules.game.start(rules)
    assert solved[start][2] == 6
    winning = [
        row["move"]
        for batch in space.transitions()
        for row in batch.to_pylist()
        if text_of[row["src"]] == start and solved[text_of[row["dst"]]][0] == "loss"
    ]
    assert winning == ["cut 4"]


@pytest.mark.parametrize(
    "ruleset, text, canonical",
    [
        ("sticks", "3-1-2", "1-2-3"),
        ("sticks", " 0 ", "0"),
        ("nim", "5-3-4", "3-4-5"),
        ("nim:variant=arrow", "5-3-4@4", "3-4-5@4"),
        ("nim:variant=arrow-other", "0", "0"),
        ("nim:variant=coin", "4-3 t", "3-4 T"),
        ("nim:variant=coin", "0 H", "0 H"),
        ("hackenbush", "7-4-2-3", "2-3-4-7"),
    ],
)
def test_position_texts_are_canonicalised(ruleset, text, canonical):
    rules = Ruleset.parse(ruleset)
    assert rules.game.canonical_position(rules, text) == canonical


@pytest.mark.parametrize(
    "ruleset, text, message",
    [
        ("sticks", "1-x", "malformed sticks position"),
        ("nim:variant=arrow", "3-4-5", "malformed nim position"),
        ("nim:variant=arrow", "3-4-5@2", "must point at one of the heaps"),
        ("nim:variant=arrow", "0@0", "no arrow"),
        ("nim:variant=coin", "3-4", "malformed nim position"),
        ("hackenbush", "9", "no edge 9"),
        ("hackenbush", "7", "edge 7 hangs from edge 4"),
        ("hackenbush", "2-2", "listed twice"),
    ],
)
def test_bad_position_texts_are_refused_with_a_reason(ruleset, text, message):
    rules = Ruleset.parse(ruleset)
    with pytest.raises(PositionError, match=message):
        rules.game.canonical_position(rules, text)


@pytest.mark.parametrize(
    "bad, message",
    [
        ("sticks:rows=0", "'rows': must be ≥ 1"),
        ("sticks:rows=53", "too big for any machine"),
        ("sticks:max_take=0", "'max_take': must be ≥ 1"),
        ("nim:start=3-x", "expected positive heap sizes"),
        ("nim:start=0-3", "expected positive heap sizes"),
        ("nim:variant=arrows", "expected one of normal, largest, distinct, arrow, arrow-other, coin"),
        ("nim:start=2-2-5,variant=distinct", "distinct heap sizes, but start 2-2-5 has equal heaps of 2"),
        ("nim:start=100000", "more than this pipeline builds"),
        ("hackenbush:tree=1:2;2:3;3:1", "cycle 1 → 2 → 3 → 1"),
        ("hackenbush:tree=1:2;3:4", "two roots, 1 and 3: nodes 3, 4 are not connected to the root 1"),
        ("hackenbush:tree=1:2/3;2:3", "node 3 has two parents, 1 and 2"),
        ("hackenbush:tree=1:2;3:4;4:3", "cycle 3 → 4 → 3"),
        ("hackenbush:tree=2:3", "node 1, the root, has no children"),
        ("hackenbush:tree=1:2/", "expected parent:child/child"),
        ("hackenbush:fib=0", "'fib': must be ≥ 1"),
        ("hackenbush:fib=3,tree=1:2", "either tree or fib"),
        ("hackenbush:fib=9", "has more than 2,147,483,647 positions, more than this pipeline numbers"),
        ("octal:code=0.78", "octal digits"),
        ("octal:code=1.7", "expected 0. followed by"),
        ("octal:code=0.70", "the last not 0"),
        ("octal:code=0.", "expected 0. followed by"),
        ("octal:start=0", "heap sizes ≥ 1"),
        ("octal:start=3-x", "heap sizes ≥ 1"),
        ("octal:start=1000", "too big for any machine"),
    ],
)
def test_bad_rulesets_are_refused_with_a_reason(bad, message):
    with pytest.raises(RulesetError, match=message):
        Ruleset.parse(bad)


@pytest.mark.parametrize(
    "given, canonical",
    [
        ("nim:start=5-3-04", "nim"),
        ("hackenbush:tree=1:3/2;3:6;2:5/4;4:7", "hackenbush"),
        ("hackenbush:tree=1:4;1:2", "hackenbush:tree=1:2/4"),
        ("hackenbush:fib=4,tree=1:2/3;2:4/5;4:7;3:6", "hackenbush:fib=4"),
    ],
)
def test_structured_parameters_have_one_canonical_form(given, canonical):
    rules = Ruleset.parse(given)
    assert rules.id == canonical
    assert re.fullmatch(r"[a-z0-9._-]+", rules.slug)
