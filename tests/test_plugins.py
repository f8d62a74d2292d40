"""Games as plug-ins: the example under examples/takeaway, written the simple way, found
through the entry-point group tablebase.games, built like any game; a broken plug-in is
named in one line."""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import pipeline.games as games_module
from pipeline.check import check
from pipeline.errors import DataError, RulesetError
from pipeline.games import all_games, find_game
from pipeline.games.simple import SimpleGame
from pipeline.layout import DataDir
from pipeline.params import IntParam
from pipeline.rulesets import Ruleset
from pipeline.stages.build import build

RULESETS = ["takeaway", "takeaway:take=4,tokens=30", "takeaway:play=misere,take=2,tokens=17"]


@pytest.fixture(scope="module")
def takeaway(tmp_path_factory) -> Path:
    names = [entry.name for entry in metadata.entry_points(group="tablebase.games")]
    assert "takeaway" in names, "the example plug-in is not installed: run `make install`"
    data = tmp_path_factory.mktemp("plugin")
    for ruleset in RULESETS:
        build(Ruleset.parse(ruleset), DataDir(data))
    return data


def test_the_example_plug_in_is_found_through_its_entry_point(takeaway):
    assert isinstance(find_game("takeaway"), SimpleGame)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_example_is_solved_as_its_theory_says(takeaway, ruleset):
    """Lost exactly on multiples of take + 1 (misère: one more): computed, then compared."""
    rules = Ruleset.parse(ruleset)
    rows = pq.read_table(DataDir(takeaway).ruleset(rules).tablebase).to_pylist()
    assert len(rows) == rules["tokens"] + 1 and all(row["reachable"] for row in rows)
    shift = 1 if rules["play"] == "misere" else 0
    for row in rows:
        lost = int(row["position"]) % (rules["take"] + 1) == shift
        assert row["value"] == ("loss" if lost else "win"), row
        assert row["grundy"] == int(row["position"]) % (rules["take"] + 1)


def test_the_example_lands_in_the_catalog_and_checks(takeaway):
    catalog = pq.read_table(takeaway / "catalog.parquet").to_pylist()
    assert {row["ruleset"] for row in catalog} == {Ruleset.parse(r).id for r in RULESETS}
    assert check(takeaway) == []


class Broken(SimpleGame):
    name, summary = "broken", "a plug-in with a bug"
    impartial = True
    params = (IntParam("n", "3", "tokens", minimum=1),)

    def __init__(self, bug: str):
        self.bug = bug

    def initial(self, rules):
        return rules["n"]

    def moves(self, rules, n):
        if self.bug == "raises" and n == 2:
            raise ZeroDivisionError("oops")
        return [("take one", n - 1)] if n else []

    def outcome(self, rules, n):
        return None if self.bug == "no outcome" else "loss"

    def text(self, rules, n):
        return "same" if self.bug == "same text" else str(n)

    def parse(self, rules, text):
        return int(text)


@pytest.mark.parametrize("bug, message", [
    ("raises", "game broken: moves() failed on 2: ZeroDivisionError: oops"),
    ("no outcome", "game broken: the finished position '0' has outcome None"),
    ("same text", "game broken: two positions have the same text"),
])
def test_a_broken_plug_in_is_named_in_one_line(monkeypatch, tmp_path, bug, message):
    registry = {**all_games(), "broken": Broken(bug)}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    with pytest.raises(DataError) as error:
        build(Ruleset.parse("broken"), DataDir(tmp_path))
    assert str(error.value).startswith(message)
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_plug_in_that_fails_to_load_is_named(monkeypatch):
    class Entry:
        name, value = "bad", "bad_module:GAME"

        def load(self):
            raise ImportError("No module named 'bad_module'")

    monkeypatch.setattr(metadata, "entry_points", lambda group: [Entry()])
    games_module._registry.cache_clear()
    try:
        with pytest.raises(RulesetError, match="the game plug-in 'bad' .* failed to load: ImportError"):
            find_game("chopsticks")
    finally:
        monkeypatch.undo()
        games_module._registry.cache_clear()


def test_a_plug_in_uninstalled_leaves_its_tablebases_and_blocks_nothing(monkeypatch, tmp_path):
    data = DataDir(tmp_path)
    build(Ruleset.parse("takeaway:tokens=5"), data)
    registry = {name: game for name, game in all_games().items() if name != "takeaway"}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    build(Ruleset.parse("sticks:rows=2"), data)
    from pipeline.draw import draw

    draw([], tmp_path, every=True)
    rulesets = pq.read_table(tmp_path / "catalog.parquet")["ruleset"].to_pylist()
    assert rulesets == ["sticks:rows=2", "takeaway:tokens=5"]
    assert check(tmp_path) == []


def test_check_game_lists_what_a_simple_plug_in_breaks(monkeypatch):
    from pipeline.gamecheck import check_game

    registry = {**all_games(), "broken": Broken("same text")}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    assert check_game("broken") == ["broken on broken: game broken: two positions have the same text: "
                                    "text() must be unique"]
