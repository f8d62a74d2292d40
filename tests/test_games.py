"""Every registered game against the seam's contract, on small rulesets."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import pipeline.games.registry as games_module
from pipeline.core.errors import PositionError
from pipeline.core.params import IntParam
from pipeline.games import POSITION_COLUMNS, TRANSITION_SCHEMA, Game, Space, all_games, check_contract
from pipeline.games.rulesets import Ruleset
from pipeline.products.gamecheck import check_game

REGISTRY = all_games()

#: Small rulesets of every game, covering every parameter value.
SMALL = {
    "chopsticks": [
        "chopsticks",
        "chopsticks:hands=1",
        "chopsticks:fingers=2",
        "chopsticks:fingers=3,hands=3",
        "chopsticks:overflow=rollover,self_attack=true,split=any,split_kill=false",
        "chopsticks:split=dead,self_attack=true",
    ],
    "sticks": [
        "sticks",
        "sticks:rows=1",
        "sticks:rows=5,play=normal",
        "sticks:rows=5,max_take=2",
        "sticks:max_take=1,play=normal,rows=4",
    ],
    "nim": [
        "nim",
        "nim:start=1",
        "nim:play=misere,start=2-2-3",
        "nim:start=1-1-4,variant=largest",
        "nim:play=misere,variant=distinct",
        "nim:start=1-2-2-3,variant=arrow",
        "nim:play=misere,start=2-2-3,variant=arrow-other",
        "nim:start=1-1-4,variant=coin",
        "nim:play=misere,start=2-3,variant=coin",
    ],
    "hackenbush": [
        "hackenbush",
        "hackenbush:fib=1",
        "hackenbush:fib=5",
        "hackenbush:tree=1:2",
        "hackenbush:tree=1:5/3/9;9:2/4;4:6;3:7/8",
    ],
    "octal": [
        "octal",
        "octal:start=1",
        "octal:code=0.07,start=2-7",
        "octal:code=0.137,play=misere,start=9",
        "octal:code=0.4,start=8",
    ],
    "tictactoe": [
        "tictactoe",
        "tictactoe:rows=1",
        "tictactoe:cols=2,k=2,rows=2",
        "tictactoe:cols=1,k=1,rows=1",
        "tictactoe:k=1",
        "tictactoe:cols=4,k=2,rows=1",
        "tictactoe:cols=2,k=2,rows=4",
    ],
    "connect": [
        "connect:cols=3,k=3,rows=3",
        "connect:cols=4,k=3,rows=3",
        "connect:cols=1,k=1,rows=1",
        "connect:cols=3,k=1,rows=2",
        "connect:cols=5,k=2,rows=1",
        "connect:cols=1,k=4,rows=6",
    ],
    # every piece alone, with tries and without (the pairs have 4.5 to 16 million placements,
    # beyond check-game's limit)
    "dobutsu": ["dobutsu:pieces=c", "dobutsu:pieces=c,try=off", "dobutsu:pieces=g", "dobutsu:pieces=e,try=off"],
    # the example plug-in (examples/takeaway), installed by `make install`
    "takeaway": ["takeaway", "takeaway:take=1,tokens=5", "takeaway:play=misere,tokens=7"],
}


def small_rulesets():
    for game in all_games():
        assert game in SMALL, f"add small rulesets of {game} to SMALL"
        yield from SMALL[game]


@pytest.mark.parametrize("ruleset", list(small_rulesets()))
def test_every_game_keeps_the_contract(ruleset):
    assert check_game(ruleset.partition(":")[0], ruleset) == []


class Countdown(Game):
    """A toy game for the checker: n counters, take one; whoever cannot move loses."""

    name = "countdown"
    summary = "take one counter"
    impartial = True
    params = (IntParam("n", "3", "counters", minimum=1),)
    columns = {"left": "counters left"}

    def __init__(self, **breakage):
        self.breakage = breakage

    def space(self, rules):
        game = self

        class CountdownSpace(Space):
            def positions(self):
                n = rules["n"]
                terminal = [game.breakage.get("outcome", "loss")] + [None] * n
                return pa.table(
                    [
                        pa.array(range(n + 1), pa.int64()),
                        pa.array([str(i) for i in range(n + 1)]),
                        pa.array(terminal, pa.string()),
                        pa.array(range(n + 1), pa.int64()),
                    ],
                    schema=POSITION_COLUMNS.append(pa.field("left", pa.int64())),
                )

            def transitions(self):
                n = rules["n"]
                src = list(range(1, n + 1))
                dst = [game.breakage.get("child", lambda i: i - 1)(i) for i in src]
                if game.breakage.get("twice"):
                    src, dst = src + [1], dst + [0]
                    order = sorted(range(len(src)), key=lambda k: (src[k], dst[k]))
                    src, dst = [src[k] for k in order], [dst[k] for k in order]
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(src, pa.int64()),
                        pa.array(dst, pa.int64()),
                        pa.DictionaryArray.from_arrays(pa.array([0] * len(src), pa.int32()), pa.array(["take"])),
                    ],
                    schema=TRANSITION_SCHEMA,
                )

            def rank(self):
                return game.breakage.get("rank", lambda n: list(range(n + 1)))(rules["n"])

        return CountdownSpace()

    def start(self, rules):
        return str(rules["n"])

    def canonical_position(self, rules, text):
        return text.strip()


@pytest.mark.parametrize(
    "breakage, problem",
    [
        ({}, None),
        ({"child": lambda i: i + 5}, "a position that is not listed"),
        ({"twice": True}, "not distinct"),
        ({"outcome": None}, "no move and no outcome"),
        ({"outcome": "draw"}, "terminal values other than"),
        ({"rank": lambda n: [0] * (n + 1)}, "the rank does not fall"),
    ],
)
def test_the_checker_names_what_a_game_breaks(monkeypatch, breakage, problem):
    toy = Countdown(**breakage)
    monkeypatch.setattr(games_module, "_registry", lambda: {**REGISTRY, "countdown": toy})
    problems = check_game("countdown")
    if problem is None:
        assert problems == []
    else:
        assert len(problems) >= 1 and problem in problems[0], problems


def test_a_game_without_a_required_method_is_refused():
    class Half(Game):
        name, summary, params, columns = "half", "", (), {}

    assert check_contract(Half()) == [
        "game 'half': no impartial",
        "game 'half': space() is required",
        "game 'half': start() is required",
        "game 'half': canonical_position() is required",
    ]


@pytest.mark.parametrize("game", list(all_games()))
def test_malformed_position_text_is_refused(game):
    rules = Ruleset.parse(game)
    for text in ["", "x", "1-1|1-1|1-1", "-", "|"]:
        with pytest.raises(PositionError):
            rules.game.canonical_position(rules, text)


@pytest.mark.parametrize(
    "ruleset",
    [
        "sticks:rows=6",
        "chopsticks:fingers=4,split=any",
        "nim:start=2-3-4,variant=coin",
        "hackenbush:fib=4",
        "tictactoe:cols=3,k=3,rows=2",
        "octal:code=0.137,start=9",
    ],
)
def test_moves_come_the_same_in_parts_of_any_size(ruleset, monkeypatch):
    """Spark generates a game's moves part by part (Space.parts); small parts must give the
    same moves as the default ones, and each part a run of sources after the one before."""
    import pipeline.games._bulk as bulk
    from pipeline.games import _heaps as heaps
    from pipeline.games import chopsticks, hackenbush, nim, tictactoe

    rules = Ruleset.parse(ruleset)
    whole = pa.Table.from_batches(list(rules.game.space(rules).transitions()), schema=TRANSITION_SCHEMA)
    for module in (bulk, heaps, chopsticks, tictactoe):
        monkeypatch.setattr(module, "BATCH_ROWS", 8, raising=False)
    monkeypatch.setattr(nim, "CHUNK", 5)
    monkeypatch.setattr(hackenbush, "CELLS", 40)
    space = rules.game.space(rules)
    assert space.parts() > 2
    parts = [
        pa.Table.from_batches(list(space.transitions_part(part)), schema=TRANSITION_SCHEMA)
        for part in range(space.parts())
    ]
    sources = [part["src"].to_numpy() for part in parts if part.num_rows]
    assert all(a[-1] < b[0] for a, b in zip(sources, sources[1:]))
    together = pa.concat_tables(parts)
    assert together.select(["src", "dst"]).equals(whole.select(["src", "dst"]))
    assert together["move"].cast(pa.string()).equals(whole["move"].cast(pa.string()))


def test_joined_text_writes_numbers_as_python_does():
    """The heap games' position texts are laid out byte by byte in NumPy (_bulk.joined_text)."""
    from pipeline.games._bulk import joined_text, number_lists

    rng = np.random.default_rng(3)
    for trial in range(300):
        counts = rng.integers(0, 5, int(rng.integers(0, 50)))
        top = int(rng.choice([1, 2, 10, 11, 100, 1000, 10001, 65535, 123456, 10**12]))
        lists = number_lists(counts, rng.integers(0, top, int(counts.sum())), pa.int64())
        if trial % 3 == 0 and len(lists) > 2:
            lists = lists.slice(1)  # offsets not starting at 0
        assert joined_text(lists).to_pylist() == ["-".join(map(str, numbers)) or "0" for numbers in lists.to_pylist()]


def test_the_checker_compares_transitions_from_with_transitions(monkeypatch):
    """A game offering transitions_from (enumerate's rank-by-rank path) must give the rows
    transitions() has: one that drops a move is named."""
    from pipeline.games._heaps import HeapSpace

    assert check_game("sticks", "sticks:rows=5") == []
    generate = HeapSpace.transitions_from

    def one_short(self, ids):
        for batch in generate(self, ids):
            yield batch.slice(1)

    monkeypatch.setattr(HeapSpace, "transitions_from", one_short)
    assert check_game("sticks", "sticks:rows=5") == [
        "sticks on sticks:rows=5: transitions_from() of one rank's positions differs from transitions()' rows for them"
    ]


def test_a_game_whose_transitions_from_gives_none_is_enumerated_from_its_transitions(monkeypatch, tmp_path):
    """transitions_from gives None where it is not offered (the contract's default, which a
    game's own may keep for some rulesets): enumerate then reorders transitions()' rows, to
    the same files, and check-game finds nothing wrong. It failed outside the game's code."""
    from pipeline.datadir.layout import DataDir
    from pipeline.games._heaps import HeapSpace
    from pipeline.stages.build import build

    build(Ruleset.parse("sticks:rows=5"), DataDir(tmp_path / "offered"))
    monkeypatch.setattr(HeapSpace, "transitions_from", lambda self, ids: None)
    build(Ruleset.parse("sticks:rows=5"), DataDir(tmp_path / "declined"))
    built = sorted((tmp_path / "offered").glob("sticks/*/*.parquet"))
    assert {path.name for path in built} >= {"positions.parquet", "transitions.parquet"}
    for path in built:
        assert (tmp_path / "declined" / path.relative_to(tmp_path / "offered")).read_bytes() == path.read_bytes()
    assert check_game("sticks", "sticks:rows=5") == []
