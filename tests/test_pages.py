"""The pages as a person meets them: every game drawn, every link resolving, and the walk,
search, filters and sorting working in a real browser (headless Chromium)."""

from __future__ import annotations

import csv
import io
import json
import logging
import shutil
import xml.etree.ElementTree as ET
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pyarrow.parquet as pq
import pytest

import pipeline.products.draw as draw_module
from pipeline.core.values import in_plies
from pipeline.datadir.layout import DataDir
from pipeline.games._svg import text_picture
from pipeline.games.rulesets import Ruleset
from pipeline.products.draw import draw
from pipeline.products.pages import remoteness_histogram
from pipeline.products.pictures import picture_problem
from pipeline.stages.build import build
from pipeline.tablebases import Tablebases
from tests.documentation import holding

#: One small ruleset of every game (nim with its arrow and its coin; the plug-in, which
#: draws nothing of its own), beside the chopsticks rulesets of conftest's `built`.
EXTRA = [
    "nim:start=1-2-3,variant=arrow",
    "nim:start=1-2,variant=coin",
    "hackenbush:tree=1:2/3;2:4",
    "octal:start=4",
    "tictactoe:cols=2,k=2,rows=2",
    "takeaway:tokens=5",
]
#: In the index only (--all draws no page of them): the longest remoteness histogram and
#: the longest start, what the index's tables must still fit at 1400 px.
INDEX_ONLY = ["sticks:rows=8", "hackenbush:fib=6"]
COMMENTS = {"chopsticks:split=any": "seed 000: splits allowed", "octal:start=4": "Kayles from a heap of 4"}


@pytest.fixture(scope="module")
def site(built, tmp_path_factory) -> tuple[Path, Path]:
    """(data, pages): conftest's rulesets and EXTRA, drawn with --all as `make all` does."""
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    data = tmp_path_factory.mktemp("site") / "data"
    shutil.copytree(built, data, ignore=shutil.ignore_patterns("pages", ".staging"))
    Tablebases(data).build(*EXTRA, *INDEX_ONLY)
    rulesets = data.parent / "rulesets.toml"
    rulesets.write_text("".join(f'[[ruleset]]\nid = "{r}"\ncomment = "{c}"\n\n' for r, c in COMMENTS.items()))
    draw([], data, every=True, ruleset_file=rulesets)
    return data, data / "pages"


def tablebase(data: Path, ruleset: str) -> dict[str, dict]:
    """Positions by text."""
    files = DataDir(data).ruleset(Ruleset.parse(ruleset))
    return {row["position"]: row for row in pq.read_table(files.tablebase).to_pylist()}


class Links(HTMLParser):
    """Every id and every link (href, or xlink:href in Graphviz's SVG) of one file."""

    def __init__(self, path: Path):
        super().__init__()
        self.ids: set[str] = set()
        self.links: list[str] = []
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if attrs.get("id"):
            self.ids.add(attrs["id"])
        href = attrs.get("href") or attrs.get("xlink:href")
        if tag == "a" and href:
            self.links.append(href)


def test_every_link_in_every_page_resolves(site):
    _, pages = site
    files = sorted([*pages.rglob("*.html"), *pages.rglob("*.svg")])
    parsed = {path: Links(path) for path in files}
    assert len([p for p in files if p.name == "index.html"]) == 1 + 3 + 2 + len(EXTRA)  # index, every ruleset
    walked = 0
    for path, page in parsed.items():
        for href in page.links:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc, (path, href)
            target = path if not parts.path else (path.parent / unquote(parts.path)).resolve()
            assert target.exists(), (path, href)
            if parts.fragment:
                ids = parsed[target].ids if target in parsed else Links(target).ids
                assert parts.fragment in ids, (path, href)
            walked += 1
    assert walked > 1000


def test_every_game_draws_its_positions_and_a_plug_in_shows_its_text(site):
    data, _ = site
    for ruleset in ["chopsticks", "sticks:rows=2", *EXTRA]:
        rules = Ruleset.parse(ruleset)
        for text in tablebase(data, ruleset):
            picture = rules.game.draw(rules, text)
            svg = ET.fromstring(picture)  # well-formed, without a namespace: inline in HTML
            assert svg.tag == "svg" and svg.get("viewBox"), ruleset
            # a picture with the mover below and the other above says so: the pages keep each player's side
            assert svg.get("class").split() == ["position"] + (["sides"] if rules.game_name == "chopsticks" else []), (
                ruleset
            )
            assert picture_problem(picture) is None, (ruleset, text)
            assert (picture == text_picture(text)) == (rules.game_name == "takeaway"), (ruleset, text)


def test_strategies_are_drawn_for_every_ruleset_small_enough(site):
    _, pages = site
    for ruleset in ["chopsticks", "chopsticks:split=any", *EXTRA]:
        folder = pages / Ruleset.parse(ruleset).folder
        assert (folder / "strategy.dot").exists(), ruleset
        if shutil.which("dot"):
            assert (folder / "strategy.svg").exists(), ruleset
    # chopsticks:split=any: 191 positions and 546 moves, a state graph too tangled to picture
    page = (pages / "chopsticks" / "split-any" / "index.html").read_text()
    assert "graph.svg" not in page and ("tangle nobody can follow" in page or "Graphviz is not installed" in page)


def test_the_index_orders_parameters_as_numbers_and_shows_comments(site):
    _, pages = site
    page = (pages / "index.html").read_text()
    order = [line.split('"')[1] for line in page.split("<tr data-ruleset=")[1:]]
    chopsticks = [r for r in order if r.startswith("chopsticks")]
    assert chopsticks == [
        "chopsticks",
        "chopsticks:split=dead",
        "chopsticks:split=any",
        "chopsticks:overflow=rollover",
    ]  # split in the game's order: none, dead, any
    for comment in COMMENTS.values():
        assert f'<div class="comment">{comment}</div>' in page
    assert "the second player wins in 8 plies" in page


def test_without_graphviz_draw_says_once_how_to_get_it(site, tmp_path, monkeypatch, caplog):
    data, _ = site
    monkeypatch.setattr(draw_module.shutil, "which", lambda name: None)
    with caplog.at_level(logging.WARNING, logger="tablebase"):
        draw(["chopsticks", "chopsticks:split=any"], data, tmp_path)
    hints = [record.getMessage() for record in caplog.records if "Graphviz" in record.getMessage()]
    assert len(hints) == 1 and "apt-get install graphviz" in hints[0] and "\n" not in hints[0]
    page = (tmp_path / "chopsticks" / "default" / "index.html").read_text()
    assert "apt-get install graphviz" in page and "graph.svg" not in page


def test_a_histogram_of_one_remoteness_labels_it_once():
    assert remoteness_histogram({("loss", 0): 1}).count("<text") == 1
    assert remoteness_histogram({("loss", 0): 1, ("win", 1): 1}).count("<text") == 2


def test_check_game_refuses_a_drawing_that_cannot_go_inline_into_a_page():
    assert picture_problem('<svg class="position" viewBox="0 0 9 9"><rect width="9" height="9"/></svg>') is None
    assert "well-formed" in picture_problem("<svg><rect></svg>")
    assert "not <svg>" in picture_problem("<div>3-4-5</div>")
    assert picture_problem("<svg><script>alert(1)</script></svg>").startswith("holds the element <script>")
    assert "not SVG text" in picture_problem(None)


def test_the_readme_names_every_element_a_picture_may_hold():
    from pipeline.products.pictures import ELEMENTS

    shown = "a namespace: the elements"
    page = holding(shown)  # docs/how-to/write-a-game.md
    listed = page[page.index(shown) :][:200]
    assert {element for element in ELEMENTS if f"`{element}`" not in listed} == set()


# --- in the browser --------------------------------------------------------------------------


def chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser") or shutil.which("google-chrome")
    if found is None:
        pytest.skip(
            "Chromium is not installed, so the pages are not tried in a browser: `make test` installs it "
            "where it can (Debian/Ubuntu: apt-get install chromium)"
        )
    return found


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module: the system's (Playwright drives it; no download)."""
    sync_playwright = pytest.importorskip(
        "playwright.sync_api", reason="Playwright is the browser extra (`make dev` or `pip install .[browser]`)"
    ).sync_playwright

    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


def opened(browser, path: Path, width: int = 1400, height: int = 900):
    """A new browser page showing the file `path`."""
    page = browser.new_page(viewport={"width": width, "height": height})
    page.goto(path.as_uri())
    return page


def test_walking_the_game_lists_the_moves_by_ply_keeps_each_players_side_and_downloads_the_line(site, browser):
    data, pages = site
    positions = tablebase(data, "chopsticks:split=any")
    page = opened(browser, pages / "chopsticks" / "split-any" / "index.html")
    here = page.locator("#here")
    assert here.locator("svg.position").get_attribute("aria-label").endswith("holds 1-1, the other player 1-1")
    assert here.locator(".pos").inner_text().startswith("1-1|1-1")
    assert here.locator(".turn").inner_text() == "Ply 0 · the first player to move"
    assert here.locator(".verdict").inner_text() == "the second player wins in 26 plies"
    walked, played = ["1-1|1-1"], []
    for ply in range(1, 5):  # the first move each time: the best
        card = page.locator("#moves li a").first
        assert card.locator("svg.position").count() == 1
        target = card.get_attribute("title").removeprefix("to ")
        child = positions[target]
        meaning = {"win": "loss", "loss": "win", "tie": "tie", "draw": "draw"}[child["value"]]
        assert meaning in card.get_attribute("class").split()
        assert card.locator(".what").inner_text().startswith(in_plies(meaning, child["remoteness"] + 1))
        played.append(card.locator(".label").inner_text())
        card.click()
        page.wait_for_function("id => document.querySelector('#here').dataset.id === id", arg=str(child["id"]))
        assert here.locator(".pos").inner_text().split()[0] == target
        assert page.url.endswith(f".{child['id']}")
        assert page.locator("#moves li").count() == child["moves"] or child["moves"] == 0
        mover, other = ("second", "first") if ply % 2 else ("first", "second")
        assert here.locator(".turn").inner_text() == f"Ply {ply} · the {mover} player to move"
        winner = mover if child["value"] == "win" else other
        assert here.locator(".verdict").inner_text() == f"the {winner} player wins in {child['remoteness']} plies"
        # the first player's hands stay below: the picture is flipped when the second player moves
        flipped = page.evaluate("getComputedStyle(document.querySelector('#here svg.position')).transform")
        assert (flipped != "none") == (mover == "second")
        walked.append(target)
    moves = page.locator("ol#line > li")
    assert moves.count() == 4
    for k in range(4):
        text = moves.nth(k).inner_text()
        player = "first" if k % 2 == 0 else "second"
        assert text.startswith(f"ply {k + 1} {player} player {played[k]} → {walked[k + 1]}"), text
    assert page.locator("#strip a").count() == 5  # the value at each ply, the start's too
    with page.expect_download() as saving:
        page.click("#save-csv")
    assert saving.value.suggested_filename == "chopsticks-split-any-line.csv"
    rows = list(csv.DictReader(io.StringIO(Path(saving.value.path()).read_text())))
    assert [row["position"] for row in rows] == walked and [row["ply"] for row in rows] == ["0", "1", "2", "3", "4"]
    assert [row["to_move"] for row in rows] == ["first player", "second player"] * 2 + ["first player"]
    assert [row["move"] for row in rows] == played + [""]
    assert all(row["value"] == positions[row["position"]]["value"] for row in rows)
    with page.expect_download() as saving:
        page.click("#save-json")
    line = json.loads(Path(saving.value.path()).read_text())
    assert line["ruleset"] == "chopsticks:split=any" and [step["position"] for step in line["line"]] == walked
    assert [step["remoteness"] for step in line["line"]] == [positions[t]["remoteness"] for t in walked]
    page.go_back()
    page.wait_for_function("t => document.querySelector('#here .pos').textContent.startsWith(t)", arg=walked[-2])
    assert page.locator("ol#line > li").count() == 3
    page.close()


def test_search_filters_and_sorting_change_what_the_table_shows(site, browser):
    data, pages = site
    positions = tablebase(data, "chopsticks")
    page = opened(browser, pages / "chopsticks" / "default" / "index.html")
    visible = "() => Number(document.getElementById('shown').dataset.count)"
    assert page.evaluate(visible) == len(positions)
    page.fill("#search", "0-4|")
    assert page.evaluate(visible) == sum("0-4|" in text for text in positions) > 0
    page.fill("#search", "")
    page.uncheck("input[name=value][value=loss]")
    assert page.evaluate(visible) == sum(row["value"] == "win" for row in positions.values())
    page.check("input[name=value][value=loss]")
    page.check("#reachable")
    assert page.evaluate(visible) == sum(row["reachable"] for row in positions.values())
    page.locator("th[data-key=remoteness] button").click()
    first = "() => document.querySelector('table.positions tbody tr:not([hidden]) td.n').textContent"
    assert page.evaluate(first) == "0"
    page.locator("th[data-key=remoteness] button").click()
    assert page.evaluate(first) == str(max(row["remoteness"] for row in positions.values() if row["reachable"]))
    page.close()


def test_the_index_and_the_pages_fit_a_phone_and_keep_positions_on_one_line(site, browser):
    _, pages = site
    for width in (390, 1400):
        page = opened(browser, pages / "index.html", width, 800)
        assert page.evaluate("document.documentElement.scrollWidth") <= width
        heights = page.evaluate(
            "Array.from(document.querySelectorAll('table.catalog code'), c => c.getBoundingClientRect().height)"
        )
        line = page.evaluate("parseFloat(getComputedStyle(document.querySelector('table.catalog code')).lineHeight)")
        assert heights and max(heights) < 1.5 * line  # no start wraps
        if width == 390:  # every ruleset page too: its start drawn, nothing wider than the phone
            links = [link.get_attribute("href") for link in page.locator("td.ruleset a").all()]
            assert len(links) == 3 + 2 + len(EXTRA)
            for href in links:
                page.goto((pages / unquote(href)).as_uri())
                assert page.locator("#here svg.position").count() == 1
                assert page.evaluate("document.documentElement.scrollWidth") <= width, href
        page.close()


def test_the_index_fits_its_boxes_at_1400_px_and_no_histogram_label_is_clipped(site, browser):
    _, pages = site
    page = opened(browser, pages / "index.html", 1400, 900)
    overflowing = page.evaluate(
        "Array.from(document.querySelectorAll('.scroll'), box => "
        "[box.previousElementSibling.id, box.scrollWidth, box.clientWidth])"
        ".filter(([, scrolled, shown]) => scrolled > shown)"
    )
    assert overflowing == []
    labels = page.evaluate("""Array.from(document.querySelectorAll('svg.histogram text'), label => {
        const [text, svg, box] = [label, label.closest('svg'), label.closest('.scroll')]
            .map(e => e.getBoundingClientRect());
        return [label.closest('tr').dataset.ruleset, label.textContent,
                text.left >= Math.max(svg.left, box.left) - 0.5 && text.right <= Math.min(svg.right, box.right) + 0.5];
    })""")
    rows = page.locator("table.catalog tbody tr").count()
    assert len(labels) > rows  # 0 and the longest remoteness, on every row with more than one bar
    assert ["sticks:rows=8", "34", True] in labels
    assert [label for label in labels if not label[2]] == []
    # a start too long for its column is cut, whole on hover
    start = page.locator('tr[data-ruleset="hackenbush:fib=6"] code')
    assert start.get_attribute("title") == "2-3-4-5-6-7-8-9-10-11-12-13-14-15-16-17-18-19-20"
    page.close()


def test_a_position_or_summary_holding_markup_shows_as_text_and_the_walk_still_runs(tmp_path, browser):
    """A plug-in's texts go into the page's HTML and into its JSON document inside a <script>:
    neither may end its element or start one of its own."""
    from tests.test_plugins import MARKUP, hostile

    for command in (["build", "-q", "hostile"], ["draw", "hostile"]):
        result = hostile(tmp_path, "markup", *command, "--data", "data")
        assert result.returncode == 0, result.stderr
    page = opened(browser, tmp_path / "data" / "pages" / "hostile" / "default" / "index.html")
    assert MARKUP in page.locator("p").nth(1).inner_text()  # the summary, as text
    page.locator("#moves li a").first.click()  # the script runs: 3 tokens, take one
    page.wait_for_function("() => document.querySelector('#here').dataset.ply === '1'")
    assert page.locator("#here .pos").inner_text() == "2 " + MARKUP
    assert page.locator("ol#line > li").count() == 1 and page.locator("#strip a").count() == 2
    assert page.locator("b:text-is('bold')").count() == 0
    assert page.evaluate("window.pwned") is None
    page.close()


def test_the_inlined_style_and_script_cannot_end_their_element():
    """pages.css and ruleset.js go into a page as they are, inside <style> and <script>."""
    from pipeline.products.pages import asset

    for name, element in (("pages.css", "style"), ("ruleset.js", "script")):
        text = asset(name).lower()
        assert f"</{element}" not in text and "<!--" not in text, name


#: Handlers a plug-in's picture could hide, each noting in window.pwned that it ran.
HANDLERS = (
    '<svg class="position" width="20" height="20" viewBox="0 0 20 20" '
    "onload=\"window.pwned = (window.pwned || []).concat('onload')\">"
    '<foreignObject width="20" height="20"><img xmlns="http://www.w3.org/1999/xhtml" src="missing.png" '
    "onerror=\"window.pwned = (window.pwned || []).concat('onerror')\"/></foreignObject>"
    '<animate onbegin="window.pwned = (window.pwned || []).concat(\'onbegin\')" attributeName="x" dur="1s"/>'
    "</svg>"
)
#: A picture of shapes and text that reads like markup: allowed, and inert.
LOOKALIKE = (
    '<svg class="position" width="60" height="20" viewBox="0 0 60 20" role="img" '
    'aria-label="&lt;img src=x onerror=&quot;window.pwned=1&quot;&gt;"><rect width="60" height="20" fill="#eee"/>'
    '<text x="2" y="14">&lt;img src=x onerror="window.pwned=1"&gt;</text></svg>'
)


def test_no_handler_of_a_plug_ins_picture_runs_in_the_page(monkeypatch, tmp_path, browser):
    """The pictures drawn before the sanitiser's check ran their handlers in Chromium (the
    move's picture on load, and again when the walk copies it); one that passes runs none."""
    import pipeline.games.registry as games_module
    import pipeline.products.pages as pages_module
    from pipeline.games import all_games
    from tests.test_plugins import Drawn

    data = tmp_path / "data"
    for picture, checked in ((HANDLERS, False), (LOOKALIKE, True)):
        registry = {**all_games(), "drawn": Drawn(picture)}
        monkeypatch.setattr(games_module, "_registry", lambda registry=registry: registry)
        if not (data / "drawn").exists():
            build(Ruleset.parse("drawn"), DataDir(data))
        with monkeypatch.context() as unchecked:
            if not checked:  # as draw was: what the page would run without the check
                unchecked.setattr(pages_module, "picture_problem", lambda picture: None)
            draw(["drawn"], data, tmp_path / ("checked" if checked else "unchecked"))
        page = opened(browser, tmp_path / ("checked" if checked else "unchecked") / "drawn" / "default" / "index.html")
        page.locator("#moves li a").first.click()  # to 2, whose picture the walk copies into place
        page.wait_for_function("() => document.querySelector('#here').dataset.ply === '1'")
        if checked:
            page.wait_for_timeout(1500)  # an animation's onbegin would have run by now
            assert page.evaluate("window.pwned") is None
            assert page.locator("#here svg.position text").text_content() == '<img src=x onerror="window.pwned=1">'
        else:
            page.wait_for_function("() => (window.pwned || []).length >= 3", timeout=5000)
            assert set(page.evaluate("window.pwned")) == {"onload", "onerror", "onbegin"}
        page.close()
