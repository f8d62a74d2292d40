"""The explorer with no server (`tablebase publish --explorer`), in a real Chromium: a bundle
of chopsticks and tic-tac-toe served by a static server that honours Range (tests/ranged.py),
its page reading the Parquet with DuckDB-WASM. Every position shown is compared with
`probe`'s answer; the server is checked to have been asked for ranges of the Parquet files,
never a whole one, and no request to leave it. Every wait is for an element or a text."""

from __future__ import annotations

import re
import urllib.parse
from collections.abc import Iterator
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline import Tablebases
from pipeline.products.explorer import WASM_FOLDER, wasm_folder
from pipeline.products.probe import Probe, probe
from tests.ranged import Served, ranged
from tests.test_cli import tablebase
from tests.test_pages import chromium

sync_api = pytest.importorskip(
    "playwright.sync_api", reason="Playwright is the browser extra (`make dev` or `pip install .[browser]`)"
)
expect = sync_api.expect


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """Chopsticks (a second-player win in 8 plies), its files folders of parts (the index's
    and the lookup's of 32 rows, in row groups of 16), and tic-tac-toe (a tie, '/' in its
    texts), one file a kind."""
    folder = tmp_path_factory.mktemp("static-data")
    Tablebases(folder).build("tictactoe")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr("pipeline.stages.export.INDEX_GROUP_ROWS", 16)
        patch.setattr("pipeline.stages.export.LOOKUP_GROUP_ROWS", 16)
        Tablebases(folder).build("chopsticks", part_rows=32)
    return folder


@pytest.fixture(scope="module")
def server(data, tmp_path_factory) -> Iterator[Served]:
    if not (wasm_folder() / "duckdb-eh.wasm").is_file():
        pytest.skip(f"DuckDB-WASM is not vendored in {wasm_folder()}: `make duckdb-wasm` (npm) does it")
    out = tmp_path_factory.mktemp("static-dist")
    written = Tablebases(data).publish(out, explorer=True)
    with ranged(written[0]) as served:
        yield served


@pytest.fixture(scope="module")
def browser():
    with sync_api.sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=chromium(), args=["--no-sandbox"])
        yield launched
        launched.close()


@pytest.fixture
def page(browser, server):
    """A page whose requests anywhere but the bundle's server are refused and counted."""
    opened = browser.new_page(viewport={"width": 1200, "height": 800})
    opened.outside = []  # type: ignore[attr-defined]

    def local_only(route) -> None:
        if route.request.url.startswith(server.url):
            route.continue_()
        else:
            opened.outside.append(route.request.url)  # type: ignore[attr-defined]
            route.abort()

    opened.route("**/*", local_only)
    yield opened
    assert opened.outside == []  # type: ignore[attr-defined]
    opened.close()


def address(server: Served, ruleset: str, *positions: str) -> str:
    return server.url + "#/" + "/".join(urllib.parse.quote(part, safe=":=,") for part in (ruleset, *positions))


def shows(page, found: Probe) -> None:
    """Wait until the page shows `found`'s position, its value and its moves best first,
    each coloured by its outcome, as probe gives them."""
    expect(page.locator("#position")).to_have_text(found.position, timeout=60_000)
    expect(page.locator("#picture pre.text")).to_have_text(found.position)
    expect(page.locator("#here")).to_have_attribute("data-value", found.value)
    buttons = page.locator("#moves button")
    expect(buttons).to_have_count(len(found.moves))
    for k, move in enumerate(found.moves):
        expect(buttons.nth(k).locator(".name")).to_have_text(move.move)
        expect(buttons.nth(k)).to_have_class(move.outcome)
        expect(buttons.nth(k)).to_have_attribute("data-position", move.position)
        expect(buttons.nth(k)).to_have_attribute(
            "data-remoteness", "" if move.remoteness is None else str(move.remoteness)
        )


def test_the_bundle_opens_on_the_first_rulesets_start_reading_parquet_by_ranges(server, page, data):
    page.goto(server.url)
    start = probe("chopsticks", "start", data)
    shows(page, start)
    expect(page.locator("#status")).to_have_text("The first player, to move, loses in 8 plies.")
    assert page.url.endswith("#/chopsticks/" + urllib.parse.quote(start.position, safe=""))
    parquet = [request for request in server.requests if request[1].endswith(".parquet")]
    asked = {path for method, path, header, _ in parquet if method == "GET"}
    assert "/catalog.parquet" in asked
    for kind in ("index", "lookup"):  # a folder of parts: the parts SHA256SUMS lists
        assert any(path.startswith(f"/{kind}/chopsticks/default/part-") for path in asked), kind
    # every byte of Parquet came by a range: no file was sent whole
    assert all(header is not None for method, _, header, _ in parquet if method == "GET")
    assert len(server.ranged()) >= 3


def test_clicks_and_keys_walk_the_game_and_the_browser_goes_back(server, page, data):
    page.goto(address(server, "chopsticks", "start"))
    start = probe("chopsticks", "start", data)
    shows(page, start)
    page.locator("#moves button").nth(0).click()
    first = probe("chopsticks", start.moves[0].position, data)
    shows(page, first)
    expect(page.locator("#status")).to_contain_text("The second player, to move, ")
    page.keyboard.press(str(len(first.moves)))
    second = probe("chopsticks", first.moves[-1].position, data)
    shows(page, second)
    expect(page.locator("#line li")).to_have_count(3)
    page.keyboard.press("ArrowLeft")
    shows(page, first)
    page.keyboard.press("ArrowRight")
    shows(page, second)
    page.locator("#back").click()
    page.locator("#back").click()
    shows(page, start)
    expect(page.locator("#back")).to_be_disabled()
    page.go_back()  # the browser's Back: one step of the page's own
    shows(page, first)


def test_a_shared_address_reloads_to_the_same_position_and_line(server, page, browser, data):
    """Tic-tac-toe's texts hold '/', which parts an address's parts: each is encoded."""
    page.goto(address(server, "tictactoe", "start"))
    shows(page, probe("tictactoe", "start", data))
    for ply in range(3):
        page.keyboard.press("1")
        expect(page.locator("#line li")).to_have_count(ply + 2)
    here = page.locator("#position").inner_text()
    other = browser.new_page(viewport={"width": 1200, "height": 800})
    other.goto(page.url)
    shows(other, probe("tictactoe", here, data))
    expect(other.locator("#line li")).to_have_count(4)
    other.reload()
    shows(other, probe("tictactoe", here, data))
    other.close()


def test_positions_opened_by_address_agree_with_probe(server, page, data):
    """Positions from across the tablebase, each opened as a shared link opens it: the
    end of a game, a draw-free middle, positions whose moves lose and tie."""
    rows = pq.read_table(next(data.glob("tictactoe/*/lookup.parquet")), columns=["position", "remoteness"]).to_pylist()
    picked = [rows[k]["position"] for k in (0, 1, len(rows) // 3, len(rows) // 2, len(rows) - 1)]
    picked.append(next(row["position"] for row in rows if row["remoteness"] == 0))
    page.goto(address(server, "tictactoe", "start"))
    shows(page, probe("tictactoe", "start", data))
    for position in picked:
        page.evaluate("text => { location.hash = '#/tictactoe/' + encodeURIComponent(text); }", position)
        found = probe("tictactoe", position, data)
        shows(page, found)
        if not found.moves:
            expect(page.locator("#status")).to_contain_text("Game over")


def test_a_whole_game_against_the_tablebase_ends_in_game_over(server, page, data):
    """The user plays the worst move each time, the tablebase its best."""
    page.goto(address(server, "tictactoe", "start"))
    page.locator("#auto").check()
    found = probe("tictactoe", "start", data)
    shows(page, found)
    while found.moves:
        page.locator("#moves button").last.click()
        reply = probe("tictactoe", found.moves[-1].position, data)
        found = probe("tictactoe", reply.moves[0].position, data) if reply.moves else reply
        shows(page, found)
    expect(page.locator("#status")).to_have_text(re.compile("^Game over: "))


def test_an_unknown_ruleset_or_position_is_said_in_one_sentence(server, page):
    page.goto(address(server, "chopsticks", "9-9"))
    expect(page.locator("#error")).to_contain_text('"9-9" is not a position of chopsticks', timeout=60_000)
    page.goto(address(server, "nim", "start"))
    expect(page.locator("#error")).to_contain_text("nim is not in this bundle")


def test_publish_explorer_without_duckdb_wasm_is_one_line(data, tmp_path, monkeypatch):
    monkeypatch.setenv(WASM_FOLDER, str(tmp_path))  # a folder without DuckDB-WASM's files
    done = tablebase("publish", "--explorer", "--out", str(tmp_path / "out"), data=data)
    assert done.returncode != 0
    assert done.stderr.startswith("error: the static explorer needs DuckDB-WASM")
    assert len(done.stderr.strip().splitlines()) == 1
    assert not (tmp_path / "out").exists()
