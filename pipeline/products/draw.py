"""Pictures of the built tablebases: state graphs, winning strategies and HTML pages.

    PAGES/index.html                    every built ruleset: its comment, who wins, value counts
    PAGES/<game>/<slug>/index.html      the game walked from the start, drawn; every position
    PAGES/<game>/<slug>/graph.dot       the positions reachable from the start and every move
    PAGES/<game>/<slug>/strategy.dot    what the winning side needs from the start
    PAGES/<game>/<slug>/*.svg           the same drawn by Graphviz, where `dot` is installed
                                        and the picture stays readable

PAGES is DATA/pages/ unless given; <game>/<slug> is the ruleset's folder, as under
DATA/. The pages are self-contained (pipeline/products/pages.py): inline CSS, SVG and scripts,
no fetch, so they open offline straight from the disk.

Graphs are for small rulesets: at most GRAPH_LIMIT positions reachable from the start.
Graphviz draws a graph only up to READABLE_POSITIONS positions and READABLE_MOVES moves,
and a strategy up to READABLE_STRATEGY positions: past that a picture is a tangle nobody
reads (chopsticks:split=any's state graph would be 6306×7313 pt), and the page says so.
A ruleset page lists every position up to PAGE_LIMIT positions, else only the reachable
ones, up to PAGE_LIMIT of those. Values are the side to move's, as everywhere.
"""

from __future__ import annotations

import shutil
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import duckdb
import graphviz

from pipeline.core.dataset import CatalogRow
from pipeline.core.errors import DataError, TablebaseError
from pipeline.core.values import COLOUR_NAMES, WORDS, Value, best_move_first, in_plies, in_words
from pipeline.datadir.catalog import read_catalog, read_summary_row
from pipeline.datadir.check import trusted, trusted_catalog, trusted_summary
from pipeline.datadir.layout import DataDir
from pipeline.games import all_games
from pipeline.games.rulesets import Ruleset, read_comments
from pipeline.products.pages import COLOURS, index_page, natural_key, positions_csv, ruleset_page
from pipeline.products.ruleset_graph import Edge, Position, RulesetGraph
from pipeline.storage import parts
from pipeline.storage.files import atomic_folder, atomic_path
from pipeline.storage.parquet import require
from pipeline.storage.progress import log

GRAPH_LIMIT = 2_000
PAGE_LIMIT = 20_000
#: With --all (as `make all` runs it): state graphs (DOT) of rulesets this small only.
ALL_GRAPH_LIMIT = 300
ALL_PAGE_TRANSITIONS = 20_000
#: The largest pictures Graphviz draws, beyond which nobody can follow a picture: a state
#: graph's positions and moves (chopsticks: 92 and 158 are still readable; nim 3-4-5's 48
#: and 262 are a tangle), a strategy's positions (chopsticks:split=any: 70; tic-tac-toe's
#: tying strategy: 153).
READABLE_POSITIONS = 120
READABLE_MOVES = 200
READABLE_STRATEGY = 200
#: How to get Graphviz, said once by `draw` where it is missing.
GRAPHVIZ_HINT = (
    "Graphviz is not installed, so graphs and strategies are written as DOT files only: install it "
    "to draw them as SVG (Debian/Ubuntu: apt-get install graphviz; macOS: brew install graphviz)"
)
#: Graphs with more edges than this get dot's quicker layout settings.
FAST_LAYOUT_EDGES = 250
#: Graphs with more edges than this are laid out by sfdp (force-directed) instead of dot.
LAYERED_EDGES = 1_000


class DrawError(TablebaseError):
    """A ruleset too large to draw, or one that cannot be drawn from the data."""


@dataclass(frozen=True)
class Strategy:
    """The subgraph one side needs from the start: at its turns one best move, at the
    other side's turns every reply. Nodes are (position id, whether the owner moves)."""

    owner: str  # 'first' or 'second' player
    holds: Value  # the start's value for the owner: win, or tie / draw which the owner holds
    nodes: list[tuple[int, bool]]
    edges: list[tuple[tuple[int, bool], tuple[int, bool], str]]


def read_summary(rules: Ruleset, data: Path) -> CatalogRow:
    """The ruleset's catalog row (from its summary.parquet); DataError if not built."""
    path = trusted_summary(DataDir(data), rules)
    return CatalogRow.rows(read_summary_row(path))[0]


def check_size(summary: CatalogRow, graphs: bool) -> None:
    """DrawError if the ruleset is too large for the pictures asked for."""
    problem = too_large(summary, graphs)
    if problem is not None:
        raise DrawError(problem)


def too_large(summary: CatalogRow, graphs: bool) -> str | None:
    """Why the ruleset is too large for the pictures asked for, or None."""
    reachable, ruleset = summary.reachable, summary.ruleset
    if graphs and reachable > GRAPH_LIMIT:
        return (
            f"{ruleset} has {reachable:,} positions reachable from the start, too many to draw "
            f"as a graph (at most {GRAPH_LIMIT:,}); --page-only writes its HTML page alone"
        )
    if reachable > PAGE_LIMIT:
        return (
            f"{ruleset} has {reachable:,} positions reachable from the start, too many for "
            f"a page (at most {PAGE_LIMIT:,})"
        )
    return None


def load_graph(rules: Ruleset, data: Path, summary: CatalogRow, reachable_only: bool) -> RulesetGraph:
    """The ruleset's positions (every one, or those reachable from the start) and their moves."""
    files = trusted(DataDir(data), rules)
    tablebase = parts.sql_source(require(files.tablebase, f"tablebase of {rules.id}"))
    transitions = parts.sql_source(require(files.transitions, f"transitions of {rules.id}"))
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
    # best first as probe.best_first orders a position's moves: its key is the child's, so
    # made once a position, not once a move (sticks:rows=8's 403,214 moves took 4.9 s)
    child_first = {pid: best_move_first(p.value, p.remoteness) for pid, p in positions.items()}
    for edges_of in moves.values():
        edges_of.sort(key=lambda e: (*child_first[e.dst], e.move))
    start = next((p.id for p in positions.values() if p.text == summary.start), None)
    if start is None:
        raise DataError(f"{rules.id}: the start {summary.start!r} is not in the tablebase")
    return RulesetGraph(rules, summary, positions, moves, start)


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
    return Strategy(
        "first" if owner_first else "second",
        Value(start.value).opposite if not owner_first else Value(start.value),
        nodes,
        edges,
    )


# --- DOT ---------------------------------------------------------------------------------
# Built with the graphviz package, which quotes every name and attribute as DOT wants; each
# text from the data goes through `_text`, so Graphviz shows it as it is.


def _text(*lines: str) -> str:
    """`lines` as one DOT text shown literally (backslashes and a <…> text are not DOT's
    escapes or HTML), joined by DOT's line breaks."""
    return graphviz.nohtml("\\n".join(graphviz.escape(line) for line in lines))


def _node(dot: graphviz.Digraph, name: str, position: Position, start: bool, *extra: str) -> None:
    attributes = {
        "fillcolor": COLOURS[position.value],
        # Graphviz makes the node a link in the SVG: to the position on the page beside it
        "URL": f"index.html#p{position.id}",
        "target": "_top",
    }
    if position.over:
        attributes["peripheries"] = "2"
    if start:
        attributes["penwidth"] = "3"
    dot.node(name, _text(position.text, in_plies(position.value, position.remoteness), *extra), **attributes)


def _digraph(name: str, title: str, edges: int, quick: bool = False) -> graphviz.Digraph:
    """A digraph titled `title` of `edges` edges: past LAYERED_EDGES dot's layers take
    minutes, and sfdp lays it out. The DOT file says so, and draws the SVG's picture.

    `quick`: past FAST_LAYOUT_EDGES, a few passes of dot's network simplex, which dominates
    the layout time of bigger graphs (12 s to 2 s at 550 edges) for nearly the same picture."""
    graph = {"label": title, "labelloc": "t", "fontname": "Helvetica"}
    if edges > LAYERED_EDGES:
        graph |= {"layout": "sfdp", "overlap": "prism"}
    elif quick and edges > FAST_LAYOUT_EDGES:
        graph |= {"nslimit": "1", "nslimit1": "1"}
    return graphviz.Digraph(
        _text(name),
        graph_attr=graph,
        node_attr={"shape": "box", "style": "filled", "fontname": "Helvetica", "fontsize": "10"},
        edge_attr={"fontname": "Helvetica", "fontsize": "8", "color": "#607d8b", "arrowsize": "0.6"},
    )


def state_graph(graph: RulesetGraph) -> graphviz.Digraph:
    """The positions reachable from the start as a DOT digraph: one node `p<id>` each,
    filled by value, a double border where the game is over, a thick one at the start;
    one edge per move, the move's label as its tooltip."""
    nodes = graph.reachable()
    edges = [edge for p in nodes for edge in sorted(graph.moves[p.id], key=lambda e: e.dst)]
    title = _text(
        f"{graph.rules.id}: {len(nodes):,} positions reachable from {graph.summary.start}, {len(edges):,} moves",
        f"fill: the value for the side to move ({', '.join(f'{COLOUR_NAMES[v]} {v}' for v in WORDS)})",
        "double border: game over; thick border: the start",
    )
    dot = _digraph(graph.rules.id, title, len(edges), quick=True)
    for p in nodes:
        _node(dot, f"p{p.id}", p, p.id == graph.start)
    for e in edges:
        dot.edge(f"p{e.src}", f"p{e.dst}", tooltip=_text(e.move))
    return dot


def strategy_graph(graph: RulesetGraph, plan: Strategy) -> graphviz.Digraph:
    """The strategy as a DOT digraph: node `p<id>` where the strategy's owner moves,
    `o<id>` where the opponent does; edges labelled with the move."""
    other = "second" if plan.owner == "first" else "first"
    start = graph.positions[graph.start]
    if plan.holds != Value.WIN:
        what = "draw" if plan.holds == Value.DRAW else "tie"
        title = _text(
            f"{graph.rules.id}: the start is a {what}; the first player's {what} strategy ({len(plan.nodes):,} positions)",
            f"at the first player's turns one move that keeps the {what} (or wins fastest after a mistake),",
            f"at the second player's turns every reply; the second player can hold the {what} too",
        )
    else:
        title = _text(
            f"{graph.rules.id}: {in_words(start.value, start.remoteness)} ({len(plan.nodes):,} positions)",
            f"at the {plan.owner} player's turns one fastest winning move, at the {other} player's turns every reply",
        )

    def name(node: tuple[int, bool]) -> str:
        return f"{'p' if node[1] else 'o'}{node[0]}"

    dot = _digraph("strategy " + graph.rules.id, title, len(plan.edges))
    for node in plan.nodes:
        mover = plan.owner if node[1] else other
        _node(dot, name(node), graph.positions[node[0]], node == plan.nodes[0], f"{mover} to move")
    for a, b, move in plan.edges:
        dot.edge(name(a), name(b), label=_text(move))
    return dot


def render_svg(dot: graphviz.Digraph, target: Path) -> Path | None:
    """Draw `dot` as SVG into `target` with Graphviz; None where `dot` is not installed or
    fails on it (the DOT file is the product; SVG is a view). No time limit: only pictures
    small enough to read are drawn (READABLE_*), in under a second each (sticks:rows=6's
    strategy, 412 moves: 0.64 s)."""
    try:
        svg = dot.pipe(format="svg", quiet=True)
    except graphviz.ExecutableNotFound:
        log.warning(GRAPHVIZ_HINT)
        return None
    except graphviz.CalledProcessError as error:
        log.warning(
            "Graphviz failed on %s: %s", target.with_suffix(".dot"), error.stderr.decode(errors="replace").strip()
        )
        return None
    with atomic_path(target) as tmp:
        tmp.write_bytes(svg)
    return target


# --- counts ------------------------------------------------------------------------------


def remoteness_counts(files: dict[str, Path]) -> dict[str, dict[tuple[str, int], int]]:
    """Positions by (value, remoteness) of each ruleset's tablebase, draws left out."""
    result: dict[str, dict[tuple[str, int], int]] = {ruleset: {} for ruleset in files}
    if not files:
        return result
    rows = duckdb.execute(
        """SELECT ruleset, value, remoteness, count(*) FROM read_parquet($files, union_by_name = true)
           WHERE remoteness IS NOT NULL GROUP BY ALL""",
        {"files": [parts.sql_source(path) for path in files.values()]},
    ).fetchall()
    for ruleset, value, remoteness, count in rows:
        if ruleset in result:
            result[ruleset][(value, remoteness)] = count
    return result


# --- writing -----------------------------------------------------------------------------


def _write(path: Path, text: str) -> Path:
    with atomic_path(path) as tmp:
        tmp.write_text(text, encoding="utf-8")
    return path


def pages_dir(data: Path, out: Path | None = None) -> Path:
    """Where the pages go: `out`, or DATA/pages/."""
    return out if out is not None else DataDir(data).pages


def draw_ruleset(
    rules: Ruleset, data: Path, out: Path | None = None, graphs: bool = True, strategies: bool | None = None
) -> list[Path]:
    """Write one ruleset's page; with `graphs` its state graph, with `strategies` (default:
    as `graphs`) its strategy, as DOT, and as SVG where Graphviz is installed and the picture
    stays readable. The files written; DrawError if the ruleset is too large."""
    summary = read_summary(rules, data)
    check_size(summary, graphs)
    graph = load_graph(rules, data, summary, reachable_only=summary.positions > PAGE_LIMIT)
    final = pages_dir(data, out) / rules.folder
    with atomic_folder(final) as folder:  # a full disk or a refused picture leaves the old page whole
        written = _draw_page(rules, data, graph, folder, graphs, strategies)
    log.info("drew %s: %s in %s", rules.id, ", ".join(p.name for p in written), final)
    return [final / path.name for path in written]


def _draw_page(
    rules: Ruleset,
    data: Path,
    graph: RulesetGraph,
    folder: Path,
    graphs: bool,
    strategies: bool | None,
) -> list[Path]:
    """Write one ruleset's page and pictures into `folder` (draw_ruleset's); the files written."""
    written: list[Path] = []
    pictures: list[tuple[str, str]] = []  # (file name, description)
    notes: list[str] = []
    drawn = shutil.which("dot") is not None
    if not drawn and (graphs or strategies):
        notes.append(GRAPHVIZ_HINT + ".")
    if graphs:
        nodes = graph.reachable()
        edges = sum(len(graph.moves[p.id]) for p in nodes)
        readable = len(nodes) <= READABLE_POSITIONS and edges <= READABLE_MOVES
        written += _picture(folder, "graph", state_graph(graph), "state graph", drawn and readable, pictures)
        if drawn and not readable:
            notes.append(
                f"The state graph ({len(nodes):,} positions, {edges:,} moves) is not drawn as a picture: "
                f"past {READABLE_POSITIONS} positions or {READABLE_MOVES} moves it is a tangle nobody can "
                "follow. The DOT file holds it for tools; the walk above and the table below show every move."
            )
    if graphs if strategies is None else strategies:
        plan = strategy(graph)
        what = {Value.WIN: "winning", Value.TIE: "tying", Value.DRAW: "drawing"}[plan.holds] + " strategy"
        readable = len(plan.nodes) <= READABLE_STRATEGY
        if graphs or readable:
            written += _picture(
                folder,
                "strategy",
                strategy_graph(graph, plan),
                f"{what} of the {plan.owner} player",
                drawn and readable,
                pictures,
            )
        if not readable:
            notes.append(
                f"The {what} ({len(plan.nodes):,} positions) is not drawn as a picture: past "
                f"{READABLE_STRATEGY} positions it is too large to read."
            )
    files = DataDir(data).published(rules)
    counts = remoteness_counts({rules.id: files.tablebase})[rules.id]
    written.append(_write(folder / "positions.csv", positions_csv(graph)))
    written.append(_write(folder / "index.html", ruleset_page(graph, pictures, notes, counts)))
    return written


def _picture(
    folder: Path, name: str, dot: graphviz.Digraph, what: str, svg: bool, pictures: list[tuple[str, str]]
) -> list[Path]:
    """Write `name`.dot, and `name`.svg with `svg`; add both to `pictures` for the page."""
    dot_file = _write(folder / f"{name}.dot", dot.source)
    drawn = render_svg(dot, folder / f"{name}.svg") if svg else None
    if drawn is not None:
        pictures.append((drawn.name, f"{what} (SVG: click a position to see it on this page)"))
    pictures.append((dot_file.name, f"{what} (DOT, for Graphviz and other tools)"))
    return [dot_file] + ([drawn] if drawn is not None else [])


def catalog_order(row: CatalogRow) -> tuple:
    """Index order: by game, then by each parameter's value in the game's order: numbers as
    numbers (fingers=2 before fingers=10), choices in the order the game lists them
    (split none, dead, any); the id itself where the game is not installed."""
    games = all_games()
    if row.game not in games:
        return (row.game, 1, natural_key(row.ruleset))
    key = []
    for param in games[row.game].params:
        text = row.parameters.get(param.name) or param.default
        choices = getattr(param, "choices", ())
        key.append((choices.index(text), ()) if text in choices else (-1, natural_key(text)))
    return (row.game, 0, tuple(key))


def draw_index(data: Path, out: Path | None = None, comments: dict[str, str] | None = None) -> Path:
    """Write the index page of every ruleset in the catalog, with `comments` by ruleset id
    (rulesets.toml's: `rulesets.read_comments`); its path."""
    store = DataDir(data)
    catalog = read_catalog(store)
    trusted_catalog(store)  # the counts read every tablebase: each must have its checksum
    catalog.sort(key=catalog_order)
    pages = pages_dir(data, out)
    files = {row.ruleset: store.inside(row.tablebase_path) for row in catalog}
    drawn = {row.ruleset for row in catalog if (pages / row.folder / "index.html").exists()}
    return _write(pages / "index.html", index_page(catalog, remoteness_counts(files), drawn, comments or {}))


def draw(
    rulesets: list[str],
    data: Path,
    out: Path | None = None,
    graphs: bool = True,
    every: bool = False,
    ruleset_file: Path | None = None,
) -> list[Path]:
    """Draw each ruleset (every built one that fits with `every`), then the index, with the
    comments of `ruleset_file`.

    A named ruleset too large for a state graph gets its page and a readable strategy alone,
    and one too large for a page is skipped, each with a note (DrawError if every named one
    is); with `every`, rulesets of more than ALL_GRAPH_LIMIT reachable positions get their
    page and a readable strategy alone, and those of more than ALL_PAGE_TRANSITIONS moves
    are skipped (name them to draw them). Pages already drawn are kept.
    """
    chosen = [Ruleset.parse(text) for text in rulesets]
    comments = read_comments(ruleset_file) if ruleset_file is not None else {}
    plans, skipped = [], []
    for rules in chosen:
        summary = read_summary(rules, data)
        if too_large(summary, False) is not None:
            skipped.append(too_large(summary, False))
            log.warning("skipped %s", skipped[-1])
            continue
        with_graph = graphs and too_large(summary, True) is None
        if graphs and not with_graph:
            log.warning(
                "drawing the page of %s without its state graph: %s reachable positions, too many to draw "
                "as a graph (at most %s)",
                rules.id,
                f"{summary.reachable:,}",
                f"{GRAPH_LIMIT:,}",
            )
        plans.append((rules, with_graph, graphs))
    if chosen and not plans and not every:
        raise DrawError(skipped[0])
    if every:
        catalog = read_catalog(DataDir(data))
        named = {rules.id for rules in chosen}
        for row in sorted(catalog, key=lambda r: r.ruleset):
            if row.ruleset in named:
                continue
            if row.reachable > PAGE_LIMIT or row.transitions > ALL_PAGE_TRANSITIONS:
                log.info(
                    "skipped %s: %s positions, %s moves: too many for --all",
                    row.ruleset,
                    f"{row.positions:,}",
                    f"{row.transitions:,}",
                )
                continue
            if row.game not in all_games():
                log.info("skipped %s: its game (a plug-in?) is not installed", row.ruleset)
                continue
            plans.append((Ruleset.parse(row.ruleset), graphs and row.reachable <= ALL_GRAPH_LIMIT, graphs))
    if shutil.which("dot") is None and any(g or s for _, g, s in plans):
        log.warning(GRAPHVIZ_HINT)
    written = []
    for rules, with_graph, with_strategy in plans:
        written += draw_ruleset(rules, data, out, with_graph, with_strategy)
    if every:
        _remove_unbuilt(data, pages_dir(data, out))
    written.append(draw_index(data, out, comments))
    return written


def _remove_unbuilt(data: Path, pages: Path) -> None:
    """Remove the pages of rulesets no longer built (a <game>/<slug> folder with a page,
    not a catalog row's); pages drawn by hand of those built stay."""
    built = {row.folder for row in read_catalog(DataDir(data))}
    for page in sorted(pages.glob("*/*/index.html")):
        folder = page.parent
        if folder.relative_to(pages).as_posix() not in built and not folder.is_symlink():
            shutil.rmtree(folder)
            log.info("removed the page of a ruleset no longer built: %s", folder)
