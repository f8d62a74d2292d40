"""Every registered game against the seam's contract, on small rulesets."""

from __future__ import annotations

import pyarrow as pa
import pytest

from pipeline.errors import PositionError
from pipeline.games import POSITION_COLUMNS, TRANSITION_SCHEMA, all_games
from pipeline.rulesets import Ruleset

#: Small rulesets of every game, covering every parameter value.
SMALL = {
    "chopsticks": [
        "chopsticks", "chopsticks:hands=1", "chopsticks:fingers=2", "chopsticks:fingers=3,hands=3",
        "chopsticks:overflow=rollover,self_attack=true,split=any,split_kill=false",
        "chopsticks:split=dead,self_attack=true",
    ],
    "sticks": [
        "sticks", "sticks:rows=1", "sticks:rows=5,play=normal", "sticks:rows=5,max_take=2",
        "sticks:max_take=1,play=normal,rows=4",
    ],
    "nim": [
        "nim", "nim:start=1", "nim:play=misere,start=2-2-3", "nim:start=1-1-4,variant=largest",
        "nim:play=misere,variant=distinct", "nim:start=1-2-2-3,variant=arrow",
        "nim:play=misere,start=2-2-3,variant=arrow-other", "nim:start=1-1-4,variant=coin",
        "nim:play=misere,start=2-3,variant=coin",
    ],
    "hackenbush": [
        "hackenbush", "hackenbush:fib=1", "hackenbush:fib=5", "hackenbush:tree=1:2",
        "hackenbush:tree=1:5/3/9;9:2/4;4:6;3:7/8",
    ],
    "octal": [
        "octal", "octal:start=1", "octal:code=0.07,start=2-7", "octal:code=0.137,play=misere,start=9",
        "octal:code=0.4,start=8",
    ],
}


def small_rulesets():
    for game in all_games():
        assert game in SMALL, f"add small rulesets of {game} to SMALL"
        yield from SMALL[game]


@pytest.mark.parametrize("ruleset", list(small_rulesets()))
def test_space_satisfies_the_seam(ruleset):
    rules = Ruleset.parse(ruleset)
    game = rules.game
    space = game.space(rules)
    positions = space.positions()
    assert positions.schema.names[:3] == POSITION_COLUMNS.names
    assert positions.schema.names[3:] == list(game.columns)
    rows = positions.to_pylist()
    ids = [r["id"] for r in rows]
    texts = [r["text"] for r in rows]
    assert len(set(ids)) == len(ids), "ids are unique"
    assert len(set(texts)) == len(texts), "position texts are unique"
    assert game.start(rules) in texts
    for text in texts:
        assert game.canonical_position(rules, text) == text, "texts are canonical"
    terminal = {r["id"] for r in rows if r["terminal"] is not None}
    assert {r["terminal"] for r in rows} <= {"win", "loss", None}

    batches = list(space.transitions())
    table = pa.Table.from_batches(batches, schema=TRANSITION_SCHEMA)
    pairs = list(zip(table["src"].to_pylist(), table["dst"].to_pylist()))
    assert pairs == sorted(set(pairs)), "transitions are distinct and ordered by (src, dst)"
    known = set(ids)
    assert all(s in known and d in known for s, d in pairs), "transitions join positions"
    sources = {s for s, _ in pairs}
    assert not sources & terminal, "no move leaves a finished game"
    assert sources | terminal == known, "every unfinished position has a move"
    assert all(table["move"].to_pylist()), "every move has a label"


@pytest.mark.parametrize("game", list(all_games()))
def test_malformed_position_text_is_refused(game):
    rules = Ruleset.parse(game)
    for text in ["", "x", "1-1|1-1|1-1", "-", "|"]:
        with pytest.raises(PositionError):
            rules.game.canonical_position(rules, text)
