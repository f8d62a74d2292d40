"""The HTML of the pages `tablebase draw` writes: a ruleset's page and the index.

A ruleset page opens on the start position drawn (`Game.draw`), its moves drawn as the
positions they lead to, best first, coloured by what they mean for the player making them;
each is a link `#p<id>`, so a person walks the game by clicking and the browser's Back
button takes a move back. Then the table of positions, searchable, filtered by value and
reachability, sortable. The walk and the table's controls are small inline scripts over
one inline JSON document; without scripts the page still shows the start, its moves and
the table. Nothing is fetched: the pages open offline straight from the disk.

The HTML is Jinja templates in templates/ (page.html the frame, ruleset.html, index.html),
which escape whatever they print; the style and the script beside them (pages.css,
ruleset.js) go inline into each page. This module chooses what a page holds.
"""

from __future__ import annotations

import csv
import functools
import io
import json
import re
from collections import deque
from importlib import resources
from typing import NamedTuple
from urllib.parse import quote

import jinja2
from markupsafe import Markup

from pipeline.core.dataset import CatalogRow
from pipeline.core.values import COLOURS, EDGE_COLOURS, PREFERENCE, WORDS, Value, for_pages, in_plies, in_words
from pipeline.games._svg import text_picture
from pipeline.games.rulesets import Ruleset
from pipeline.products.pictures import PictureError, picture_problem
from pipeline.products.probe import Move, best_first
from pipeline.products.ruleset_graph import Position, RulesetGraph

PLURALS = {"win": "wins", "loss": "losses", "tie": "ties", "draw": "draws"}
#: Bytes of position drawings a page embeds (a drawing is 0.3-1.7 kB), nearest the start
#: first: past them the walk shows positions as text (tic-tac-toe's last few plies).
DRAWING_BYTES = 1_000_000


def _count(n: int, value: str) -> str:
    return f"{n:,} {value if n == 1 else PLURALS[value]}"


# --- charts ------------------------------------------------------------------------------


def value_bar(wins: int, losses: int, ties: int, draws: int, width: int = 160, height: int = 14) -> Markup:
    """An inline SVG bar split by the share of wins, losses, ties and draws."""
    total = wins + losses + ties + draws
    parts, x = [], 0.0
    for value, count in (("win", wins), ("loss", losses), ("tie", ties), ("draw", draws)):
        if count:
            w = width * count / total
            parts.append(
                f'<rect class="{value}" x="{x:.2f}" y="0" width="{w:.2f}" height="{height}" '
                f'fill="{COLOURS[value]}"><title>{_count(count, value)}</title></rect>'
            )
            x += w
    label = f"{_count(wins, 'win')}, {_count(losses, 'loss')}, {_count(ties, 'tie')}, {_count(draws, 'draw')}"
    return Markup(
        f'<svg class="bar" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="{label}">{"".join(parts)}</svg>'
    )


def remoteness_histogram(counts: dict[tuple[str, int], int], width: int = 240, height: int = 64) -> Markup:
    """An inline SVG histogram of remoteness: wins (and ties on top of them) above the axis,
    losses below it."""
    if not counts:
        return Markup('<span class="none">no win, loss or tie</span>')
    top = max(r for _, r in counts)
    peak = max(
        max(counts.get(("win", r), 0) + counts.get(("tie", r), 0), counts.get(("loss", r), 0)) for r in range(top + 1)
    )
    # bars narrow as remoteness grows, so a histogram keeps to its column's `width`
    bar = min(14.0, width / (top + 1))
    width = int(bar * (top + 1))
    half = (height - 12) / 2
    parts = [f'<line x1="0" y1="{half:.1f}" x2="{width}" y2="{half:.1f}" stroke="#90a4ae" stroke-width="0.5"/>']
    for r in range(top + 1):
        wins, losses, ties = counts.get(("win", r), 0), counts.get(("loss", r), 0), counts.get(("tie", r), 0)
        tip = (
            f"<title>remoteness {r}: {_count(wins, 'win')}, {_count(losses, 'loss')}"
            + (f", {_count(ties, 'tie')}" if ties else "")
            + "</title>"
        )
        above = half
        for value, count, up in (("win", wins, True), ("tie", ties, True), ("loss", losses, False)):
            if count:
                h = max(0.5, half * count / peak)
                y = above - h if up else half
                above = y if up else above
                parts.append(
                    f'<rect class="{value}" x="{r * bar:.2f}" y="{y:.2f}" width="{bar * 0.9:.2f}" '
                    f'height="{h:.2f}" fill="{COLOURS[value]}">{tip}</rect>'
                )
    parts.append(f'<text x="0" y="{height - 2}" font-size="9">0</text>')
    if top:  # a single bar's end label would sit on its start label ("0 0")
        parts.append(f'<text x="{width}" y="{height - 2}" font-size="9" text-anchor="end">{top}</text>')
    return Markup(
        f'<svg class="histogram" width="{width}" height="{height}" viewBox="0 0 {width} {height}" '
        f'role="img" aria-label="remoteness 0 to {top}: wins and ties above, losses below">'
        f"{''.join(parts)}</svg>"
    )


# --- the document ------------------------------------------------------------------------


@functools.cache
def _templates() -> jinja2.Environment:
    """The pages' templates (templates/*.html), escaping every value they print as HTML
    unless it is Markup (the charts, the games' drawings)."""
    env = jinja2.Environment(
        loader=jinja2.PackageLoader("pipeline.products", "templates"),
        autoescape=jinja2.select_autoescape(["html"]),
        undefined=jinja2.StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
    )
    # tojson: compact, the text as it is (Jinja escapes <, > and & itself, so no text ends a <script>)
    env.policies["json.dumps_kwargs"] = {"separators": (",", ":"), "ensure_ascii": False}
    env.filters["grouped"] = "{:,}".format
    env.globals.update(
        inline=_inline,
        words=WORDS,
        colours=COLOURS,
        edge_colours=EDGE_COLOURS,
        in_words=in_words,
        for_the_mover=for_the_mover,
    )
    return env


def _inline(name: str) -> Markup:
    """A style or script of templates/ as it goes inline into a page."""
    return Markup(asset(name))


def asset(name: str) -> str:
    """The text of a file beside the templates (pages.css, ruleset.js)."""
    return resources.files("pipeline.products").joinpath("templates", name).read_text(encoding="utf-8")


def _render(template: str, **context: object) -> str:
    return _templates().get_template(template).render(**context)


def _json(data: object) -> str:
    """JSON on one line, as positions.csv's moves column holds it."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False)


# --- a ruleset's page --------------------------------------------------------------------

#: A page's size at most (a browser opens 5 MB in a second; sticks:rows=8's 70 MB took 99 s).
PAGE_BYTES = 5_000_000
#: What the walk's data may take at first: positions nearest the start keep their moves
#: until it is spent; the page halves it while the page is over PAGE_BYTES.
WALK_BYTES = 2_500_000
#: Rows of the positions table at a time (the script pages through the rest).
TABLE_ROWS = 200


def _table_order(graph: RulesetGraph, listed: set[int]) -> list[Position]:
    """The listed positions as the table first shows them: the start, then what play can
    reach, the longest forced results first (draws after them), then the rest."""
    return sorted(
        (graph.positions[pid] for pid in listed),
        key=lambda p: (p.id != graph.start, not p.reachable, p.remoteness is None, -(p.remoteness or 0), p.id),
    )


def _as_move(graph: RulesetGraph, dst: int, label: str) -> Move:
    child = graph.positions[dst]
    return Move(label, child.text, child.value, child.remoteness)


def _best_count(graph: RulesetGraph, pid: int) -> int:
    """How many of a position's moves (best first) are as good as the best."""
    keys = [best_first(_as_move(graph, edge.dst, edge.move))[:2] for edge in graph.moves[pid]]
    return sum(1 for k in keys if keys and k == keys[0])


def _held(graph: RulesetGraph, budget: int) -> tuple[set[int], set[int]]:
    """The positions whose moves the page holds, and those it lists (them and where their
    moves lead): every loaded position if they fit in about `budget` bytes of JSON, else
    those nearest the start (as a walk meets them) while the budget lasts."""

    def cost(pid: int) -> int:
        return 48 + len(graph.positions[pid].text) + 12 * len(graph.moves[pid])

    if sum(cost(pid) for pid in graph.positions) <= budget:
        return set(graph.positions), set(graph.positions)
    held: set[int] = set()
    listed, spent = {graph.start}, 0
    queue, seen = deque([graph.start]), {graph.start}
    while queue:
        pid = queue.popleft()
        spent += cost(pid) + sum(48 + len(graph.positions[e.dst].text) for e in graph.moves[pid] if e.dst not in listed)
        if spent > budget and held:
            break
        held.add(pid)
        for edge in graph.moves[pid]:
            listed.add(edge.dst)
            if edge.dst not in seen:
                seen.add(edge.dst)
                queue.append(edge.dst)
    return held, listed


def _walk_data(
    graph: RulesetGraph, order: list[Position], held: set[int], drawings: dict[int, str]
) -> tuple[dict, list[str]]:
    """The JSON document the page's scripts read, and the distinct drawings it refers to:
    the listed positions in table order (by index), the moves of those held as (index of
    the position it leads to, index of its label), best first, each position's drawing by
    index (-1: none, show the text)."""
    index = {p.id: i for i, p in enumerate(order)}
    labels: dict[str, int] = {}
    pics: dict[str, int] = {}
    moves: list[list[int] | None] = []  # None: a position listed, not held
    pictures: list[int] = []
    for p in order:
        if p.id in held:
            flat = []
            for edge in graph.moves[p.id]:
                flat += [index[edge.dst], labels.setdefault(edge.move, len(labels))]
            moves.append(flat)
        else:
            moves.append(None)
        pictures.append(pics.setdefault(drawings[p.id], len(pics)) if p.id in drawings else -1)
    return {
        "ruleset": graph.rules.id,
        "file": graph.rules.folder.replace("/", "-"),
        "start": index[graph.start],
        "held": len(held),
        "rows": TABLE_ROWS,
        "id": [p.id for p in order],
        "t": [p.text for p in order],
        "v": [Value(p.value).code - 1 for p in order],
        "r": [p.remoteness for p in order],
        "g": [p.grundy for p in order],
        "reach": [int(p.reachable) for p in order],
        "m": moves,
        "k": [len(graph.moves[p.id]) for p in order],
        "l": list(labels),
        "d": pictures,
        "box": text_picture("\0", width="@W@"),
        "values": for_pages(),
    }, list(pics)


def _drawings(graph: RulesetGraph, listed: set[int], budget: int) -> tuple[dict[int, str], bool]:
    """Drawings of the listed positions, nearest the start first (as a walk meets them),
    up to `budget` bytes, the start and its moves always; and whether every one is drawn."""
    rules, positions = graph.rules, graph.positions
    drawn: dict[int, str] = {}
    size, queue, seen = 0, deque([graph.start]), {graph.start}
    while queue:
        pid = queue.popleft()
        picture = _picture(rules, positions[pid].text)
        size += len(picture)
        if size > budget and pid != graph.start and len(drawn) > len(graph.moves[graph.start]):
            return drawn, False
        drawn[pid] = picture
        for edge in graph.moves[pid]:
            if edge.dst not in seen and edge.dst in listed:
                seen.add(edge.dst)
                queue.append(edge.dst)
    for pid in sorted(listed - set(drawn)):  # those no walk from the start meets
        picture = _picture(rules, positions[pid].text)
        size += len(picture)
        if size > budget:
            return drawn, False
        drawn[pid] = picture
    return drawn, True


def _picture(rules: Ruleset, text: str) -> str:
    """The game's drawing of the position `text`; PictureError if it holds what a page's
    picture may not (a script, a handler, a link: pipeline/products/pictures.py), as
    `tablebase check-game` says it."""
    picture = rules.game.draw(rules, text)
    problem = picture_problem(picture)
    if problem is not None:
        raise PictureError(f"{rules.game_name} on {rules.id}: draw() of {text!r} {problem}")
    return picture


def for_the_mover(
    value: str, remoteness: int | None, mover: str = "the player to move", other: str = "the other player"
) -> str:
    """What a position's value means for `mover`, the player to move, and `other`, with
    its unit: "the first player wins in 8 plies" (pipeline/core/values.py's `in_words`)."""
    return in_words(value, remoteness, mover, other)


def move_outcome(value: str, remoteness: int | None) -> tuple[str, str]:
    """What a move into a position of `value` and `remoteness` means for the player making
    it: its value word, and the value with the plies counted from before the move ("wins in 5 plies")."""
    outcome = Value(value).opposite.value
    return outcome, in_plies(outcome, None if remoteness is None else remoteness + 1)


def _legal(n: int) -> str:
    return f"{n:,} legal move{'s' * (n != 1)}" if n else "no legal move"


def _position_note(graph: RulesetGraph, p: Position) -> str:
    parts = []
    if p.grundy is not None:
        parts.append(f"Grundy value {p.grundy}")
    if not p.reachable:
        parts.append("play cannot reach this position from the start")
    parts.append(_legal(len(graph.moves[p.id])))
    return "; ".join(parts)


def positions_csv(graph: RulesetGraph) -> str:
    """Every loaded position as CSV, by id: the full table a page too large lists in part,
    each position's moves as a JSON list of [move, position id], best first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "position", "value", "remoteness", "grundy", "reachable", "moves"])
    for pid, p in graph.positions.items():
        writer.writerow(
            [
                pid,
                p.text,
                p.value,
                "" if p.remoteness is None else p.remoteness,
                "" if p.grundy is None else p.grundy,
                str(p.reachable).lower(),
                _json([[edge.move, edge.dst] for edge in graph.moves[pid]]),
            ]
        )
    return out.getvalue()


def ruleset_page(
    graph: RulesetGraph, pictures: list[tuple[str, str]], notes: list[str], counts: dict[tuple[str, int], int]
) -> str:
    """A ruleset's HTML page, at most PAGE_BYTES: the walk from the start, its numbers,
    links to `pictures` (file name, description) and `notes` on those not drawn, a
    remoteness histogram and the table of the positions it holds, each linked to its
    children; every position one link away in positions.csv."""
    walk, drawing = WALK_BYTES, DRAWING_BYTES
    while True:
        page = _ruleset_page(graph, pictures, notes, counts, walk, drawing)
        if len(page.encode()) <= PAGE_BYTES or walk < 1_000:
            return page
        walk, drawing = walk // 2, drawing // 2


def _ruleset_page(
    graph: RulesetGraph,
    pictures: list[tuple[str, str]],
    notes: list[str],
    counts: dict[tuple[str, int], int],
    walk: int,
    drawing: int,
) -> str:
    s = graph.summary
    start = graph.positions[graph.start]
    held, listed = _held(graph, walk)
    order = _table_order(graph, listed)
    every = len(order) == s.positions
    drawings, drawn = _drawings(graph, listed, drawing)
    data, pics = _walk_data(graph, order, held, drawings)
    if every:
        listing = f"Every position ({len(order):,}); those play cannot reach from the start are faded."
    elif len(held) == len(graph.positions):
        listing = f"The {len(order):,} positions reachable from the start (of {s.positions:,})."
    else:
        listing = (
            f"The {len(order):,} positions this page holds: the {len(held):,} nearest the start and where "
            f"their moves lead (of {s.positions:,})."
        )
    return _render(
        "ruleset.html",
        title=f"{graph.rules.id}: tablebase",
        graph=graph,
        rules=graph.rules,
        s=s,
        start=start,
        verdict=for_the_mover(start.value, start.remoteness, "the first player", "the second player"),
        held=held,
        order=order,
        every=every,
        drawings=drawings,
        drawn=drawn,
        pictures=pictures,
        notes=notes,
        histogram=remoteness_histogram(counts),
        listing=listing,
        table_rows=TABLE_ROWS,
        data=data,
        pics=[Markup(pic) for pic in pics],
        page_bytes=PAGE_BYTES,
        drawing_bytes=drawing,
        present=[v.value for v in PREFERENCE if any(p.value == v for p in graph.positions.values())],
        all_reachable=all(p.reachable for p in graph.positions.values()),
        # the games' drawings are SVG checked by _picture (as by `tablebase check-game`): markup, not text
        picture=lambda p: Markup(drawings.get(p.id) or text_picture(p.text)),
        choices=lambda p: _choices(graph, p.id),
        note=lambda p: _position_note(graph, p),
        legal=lambda p: _legal(len(graph.moves[p.id])),
    )


class _Choice(NamedTuple):
    """A move as the page shows it: what it means for the player making it."""

    label: str
    to: Position
    outcome: str
    what: str
    best: bool


def _choices(graph: RulesetGraph, pid: int) -> list[_Choice]:
    best = _best_count(graph, pid)
    choices = []
    for k, edge in enumerate(graph.moves[pid]):
        child = graph.positions[edge.dst]
        choices.append(_Choice(edge.move, child, *move_outcome(child.value, child.remoteness), k < best))
    return choices


# --- the index ---------------------------------------------------------------------------


def page_href(folder: str) -> str:
    """The index's relative link to a ruleset page (`Ruleset.folder`: <game>/<slug>)."""
    return f"./{quote(folder)}/index.html"


def natural_key(text: str) -> tuple:
    """Sort key reading the numbers in `text` as numbers: fingers=2 before fingers=10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", text) if part)


#: The index's histograms, narrower than a page's: beside ten columns they still fit 1400 px.
INDEX_HISTOGRAM = 140


def index_page(
    catalog: list[CatalogRow], counts: dict[str, dict[tuple[str, int], int]], drawn: set[str], comments: dict[str, str]
) -> str:
    """The index of every built ruleset, in `catalog`'s order: its comment, numbers, who wins
    in words, a win/loss/tie/draw bar and a remoteness histogram each, grouped by game;
    rulesets in `drawn` link to their pages."""
    return _render(
        "index.html",
        title="Tablebases",
        catalog=catalog,
        games=list(dict.fromkeys(row.game for row in catalog)),
        counts=counts,
        drawn=drawn,
        comments=comments,
        page_href=page_href,
        value_bar=value_bar,
        remoteness_histogram=remoteness_histogram,
        histogram_width=INDEX_HISTOGRAM,
    )
