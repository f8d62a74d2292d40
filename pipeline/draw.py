"""Pictures of the built tablebases: state graphs, winning strategies and HTML pages.

    PAGES/index.html                every built ruleset: value counts and remoteness histograms
    PAGES/<game>/<slug>/index.html      every position coloured by value, linked to its children
    PAGES/<game>/<slug>/graph.dot       the positions reachable from the start and every move
    PAGES/<game>/<slug>/strategy.dot    what the winning side needs from the start
    PAGES/<game>/<slug>/*.svg           the same drawn by Graphviz, where `dot` is installed

PAGES is DATA/pages/ unless given; <game>/<slug> is the ruleset's folder, as under
DATA/. The pages are self-contained: inline CSS and SVG, no script, no fetch, so they
open offline straight from the disk.

Graphs are for small rulesets: at most GRAPH_LIMIT positions reachable from the start.
A ruleset page lists every position up to PAGE_LIMIT positions, else only the reachable
ones, up to PAGE_LIMIT of those. Values are the side to move's, as everywhere.
"""

from __future__ import annotations

import html
import os
import shutil
import subprocess
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

import duckdb
import pyarrow.parquet as pq

from pipeline.check import trusted
from pipeline.errors import DataError, TablebaseError
from pipeline.games import all_games
from pipeline.layout import DataDir
from pipeline.parquet import atomic_path, require
from pipeline.probe import Move, best_first
from pipeline.progress import log
from pipeline.rulesets import Ruleset
from pipeline.values import Value, in_words

GRAPH_LIMIT = 2_000
PAGE_LIMIT = 20_000
#: With --all (as `make all` runs it): only what a person would look at, drawn quickly.
ALL_GRAPH_LIMIT = 300
ALL_GRAPH_TRANSITIONS = 500  # Graphviz takes minutes over dense cyclic graphs of ~800 edges
ALL_PAGE_TRANSITIONS = 20_000
#: Seconds Graphviz may spend laying out one graph before the SVG is given up.
DOT_TIMEOUT = 120
#: Graphs with more edges than this get dot's quicker layout settings.
FAST_LAYOUT_EDGES = 250
#: Graphs with more edges than this are laid out by sfdp (force-directed) instead of dot.
LAYERED_EDGES = 1_000

#: Fill colour of each value, shared by the DOT files and the pages.
COLOURS = {"win": "#a5d6a7", "loss": "#ef9a9a", "tie": "#fff59d", "draw": "#cfd8dc"}
PLURALS = {"win": "wins", "loss": "losses", "tie": "ties", "draw": "draws"}


def _count(n: int, value: str) -> str:
    return f"{n:,} {value if n == 1 else PLURALS[value]}"


class DrawError(TablebaseError):
    """A ruleset too large to draw, or one that cannot be drawn from the data."""


@dataclass(frozen=True)
class Position:
    id: int
    text: str
    value: str
    remoteness: int | None
    grundy: int | None
    reachable: bool

    @property
    def over(self) -> bool:
        """Whether the game is over here (remoteness 0: no move left)."""
        return self.remoteness == 0


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    move: str


@dataclass(frozen=True)
class RulesetGraph:
    """One ruleset's positions and moves, loaded for drawing."""

    rules: Ruleset
    summary: dict  # the ruleset's catalog row
    positions: dict[int, Position]  # by id, ascending
    moves: dict[int, list[Edge]]  # each position's moves, best first for its mover
    start: int

    def reachable(self) -> list[Position]:
        return [p for p in self.positions.values() if p.reachable]


@dataclass(frozen=True)
class Strategy:
    """The subgraph one side needs from the start: at its turns one best move, at the
    other side's turns every reply. Nodes are (position id, whether the owner moves)."""

    owner: str  # 'first' or 'second' player
    holds: str  # the start's value for the owner: 'win', or 'tie' / 'draw' which the owner holds
    nodes: list[tuple[int, bool]]
    edges: list[tuple[tuple[int, bool], tuple[int, bool], str]]


def read_summary(rules: Ruleset, data: Path) -> dict:
    """The ruleset's catalog row (from its summary.parquet); DataError if not built."""
    files = DataDir(data).published(rules)
    path = require(files.summary, f"summary of {rules.id} (build it with `tablebase build {rules.id}`)")
    row = pq.read_table(path).to_pylist()[0]
    row["params"] = dict(row["params"])
    return row


def check_size(summary: dict, graphs: bool) -> None:
    """DrawError if the ruleset is too large for the pictures asked for."""
    reachable, ruleset = summary["reachable"], summary["ruleset"]
    if graphs and reachable > GRAPH_LIMIT:
        raise DrawError(
            f"{ruleset} has {reachable:,} positions reachable from the start, too many to draw "
            f"as a graph (at most {GRAPH_LIMIT:,}); --page-only writes its HTML page alone")
    if reachable > PAGE_LIMIT:
        raise DrawError(
            f"{ruleset} has {reachable:,} positions reachable from the start, too many for "
            f"a page (at most {PAGE_LIMIT:,})")


def load_graph(rules: Ruleset, data: Path, summary: dict, reachable_only: bool) -> RulesetGraph:
    """The ruleset's positions (every one, or those reachable from the start) and their moves."""
    files = trusted(DataDir(data), rules)
    tablebase = str(require(files.tablebase, f"tablebase of {rules.id}"))
    transitions = str(require(files.transitions, f"transitions of {rules.id}"))
    con = duckdb.connect()
    try:
        rows = con.execute(
            """SELECT id, position, value, remoteness, grundy, reachable FROM read_parquet($tablebase)
               WHERE reachable OR NOT $reachable_only ORDER BY id""",
            {"tablebase": tablebase, "reachable_only": reachable_only},
        ).fetchall()
        edges = con.execute(
            """SELECT t.src, t.dst, t.move FROM read_parquet($transitions) AS t
               WHERE t.src IN (SELECT id FROM read_parquet($tablebase) WHERE reachable OR NOT $reachable_only)
               ORDER BY t.src, t.dst""",
            {"transitions": transitions, "tablebase": tablebase, "reachable_only": reachable_only},
        ).fetchall()
    finally:
        con.close()
    positions = {row[0]: Position(*row) for row in rows}
    moves: dict[int, list[Edge]] = {pid: [] for pid in positions}
    for src, dst, move in edges:
        if dst not in positions:
            raise DataError(f"{rules.id}: a move from position {src} leads to {dst}, which is not in the tablebase")
        moves[src].append(Edge(src, dst, move))
    for edges_of in moves.values():
        edges_of.sort(key=lambda e: best_first(_as_move(e, positions)))
    start = next((p.id for p in positions.values() if p.text == summary["start"]), None)
    if start is None:
        raise DataError(f"{rules.id}: the start {summary['start']!r} is not in the tablebase")
    return RulesetGraph(rules, summary, positions, moves, start)


def _as_move(edge: Edge, positions: dict[int, Position]) -> Move:
    child = positions[edge.dst]
    return Move(edge.move, child.text, child.value, child.remoteness)


def strategy(graph: RulesetGraph) -> Strategy:
    """The winning side's strategy from the start (the first player's tying or drawing one
    if the start is a tie or a draw): at its turns the best move (`probe.best_first`), at
    the opponent's every reply. Wins shrink the remoteness at every ply, so a win's strategy
    is acyclic."""
    start = graph.positions[graph.start]
    owner_first = start.value != Value.LOSS
    root = (graph.start, owner_first)
    nodes, edges, seen = [root], [], {root}
    queue = deque([root])
    while queue:
        node = queue.popleft()
        pid, owner_moves = node
        for edge in graph.moves[pid][:1] if owner_moves else graph.moves[pid]:
            child = (edge.dst, not owner_moves)
            edges.append((node, child, edge.move))
            if child not in seen:
                seen.add(child)
                nodes.append(child)
                queue.append(child)
    return Strategy("first" if owner_first else "second", Value(start.value).opposite if not owner_first
                    else Value(start.value), nodes, edges)


# --- DOT ---------------------------------------------------------------------------------


def _dot_label(*lines: str) -> str:
    """A DOT string of `lines` joined by DOT's line breaks."""
    return '"' + "\\n".join(line.replace("\\", "\\\\").replace('"', '\\"') for line in lines) + '"'


def _value_text(value: str, remoteness: int | None) -> str:
    return value if remoteness is None else f"{value} in {remoteness}"


def _node_attributes(position: Position, start: bool, *extra: str) -> str:
    attributes = [
        f"label={_dot_label(position.text, _value_text(position.value, position.remoteness), *extra)}",
        f'fillcolor="{COLOURS[position.value]}"',
    ]
    if position.over:
        attributes.append("peripheries=2")
    if start:
        attributes.append("penwidth=3")
    return ", ".join(attributes)


_DOT_DEFAULTS = [
    '  node [shape=box, style=filled, fontname="Helvetica", fontsize=10];',
    '  edge [fontname="Helvetica", fontsize=8, color="#607d8b", arrowsize=0.6];',
]


def state_graph_dot(graph: RulesetGraph) -> str:
    """The positions reachable from the start as a DOT digraph: one node `p<id>` each,
    filled by value, a double border where the game is over, a thick one at the start;
    one edge per move, the move's label as its tooltip."""
    nodes = graph.reachable()
    edges = [edge for p in nodes for edge in sorted(graph.moves[p.id], key=lambda e: e.dst)]
    title = _dot_label(
        f"{graph.rules.id}: {len(nodes):,} positions reachable from {graph.summary['start']}, {len(edges):,} moves",
        "fill: the value for the side to move (green win, red loss, yellow tie, grey draw)",
        "double border: game over; thick border: the start")
    lines = [f"digraph {_dot_label(graph.rules.id)} {{",
             f"  graph [label={title}, labelloc=t, fontname=\"Helvetica\"];", *_DOT_DEFAULTS]
    if len(edges) > FAST_LAYOUT_EDGES:
        # dot's network simplex dominates the layout time of bigger graphs (12 s to 2 s at
        # 550 edges); a few passes give nearly the same picture.
        lines.insert(2, "  graph [nslimit=1, nslimit1=1];")
    lines += [f"  p{p.id} [{_node_attributes(p, p.id == graph.start)}];" for p in nodes]
    lines += [f"  p{e.src} -> p{e.dst} [tooltip={_dot_label(e.move)}];" for e in edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


def strategy_dot(graph: RulesetGraph, plan: Strategy) -> str:
    """The strategy as a DOT digraph: node `p<id>` where the strategy's owner moves,
    `o<id>` where the opponent does; edges labelled with the move."""
    other = "second" if plan.owner == "first" else "first"
    start = graph.positions[graph.start]
    if plan.holds != Value.WIN:
        what = "draw" if plan.holds == Value.DRAW else "tie"
        title = _dot_label(
            f"{graph.rules.id}: the start is a {what}; the first player's {what} strategy ({len(plan.nodes):,} positions)",
            f"at the first player's turns one move that keeps the {what} (or wins fastest after a mistake),",
            f"at the second player's turns every reply; the second player can hold the {what} too")
    else:
        title = _dot_label(
            f"{graph.rules.id}: the {plan.owner} player wins in {start.remoteness} ({len(plan.nodes):,} positions)",
            f"at the {plan.owner} player's turns one fastest winning move, at the {other} player's turns every reply")

    def name(node: tuple[int, bool]) -> str:
        return f"{'p' if node[1] else 'o'}{node[0]}"

    lines = [f"digraph {_dot_label('strategy ' + graph.rules.id)} {{",
             f"  graph [label={title}, labelloc=t, fontname=\"Helvetica\"];", *_DOT_DEFAULTS]
    for node in plan.nodes:
        mover = plan.owner if node[1] else other
        lines.append(f"  {name(node)} [{_node_attributes(graph.positions[node[0]], node == plan.nodes[0], f'{mover} to move')}];")
    lines += [f"  {name(a)} -> {name(b)} [label={_dot_label(move)}];" for a, b, move in plan.edges]
    lines.append("}")
    return "\n".join(lines) + "\n"


def render_svg(dot_file: Path, edges: int) -> Path | None:
    """Draw `dot_file` as SVG beside it with Graphviz; None where `dot` is not installed
    or cannot draw it in DOT_TIMEOUT seconds (the DOT file is the product; SVG is a view).
    Graphs of more than LAYERED_EDGES edges are laid out by sfdp: dot's layers take minutes."""
    program = shutil.which("dot")
    if program is None:
        return None
    layout = ["-Kdot"] if edges <= LAYERED_EDGES else ["-Ksfdp", "-Goverlap=prism"]
    target = dot_file.with_suffix(".svg")
    try:
        with atomic_path(target) as tmp:
            subprocess.run([program, *layout, "-Tsvg", "-o", str(tmp), str(dot_file)],
                           check=True, capture_output=True, timeout=DOT_TIMEOUT)
    except subprocess.TimeoutExpired:
        log.warning("Graphviz took over %d s on %s: no SVG drawn", DOT_TIMEOUT, dot_file)
        return None
    except subprocess.CalledProcessError as error:
        log.warning("Graphviz failed on %s: %s", dot_file, error.stderr.decode(errors="replace").strip())
        return None
    return target


# --- SVG charts ------------------------------------------------------------------------


def value_bar(wins: int, losses: int, ties: int, draws: int, width: int = 160, height: int = 14) -> str:
    """An inline SVG bar split by the share of wins, losses, ties and draws."""
    total = wins + losses + ties + draws
    parts, x = [], 0.0
    for value, count in (("win", wins), ("loss", losses), ("tie", ties), ("draw", draws)):
        if count:
            w = width * count / total
            parts.append(f'<rect class="{value}" x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" '
                         f'fill="{COLOURS[value]}"><title>{_count(count, value)}</title></rect>')
            x += w
    label = f"{_count(wins, 'win')}, {_count(losses, 'loss')}, {_count(ties, 'tie')}, {_count(draws, 'draw')}"
    return (f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="{label}">{"".join(parts)}</svg>')


def remoteness_histogram(counts: dict[tuple[str, int], int], width: int = 240, height: int = 64) -> str:
    """An inline SVG histogram of remoteness: wins (and ties on top of them) above the axis,
    losses below it."""
    if not counts:
        return '<span class="none">no win, loss or tie</span>'
    top = max(r for _, r in counts)
    peak = max(max(counts.get(("win", r), 0) + counts.get(("tie", r), 0), counts.get(("loss", r), 0))
               for r in range(top + 1))
    bar = max(2.0, min(14.0, width / (top + 1)))
    width = int(bar * (top + 1))
    half = (height - 12) / 2
    parts = [f'<line x1="0" y1="{half:.1f}" x2="{width}" y2="{half:.1f}" stroke="#90a4ae" stroke-width="0.5"/>']
    for r in range(top + 1):
        wins, losses, ties = counts.get(("win", r), 0), counts.get(("loss", r), 0), counts.get(("tie", r), 0)
        tip = (f"<title>remoteness {r}: {_count(wins, 'win')}, {_count(losses, 'loss')}"
               + (f", {_count(ties, 'tie')}" if ties else "") + "</title>")
        above = half
        for value, count, up in (("win", wins, True), ("tie", ties, True), ("loss", losses, False)):
            if count:
                h = max(0.5, half * count / peak)
                y = above - h if up else half
                above = y if up else above
                parts.append(f'<rect class="{value}" x="{r * bar:.2f}" y="{y:.2f}" width="{bar * 0.9:.2f}" '
                             f'height="{h:.2f}" fill="{COLOURS[value]}">{tip}</rect>')
    parts.append(f'<text x="0" y="{height - 2}" font-size="9">0</text>')
    parts.append(f'<text x="{width}" y="{height - 2}" font-size="9" text-anchor="end">{top}</text>')
    return (f'<svg class="histogram" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
            f'role="img" aria-label="remoteness 0 to {top}: wins and ties above, losses below">{"".join(parts)}</svg>')


def remoteness_counts(files: dict[str, Path]) -> dict[str, dict[tuple[str, int], int]]:
    """Positions by (value, remoteness) of each ruleset's tablebase, draws left out."""
    result: dict[str, dict[tuple[str, int], int]] = {ruleset: {} for ruleset in files}
    if not files:
        return result
    rows = duckdb.execute(
        """SELECT ruleset, value, remoteness, count(*) FROM read_parquet($files, union_by_name = true)
           WHERE remoteness IS NOT NULL GROUP BY ALL""",
        {"files": [str(path) for path in files.values()]},
    ).fetchall()
    for ruleset, value, remoteness, count in rows:
        if ruleset in result:
            result[ruleset][(value, remoteness)] = count
    return result


# --- HTML --------------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.5em 2em; color: #212121; }
h1 { font-size: 1.5em; margin-bottom: 0.2em; } h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; }
th, td { padding: 2px 8px; border-bottom: 1px solid #eceff1; text-align: left; vertical-align: top; }
th { background: #fafafa; position: sticky; top: 0; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code { font-family: ui-monospace, monospace; }
.win, tr.win > td.v { background: #a5d6a7; } .loss, tr.loss > td.v { background: #ef9a9a; }
.tie, tr.tie > td.v { background: #fff59d; } .draw, tr.draw > td.v { background: #cfd8dc; }
tr.win, tr.loss, tr.tie, tr.draw { background: none; }
a.win, a.loss, a.tie, a.draw, span.win, span.loss, span.tie, span.draw { color: #000; text-decoration: none; padding: 0 4px; border-radius: 3px; }
a:hover { outline: 1px solid #37474f; }
tr.unreachable td { opacity: 0.55; }
tr:target td { outline: 2px solid #1e88e5; }
ul.moves { margin: 0; padding: 0; list-style: none; }
.best { font-weight: 600; }
.note, .none { color: #607d8b; }
svg { vertical-align: middle; }
"""

_LEGEND = ('<p class="legend">Colour: the value for the player to move: <span class="win">win</span> '
           '<span class="loss">loss</span> <span class="tie">tie</span> (the game ends, nobody wins) '
           '<span class="draw">draw</span> (it never ends). Remoteness: plies to the end '
           'under best play (a win as fast as possible, a loss held out as long as possible).</p>')


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _document(title: str, body: list[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        *body, "</body>", "</html>",
    ]) + "\n"


def page_href(folder: str) -> str:
    """The index's relative link to a ruleset page (`Ruleset.folder`: <game>/<slug>)."""
    return f"./{quote(folder)}/index.html"


def ruleset_page(graph: RulesetGraph, pictures: list[tuple[str, str]], counts: dict[tuple[str, int], int]) -> str:
    """A ruleset's HTML page: its numbers, links to `pictures` (file name, description),
    a remoteness histogram and a table of the loaded positions, each linked to its children."""
    s, rules = graph.summary, graph.rules
    start = graph.positions[graph.start]
    listed = list(graph.positions.values())
    every = len(listed) == s["positions"]
    body = [
        '<p><a href="../../index.html">All rulesets</a></p>',
        f"<h1>{_e(rules.id)}</h1>",
        f"<p>Game <b>{_e(s['game'])}</b>; "
        + ", ".join(f"{_e(k)}={_e(v)}" for k, v in s["params"].items()) + ".</p>",
        f'<p>Start <a class="{start.value}" href="#p{start.id}"><code>{_e(start.text)}</code></a>: '
        f"{_e(in_words(s['start_value'], s['start_remoteness']))}.</p>",
        '<table class="numbers"><tbody>',
        *(f'<tr><th>{label}</th><td class="{f"n {cls}".strip()}">{s[key]:,}</td></tr>' for label, key, cls in (
            ("positions", "positions", ""), ("reachable from the start", "reachable", ""),
            ("moves", "transitions", ""), ("wins", "wins", "win"), ("losses", "losses", "loss"),
            ("ties", "ties", "tie"), ("draws", "draws", "draw"),
            ("longest forced win, loss or tie", "max_remoteness", ""))),
        "</tbody></table>",
    ]
    if pictures:
        body.append("<p>Pictures: " + " · ".join(
            f'<a href="{_e(name)}">{_e(what)}</a>' for name, what in pictures) + "</p>")
    body += ["<h2>Remoteness</h2>", f"<p>{remoteness_histogram(counts)} "
             '<span class="note">wins (and ties, yellow) above the line, losses below; every position</span></p>',
             "<h2>Positions</h2>", _LEGEND,
             "<p>" + (f"Every position ({len(listed):,}); those play cannot reach from the start are faded."
                      if every else
                      f"The {len(listed):,} positions reachable from the start (of {s['positions']:,}).")
             + " Positions are written from the side to move. Moves are listed best first; "
             "the best are in bold. A move to a red (lost) position wins.</p>",
             '<table class="positions">',
             "<thead><tr><th>position</th><th>value</th><th>remoteness</th><th>grundy</th><th>moves</th></tr></thead>",
             "<tbody>"]
    for p in listed:
        classes = " ".join([p.value] + (["unreachable"] if not p.reachable else [])
                           + (["start"] if p.id == graph.start else []))
        body.append(
            f'<tr id="p{p.id}" class="{classes}"><td class="v"><code>{_e(p.text)}</code>'
            + (' <span class="note">start</span>' if p.id == graph.start else "")
            + f'</td><td class="v">{p.value}</td><td class="n">{"" if p.remoteness is None else p.remoteness}</td>'
            f'<td class="n">{"—" if p.grundy is None else p.grundy}</td><td>{_moves_cell(graph, p)}</td></tr>')
    body += ["</tbody></table>"]
    return _document(f"{rules.id}: tablebase", body)


def _moves_cell(graph: RulesetGraph, position: Position) -> str:
    edges = graph.moves[position.id]
    if not edges:
        if position.over:
            winner = {Value.WIN: "the player to move wins", Value.LOSS: "the player to move has lost"}.get(
                Value(position.value), "a tie, nobody wins")
            return f'<span class="note">game over: {winner}</span>'
        return '<span class="note">no move</span>'
    best = best_first(_as_move(edges[0], graph.positions))[:2]
    items = []
    for edge in edges:
        child = graph.positions[edge.dst]
        cls = child.value + (" best" if best_first(_as_move(edge, graph.positions))[:2] == best else "")
        items.append(f'<li><a class="{cls}" href="#p{child.id}">{_e(edge.move)}</a> → '
                     f"<code>{_e(child.text)}</code> "
                     f'<span class="note">({_value_text(child.value, child.remoteness)})</span></li>')
    return '<ul class="moves">' + "".join(items) + "</ul>"


def index_page(catalog: list[dict], counts: dict[str, dict[tuple[str, int], int]], drawn: set[str]) -> str:
    """The index of every built ruleset: numbers, a win/loss/tie/draw bar and a remoteness
    histogram each, grouped by game; rulesets in `drawn` link to their pages."""
    body = ["<h1>Tablebases</h1>",
            f"<p>{len(catalog):,} rulesets built. Each row: how many positions, who wins from the "
            "start, the share of positions won, lost, tied and drawn by the player to move, and how many "
            "positions lie at each remoteness. Rulesets with a page link to it (draw others with "
            "<code>tablebase draw RULESET</code>).</p>", _LEGEND]
    games = sorted({row["game"] for row in catalog})
    body.append("<p>Games: " + " · ".join(f'<a href="#game-{_e(g)}">{_e(g)}</a>' for g in games) + "</p>")
    for game in games:
        body += [f'<h2 id="game-{_e(game)}">{_e(game)}</h2>', '<table class="catalog">',
                 "<thead><tr><th>ruleset</th><th>positions</th><th>reachable</th><th>start</th>"
                 "<th>from the start</th><th>wins</th><th>losses</th><th>ties</th><th>draws</th>"
                 "<th>win / loss / tie / draw</th><th>remoteness</th></tr></thead>", "<tbody>"]
        for row in (r for r in catalog if r["game"] == game):
            ruleset = row["ruleset"]
            name = (f'<a href="{_e(page_href(row["folder"]))}">{_e(ruleset)}</a>' if ruleset in drawn
                    else _e(ruleset))
            body.append(
                f'<tr data-ruleset="{_e(ruleset)}"><td>{name}</td>'
                f'<td class="n positions">{row["positions"]:,}</td><td class="n reachable">{row["reachable"]:,}</td>'
                f'<td><code>{_e(row["start"])}</code></td>'
                f'<td class="{row["start_value"]}">{_e(in_words(row["start_value"], row["start_remoteness"]))}</td>'
                f'<td class="n wins">{row["wins"]:,}</td><td class="n losses">{row["losses"]:,}</td>'
                f'<td class="n ties">{row["ties"]:,}</td><td class="n draws">{row["draws"]:,}</td>'
                f'<td>{value_bar(row["wins"], row["losses"], row["ties"], row["draws"])}</td>'
                f"<td>{remoteness_histogram(counts.get(ruleset, {}))}</td></tr>")
        body += ["</tbody></table>"]
    return _document("Tablebases", body)


# --- writing -----------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def pages_dir(data: Path, out: Path | None = None) -> Path:
    """Where the pages go: `out`, or DATA/pages/."""
    return out if out is not None else DataDir(data).pages


def draw_ruleset(rules: Ruleset, data: Path, out: Path | None = None, graphs: bool = True) -> list[Path]:
    """Write one ruleset's page, and with `graphs` its state graph and strategy (DOT, and
    SVG where Graphviz is installed); the files written. DrawError if it is too large."""
    summary = read_summary(rules, data)
    check_size(summary, graphs)
    graph = load_graph(rules, data, summary, reachable_only=summary["positions"] > PAGE_LIMIT)
    folder = pages_dir(data, out) / rules.folder
    written, pictures = [], []
    if graphs:
        plan = strategy(graph)
        edges = sum(len(graph.moves[p.id]) for p in graph.reachable())
        for name, text, what, size in (
                ("graph", state_graph_dot(graph), "state graph", edges),
                ("strategy", strategy_dot(graph, plan),
                 {Value.WIN: "winning", Value.TIE: "tying", Value.DRAW: "drawing"}[plan.holds] + " strategy",
                 len(plan.edges))):
            dot_file = _write(folder / f"{name}.dot", text)
            written.append(dot_file)
            svg = render_svg(dot_file, size)
            if svg is not None:
                written.append(svg)
                pictures.append((svg.name, f"{what} (SVG)"))
            pictures.append((dot_file.name, f"{what} (DOT)"))
    files = DataDir(data).ruleset(rules)
    counts = remoteness_counts({rules.id: files.tablebase})[rules.id]
    written.append(_write(folder / "index.html", ruleset_page(graph, pictures, counts)))
    log.info("drew %s: %s in %s", rules.id, ", ".join(p.name for p in written), folder)
    return written


def draw_index(data: Path, out: Path | None = None) -> Path:
    """Write the index page of every ruleset in the catalog; its path."""
    store = DataDir(data)
    catalog = pq.read_table(require(store.catalog, "catalog")).to_pylist()
    catalog.sort(key=lambda row: (row["game"], row["ruleset"]))
    pages = pages_dir(data, out)
    files = {row["ruleset"]: require(data / row["tablebase_path"], f"tablebase of {row['ruleset']}")
             for row in catalog}
    drawn = {row["ruleset"] for row in catalog if (pages / row["folder"] / "index.html").exists()}
    return _write(pages / "index.html", index_page(catalog, remoteness_counts(files), drawn))


def draw(rulesets: list[str], data: Path, out: Path | None = None, graphs: bool = True,
         every: bool = False) -> list[Path]:
    """Draw each ruleset (every built one that fits with `every`), then the index.

    Named rulesets are all checked before anything is written; with `every`, rulesets
    of more than ALL_GRAPH_LIMIT reachable positions or ALL_GRAPH_TRANSITIONS moves get
    their page alone, and those of
    more than ALL_PAGE_TRANSITIONS moves are skipped (name them to draw them).
    """
    chosen = [Ruleset.parse(text) for text in rulesets]
    plans = []
    for rules in chosen:
        summary = read_summary(rules, data)
        check_size(summary, graphs)
        plans.append((rules, graphs))
    if every:
        catalog = pq.read_table(require(DataDir(data).catalog, "catalog")).to_pylist()
        named = {rules.id for rules in chosen}
        for row in sorted(catalog, key=lambda r: r["ruleset"]):
            if row["ruleset"] in named:
                continue
            fits_graph = (graphs and row["reachable"] <= ALL_GRAPH_LIMIT
                          and row["transitions"] <= ALL_GRAPH_TRANSITIONS)
            if row["reachable"] > PAGE_LIMIT or row["transitions"] > ALL_PAGE_TRANSITIONS:
                log.info("skipped %s: %s positions, %s moves: too many for --all", row["ruleset"],
                         f"{row['positions']:,}", f"{row['transitions']:,}")
                continue
            if row["game"] not in all_games():
                log.info("skipped %s: its game (a plug-in?) is not installed", row["ruleset"])
                continue
            plans.append((Ruleset.parse(row["ruleset"]), fits_graph))
    pages = pages_dir(data, out)
    # --all draws every page anew aside, then swaps the folders: no page is left of a
    # ruleset no longer built (or of an earlier layout)
    target = pages.with_name(f".{pages.name}.tmp") if every else pages
    if every:
        shutil.rmtree(target, ignore_errors=True)
    written = []
    for rules, with_graphs in plans:
        written += draw_ruleset(rules, data, target, with_graphs)
    written.append(draw_index(data, target))
    if every:
        old = pages.with_name(f".{pages.name}.old")
        shutil.rmtree(old, ignore_errors=True)
        if pages.exists():
            os.rename(pages, old)
        os.rename(target, pages)
        shutil.rmtree(old, ignore_errors=True)
        written = [pages / path.relative_to(target) for path in written]
    return written
