"""A plug-in whose members give back what the game contract does not allow (`size()` a
str, `sides()` 7, `draw()` 42), or whose positions never end, is refused in one line by
check-game and by every command that asks it, never a traceback (issue 33, items 6 and 7)."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

import pipeline.games.registry as games_module
import pipeline.games.simple as simple_module
from pipeline.core.errors import DataError
from pipeline.core.params import IntParam
from pipeline.datadir.layout import DataDir
from pipeline.games import Size, find_game
from pipeline.games.rulesets import Ruleset
from pipeline.games.simple import SimpleGame, SimpleSpace
from pipeline.products.gamecheck import check_game
from pipeline.stages.build import build

#: The line every refusal of a wrong answer starts with.
PLUGIN = "the game plug-in 'typed'"


class Typed(SimpleGame):
    """Takeaway, one token at a time, except where `bug` makes a member answer wrongly."""

    name, summary, impartial = "typed", "a plug-in whose members give back the wrong type", True
    params = (IntParam("n", "3", "tokens", minimum=1),)

    def __init__(self, bug: str):
        self.bug = bug

    def size(self, rules):
        return {
            "size str": "three",
            "size of a str": Size("4", 3),
            "size negative": Size(4, 3, window=-1),
            "never ends, sized": Size(50, 50),
        }.get(self.bug)

    def initial(self, rules):
        return rules["n"]

    def moves(self, rules, n):
        if self.bug.startswith("never ends"):
            return [("add one", n + 1)]
        return [("take one", n - 1)] if n else []

    def outcome(self, rules, n):
        return "loss"

    def text(self, rules, n):
        return str(n)

    def parse(self, rules, text):
        return int(text)

    def start(self, rules):
        return 3 if self.bug == "start int" else super().start(rules)

    def starts(self, rules):
        return [] if self.bug == "no starts" else super().starts(rules)

    def canonical_position(self, rules, text):
        return None if self.bug == "canonical None" else super().canonical_position(rules, text)

    def draw(self, rules, text):
        return 42 if self.bug == "draw 42" else super().draw(rules, text)

    def sides(self, rules, text):
        return {"sides 7": 7, "sides of three": ("a", "b", "c")}.get(self.bug)

    def note(self, rules, text):
        return b"a note" if self.bug == "note bytes" else None

    def space(self, rules):
        if self.bug == "space str":
            return "a space"
        bug = self.bug

        class Space(SimpleSpace):
            keyed = "yes" if bug == "keyed str" else False

            def positions(self):
                table = super().positions()
                return table.to_pylist() if bug == "positions list" else table

            def transitions(self):
                for batch in super().transitions():
                    yield (
                        batch.cast(pa.schema([("src", pa.int32()), *list(batch.schema)[1:]]))
                        if (bug == "transitions int32")
                        else batch
                    )

            def rank(self):
                return np.array([0.5, 1.5, 2.5, 3.5]) if bug == "rank floats" else super().rank()

            def search(self):
                return "a search" if bug == "search str" else super().search()

        return Space(self, rules)


@pytest.fixture
def installed(monkeypatch):
    """Install `Typed(bug)` as the plug-in 'typed', through the entry points as pip would."""

    def install(bug: str) -> None:
        class Entry:
            name, value = "typed", "typed_game:GAME"

            def load(self):
                return Typed(bug)

        monkeypatch.setattr(metadata, "entry_points", lambda group: [Entry()])
        games_module._registry.cache_clear()

    yield install
    monkeypatch.undo()
    games_module._registry.cache_clear()


#: A wrong answer and the words that refuse it, from check-game and from build.
WRONG = {
    "size str": "size() gave 'three' (str), where the game contract asks for a Size of whole numbers, or None",
    "size of a str": "size() gave a Size with positions='4', where the game contract asks for a Size",
    "size negative": "size() gave a Size with window=-1, where the game contract asks for a Size",
    "start int": "start() gave 3 (int), where the game contract asks for a position's text (a str)",
    "no starts": "starts() gave [] (list), where the game contract asks for a list of position texts",
    "space str": "space() gave 'a space' (str), where the game contract asks for a pipeline.games.Space",
    "keyed str": "its space's keyed is 'yes', where the game contract asks for a bool",
    "positions list": "positions() gave [{'id': 0, ",
    "transitions int32": "transitions() gave a batch of src: int32",
    "rank floats": "rank() gave array([0.5, 1.5, 2.5, 3.5]) (ndarray), where the game contract asks for None or one",
}
#: Wrong answers only the commands after a build (play, draw, probe), Spark's enumerate (search)
#: and check-game ask for.
WRONG_AFTER_BUILD = {
    "search str": "search() gave 'a search' (str), where the game contract asks for a pipeline.games.Search or None",
    "canonical None": "canonical_position() gave None (NoneType), where the game contract asks for a position's text",
    "draw 42": "draw() gave 42 (int), where the game contract asks for inline SVG (a str)",
    "sides 7": "sides() gave 7 (int), where the game contract asks for None or a pair of str",
    "sides of three": "sides() gave ('a', 'b', 'c') (tuple), where the game contract asks for None or a pair",
    "note bytes": "note() gave b'a note' (bytes), where the game contract asks for None or one line (a str)",
}


@pytest.mark.parametrize("bug", [*WRONG, *WRONG_AFTER_BUILD])
def test_check_game_refuses_a_member_giving_the_wrong_type_in_one_line(installed, bug):
    installed(bug)
    problems = check_game("typed")
    line = f"typed on typed: {PLUGIN}: {WRONG.get(bug) or WRONG_AFTER_BUILD[bug]}"
    assert len(problems) == 1 and problems[0].startswith(line), problems


@pytest.mark.parametrize("bug", WRONG)
def test_build_refuses_a_member_giving_the_wrong_type_and_publishes_nothing(installed, tmp_path, bug):
    installed(bug)
    with pytest.raises(DataError) as error:
        build(Ruleset.parse("typed"), DataDir(tmp_path))
    assert str(error.value).startswith(f"{PLUGIN}: {WRONG[bug]}")
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_plug_in_that_keeps_the_contract_passes_and_builds(installed, tmp_path):
    installed("")
    assert check_game("typed") == []
    build(Ruleset.parse("typed"), DataDir(tmp_path))
    assert (tmp_path / "typed" / "default" / "tablebase.parquet").exists()


def test_the_game_checked_keeps_the_plug_in_s_class(installed):
    """The pipeline reads from the class which members a game overrides: the guard must not hide them."""
    installed("")
    game = find_game("typed")
    assert type(game) is Typed and isinstance(game.space(Ruleset.parse("typed")), SimpleSpace)


def test_a_game_that_never_ends_is_refused_at_its_own_size(installed, tmp_path):
    installed("never ends, sized")
    line = (
        "game typed: typed has more positions than the 50 its size() bounds them by: "
        "does it end? (moves from 52 still lead to new positions)"
    )
    assert check_game("typed") == [f"typed on typed: {line}"]
    with pytest.raises(DataError) as error:
        build(Ruleset.parse("typed"), DataDir(tmp_path))
    assert str(error.value) == line


def test_a_game_that_never_ends_without_a_size_is_refused_at_the_bound(installed, monkeypatch, tmp_path):
    """Without size(), a simple game is searched up to UNCOUNTED positions (5,000,000:
    lowered here, or the test would take 20 s); check-game to its own LIMIT."""
    installed("never ends")
    monkeypatch.setattr(simple_module, "UNCOUNTED", 1000)
    with pytest.raises(DataError) as error:
        build(Ruleset.parse("typed"), DataDir(tmp_path))
    assert str(error.value).startswith("game typed: typed has more positions than 1,000, and gives no size() to count")
    assert not list(tmp_path.rglob("*.parquet"))
    monkeypatch.setattr("pipeline.products.gamecheck.LIMIT", 500)
    assert check_game("typed") == [
        "typed on typed: game typed: typed has more positions than 500, and gives no size() to count them: "
        "does it end? (moves from 502 still lead to new positions)"
    ]


#: The plug-in as pip installs one (a module and its dist-info with the entry point), its
#: bug the one $TYPED_BUG names.
MODULE = """
import os
from tests.test_plugin_returns import Typed

GAME = Typed(os.environ.get("TYPED_BUG", ""))
"""


def tablebase(tmp_path: Path, bug: str, *args: str) -> subprocess.CompletedProcess:
    """`tablebase ARGS` with the plug-in installed, its bug `bug`."""
    site = tmp_path / "site"
    if not site.exists():
        (site / "typed_game-0.1.dist-info").mkdir(parents=True)
        (site / "typed_game.py").write_text(MODULE)
        (site / "typed_game-0.1.dist-info" / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: typed-game\nVersion: 0.1\n"
        )
        (site / "typed_game-0.1.dist-info" / "entry_points.txt").write_text(
            "[tablebase.games]\ntyped = typed_game:GAME\n"
        )
    root = Path(__file__).resolve().parent.parent
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(root)]), "TYPED_BUG": bug}
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        input="quit\n",
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=120,
    )


def one_error(result: subprocess.CompletedProcess) -> str:
    """The one error line of a command that failed (draw may first warn that Graphviz is missing)."""
    errors = [line for line in result.stderr.splitlines() if line.startswith("error: ")]
    assert result.returncode == 1 and "Traceback" not in result.stderr and len(errors) == 1, result.stderr
    return errors[0]


def test_the_commands_name_the_member_in_one_line(tmp_path):
    """The issue's cases through the command line: estimate and build with size() a str;
    draw with draw() 42 and play with sides() 7 after a build; check-game on one."""
    size = f"error: {PLUGIN}: {WRONG['size str']}"
    assert one_error(tablebase(tmp_path, "size str", "estimate", "typed")) == size
    assert one_error(tablebase(tmp_path, "size str", "build", "typed", "--data", "data")) == size
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").rglob("*.parquet"))
    assert tablebase(tmp_path, "", "build", "-q", "typed", "--data", "data").returncode == 0
    for bug, command in [("draw 42", ["draw", "-q", "typed"]), ("sides 7", ["play", "typed"])]:
        line = f"error: {PLUGIN}: {WRONG_AFTER_BUILD[bug]}"
        assert one_error(tablebase(tmp_path, bug, *command, "--data", "data")).startswith(line)
    checked = tablebase(tmp_path, "sides 7", "check-game", "typed")  # (the others in process, above)
    assert checked.returncode == 1 and checked.stderr.startswith(f"typed on typed: {PLUGIN}: sides() gave 7")
    assert checked.stderr.count("\n") == 1 and "Traceback" not in checked.stderr
    assert not list((tmp_path / "data").rglob("*.html"))
