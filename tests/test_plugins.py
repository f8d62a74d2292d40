"""Games as plug-ins: the example under examples/takeaway, written the simple way, found
through the entry-point group tablebase.games, built like any game; a broken plug-in is
named in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

import pipeline.games.registry as games_module
from pipeline.core.errors import DataError, RulesetError
from pipeline.core.params import IntParam
from pipeline.datadir.check import check
from pipeline.datadir.layout import DataDir
from pipeline.games import all_games, broken_plugins, find_game
from pipeline.games.rulesets import Ruleset
from pipeline.games.simple import SimpleGame
from pipeline.stages.build import build
from tests.command import forked

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
        if self.bug == "won and lost ends" and n == 3:
            return [("take one", 2), ("resign", -1)]  # -1: the opponent resigned, the mover has won
        return [("take one", n - 1)] if n > 0 else []

    def outcome(self, rules, n):
        if self.bug == "outcome raises":
            raise LookupError("no such end")
        if self.bug == "tied end":
            return "tie"
        return None if self.bug == "no outcome" else "win" if n < 0 else "loss"

    def text(self, rules, n):
        if self.bug == "text raises" and n == 2:
            raise ZeroDivisionError("oops")
        if self.bug == "text exits" and n == 2:
            sys.exit(3)
        if self.bug == "lone surrogate" and n == 2:
            return "\ud800"
        if self.bug == "text not str" and n == 2:
            return 2
        return "same" if self.bug == "same text" else str(n)

    def parse(self, rules, text):
        return int(text)

    def rank(self, rules, n):
        return n * 10**12 if self.bug == "rank beyond 32 bits" else None


@pytest.mark.parametrize(
    "bug, message",
    [
        ("raises", "game broken: moves() failed on 2: ZeroDivisionError: oops"),
        ("no outcome", "game broken: the finished position '0' has outcome None"),
        ("same text", "game broken: two positions have the same text"),
        ("text raises", "game broken: text() failed on 2: ZeroDivisionError: oops"),
        ("text exits", "game broken: text() failed on 2: it called sys.exit(3)"),
        ("outcome raises", "game broken: outcome() failed on 0: LookupError: no such end"),
        (
            "lone surrogate",
            "game broken: text() of 2 gives '\\ud800', which UTF-8 cannot hold (surrogates not allowed)",
        ),
        ("text not str", "game broken: text() of 2 gives int, not str"),
        (
            "rank beyond 32 bits",
            "game broken: rank() of 3 is 3000000000000, not an integer from -2,147,483,648 to 2,147,483,647",
        ),
        ("won and lost ends", "game broken: impartial is True, but finished positions are loss and win"),
        ("tied end", "game broken: impartial is True, but finished positions are tie"),
    ],
)
def test_a_broken_plug_in_is_named_in_one_line(monkeypatch, tmp_path, bug, message):
    registry = {**all_games(), "broken": Broken(bug)}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    with pytest.raises(DataError) as error:
        build(Ruleset.parse("broken"), DataDir(tmp_path))
    assert str(error.value).startswith(message)
    assert not list(tmp_path.rglob("*.parquet"))


@pytest.mark.parametrize(
    "failure, why",
    [
        (ImportError("No module named 'bad_module'"), "ImportError: No module named 'bad_module'"),
        (SystemExit(3), "it called sys.exit(3)"),
    ],
)
def test_a_plug_in_that_fails_to_load_is_named_and_the_other_games_work(monkeypatch, failure, why):
    class Entry:
        name, value = "bad", "bad_module:GAME"

        def load(self):
            raise failure

    monkeypatch.setattr(metadata, "entry_points", lambda group: [Entry()])
    games_module._registry.cache_clear()
    try:
        assert find_game("chopsticks").name == "chopsticks"
        reason = f"the game plug-in 'bad' (bad_module:GAME) failed to load: {why}"
        with pytest.raises(RulesetError) as error:
            find_game("bad")
        assert str(error.value) == reason
        assert broken_plugins() == [reason]
        from pipeline.products.gamecheck import check_game

        assert check_game("bad") == [reason] and check_game("sticks", "sticks:rows=2") == []
    finally:
        monkeypatch.undo()
        games_module._registry.cache_clear()


def test_plug_ins_that_break_the_contract_or_take_a_name_are_left_out(monkeypatch):
    class Entry:
        def __init__(self, name, game):
            self.name, self.value, self.game = name, f"{name}_module:GAME", game

        def load(self):
            return self.game

    entries = [Entry("a", Broken("")), Entry("b", Broken("")), Entry("c", object()), Entry("d", find_game("nim"))]
    monkeypatch.setattr(metadata, "entry_points", lambda group: entries)
    games_module._registry.cache_clear()
    try:
        assert set(all_games()) == {
            "chopsticks",
            "sticks",
            "nim",
            "hackenbush",
            "octal",
            "tictactoe",
            "connect",
            "dobutsu",
        }
        assert broken_plugins() == [
            "the game plug-in 'b' (b_module:GAME) is called 'broken', as the plug-in 'a' is: uninstall one of them",
            "the game plug-in 'c' (c_module:GAME) breaks the game contract: game 'object': not a pipeline.games.Game",
            "the game plug-in 'd' (d_module:GAME) is called 'nim', as the built-in game is: uninstall one of them",
            "two game plug-ins are called 'broken' (a, b): uninstall one",
        ]
        with pytest.raises(RulesetError, match="two game plug-ins are called 'broken'"):
            find_game("broken")
    finally:
        monkeypatch.undo()
        games_module._registry.cache_clear()


def test_a_plug_in_uninstalled_leaves_its_tablebases_and_blocks_nothing(monkeypatch, tmp_path):
    data = DataDir(tmp_path)
    build(Ruleset.parse("takeaway:tokens=5"), data)
    registry = {name: game for name, game in all_games().items() if name != "takeaway"}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    build(Ruleset.parse("sticks:rows=2"), data)
    from pipeline.products.draw import draw

    draw([], tmp_path, every=True)
    rulesets = pq.read_table(tmp_path / "catalog.parquet")["ruleset"].to_pylist()
    assert rulesets == ["sticks:rows=2", "takeaway:tokens=5"]
    assert check(tmp_path) == []


def test_check_game_lists_what_a_simple_plug_in_breaks(monkeypatch):
    from pipeline.products.gamecheck import check_game

    registry = {**all_games(), "broken": Broken("same text")}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    assert check_game("broken") == [
        "broken on broken: game broken: two positions have the same text: text() must be unique"
    ]


class WideRank(Broken):
    """A game written the bulk way whose rank needs more than 32 bits (p * 10**12)."""

    def space(self, rules):
        from pipeline.games.simple import SimpleSpace

        class Space(SimpleSpace):
            def rank(self):
                order, _ = self._explore()
                return np.array([p * 10**12 for p in order], dtype=np.int64)

        return Space(self, rules)


@pytest.mark.parametrize(
    "game, problem",
    [
        (
            Broken("won and lost ends"),
            "broken on broken: impartial is True, but finished positions are loss and win: "
            "an impartial game's finished positions are all lost (normal play) or all won "
            "(misère); a game that ends otherwise is not impartial (impartial = False)",
        ),
        (Broken("tied end"), "broken on broken: impartial is True, but finished positions are tie"),
        (Broken("rank beyond 32 bits"), "broken on broken: game broken: rank() of 3 is 3000000000000, not an integer"),
        (
            WideRank(""),
            "broken on broken: rank() goes from 0 to 3000000000000, beyond the 32 bits the pipeline "
            "holds it in (-2,147,483,648 to 2,147,483,647)",
        ),
    ],
)
def test_check_game_finds_what_the_build_would_refuse_or_get_wrong(monkeypatch, tmp_path, game, problem):
    from pipeline.products.gamecheck import check_game

    registry = {**all_games(), "broken": game}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    problems = check_game("broken")
    assert len(problems) == 1 and problems[0].startswith(problem), problems
    with pytest.raises(DataError):
        build(Ruleset.parse("broken"), DataDir(tmp_path))
    assert not list(tmp_path.rglob("*.parquet"))


def test_a_misere_game_that_only_ends_in_wins_is_impartial(monkeypatch):
    """Misère nim, octal and sticks end where the mover has won: their Grundy values are the
    normal-play ones, as the README says."""
    from pipeline.products.gamecheck import check_game

    class Misere(Broken):
        def outcome(self, rules, n):
            return "win"

    registry = {**all_games(), "broken": Misere("")}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    assert check_game("broken") == []


#: A position text and summary a page must show as text, never run (the hostile plug-in's,
#: its bug "markup"): the comment and tag ahead keep an HTML parser inside a <script> element
#: past an escaped "<\/script>" (a page's JSON once escaped only "</").
MARKUP = "<!--<script><b>bold</b></script><script>window.pwned = 1</script>"
#: A plug-in installed the way pip installs one (a module and its dist-info with the entry
#: point), with the bug that $HOSTILE_BUG names.
HOSTILE = (
    f"MARKUP = {MARKUP!r}\n"
    """
import os
import os
import subprocess
import sys

from pipeline.games.simple import SimpleGame
from pipeline.core.params import IntParam, TextParam

BUG = os.environ.get("HOSTILE_BUG", "")
if BUG == "exit at import":
    sys.exit(3)
if BUG == "import fails":
    import a_module_that_is_not_installed
if BUG == "prints at import":
    print("hostile game loaded, version 0.1")


def parse_level(text):
    if BUG == "parser KeyError":
        return {}[text]
    if BUG == "parser recursion":
        return parse_level(text)
    return int(text)


class Hostile(SimpleGame):
    name, summary, impartial = "hostile", "a plug-in with the bug HOSTILE_BUG names", True
    if BUG == "markup":
        summary += " " + MARKUP
    params = (IntParam("n", "3", "tokens", minimum=1),
              TextParam("level", "1", "a parameter of its own", parser=parse_level, formatter=str, shape="1"))

    def validate(self, values):
        if BUG == "validate exits":
            sys.exit(3)

    def size(self, rules):
        if BUG == "size raises":
            raise RuntimeError("cannot count")
        return None

    def initial(self, rules):
        return rules["n"]

    def moves(self, rules, n):
        return [("take one", n - 1)] if n else []

    def outcome(self, rules, n):
        if BUG == "outcome raises":
            raise LookupError("no such end")
        return "loss"

    def text(self, rules, n):
        if BUG == "text raises" and n == 2:
            raise ZeroDivisionError("oops")
        if BUG == "lone surrogate" and n == 2:
            return "\\ud800"
        if BUG == "markup" and n == 2:
            return "2 " + MARKUP
        return str(n)

    def parse(self, rules, text):
        return int(text.split()[0])

    def draw(self, rules, text):
        if BUG == "draw raises":
            raise TypeError("no picture")
        if BUG == "picture onload" and text == "2":
            return '<svg onload="alert(1)"><rect width="9" height="9"/></svg>'
        return super().draw(rules, text)

    def sides(self, rules, text):
        if BUG == "sides raises":
            raise IndexError("no sides")
        return None


GAME = Hostile()
"""
)


def hostile(tmp_path: Path, bug: str, *args: str) -> subprocess.CompletedProcess:
    """`tablebase ARGS` with the hostile plug-in installed, its bug `bug`."""
    site = tmp_path / "site"
    if not site.exists():
        (site / "hostile_game-0.1.dist-info").mkdir(parents=True)
        (site / "hostile_game.py").write_text(HOSTILE)
        (site / "hostile_game-0.1.dist-info" / "METADATA").write_text(
            "Metadata-Version: 2.1\nName: hostile-game\nVersion: 0.1\n"
        )
        (site / "hostile_game-0.1.dist-info" / "entry_points.txt").write_text(
            "[tablebase.games]\nhostile = hostile_game:GAME\n"
        )
    env = {**os.environ, "PYTHONPATH": str(site), "HOSTILE_BUG": bug}
    return forked(*args, env=env, cwd=tmp_path, timeout=120)


def one_error(result: subprocess.CompletedProcess) -> str:
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    return lines[0]


def test_a_plug_in_printing_as_it_loads_leaves_machine_readable_output_whole(tmp_path):
    """What a plug-in prints at import goes to stderr: on stdout it broke --format json."""
    import json

    result = hostile(tmp_path, "prints at import", "games", "--format", "json")
    assert result.returncode == 0, result.stderr
    assert any(game["game"] == "hostile" for game in json.loads(result.stdout))
    assert "hostile game loaded" in result.stderr


def test_a_hostile_plug_in_without_a_bug_builds(tmp_path):
    result = hostile(tmp_path, "", "build", "-q", "hostile", "--data", "data")
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "hostile" / "default" / "tablebase.parquet").exists()


@pytest.mark.parametrize(
    "bug, why",
    [
        ("exit at import", "failed to load: it called sys.exit(3)"),
        ("import fails", "failed to load: ModuleNotFoundError: No module named 'a_module_that_is_not_installed'"),
    ],
)
def test_a_plug_in_that_fails_to_load_is_named_and_blocks_no_other_game(tmp_path, bug, why):
    reason = f"error: the game plug-in 'hostile' (hostile_game:GAME) {why}"
    listed = hostile(tmp_path, bug, "games")
    assert one_error(listed) == reason
    assert "chopsticks: " in listed.stdout and "takeaway: " in listed.stdout and "hostile" not in listed.stdout
    assert "hostile_game:GAME" in hostile(tmp_path, bug, "check-game", "hostile").stderr
    assert one_error(hostile(tmp_path, bug, "build", "hostile", "--data", "data")) == reason
    built = hostile(tmp_path, bug, "build", "-q", "sticks:rows=2", "--data", "data")
    assert built.returncode == 0 and built.stderr == "", built.stderr
    assert hostile(tmp_path, bug, "check-game", "takeaway").returncode == 0


@pytest.mark.parametrize(
    "bug, command, line",
    [
        ("text raises", ["build", "hostile"], "error: game hostile: text() failed on 2: ZeroDivisionError: oops"),
        (
            "outcome raises",
            ["build", "hostile"],
            "error: game hostile: outcome() failed on 0: LookupError: no such end",
        ),
        (
            "lone surrogate",
            ["build", "hostile"],
            "error: game hostile: text() of 2 gives '\\ud800', which UTF-8 cannot hold (surrogates not allowed): "
            "a position's text is written to Parquet as UTF-8",
        ),
        (
            "parser KeyError",
            ["estimate", "hostile:level=2"],
            "error: the game plug-in 'hostile' failed in parse_level(): KeyError: '2'",
        ),
        (
            "parser recursion",
            ["estimate", "hostile:level=2"],
            "error: the game plug-in 'hostile' failed in parse_level(): RecursionError: maximum recursion depth exceeded",
        ),
        (
            "validate exits",
            ["estimate", "hostile"],
            "error: the game plug-in 'hostile' failed in validate(): it called sys.exit(3)",
        ),
        (
            "validate exits",
            ["build", "hostile"],
            "error: the game plug-in 'hostile' failed in validate(): it called sys.exit(3)",
        ),
        (
            "size raises",
            ["estimate", "hostile"],
            "error: the game plug-in 'hostile' failed in size(): RuntimeError: cannot count",
        ),
    ],
)
def test_a_plug_in_bug_is_one_line_naming_it_and_nothing_is_published(tmp_path, bug, command, line):
    result = hostile(tmp_path, bug, *command, "--data", "data")
    assert one_error(result).startswith(line)
    assert not list(tmp_path.rglob("*.parquet"))


@pytest.mark.parametrize("bug", ["text raises", "outcome raises", "lone surrogate"])
def test_check_game_and_build_say_the_same_of_a_plug_in_bug(tmp_path, bug):
    built = one_error(hostile(tmp_path, bug, "build", "hostile", "--data", "data"))
    checked = hostile(tmp_path, bug, "check-game", "hostile")
    assert checked.returncode == 1 and checked.stderr == f"hostile on hostile: {built[len('error: ') :]}\n"


@pytest.mark.parametrize(
    "bug, command, line",
    [
        (
            "draw raises",
            ["draw", "-q", "hostile"],
            "error: the game plug-in 'hostile' failed in draw(): TypeError: no picture",
        ),
        (
            "sides raises",
            ["play", "hostile"],
            "error: the game plug-in 'hostile' failed in sides(): IndexError: no sides",
        ),
    ],
)
def test_a_plug_in_bug_after_its_build_is_one_line_naming_it(tmp_path, bug, command, line):
    assert hostile(tmp_path, "", "build", "-q", "hostile", "--data", "data").returncode == 0
    before = sorted(p.read_bytes() for p in (tmp_path / "data").rglob("*.parquet"))
    site = tmp_path / "site"
    result = forked(
        *command,
        "--data",
        "data",
        input="quit\n",
        cwd=tmp_path,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(site), "HOSTILE_BUG": bug},
    )
    # (draw may first warn that Graphviz is missing)
    errors = [text for text in result.stderr.splitlines() if text.startswith("error: ")]
    assert result.returncode == 1 and "Traceback" not in result.stderr and len(errors) == 1, result.stderr
    assert errors[0].startswith(line)
    assert sorted(p.read_bytes() for p in (tmp_path / "data").rglob("*.parquet")) == before


#: Pictures a plug-in's draw() once slipped into the pages, each with script that ran in
#: Chromium or a way to reach outside the page, and what check-game and draw say of it.
BYPASSES = {
    "onload": ('<svg onload="alert(1)"><rect width="9" height="9"/></svg>', "the attribute onload='alert(1)' on <svg>"),
    "onload in mixed case": ('<svg OnLoAd="alert(1)"/>', "the attribute onload='alert(1)' on <svg>"),
    "animate onbegin": (
        '<svg><animate onbegin="alert(1)" attributeName="x" dur="1s"/></svg>',
        "the element <animate>",
    ),
    "set onbegin": ('<svg><set onbegin="alert(1)" attributeName="x" to="1"/></svg>', "the element <set>"),
    "foreignObject": (
        '<svg><foreignObject><img xmlns="http://www.w3.org/1999/xhtml" src="x" onerror="alert(1)"/>'
        "</foreignObject></svg>",
        "the element <foreignObject>",
    ),
    "javascript link": ('<svg><a href="javascript:alert(1)"><text>2</text></a></svg>', "the element <a>"),
    "entity-encoded javascript link": (
        '<svg><a href="javascript&#58;alert(1)"><text>2</text></a></svg>',
        "the element <a>",
    ),
    "xlink:href": (
        '<svg><rect xmlns:xlink="http://www.w3.org/1999/xlink" xlink:href="javascript:alert(1)"/></svg>',
        "the attribute xlink:href='javascript:alert(1)' on <rect>",
    ),
    "use of a data URL": ('<svg><use href="data:image/svg+xml,&lt;svg/&gt;#a"/></svg>', "the element <use>"),
    "style with url()": (
        '<svg><rect style="fill: url(javascript:alert(1))"/></svg>',
        "the attribute style='fill: url(javascript:alert(1))' on <rect>",
    ),
    "paint with url()": ('<svg><rect fill="URL( https://example.org/x.svg#p )"/></svg>', "the attribute fill="),
    "iframe": ('<svg><iframe src="javascript:alert(1)"/></svg>', "the element <iframe>"),
    "script": ("<svg><script>alert(1)</script></svg>", "the element <script>"),
    "CDATA": (
        "<svg><text><![CDATA[<img src=x onerror=alert(1)>]]></text></svg>",
        "a CDATA section '<img src=x onerror=alert(1)>'",
    ),
    "processing instruction": (
        '<svg><?x ><image href="x" onerror="alert(1)"/><?x ?></svg>',
        "a processing instruction 'x '",
    ),
}


class Drawn(Broken):
    """A plug-in drawing position 2 as `picture`, the others as text in a box."""

    name = "drawn"

    def __init__(self, picture: str):
        super().__init__("")
        self.picture = picture

    def draw(self, rules, text):
        return self.picture if text == "2" else super().draw(rules, text)


@pytest.fixture(scope="module")
def drawn(tmp_path_factory) -> Path:
    """A data folder with the plug-in `drawn` built (its pictures play no part in a build)."""
    data = tmp_path_factory.mktemp("drawn")
    with pytest.MonkeyPatch.context() as patch:
        registry = {**all_games(), "drawn": Drawn("")}
        patch.setattr(games_module, "_registry", lambda: registry)
        build(Ruleset.parse("drawn"), DataDir(data))
    return data


@pytest.mark.parametrize("picture, refused", BYPASSES.values(), ids=BYPASSES)
def test_check_game_and_draw_refuse_a_picture_with_script_or_a_reference(
    monkeypatch, drawn, tmp_path, picture, refused
):
    from pipeline.products.draw import draw
    from pipeline.products.gamecheck import check_game
    from pipeline.products.pictures import PictureError

    registry = {**all_games(), "drawn": Drawn(picture)}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    line = f"drawn on drawn: draw() of '2' holds {refused}"
    problems = check_game("drawn")
    assert len(problems) == 1 and problems[0].startswith(line), problems
    with pytest.raises(PictureError) as error:
        draw(["drawn"], drawn, tmp_path)
    assert str(error.value) == problems[0]
    assert not [path for path in tmp_path.rglob("*") if not path.is_dir()]  # nor the .dot and .csv before it


def test_a_picture_of_shapes_and_text_is_drawn_as_it_is(monkeypatch, drawn, tmp_path):
    """What looks like markup in a text or a label is text: it passes, and the page holds
    the picture byte for byte."""
    from pipeline.products.draw import draw
    from pipeline.products.gamecheck import check_game

    picture = (
        '<svg class="position" width="40" height="20" viewBox="0 0 40 20" role="img" '
        'aria-label="&lt;img src=x onerror=alert(1)&gt; url(x)"><g transform="translate(1 1)">'
        '<path d="M0 0\n L 9 9" stroke="#000"/><text x="2" y="12">&lt;script&gt;alert(1)&lt;/script&gt;</text>'
        "</g></svg>"
    )
    registry = {**all_games(), "drawn": Drawn(picture)}
    monkeypatch.setattr(games_module, "_registry", lambda: registry)
    assert check_game("drawn") == []
    draw(["drawn"], drawn, tmp_path)
    assert picture in (tmp_path / "drawn" / "default" / "index.html").read_text()


def test_a_hostile_picture_is_one_line_from_check_game_and_draw(tmp_path):
    """Through the command line, a plug-in installed as pip installs one."""
    bug = "picture onload"
    assert hostile(tmp_path, bug, "build", "-q", "hostile", "--data", "data").returncode == 0
    checked = hostile(tmp_path, bug, "check-game", "hostile")
    line = "hostile on hostile: draw() of '2' holds the attribute onload='alert(1)' on <svg>, which a page's picture"
    assert checked.returncode == 1 and checked.stderr.startswith(line) and checked.stderr.count("\n") == 1
    drawing = hostile(tmp_path, bug, "draw", "-q", "hostile", "--data", "data")
    errors = [text for text in drawing.stderr.splitlines() if text.startswith("error: ")]  # (a warning: no Graphviz)
    assert drawing.returncode == 1 and "Traceback" not in drawing.stderr and errors == [f"error: {checked.stderr}"[:-1]]
    assert not list((tmp_path / "data").rglob("*.html"))
