"""The HTML of the pages `tablebase draw` writes: a ruleset's page and the index.

A ruleset page opens on the start position drawn (`Game.draw`), its moves drawn as the
positions they lead to, best first, coloured by what they mean for the player making them;
each is a link `#p<id>`, so a person walks the game by clicking and the browser's Back
button takes a move back. Then the table of positions, searchable, filtered by value and
reachability, sortable. The walk and the table's controls are small inline scripts over
one inline JSON document; without scripts the page still shows the start, its moves and
the table. Nothing is fetched: the pages open offline straight from the disk.
"""

from __future__ import annotations

import html
import json
import re
from collections import deque
from urllib.parse import quote

from pipeline.games._svg import text_picture
from pipeline.products.probe import Move, best_first
from pipeline.core.dataset import CatalogRow
from pipeline.core.values import PREFERENCE, Value, in_words
from pipeline.products.ruleset_graph import Position, RulesetGraph

#: Fill colour of each value, shared by the DOT files and the pages.
COLOURS = {"win": "#a5d6a7", "loss": "#ef9a9a", "tie": "#fff59d", "draw": "#cfd8dc"}
PLURALS = {"win": "wins", "loss": "losses", "tie": "ties", "draw": "draws"}
#: Bytes of position drawings a page embeds (a drawing is 0.3-1.7 kB), nearest the start
#: first: past them the walk shows positions as text (tic-tac-toe's last few plies).
DRAWING_BYTES = 1_000_000


def _count(n: int, value: str) -> str:
    return f"{n:,} {value if n == 1 else PLURALS[value]}"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


def _value_text(value: str, remoteness: int | None) -> str:
    return value if remoteness is None else f"{value} in {remoteness}"


def for_the_mover(value: str, remoteness: int | None) -> str:
    """What a position's value means, from the side of the player to move."""
    words = in_words(value, remoteness, "the player to move", "the other player")
    return f"game over: {words}" if remoteness == 0 else words


def move_outcome(value: str, remoteness: int | None) -> tuple[str, str]:
    """What a move into a position of `value` and `remoteness` means for the player making
    it: its value word, and the value with the plies counted from before the move ("win in 5")."""
    outcome = Value(value).opposite.value
    return outcome, _value_text(outcome, None if remoteness is None else remoteness + 1)


# --- charts ------------------------------------------------------------------------------


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


# --- the document ------------------------------------------------------------------------

_CSS = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 1.2em 2em; color: #212121; }
h1 { font-size: 1.5em; margin: 0.3em 0 0.2em; overflow-wrap: anywhere; }
h2 { font-size: 1.15em; margin-top: 1.6em; }
table { border-collapse: collapse; }
th, td { padding: 2px 8px; border-bottom: 1px solid #eceff1; text-align: left; vertical-align: top; }
th { background: #fafafa; position: sticky; top: 0; z-index: 1; }
th button { font: inherit; font-weight: 600; border: 0; background: none; padding: 0; cursor: pointer; }
th[aria-sort=ascending] button::after { content: " ▲"; } th[aria-sort=descending] button::after { content: " ▼"; }
td.n { text-align: right; font-variant-numeric: tabular-nums; }
code, .pos { font-family: ui-monospace, monospace; white-space: nowrap; }
.win, tr.win > td.v { background: #a5d6a7; } .loss, tr.loss > td.v { background: #ef9a9a; }
.tie, tr.tie > td.v { background: #fff59d; } .draw, tr.draw > td.v { background: #cfd8dc; }
tr.win, tr.loss, tr.tie, tr.draw { background: none; }
a.win, a.loss, a.tie, a.draw, span.win, span.loss, span.tie, span.draw, b.win, b.loss, b.tie, b.draw {
  color: #000; text-decoration: none; padding: 0 4px; border-radius: 3px; }
a:hover { outline: 1px solid #37474f; }
tr.unreachable td { opacity: 0.55; }
ul.moves { margin: 0; padding: 0; list-style: none; }
ul.moves li { white-space: nowrap; }
.best { font-weight: 600; }
.note, .none, .comment { color: #607d8b; }
.comment { font-size: 0.9em; }
svg { vertical-align: middle; }
.scroll { overflow-x: auto; max-width: 100%; }
.anchors { height: 0; overflow: hidden; }
#walk { border: 1px solid #cfd8dc; border-radius: 8px; padding: 0.6em 1em 1em; background: #fcfdfd; }
#walk h2 { margin-top: 0.2em; }
#here { display: flex; flex-wrap: wrap; align-items: center; gap: 0.4em 1.4em; }
#here .pic { padding: 8px; border-radius: 8px; border: 3px solid #cfd8dc; background: #fff; }
#here .pic svg.position { zoom: 1.5; }
#here[data-value=win] .pic { border-color: #66bb6a; } #here[data-value=loss] .pic { border-color: #e57373; }
#here[data-value=tie] .pic { border-color: #fdd835; } #here[data-value=draw] .pic { border-color: #90a4ae; }
#here .pos { font-size: 1.2em; font-weight: 600; } #here .pos .note { font: 0.8em system-ui, sans-serif; }
#here .verdict { font-size: 1.1em; }
ol.cards { display: flex; flex-wrap: wrap; gap: 10px; margin: 0.6em 0 0; padding: 0; list-style: none; }
ol.cards li a { display: flex; flex-direction: column; align-items: center; gap: 3px; padding: 6px 8px 5px;
  border-radius: 8px; color: #000; text-decoration: none; border: 2px solid transparent; min-width: 90px; }
ol.cards li a svg.position { background: #fff; border-radius: 4px; max-width: 100%; height: auto; }
ol.cards li.best a { border-color: #37474f; }
ol.cards .label { font-weight: 600; white-space: nowrap; }
ol.cards .what { font-size: 0.9em; }
.controls { display: flex; flex-wrap: wrap; gap: 0.3em 1.2em; align-items: center; margin: 0.5em 0; }
.controls input[type=search] { font: inherit; padding: 3px 6px; min-width: 14em; }
.controls label { white-space: nowrap; }
td.ruleset { min-width: 14em; max-width: 28em; overflow-wrap: anywhere; }
@media (min-width: 701px) { td.verdict { white-space: nowrap; } }
@media (max-width: 700px) {
  body { margin: 0.8em 0.7em; }
  .wide { display: none; }
  /* the index: one block per ruleset rather than a table wider than the phone */
  table.catalog thead { display: none; }
  table.catalog, table.catalog tbody, table.catalog tr { display: block; }
  table.catalog tr { padding: 6px 0; border-bottom: 1px solid #cfd8dc; }
  table.catalog td { display: inline-block; border: 0; padding: 1px 8px 1px 0; vertical-align: middle; }
  table.catalog td.ruleset { display: block; max-width: none; }
  table.catalog td.wide { display: none; }
  table.catalog td.verdict { padding: 0 6px; border-radius: 3px; margin-right: 4px; }
  table.catalog td[data-label]::before { content: attr(data-label) ": "; color: #607d8b; }
  table.positions td.g, table.positions th[data-key=grundy] { display: none; }
  ul.moves li { white-space: normal; }
  #here .pic svg.position { zoom: 1.2; }
  ol.cards { gap: 6px; }
  ol.cards li a { min-width: 0; padding: 4px; }
  ol.cards li a svg.position { zoom: 0.75; }
}
"""

_LEGEND = ('<p class="legend">Colour: the value for the player to move: <span class="win">win</span> '
           '<span class="loss">loss</span> <span class="tie">tie</span> (the game ends, nobody wins) '
           '<span class="draw">draw</span> (it never ends). Remoteness: plies to the end '
           'under best play (a win as fast as possible, a loss held out as long as possible).</p>')


def _document(title: str, body: list[str]) -> str:
    return "\n".join([
        "<!DOCTYPE html>", '<html lang="en">', "<head>", '<meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_e(title)}</title>", f"<style>{_CSS}</style>", "</head>", "<body>",
        *body, "</body>", "</html>",
    ]) + "\n"


def _json(data: object) -> str:
    """JSON safe inside a <script> element."""
    return json.dumps(data, separators=(",", ":"), ensure_ascii=False).replace("</", "<\\/")


# --- a ruleset's page --------------------------------------------------------------------

# The walk: shows the position the fragment #p<id> names (the start without one) with its
# moves as cards, from the JSON document #data. The table: search, filters, sorting.
_SCRIPT = r"""
(() => {
  const D = JSON.parse(document.getElementById('data').textContent);
  const at = new Map(D.id.map((id, i) => [id, i]));
  const V = ['win', 'loss', 'tie', 'draw'];
  const esc = s => String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]);
  const pics = document.querySelectorAll('#pics > template');
  // a position not drawn: its text in a box, as pipeline/games/_svg.py's text_picture draws it
  const box = t => {
    const w = Math.max(40, 8 * t.length + 16);
    return D.box.replace(/@W@|@X@|@R@|\u0000/g, k => ({'@W@': w, '@X@': w / 2, '@R@': w - 1})[k] ?? esc(t));
  };
  const pic = i => D.d[i] >= 0 ? pics[D.d[i]].innerHTML : box(D.t[i]);
  const key = i => V[D.v[i]] + ' ' + (D.r[i] === null ? '' : D.r[i]);
  const here = document.getElementById('here'), cards = document.getElementById('moves');
  const title = document.title;
  function show(i) {
    const v = V[D.v[i]];
    here.dataset.value = v;
    here.dataset.id = D.id[i];
    here.innerHTML = '<div class="pic">' + pic(i) + '</div><div><div class="pos">' + esc(D.t[i]) +
      (i === D.start ? ' <span class="note">(the start)</span>' : '') + '</div><div class="verdict"><b class="' +
      v + '">' + esc(D.w[key(i)]) + '</b></div><div class="note">' + esc(D.n[i]) + '</div></div>';
    const m = D.m[i], out = [];
    for (let k = 0; k < m.length; k += 2) {
      const j = m[k], o = D.c[key(j)];
      out.push('<li' + (k / 2 < D.b[i] ? ' class="best"' : '') + '><a class="' + o[0] + '" href="#p' +
        D.id[j] + '" title="to ' + esc(D.t[j]) + '">' + pic(j) + '<span class="label">' + esc(D.l[m[k + 1]]) +
        '</span><span class="what">' + esc(o[1]) + (k / 2 < D.b[i] ? ' · best' : '') + '</span></a></li>');
    }
    cards.innerHTML = out.join('') || '<li class="note">' + (D.r[i] === 0 ? 'No move: the game is over.' : 'No move.') + '</li>';
    document.title = D.t[i] + ' · ' + title;
  }
  function follow() {
    const hit = /^#p(\d+)$/.exec(location.hash), i = hit ? at.get(Number(hit[1])) : undefined;
    show(i === undefined ? D.start : i);
  }
  addEventListener('hashchange', follow);
  follow();

  const rows = Array.from(document.querySelectorAll('table.positions tbody tr'));
  const body = document.querySelector('table.positions tbody');
  const search = document.getElementById('search'), reach = document.getElementById('reachable');
  const values = Array.from(document.querySelectorAll('.controls input[name=value]'));
  const shown = document.getElementById('shown');
  function filter() {
    const words = search.value.trim().toLowerCase(), only = reach && reach.checked;
    const wanted = new Set(values.filter(b => b.checked).map(b => b.value));
    let n = 0;
    for (const row of rows) {
      const i = Number(row.dataset.i);
      const ok = (!words || D.t[i].toLowerCase().includes(words)) && (!only || D.reach[i]) && wanted.has(V[D.v[i]]);
      row.hidden = !ok;
      n += ok;
    }
    shown.textContent = n.toLocaleString('en') + ' of ' + rows.length.toLocaleString('en') + ' shown';
  }
  const keys = {
    text: i => D.t[i], value: i => ['win', 'tie', 'draw', 'loss'].indexOf(V[D.v[i]]),
    remoteness: i => D.r[i], grundy: i => D.g[i], moves: i => D.m[i].length / 2,
  };
  const heads = Array.from(document.querySelectorAll('table.positions th[data-key]'));
  function sort(head) {
    const by = keys[head.dataset.key], down = head.getAttribute('aria-sort') === 'ascending';
    heads.forEach(h => h.removeAttribute('aria-sort'));
    head.setAttribute('aria-sort', down ? 'descending' : 'ascending');
    const order = rows.map(row => Number(row.dataset.i));
    order.sort((a, b) => {
      const x = by(a), y = by(b);
      if (x === null || y === null) return (x === null) - (y === null) || a - b;
      const c = typeof x === 'string' ? x.localeCompare(y, 'en', {numeric: true}) : x - y;
      return (down ? -c : c) || a - b;
    });
    const byIndex = new Map(rows.map(row => [Number(row.dataset.i), row]));
    body.append(...order.map(i => byIndex.get(i)));
  }
  heads.forEach(h => h.querySelector('button').addEventListener('click', () => sort(h)));
  search.addEventListener('input', filter);
  [reach, ...values].forEach(box => box && box.addEventListener('change', filter));
  filter();
})();
"""


def _table_order(graph: "RulesetGraph") -> list["Position"]:
    """The listed positions as the table first shows them: the start, then what play can
    reach, the longest forced results first (draws after them), then the rest."""
    return sorted(graph.positions.values(), key=lambda p: (
        p.id != graph.start, not p.reachable, p.remoteness is None, -(p.remoteness or 0), p.id))


def _best_count(graph: "RulesetGraph", pid: int) -> int:
    """How many of a position's moves (best first) are as good as the best."""
    keys = [best_first(_as_move(graph, edge.dst, edge.move))[:2] for edge in graph.moves[pid]]
    return sum(1 for k in keys if keys and k == keys[0])


def _as_move(graph: "RulesetGraph", dst: int, label: str) -> Move:
    child = graph.positions[dst]
    return Move(label, child.text, child.value, child.remoteness)


def _walk_data(graph: "RulesetGraph", order: list["Position"], drawings: dict[int, str]) -> tuple[dict, list[str]]:
    """The JSON document the page's scripts read, and the distinct drawings it refers to:
    the listed positions in table order (by index), each move as (index of the position it
    leads to, index of its label), each position's drawing by index (-1: none, show the text)."""
    index = {p.id: i for i, p in enumerate(order)}
    labels: dict[str, int] = {}
    pics: dict[str, int] = {}
    moves, best, notes, pictures = [], [], [], []
    for p in order:
        flat = []
        for edge in graph.moves[p.id]:
            flat += [index[edge.dst], labels.setdefault(edge.move, len(labels))]
        moves.append(flat)
        best.append(_best_count(graph, p.id))
        notes.append(_position_note(graph, p))
        pictures.append(pics.setdefault(drawings[p.id], len(pics)) if p.id in drawings else -1)
    values = [v.value for v in (Value.WIN, Value.LOSS, Value.TIE, Value.DRAW)]
    pairs = {(p.value, p.remoteness) for p in order}
    return {
        "start": index[graph.start],
        "id": [p.id for p in order], "t": [p.text for p in order], "v": [values.index(p.value) for p in order],
        "r": [p.remoteness for p in order], "g": [p.grundy for p in order],
        "reach": [int(p.reachable) for p in order], "m": moves, "b": best, "n": notes,
        "l": list(labels), "d": pictures, "box": text_picture("\0", width="@W@"),
        "w": {f"{value} {'' if r is None else r}": for_the_mover(value, r) for value, r in pairs},
        "c": {f"{value} {'' if r is None else r}": list(move_outcome(value, r)) for value, r in pairs},
    }, list(pics)


def _drawings(graph: "RulesetGraph") -> tuple[dict[int, str], bool]:
    """Drawings of the listed positions, nearest the start first (as a walk meets them),
    up to DRAWING_BYTES, the start and its moves always; and whether every one is drawn."""
    rules, positions = graph.rules, graph.positions
    drawn: dict[int, str] = {}
    size, queue, seen = 0, deque([graph.start]), {graph.start}
    while queue:
        pid = queue.popleft()
        picture = rules.game.draw(rules, positions[pid].text)
        size += len(picture)
        if size > DRAWING_BYTES and pid != graph.start and len(drawn) > len(graph.moves[graph.start]):
            return drawn, False
        drawn[pid] = picture
        for edge in graph.moves[pid]:
            if edge.dst not in seen:
                seen.add(edge.dst)
                queue.append(edge.dst)
    for pid, position in positions.items():  # those no walk from the start meets
        if pid not in drawn:
            picture = rules.game.draw(rules, position.text)
            size += len(picture)
            if size > DRAWING_BYTES:
                return drawn, False
            drawn[pid] = picture
    return drawn, True


def _position_note(graph: "RulesetGraph", p: "Position") -> str:
    parts = []
    if p.grundy is not None:
        parts.append(f"Grundy value {p.grundy}")
    if not p.reachable:
        parts.append("play cannot reach this position from the start")
    parts.append(f"{len(graph.moves[p.id])} move{'s' * (len(graph.moves[p.id]) != 1)}")
    return "; ".join(parts)


def _walk(graph: "RulesetGraph", drawings: dict[int, str]) -> list[str]:
    """The walk as written in the page: the start and its moves (the script redraws it for
    the position the address names)."""
    start = graph.positions[graph.start]
    cards = []
    best = _best_count(graph, start.id)
    for k, edge in enumerate(graph.moves[start.id]):
        child = graph.positions[edge.dst]
        outcome, what = move_outcome(child.value, child.remoteness)
        cards.append(
            ('<li class="best">' if k < best else "<li>") + f'<a class="{outcome}" href="#p{child.id}" '
            f'title="to {_e(child.text)}">{drawings.get(child.id) or text_picture(child.text)}'
            f'<span class="label">{_e(edge.move)}</span><span class="what">{_e(what)}'
            f'{" · best" if k < best else ""}</span></a></li>')
    return [
        '<section id="walk" aria-label="walk the game">',
        '<div class="anchors">' + "".join(f'<i id="p{pid}"></i>' for pid in graph.positions) + "</div>",
        "<h2>Walk the game</h2>",
        '<p class="note">Each move is drawn as the position it leads to, best first, coloured by what it '
        "means for the player making it (green: a winning move). Click one to play it; the browser's Back "
        f'button takes it back, or go <a href="#p{start.id}">back to the start</a>.</p>',
        f'<div id="here" data-value="{start.value}" data-id="{start.id}"><div class="pic">'
        f'{drawings.get(start.id) or text_picture(start.text)}</div><div><div class="pos">{_e(start.text)} '
        f'<span class="note">(the start)</span></div><div class="verdict"><b class="{start.value}">'
        f'{_e(for_the_mover(start.value, start.remoteness))}</b></div><div class="note">{_e(_position_note(graph, start))}</div></div></div>',
        f'<ol id="moves" class="cards">{"".join(cards)}</ol>',
        "</section>",
    ]


def ruleset_page(graph: "RulesetGraph", pictures: list[tuple[str, str]], notes: list[str],
                 counts: dict[tuple[str, int], int]) -> str:
    """A ruleset's HTML page: the walk from the start, its numbers, links to `pictures`
    (file name, description) and `notes` on those not drawn, a remoteness histogram and the
    table of the loaded positions, each linked to its children."""
    s, rules = graph.summary, graph.rules
    start = graph.positions[graph.start]
    order = _table_order(graph)
    every = len(order) == s.positions
    drawings, drawn = _drawings(graph)
    data, pics = _walk_data(graph, order, drawings)
    body = [
        '<p><a href="../../index.html">All rulesets</a></p>',
        f"<h1>{_e(rules.id).replace(',', ',<wbr>')}</h1>",  # long ids break after a comma
        f"<p>{_e(rules.game.summary[:1].upper() + rules.game.summary[1:])}. "
        + ", ".join(f"{_e(k)}={_e(v)}" for k, v in s.parameters.items()) + ".</p>",
        f'<p>From the start <code>{_e(start.text)}</code>: <b class="{s.start_value}">'
        f"{_e(in_words(s.start_value, s.start_remoteness))}</b>.</p>",
        *_walk(graph, drawings),
    ]
    if not drawn:
        body.append(f'<p class="note">Of the {len(order):,} positions listed, the {len(drawings):,} nearest the start '
                    f"are drawn (a page keeps its drawings under {DRAWING_BYTES / 1e6:g} MB); the walk shows the "
                    "others as text.</p>")
    body += [
        "<h2>Numbers</h2>",
        '<table class="numbers"><tbody>',
        *(f'<tr><th>{label}</th><td class="{f"n {cls}".strip()}">{s[key]:,}</td></tr>' for label, key, cls in (
            ("positions", "positions", ""), ("reachable from the start", "reachable", ""),
            ("moves", "transitions", ""), ("wins", "wins", "win"), ("losses", "losses", "loss"),
            ("ties", "ties", "tie"), ("draws", "draws", "draw"),
            ("longest forced win, loss or tie", "max_remoteness", ""))),
        "</tbody></table>",
        "<h2>Pictures</h2>",
    ]
    if pictures:
        body.append('<ul class="pictures">' + "".join(
            f'<li><a href="{_e(name)}">{_e(what)}</a></li>' for name, what in pictures) + "</ul>")
    body += [f'<p class="note">{_e(note)}</p>' for note in notes]
    body += ["<h2>Remoteness</h2>", f"<p>{remoteness_histogram(counts)} "
             '<span class="note">wins (and ties, yellow) above the line, losses below; every position</span></p>',
             "<h2>Positions</h2>", _LEGEND,
             "<p>" + (f"Every position ({len(order):,}); those play cannot reach from the start are faded."
                      if every else
                      f"The {len(order):,} positions reachable from the start (of {s.positions:,}).")
             + " Positions are written from the side to move. Moves are listed best first (the best in bold), "
             "coloured by what they mean for the player making them. Click a position or a move to walk "
             "from it; click a column's name to sort.</p>",
             _controls(graph, every), '<div class="scroll"><table class="positions">',
             "<thead><tr>" + "".join(f'<th data-key="{key}"><button type="button">{name}</button></th>'
                                     for key, name in (("text", "position"), ("value", "value"),
                                                       ("remoteness", "remoteness"), ("grundy", "grundy"),
                                                       ("moves", "moves"))) + "</tr></thead>",
             "<tbody>"]
    for i, p in enumerate(order):
        classes = " ".join([p.value] + (["unreachable"] if not p.reachable else [])
                           + (["start"] if p.id == graph.start else []))
        body.append(
            f'<tr id="r{p.id}" data-i="{i}" class="{classes}"><td class="v"><a href="#p{p.id}"><code>{_e(p.text)}</code></a>'
            + (' <span class="note">start</span>' if p.id == graph.start else "")
            + f'</td><td class="v">{p.value}</td><td class="n">{"" if p.remoteness is None else p.remoteness}</td>'
            f'<td class="n g">{"—" if p.grundy is None else p.grundy}</td><td>{_moves_cell(graph, p)}</td></tr>')
    body += ["</tbody></table></div>",
             '<div id="pics" hidden>' + "".join(f"<template>{pic}</template>" for pic in pics) + "</div>",
             f'<script type="application/json" id="data">{_json(data)}</script>',
             f"<script>{_SCRIPT}</script>"]
    return _document(f"{rules.id}: tablebase", body)


def _controls(graph: "RulesetGraph", every: bool) -> str:
    present = [v.value for v in PREFERENCE if any(p.value == v for p in graph.positions.values())]
    parts = ['<div class="controls">',
             '<input type="search" id="search" placeholder="search position text" aria-label="search position text">']
    if every and not all(p.reachable for p in graph.positions.values()):
        parts.append('<label><input type="checkbox" id="reachable"> reachable from the start only</label>')
    parts.append("<span>" + " ".join(
        f'<label class="{v}"><input type="checkbox" name="value" value="{v}" checked> {v}</label>' for v in present)
        + "</span>")
    parts += ['<span id="shown" class="note"></span>', "</div>"]
    return "".join(parts)


def _moves_cell(graph: "RulesetGraph", position: "Position") -> str:
    edges = graph.moves[position.id]
    if not edges:
        return f'<span class="note">{_e(for_the_mover(position.value, position.remoteness)) if position.over else "no move"}</span>'
    best = _best_count(graph, position.id)
    items = []
    for k, edge in enumerate(edges):
        child = graph.positions[edge.dst]
        outcome, what = move_outcome(child.value, child.remoteness)
        items.append(f'<li><a class="{outcome}{" best" if k < best else ""}" href="#p{child.id}">{_e(edge.move)}</a> → '
                     f'<code>{_e(child.text)}</code> <span class="note">({what})</span></li>')
    return '<ul class="moves">' + "".join(items) + "</ul>"


# --- the index ---------------------------------------------------------------------------


def page_href(folder: str) -> str:
    """The index's relative link to a ruleset page (`Ruleset.folder`: <game>/<slug>)."""
    return f"./{quote(folder)}/index.html"


def natural_key(text: str) -> tuple:
    """Sort key reading the numbers in `text` as numbers: fingers=2 before fingers=10."""
    return tuple((0, int(part), "") if part.isdigit() else (1, 0, part)
                 for part in re.split(r"(\d+)", text) if part)


def index_page(catalog: list[CatalogRow], counts: dict[str, dict[tuple[str, int], int]], drawn: set[str],
               comments: dict[str, str]) -> str:
    """The index of every built ruleset, in `catalog`'s order: its comment, numbers, who wins
    in words, a win/loss/tie/draw bar and a remoteness histogram each, grouped by game;
    rulesets in `drawn` link to their pages."""
    body = ["<h1>Tablebases</h1>",
            f"<p>{len(catalog):,} rulesets built. Each row: the ruleset and what it is, how many positions, "
            "who wins from the start with best play, the share of positions won, lost, tied and drawn by the "
            "player to move, and how many positions lie at each remoteness. Rulesets with a page link to it "
            "(draw others with <code>tablebase draw RULESET</code>).</p>", _LEGEND]
    games = list(dict.fromkeys(row.game for row in catalog))
    body.append("<p>Games: " + " · ".join(f'<a href="#game-{_e(g)}">{_e(g)}</a>' for g in games) + "</p>")
    for game in games:
        body += [f'<h2 id="game-{_e(game)}">{_e(game)}</h2>', '<div class="scroll"><table class="catalog">',
                 '<thead><tr><th>ruleset</th><th>positions</th><th class="wide">reachable</th><th>start</th>'
                 '<th>with best play</th><th class="wide">wins</th><th class="wide">losses</th>'
                 '<th class="wide">ties</th><th class="wide">draws</th>'
                 '<th>win / loss / tie / draw</th><th class="wide">remoteness</th></tr></thead>', "<tbody>"]
        for row in (r for r in catalog if r.game == game):
            ruleset = row.ruleset
            name = (f'<a href="{_e(page_href(row.folder))}">{_e(ruleset)}</a>' if ruleset in drawn
                    else _e(ruleset))
            comment = comments.get(ruleset)
            body.append(
                f'<tr data-ruleset="{_e(ruleset)}"><td class="ruleset">{name}'
                + (f'<div class="comment">{_e(comment)}</div>' if comment else "") + "</td>"
                f'<td class="n positions" data-label="positions">{row.positions:,}</td>'
                f'<td class="n reachable wide">{row.reachable:,}</td>'
                f'<td data-label="start"><code>{_e(row.start)}</code></td>'
                f'<td class="{row.start_value} verdict">{_e(in_words(row.start_value, row.start_remoteness))}</td>'
                f'<td class="n wins wide">{row.wins:,}</td><td class="n losses wide">{row.losses:,}</td>'
                f'<td class="n ties wide">{row.ties:,}</td><td class="n draws wide">{row.draws:,}</td>'
                f'<td>{value_bar(row.wins, row.losses, row.ties, row.draws, width=120)}</td>'
                f'<td class="wide">{remoteness_histogram(counts.get(ruleset, {}))}</td></tr>')
        body += ["</tbody></table></div>"]
    return _document("Tablebases", body)
