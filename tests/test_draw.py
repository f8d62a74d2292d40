"""`tablebase draw`: DOT graphs and strategies that match the tablebase, offline HTML pages whose links resolve.

tests/test_pages.py walks the pages of every game in a browser."""

from __future__ import annotations

import csv
import html
import itertools
import json
import logging
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from dataclasses import replace
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pyarrow.parquet as pq
import pytest

import pipeline.products.draw as draw_module
from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.products.draw import DrawError, draw
from pipeline.products.pages import PAGE_BYTES, TABLE_ROWS, remoteness_histogram
from pipeline.stages.build import build

ROOT = Path(__file__).resolve().parent.parent
DRAWN = ["chopsticks", "chopsticks:overflow=rollover"]

NODE = re.compile(r"^\t([po])(\d+) \[(.*)\]$")
EDGE = re.compile(r"^\t([po])(\d+) -> ([po])(\d+) ")


class Page(HTMLParser):
    """What the tests look at in one HTML page: ids, links, classes, tags, text."""

    def __init__(self, path: Path):
        super().__init__()
        self.path = path
        self.ids: set[str] = set()
        self.links: list[tuple[str, str]] = []  # (href, class)
        self.rows: dict[str, dict] = {}  # <tr id=…> -> class, links inside
        self.tags: set[str] = set()
        self.attributes: list[str] = []
        self._row: str | None = None
        self.feed(path.read_text(encoding="utf-8"))

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.add(tag)
        self.attributes += [v for v in attrs.values() if v]
        if "id" in attrs:
            self.ids.add(attrs["id"])
        if tag == "tr":
            self._row = attrs.get("id") or attrs.get("data-ruleset")
            if self._row:
                self.rows[self._row] = {"class": attrs.get("class", "").split(), "links": [], "cells": {}}
        if tag == "a" and "href" in attrs:
            self.links.append((attrs["href"], attrs.get("class", "")))
            if self._row:
                self.rows[self._row]["links"].append((attrs["href"], attrs.get("class", "").split()))
        if tag == "td" and self._row:
            self._cell = attrs.get("class", "")

    def handle_data(self, data):
        if self._row and getattr(self, "_cell", None):
            self.rows[self._row]["cells"].setdefault(self._cell, data)

    def handle_endtag(self, tag):
        if tag == "td":
            self._cell = None
        if tag == "tr":
            self._row = None


def parse_dot(path: Path) -> tuple[dict[tuple[str, int], str], list[tuple[tuple[str, int], tuple[str, int]]]]:
    nodes, edges = {}, []
    for line in path.read_text().splitlines():
        if match := NODE.match(line):
            nodes[(match.group(1), int(match.group(2)))] = match.group(3)
        elif match := EDGE.match(line):
            edges.append(((match.group(1), int(match.group(2))), (match.group(3), int(match.group(4)))))
    return nodes, edges


def tablebase(data: Path, ruleset: str) -> tuple[dict[int, dict], dict[int, set[int]]]:
    files = DataDir(data).ruleset(Ruleset.parse(ruleset))
    positions = {row["id"]: row for row in pq.read_table(files.tablebase).to_pylist()}
    children = defaultdict(set)
    for row in pq.read_table(files.transitions, columns=["src", "dst"]).to_pylist():
        children[row["src"]].add(row["dst"])
    return positions, children


@pytest.fixture(scope="module")
def pages(built, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("pages")
    draw(DRAWN, built, out)
    return out


def test_state_graph_has_every_reachable_position_and_move(built, pages):
    positions, children = tablebase(built, "chopsticks")
    nodes, edges = parse_dot(pages / "chopsticks" / "default" / "graph.dot")
    reachable = {pid for pid, row in positions.items() if row["reachable"]}
    assert {pid for _, pid in nodes} == reachable and len(nodes) == 92
    assert sorted((a[1], b[1]) for a, b in edges) == sorted((s, d) for s in reachable for d in children[s])
    for (_, pid), attributes in nodes.items():
        assert f'fillcolor="{draw_module.COLOURS[positions[pid]["value"]]}"' in attributes
        assert ("peripheries=2" in attributes) == (positions[pid]["remoteness"] == 0)
        assert f'URL="index.html#p{pid}"' in attributes  # the SVG's node links to the position on the page


def test_winning_strategy_keeps_one_fastest_win_and_every_reply(built, pages):
    positions, children = tablebase(built, "chopsticks")
    nodes, edges = parse_dot(pages / "chopsticks" / "default" / "strategy.dot")
    out = defaultdict(list)
    for a, b in edges:
        out[a].append(b[1])
    start = next(pid for pid, row in positions.items() if row["position"] == "1-1|1-1")
    assert ("o", start) in nodes  # the second player wins: the first player's turn is the loser's
    for turn, pid in nodes:
        row = positions[pid]
        if turn == "o":  # the loser moves: every reply is there
            assert row["value"] == "loss"
            assert sorted(out[(turn, pid)]) == sorted(children[pid])
        elif row["remoteness"] == 0:
            assert out[(turn, pid)] == []
        else:  # the winner moves: one move, to a loss for the opponent, as fast as possible
            assert row["value"] == "win" and len(out[(turn, pid)]) == 1
            child = positions[out[(turn, pid)][0]]
            assert child["value"] == "loss" and child["remoteness"] == row["remoteness"] - 1
    leaves = [pid for node in nodes if not out[node] for pid in [node[1]]]
    assert leaves and all(positions[pid]["remoteness"] == 0 for pid in leaves)


def test_drawn_start_gets_the_first_players_drawing_strategy(built, pages):
    positions, children = tablebase(built, "chopsticks:overflow=rollover")
    path = pages / "chopsticks" / "overflow-rollover" / "strategy.dot"
    assert "the start is a draw" in path.read_text()
    nodes, edges = parse_dot(path)
    out = defaultdict(list)
    for a, b in edges:
        out[a].append(b[1])
    for turn, pid in nodes:
        if turn == "o":
            assert sorted(out[(turn, pid)]) == sorted(children[pid])
        elif positions[pid]["remoteness"] != 0:
            assert len(out[(turn, pid)]) == 1
            assert positions[out[(turn, pid)][0]]["value"] in ("draw", "loss")  # never hands a win over


def test_pages_are_self_contained_and_every_link_resolves(pages):
    parsed = {path: Page(path) for path in sorted(pages.rglob("*.html"))}
    assert {p.relative_to(pages).as_posix() for p in parsed} == {
        "index.html",
        "chopsticks/default/index.html",
        "chopsticks/overflow-rollover/index.html",
    }
    for path, page in parsed.items():
        text = path.read_text()
        assert "http://" not in text and "https://" not in text, path
        assert not page.tags & {"link", "img", "iframe", "object", "embed"}, path
        assert "<script src" not in text and "fetch(" not in text and "XMLHttpRequest" not in text, path
        assert "url(" not in text and "@import" not in text
        for href, _ in page.links:
            parts = urlsplit(href)
            assert not parts.scheme and not parts.netloc, href
            target = path if not parts.path else (path.parent / unquote(parts.path))
            assert target.exists(), (path, href)
            if parts.fragment:
                assert parts.fragment in parsed[target].ids, (path, href)


def test_ruleset_page_colours_every_position_and_links_its_moves(built, pages):
    positions, children = tablebase(built, "chopsticks")
    page = Page(pages / "chopsticks" / "default" / "index.html")
    rows = {rid: row for rid, row in page.rows.items() if rid.startswith("r")}
    # the first page of the table is written out (the script pages through the rest)
    assert set(rows) <= {f"r{pid}" for pid in positions} and len(rows) == min(TABLE_ROWS, len(positions))
    meaning = {"win": "loss", "loss": "win", "tie": "tie", "draw": "draw"}  # for the player making the move
    for pid, position in positions.items():
        if f"r{pid}" not in rows:
            continue
        row = rows[f"r{pid}"]
        assert position["value"] in row["class"]
        assert ("unreachable" in row["class"]) == (not position["reachable"])
        own, *moves = row["links"]  # the position itself, to walk from it; then its moves
        assert own[0] == f"#p{pid}"
        targets = [int(href[2:]) for href, _ in moves]
        assert sorted(targets) == sorted(children[pid])
        for href, classes in moves:
            assert meaning[positions[int(href[2:])]["value"]] in classes
    assert {"graph.dot", "strategy.dot", "positions.csv"} <= {href for href, _ in page.links}


def test_positions_csv_beside_a_page_holds_every_position_and_its_moves(built, pages):
    positions, children = tablebase(built, "chopsticks")
    with open(pages / "chopsticks" / "default" / "positions.csv", newline="") as file:
        rows = {int(row["id"]): row for row in csv.DictReader(file)}
    assert rows.keys() == positions.keys()
    for pid, row in rows.items():
        assert (row["position"], row["value"]) == (positions[pid]["position"], positions[pid]["value"])
        assert {dst for _, dst in json.loads(row["moves"])} == children[pid]


def test_a_page_stays_under_five_megabytes_with_every_position_one_link_away(tmp_path):
    build(Ruleset.parse("sticks:rows=8"), DataDir(tmp_path))  # 15,394 positions, 403,214 moves: 70 MB once
    draw(["sticks:rows=8"], tmp_path, graphs=False)
    folder = tmp_path / "pages" / "sticks" / "rows-8"
    assert (folder / "index.html").stat().st_size <= PAGE_BYTES
    page = (folder / "index.html").read_text()
    assert "nearest the start" in page and 'href="positions.csv"' in page
    with open(folder / "positions.csv", newline="") as file:
        assert sum(1 for _ in csv.DictReader(file)) == 15_394


def test_a_long_remoteness_histogram_keeps_to_its_column():
    svg = remoteness_histogram({("win", r): 1 for r in range(0, 400, 2)} | {("loss", 399): 1})
    assert int(re.search(r'width="(\d+)"', svg).group(1)) <= 240


def test_index_counts_match_the_catalog(built, pages):
    catalog = {row["ruleset"]: row for row in pq.read_table(DataDir(built).catalog).to_pylist()}
    page = Page(pages / "index.html")
    rows = {rid: row for rid, row in page.rows.items() if rid in catalog}
    assert set(rows) == set(catalog)
    for ruleset, row in rows.items():
        for column in ("positions", "reachable", "wins", "losses", "draws"):
            cell = next(text for cls, text in row["cells"].items() if column in cls.split())
            assert int(cell.replace(",", "")) == catalog[ruleset][column]
        linked = [href for href, _ in row["links"]]
        assert (ruleset in DRAWN) == bool(linked), ruleset
    assert page.tags >= {"svg", "rect", "title"}  # the charts are inline SVG


def test_svg_follows_graphviz(built, tmp_path, monkeypatch):
    monkeypatch.setattr(draw_module.shutil, "which", lambda name: None)
    draw(["chopsticks"], built, tmp_path / "without")
    assert not list((tmp_path / "without").rglob("*.svg"))
    assert "graph.svg" not in (tmp_path / "without" / "chopsticks" / "default" / "index.html").read_text()
    monkeypatch.undo()
    if shutil.which("dot") is None:
        pytest.skip("Graphviz is not installed")
    draw(["chopsticks"], built, tmp_path / "with")
    for name in ("graph.svg", "strategy.svg"):
        assert "<svg" in (tmp_path / "with" / "chopsticks" / "default" / name).read_text()


def test_a_dot_that_cannot_run_leaves_the_dot_files_and_says_how_to_get_graphviz(built, tmp_path, monkeypatch, caplog):
    monkeypatch.setattr(draw_module.shutil, "which", lambda name: "/usr/bin/dot")  # found, then gone
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with caplog.at_level(logging.WARNING, logger="tablebase"):
        draw(["chopsticks"], built, tmp_path / "pages")
    folder = tmp_path / "pages" / "chopsticks" / "default"
    assert {"graph.dot", "strategy.dot", "index.html"} <= {p.name for p in folder.iterdir()}
    assert not list(folder.glob("*.svg"))
    assert {r.getMessage() for r in caplog.records} == {draw_module.GRAPHVIZ_HINT}


#: Texts a game may give its positions and moves that mean something else in DOT: quotes,
#: Graphviz's escapes (\\N is the node's name, \\l a line break), HTML, a keyword.
ODD_TEXTS = ['say "hi" \\N', "<b>bold</b>", "ends in \\", "graph", "x\\ly", "<1>"]


def test_every_text_is_drawn_as_it_is(built):
    if shutil.which("dot") is None:
        pytest.skip("Graphviz is not installed")
    rules = Ruleset.parse("chopsticks")
    graph = draw_module.load_graph(rules, built, draw_module.read_summary(rules, built), reachable_only=True)
    odd = [p.id for p in graph.reachable() if p.id != graph.start][: len(ODD_TEXTS)]
    positions = graph.positions | {pid: replace(graph.positions[pid], text=text) for pid, text in zip(odd, ODD_TEXTS)}
    texts = itertools.cycle(ODD_TEXTS)
    moves = {pid: [replace(edge, move=next(texts)) for edge in edges] for pid, edges in graph.moves.items()}
    graph = replace(graph, positions=positions, moves=moves)

    def drawn(dot) -> tuple[set[str], set[str]]:
        svg = dot.pipe(format="svg").decode()
        texts = re.findall(r"<text[^>]*>(.*?)</text>", svg)
        return {html.unescape(t) for t in texts}, {html.unescape(t) for t in re.findall(r'xlink:title="(.*?)"', svg)}

    texts, titles = drawn(draw_module.state_graph(graph))
    assert set(ODD_TEXTS) <= texts  # the positions' labels
    assert set(ODD_TEXTS) <= titles  # the moves' tooltips
    plan = draw_module.strategy(graph)
    texts, _ = drawn(draw_module.strategy_graph(graph, plan))
    assert {move for _, _, move in plan.edges} <= texts and len(plan.edges) > 0  # the moves' labels


def test_only_reachable_positions_are_listed_when_there_are_too_many(built, tmp_path, monkeypatch):
    monkeypatch.setattr(draw_module, "PAGE_LIMIT", 100)
    monkeypatch.setattr(draw_module.shutil, "which", lambda name: None)
    draw(["chopsticks"], built, tmp_path, graphs=False)
    positions, _ = tablebase(built, "chopsticks")
    page = Page(tmp_path / "chopsticks" / "default" / "index.html")
    assert {rid for rid in page.rows if rid.startswith("r")} == {
        f"r{pid}" for pid, row in positions.items() if row["reachable"]
    }
    assert all(href[1:] in page.ids for href, _ in page.links if href.startswith("#"))


def test_a_ruleset_too_large_for_a_graph_gets_its_page_and_one_too_large_for_a_page_is_skipped(
    built, tmp_path, monkeypatch, caplog
):
    monkeypatch.setattr(draw_module, "GRAPH_LIMIT", 150)  # chopsticks has 92, the rollover one 200
    draw(["chopsticks", "chopsticks:overflow=rollover"], built, tmp_path)
    assert (tmp_path / "chopsticks" / "default" / "graph.dot").exists()
    rollover = tmp_path / "chopsticks" / "overflow-rollover"
    assert (rollover / "index.html").exists() and not (rollover / "graph.dot").exists()
    monkeypatch.setattr(draw_module, "PAGE_LIMIT", 150)
    with caplog.at_level(logging.WARNING, logger="tablebase"):
        draw(["chopsticks:overflow=rollover", "chopsticks"], built, tmp_path / "second")
    assert (tmp_path / "second" / "chopsticks" / "default" / "index.html").exists()
    assert not (tmp_path / "second" / "chopsticks" / "overflow-rollover").exists()
    assert any("skipped chopsticks:overflow=rollover has 200 positions" in r.getMessage() for r in caplog.records)
    with pytest.raises(DrawError, match=r"^chopsticks:overflow=rollover has 200 positions reachable .*at most 150"):
        draw(["chopsticks:overflow=rollover"], built, tmp_path / "third")
    assert not (tmp_path / "third").exists()


def test_command_line_size_guard_page_only_and_escaped_ids(tmp_path):
    # 3,558 positions; 834 positions and 10,897 moves; an id with '/'
    for ruleset in ("sticks:rows=7", "sticks:rows=6", "hackenbush:tree=1:2/3"):
        build(Ruleset.parse(ruleset), DataDir(tmp_path))

    def tablebase_draw(*args, quiet=True):
        return subprocess.run(
            [sys.executable, "-m", "pipeline", "draw", *(["-q"] if quiet else []), *args, "--data", str(tmp_path)],
            capture_output=True,
            text=True,
            cwd=ROOT,
            timeout=120,
        )

    alone = tablebase_draw("sticks:rows=7")
    assert alone.returncode == 0, alone.stderr
    assert [line.split(" ", 1)[1] for line in alone.stderr.strip().splitlines() if "state graph" in line] == [
        "drawing the page of sticks:rows=7 without its state graph: 3,558 reachable positions, too many to draw "
        "as a graph (at most 2,000)"
    ]
    by_hand = tmp_path / "pages" / "sticks" / "rows-7"
    assert (by_hand / "index.html").exists() and not (by_hand / "graph.dot").exists()
    drawn = tablebase_draw("--all", quiet=False)
    assert drawn.returncode == 0, drawn.stderr
    assert (by_hand / "index.html").exists()  # too many moves for --all, drawn by hand: kept
    assert ".tmp" not in drawn.stderr and str(tmp_path / "pages" / "sticks" / "rows-6") in drawn.stderr
    sticks = tmp_path / "pages" / "sticks" / "rows-6"
    # too large for a state graph: the page and the strategy, small enough to read, alone
    assert {p.name for p in sticks.iterdir()} - {"strategy.svg"} == {"index.html", "positions.csv", "strategy.dot"}
    assert (tmp_path / "pages" / Ruleset.parse("hackenbush:tree=1:2/3").folder / "graph.dot").exists()
    index = Page(tmp_path / "pages" / "index.html")
    for href, _ in index.links:
        if not href.startswith("#"):
            assert (tmp_path / "pages" / unquote(href)).exists(), href
