"""The explorer `tablebase serve` serves at /, in a real Chromium (Playwright, the system's
browser as tests/test_pages.py drives it): it opens on a ruleset's start, shows the moves
the API gives, walks the game by clicks and keys, reloads a shared address to the same
place, goes back with the browser, and plays a whole game against the tablebase. Every
wait is for an element or a text (expect), none for a time."""

from __future__ import annotations

import json
import re
import urllib.parse
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from pipeline import Tablebases
from pipeline.core.values import COLOURS
from tests.test_pages import chromium
from tests.test_serve import serving

ROOT = Path(__file__).resolve().parent.parent

pytest.importorskip("starlette", reason="the serve extra: pip install 'tablebase[serve]' (make dev installs it)")
sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is the browser extra (`make dev` or `pip install .[browser]`)"
)
expect = sync_api.expect


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """A server over chopsticks (a second-player win in 8 plies) and tic-tac-toe (a tie)."""
    data = tmp_path_factory.mktemp("explorer")
    Tablebases(data).build("chopsticks", "tictactoe")
    with serving(data) as base:
        yield base


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser):
    opened = browser.new_page(viewport={"width": 1200, "height": 800})
    yield opened
    opened.close()


def api(base: str, ruleset: str, position: str) -> dict[str, Any]:
    url = f"{base}/api/rulesets/{urllib.parse.quote(ruleset)}?" + urllib.parse.urlencode({"position": position})
    with urllib.request.urlopen(url, timeout=60) as response:
        return json.loads(response.read())


def shows(page, answer: dict[str, Any]) -> None:
    """Wait until the page shows `answer`'s position with its moves, as the API gave them."""
    expect(page.locator("#position")).to_have_text(answer["position"])
    buttons = page.locator("#moves button")
    expect(buttons).to_have_count(len(answer["moves"]))
    for k, move in enumerate(answer["moves"]):
        expect(buttons.nth(k).locator(".name")).to_have_text(move["move"])
        expect(buttons.nth(k)).to_have_class(move["outcome"])
        expect(buttons.nth(k)).to_have_attribute("data-position", move["position"])
    expect(page.locator("#picture svg")).to_have_count(1)


def test_the_page_opens_on_the_first_rulesets_start_with_the_apis_moves(server, page):
    page.goto(server + "/")
    start = api(server, "chopsticks", "start")
    shows(page, start)
    expect(page.locator("#status")).to_have_text("The first player, to move, loses in 8 plies.")
    expect(page.locator("#ruleset")).to_have_value("chopsticks")
    assert page.url.endswith("#/chopsticks/" + urllib.parse.quote(start["position"], safe=""))
    page.screenshot(path="/tmp/explorer-desktop-start.png", full_page=True)


def test_clicks_and_keys_walk_the_game_and_the_browser_goes_back(server, page):
    page.goto(server + "/#/chopsticks")
    start = api(server, "chopsticks", "start")
    shows(page, start)
    page.locator("#moves button").nth(0).click()
    first = api(server, "chopsticks", start["moves"][0]["position"])
    shows(page, first)
    expect(page.locator("#status")).to_contain_text("The second player, to move, ")
    page.keyboard.press("2" if len(first["moves"]) > 1 else "1")
    second = api(server, "chopsticks", first["moves"][1 if len(first["moves"]) > 1 else 0]["position"])
    shows(page, second)
    expect(page.locator("#line li")).to_have_count(3)
    expect(page.locator("#chart .point")).to_have_count(3)
    page.keyboard.press("ArrowLeft")
    shows(page, first)
    expect(page.locator("#line li")).to_have_count(3)  # the line is kept past the position shown
    page.keyboard.press("ArrowRight")
    shows(page, second)
    page.locator("#back").click()
    page.locator("#back").click()
    shows(page, start)
    expect(page.locator("#back")).to_be_disabled()
    page.go_back()  # the browser's Back: one step of the page's own
    shows(page, first)
    page.go_forward()
    shows(page, start)


def test_a_shared_address_reloads_to_the_same_position_and_line(server, page, browser):
    """Tic-tac-toe's texts hold '/', which parts an address's parts: each is encoded."""
    page.goto(server + "/#/tictactoe/start")
    start = api(server, "tictactoe", "start")
    shows(page, start)
    for ply in range(3):
        page.keyboard.press("1")
        expect(page.locator("#line li")).to_have_count(ply + 2)
    shared = page.url
    here = page.locator("#position").inner_text()
    assert shared.endswith("/" + urllib.parse.quote(here, safe=""))
    other = browser.new_page(viewport={"width": 1200, "height": 800})
    other.goto(shared)
    shows(other, api(server, "tictactoe", here))
    expect(other.locator("#line li")).to_have_count(4)
    expect(other.locator("#line li.now")).to_have_text(page.locator("#line li.now").inner_text())
    other.reload()
    shows(other, api(server, "tictactoe", here))
    other.close()


def test_a_whole_game_against_the_tablebase_ends_in_game_over(server, page):
    """The user plays the worst move each time, the tablebase its best: tic-tac-toe, a tie
    from the start, ends before the board is full with the user's loss."""
    page.goto(server + "/#/tictactoe/start")
    page.locator("#auto").check()
    answer = api(server, "tictactoe", "start")
    shows(page, answer)
    played = 0
    while not answer["game_over"]:
        assert played < 9
        mine = answer["moves"][-1]
        page.locator("#moves button").last.click()
        played += 1
        reply = api(server, "tictactoe", mine["position"])
        if reply["game_over"]:
            answer = reply
            break
        answer = api(server, "tictactoe", reply["moves"][0]["position"])  # the tablebase's best
        played += 1
        shows(page, answer)
    shows(page, answer)
    expect(page.locator("#status")).to_have_text("Game over: the first player loses.")
    expect(page.locator("#moves")).to_contain_text("no moves: the game is over")
    expect(page.locator("#line li")).to_have_count(played + 1)
    page.screenshot(path="/tmp/explorer-desktop-over.png", full_page=True)


def test_the_apis_error_is_shown_in_its_own_words(server, page):
    page.goto(server + "/#/chopsticks/9-9")
    expect(page.locator("#error")).to_contain_text("malformed chopsticks position '9-9'")
    page.goto(server + "/#/nim/start")
    expect(page.locator("#error")).to_contain_text("nim is not built")


def test_at_phone_width_nothing_is_wider_than_the_screen(server, browser):
    phone = browser.new_page(viewport={"width": 390, "height": 844})
    phone.goto(server + "/#/tictactoe/start")
    shows(phone, api(server, "tictactoe", "start"))
    phone.keyboard.press("1")
    expect(phone.locator("#line li")).to_have_count(2)
    assert phone.evaluate("document.documentElement.scrollWidth") <= 390
    phone.screenshot(path="/tmp/explorer-phone.png", full_page=True)
    phone.close()


def test_the_colours_are_the_pages_own():
    style = (ROOT / "pipeline" / "explorer" / "explorer.css").read_text()
    for value, colour in COLOURS.items():
        assert re.search(rf"^\.{value} {{ background: {colour}; }}$", style, re.MULTILINE), value


def test_the_ruleset_chooser_opens_another_rulesets_start(server, page):
    page.goto(server + "/")
    shows(page, api(server, "chopsticks", "start"))
    page.locator("#ruleset").select_option("tictactoe")
    shows(page, api(server, "tictactoe", "start"))
    assert "#/tictactoe/" in page.url


def test_the_keyboard_alone_reaches_a_move_and_plays_it(server, page):
    page.goto(server + "/#/tictactoe/start")
    start = api(server, "tictactoe", "start")
    shows(page, start)
    for _ in range(3):  # the ruleset, the toggle, then the best move
        page.keyboard.press("Tab")
    expect(page.locator("#moves button").first).to_be_focused()
    page.keyboard.press("Enter")
    after = api(server, "tictactoe", start["moves"][0]["position"])
    shows(page, after)
    expect(page.locator("#moves button").first).to_be_focused()  # the focus is kept for the next move
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    shows(page, api(server, "tictactoe", after["moves"][1]["position"]))
