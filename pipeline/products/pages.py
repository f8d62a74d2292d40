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

import csv
import html
import io
import json
import re
from collections import deque
from urllib.parse import quote

from pipeline.games._svg import text_picture
from pipeline.products.probe import Move, best_first
from pipeline.core.dataset import CatalogRow
from pipeline.core.values import COLOURS, EDGE_COLOURS, PREFERENCE, WORDS, Value, for_pages, in_plies, in_words
from pipeline.products.ruleset_graph import Position, RulesetGraph

PLURALS = {"win": "wins", "loss": "losses", "tie": "ties", "draw": "draws"}
#: Bytes of position drawings a page embeds (a drawing is 0.3-1.7 kB), nearest the start
#: first: past them the walk shows positions as text (tic-tac-toe's last few plies).
DRAWING_BYTES = 1_000_000


def _count(n: int, value: str) -> str:
    return f"{n:,} {value if n == 1 else PLURALS[value]}"


def _e(text: object) -> str:
    return html.escape(str(text), quote=True)


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
    # bars narrow as remoteness grows, so a histogram keeps to its column's `width`
    bar = min(14.0, width / (top + 1))
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
    if top:  # a single bar's end label would sit on its start label ("0 0")
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
#here .pos { font-size: 1.2em; font-weight: 600; } #here .pos .note { font: 0.8em system-ui, sans-serif; }
#here .verdict { font-size: 1.1em; }
#here .turn { font-size: 1.05em; }
/* the first player at the bottom of a picture with two sides: flipped when the second is to move, its words kept upright */
#here.second .pic svg.sides, ol.cards a.second svg.sides { transform: scaleY(-1); }
#here.second .pic svg.sides text, ol.cards a.second svg.sides text { transform: scaleY(-1); transform-box: fill-box; transform-origin: center; }
#walk h3 { font-size: 1em; margin: 1em 0 0.3em; }
ol#line { margin: 0.2em 0; padding-left: 2.2em; }
ol#line li { margin: 1px 0; }
ol#line a { color: inherit; text-decoration: none; }
ol#line .ply { color: #607d8b; font-variant-numeric: tabular-nums; }
.slip { color: #b71c1c; font-size: 0.9em; }
.strip { display: inline-flex; flex-wrap: wrap; gap: 1px; vertical-align: middle; }
.strip a { display: inline-block; min-width: 1.6em; text-align: center; font-size: 0.8em; color: #000;
  text-decoration: none; border-radius: 2px; }
.strip a.now { outline: 2px solid #37474f; }
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
td.ruleset { min-width: 12em; max-width: 28em; overflow-wrap: anywhere; }
/* the index at 1400 px: a verdict wraps rather than push the histograms out of their box, and a
   start too long for its column is cut (whole in its title and on its page) */
/* two lines each: the player ("the second player") above, "wins in 21 plies" below */
@media (min-width: 701px) { td.verdict { width: 9.5em; } }
table.catalog code { display: inline-block; max-width: 24ch; overflow: hidden; text-overflow: ellipsis;
  vertical-align: bottom; }
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
# each value's colours, from pipeline/core/values.py as the DOT files' (tr.win's own rule above
# and the #here border's outweigh these by specificity, not by order)
_CSS += "".join(f".{v}, tr.{v} > td.v {{ background: {COLOURS[v]}; }}\n"
                f"#here[data-value={v}] .pic {{ border-color: {EDGE_COLOURS[v]}; }}\n" for v in WORDS)

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

#: A page's size at most (a browser opens 5 MB in a second; sticks:rows=8's 70 MB took 99 s).
PAGE_BYTES = 5_000_000
#: What the walk's data may take at first: positions nearest the start keep their moves
#: until it is spent; the page halves it while the page is over PAGE_BYTES.
WALK_BYTES = 2_500_000
#: Rows of the positions table at a time (the script pages through the rest).
TABLE_ROWS = 200

# The walk: the line the fragment #p<id>.<id>… names (a position, then each position a move
# led to; the start without one), its position drawn with its moves as cards, the moves
# played as a numbered list, a strip of the value at each ply and a download of the line.
# The table: search, filters, sorting and paging over the JSON document #data.
_SCRIPT = r"""
(() => {
  const D = JSON.parse(document.getElementById('data').textContent);
  const at = new Map(D.id.map((id, i) => [id, i]));
  // the value domain, from pipeline/core/values.py (`for_pages`): words by code - 1, phrases
  const VALUES = D.values, V = VALUES.words, OPPOSITE = VALUES.opposite, PHRASES = VALUES.phrases;
  const esc = s => String(s).replace(/[&<>"]/g, c => ({'&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;'})[c]);
  const pics = document.querySelectorAll('#pics > template');
  // a position not drawn: its text in a box, as pipeline/games/_svg.py's text_picture draws it
  const box = t => {
    const w = Math.max(40, 8 * t.length + 16);
    return D.box.replace(/@W@|@X@|@R@|\u0000/g, k => ({'@W@': w, '@X@': w / 2, '@R@': w - 1})[k] ?? esc(t));
  };
  const pic = i => D.d[i] >= 0 ? pics[D.d[i]].innerHTML : box(D.t[i]);
  const count = (n, what) => n.toLocaleString('en') + ' ' + what + (n === 1 ? '' : 's');
  const plies = n => n.toLocaleString('en') + ' ' + PHRASES.ply[n === 1 ? 0 : 1];
  const say = (table, v, r, mover, other) => table[V[v]].replace(/\{(\w+)\}/g, (_, k) =>
    ({mover, other, plies: plies(r || 0), wins: 'wins', has: 'has'})[k]);
  // what position i means for `mover`, the player to move there, and `other`
  const verdict = (i, mover, other) => say(D.r[i] === 0 ? PHRASES.said_over : PHRASES.said, D.v[i], D.r[i], mover, other);
  // what the move into position j means for the player making it, plies counted from before it
  const outcome = j => say(PHRASES.short, OPPOSITE[D.v[j]], D.r[j] === null ? null : D.r[j] + 1);
  const legal = i => D.k[i] ? count(D.k[i], 'legal move') : 'no legal move';
  function note(i) {
    const parts = [];
    if (D.g[i] !== null) parts.push('Grundy value ' + D.g[i]);
    if (!D.reach[i]) parts.push('play cannot reach this position from the start');
    parts.push(legal(i));
    return parts.join('; ');
  }
  const moves = i => { const m = D.m[i] || [], out = []; for (let k = 0; k < m.length; k += 2) out.push([m[k], D.l[m[k + 1]]]); return out; };
  const best = (i, j) => { const m = D.m[i]; return !!m && D.v[j] === D.v[m[0]] && D.r[j] === D.r[m[0]]; };
  const away = i => 'This page holds the moves of the ' + D.held.toLocaleString('en') + ' positions nearest the start, ' +
    'not of this one: tablebase probe ' + D.ruleset + " '" + D.t[i] + "' lists them.";

  // the line walked: its positions and the moves played between them
  let line = [D.start], played = [];
  function parse() {
    const hit = /^#p(\d+)((?:\.\d+)*)$/.exec(location.hash), root = hit ? at.get(Number(hit[1])) : undefined;
    line = [root === undefined ? D.start : root];
    played = [];
    if (root === undefined || !hit[2]) return;
    for (const id of hit[2].slice(1).split('.').map(Number)) {  // a step that is not a move ends the line
      const move = moves(line[line.length - 1]).find(([j]) => D.id[j] === id);
      if (!move) break;
      line.push(move[0]);
      played.push(move[1]);
    }
  }
  const href = ids => '#p' + ids.map(i => D.id[i]).join('.');
  // who is who: from the start the game's own players; from elsewhere, A moves first
  const players = () => line[0] === D.start ? ['first player', 'second player'] : ['player A', 'player B'];
  const moverAt = ply => players()[ply % 2];

  const here = document.getElementById('here'), cards = document.getElementById('moves');
  const list = document.getElementById('line'), strip = document.getElementById('strip');
  const title = document.title;
  function show() {
    parse();
    const n = line.length - 1, i = line[n], [first, second] = players();
    const mover = moverAt(n), other = moverAt(n + 1);
    here.dataset.value = V[D.v[i]];
    here.dataset.id = D.id[i];
    here.dataset.ply = n;
    here.classList.toggle('second', n % 2 === 1);
    here.innerHTML = '<div class="pic">' + pic(i) + '</div><div><div class="turn">Ply ' + n + ' · <b>the ' + mover +
      '</b> to move</div><div class="pos">' + esc(D.t[i]) + (i === D.start ? ' <span class="note">(the start)</span>' : '') +
      '</div><div class="verdict"><b class="' + V[D.v[i]] + '">' + esc(verdict(i, 'the ' + mover, 'the ' + other)) +
      '</b></div><div class="note">' + esc(note(i)) + '</div></div>';
    const out = [];
    for (const [j, label] of moves(i)) {
      const good = best(i, j);
      out.push('<li' + (good ? ' class="best"' : '') + '><a class="' + V[OPPOSITE[D.v[j]]] + (n % 2 ? '' : ' second') +
        '" href="' + href([...line, j]) + '" title="to ' + esc(D.t[j]) + '">' + pic(j) + '<span class="label">' +
        esc(label) + '</span><span class="what">' + esc(outcome(j)) + (good ? ' · best' : '') + '</span></a></li>');
    }
    cards.innerHTML = out.join('') || '<li class="note">' + esc(D.m[i] ? (D.r[i] === 0 ? 'No move: the game is over.' : 'No move.') : away(i)) + '</li>';
    const rows = [];
    for (let k = 0; k < n; k++) {
      const a = line[k], b = line[k + 1];
      rows.push('<li data-ply="' + (k + 1) + '"><a href="' + href(line.slice(0, k + 2)) + '"><span class="ply">ply ' + (k + 1) +
        '</span> <span class="who">' + moverAt(k) + '</span> <b>' + esc(played[k]) + '</b> → <code>' + esc(D.t[b]) +
        '</code></a> <span class="' + V[OPPOSITE[D.v[b]]] + '">' + esc(outcome(b)) + '</span>' +
        (best(a, b) ? ' <span class="note">best</span>' : ' <span class="slip">not the best: ' + esc(outcome(D.m[a][0])) + ' was there</span>') + '</li>');
    }
    list.innerHTML = rows.join('');
    document.getElementById('line-none').hidden = n > 0;
    document.getElementById('line-from').innerHTML = 'From <a href="' + href(line.slice(0, 1)) + '"><code>' + esc(D.t[line[0]]) +
      '</code></a>' + (line[0] === D.start ? ', the start' : ' (not the start: player A is the one to move there)') +
      ', the ' + first + ' to move: ' + esc(verdict(line[0], 'the ' + first, 'the ' + second)) + '.';
    // the strip: the value for the first player (A) after each ply, plies left written in it
    strip.innerHTML = line.map((p, k) => {
      const v = V[k % 2 ? OPPOSITE[D.v[p]] : D.v[p]];
      return '<a class="' + v + (k === n ? ' now' : '') + '" href="' + href(line.slice(0, k + 1)) + '" title="ply ' + k + ': ' +
        esc(verdict(p, 'the ' + moverAt(k), 'the ' + moverAt(k + 1))) + '">' + (D.r[p] === null ? '∞' : D.r[p]) + '</a>';
    }).join('');
    document.getElementById('strip-who').textContent = first;
    document.title = D.t[i] + ' · ' + title;
  }
  addEventListener('hashchange', show);
  show();

  // the line as a file: one row a position, from its first, with the move then played
  function walked() {
    return line.map((i, k) => ({ply: k, to_move: moverAt(k), position: D.t[i], value: V[D.v[i]],
      remoteness: D.r[i], move: k < played.length ? played[k] : null}));
  }
  const cell = x => x === null ? '' : /[",\r\n]/.test(String(x)) ? '"' + String(x).replace(/"/g, '""') + '"' : String(x);
  function save(name, text, type) {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(new Blob([text], {type}));
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 60000);
  }
  document.getElementById('save-csv').addEventListener('click', () => {
    const rows = walked(), keys = Object.keys(rows[0]);
    save(D.file + '-line.csv', [keys, ...rows.map(r => keys.map(k => r[k]))].map(r => r.map(cell).join(',')).join('\r\n') + '\r\n', 'text/csv');
  });
  document.getElementById('save-json').addEventListener('click', () => {
    save(D.file + '-line.json', JSON.stringify({ruleset: D.ruleset, values: 'for the player to move; remoteness in plies',
      line: walked()}, null, 1) + '\n', 'application/json');
  });

  // the table: every position the page holds, filtered, sorted, a page of rows at a time
  const body = document.querySelector('table.positions tbody'), shown = document.getElementById('shown');
  const search = document.getElementById('search'), reach = document.getElementById('reachable');
  const values = Array.from(document.querySelectorAll('.controls input[name=value]'));
  const back = document.getElementById('previous'), next = document.getElementById('next');
  let order = D.id.map((_, i) => i), chosen = order, from = 0;
  function row(i) {
    const m = moves(i), good = m.filter(([j]) => best(i, j)).length;
    const cells = !D.m[i] ? '<span class="note">' + legal(i) + ' (not held by this page)</span>'
      : !m.length ? '<span class="note">' + (D.r[i] === 0 ? esc(verdict(i, 'the player to move', 'the other player')) : 'no move') + '</span>'
      : '<ul class="moves">' + m.map(([j, label], k) => '<li><a class="' + V[OPPOSITE[D.v[j]]] + (k < good ? ' best' : '') +
        '" href="#p' + D.id[j] + '">' + esc(label) + '</a> → <code>' + esc(D.t[j]) + '</code> <span class="note">(' +
        esc(outcome(j)) + ')</span></li>').join('') + '</ul>';
    return '<tr id="r' + D.id[i] + '" data-i="' + i + '" class="' + V[D.v[i]] + (D.reach[i] ? '' : ' unreachable') +
      (i === D.start ? ' start' : '') + '"><td class="v"><a href="#p' + D.id[i] + '"><code>' + esc(D.t[i]) + '</code></a>' +
      (i === D.start ? ' <span class="note">start</span>' : '') + '</td><td class="v">' + V[D.v[i]] + '</td><td class="n">' +
      (D.r[i] === null ? '' : D.r[i]) + '</td><td class="n g">' + (D.g[i] === null ? '—' : D.g[i]) + '</td><td>' + cells + '</td></tr>';
  }
  function render() {
    const to = Math.min(from + D.rows, chosen.length);
    body.innerHTML = chosen.slice(from, to).map(row).join('');
    shown.dataset.count = chosen.length;
    shown.textContent = (chosen.length ? (from + 1).toLocaleString('en') + '–' + to.toLocaleString('en') + ' of ' : '') +
      chosen.length.toLocaleString('en') + ' shown, of ' + order.length.toLocaleString('en');
    back.disabled = from === 0;
    next.disabled = to >= chosen.length;
  }
  function filter() {
    const words = search.value.trim().toLowerCase(), only = reach && reach.checked;
    const wanted = new Set(values.filter(b => b.checked).map(b => b.value));
    chosen = order.filter(i => (!words || D.t[i].toLowerCase().includes(words)) && (!only || D.reach[i]) && wanted.has(V[D.v[i]]));
    from = 0;
    render();
  }
  const keys = {
    text: i => D.t[i], value: i => VALUES.preference[D.v[i]],
    remoteness: i => D.r[i], grundy: i => D.g[i], moves: i => D.k[i],
  };
  const heads = Array.from(document.querySelectorAll('table.positions th[data-key]'));
  function sort(head) {
    const by = keys[head.dataset.key], down = head.getAttribute('aria-sort') === 'ascending';
    heads.forEach(h => h.removeAttribute('aria-sort'));
    head.setAttribute('aria-sort', down ? 'descending' : 'ascending');
    order = D.id.map((_, i) => i).sort((a, b) => {
      const x = by(a), y = by(b);
      if (x === null || y === null) return (x === null) - (y === null) || a - b;
      const c = typeof x === 'string' ? x.localeCompare(y, 'en', {numeric: true}) : x - y;
      return (down ? -c : c) || a - b;
    });
    filter();
  }
  heads.forEach(h => h.querySelector('button').addEventListener('click', () => sort(h)));
  search.addEventListener('input', filter);
  [reach, ...values].forEach(box => box && box.addEventListener('change', filter));
  back.addEventListener('click', () => { from = Math.max(0, from - D.rows); render(); });
  next.addEventListener('click', () => { from += D.rows; render(); });
  filter();
})();
"""


def _table_order(graph: "RulesetGraph", listed: set[int]) -> list["Position"]:
    """The listed positions as the table first shows them: the start, then what play can
    reach, the longest forced results first (draws after them), then the rest."""
    return sorted((graph.positions[pid] for pid in listed), key=lambda p: (
        p.id != graph.start, not p.reachable, p.remoteness is None, -(p.remoteness or 0), p.id))


def _as_move(graph: "RulesetGraph", dst: int, label: str) -> Move:
    child = graph.positions[dst]
    return Move(label, child.text, child.value, child.remoteness)


def _best_count(graph: "RulesetGraph", pid: int) -> int:
    """How many of a position's moves (best first) are as good as the best."""
    keys = [best_first(_as_move(graph, edge.dst, edge.move))[:2] for edge in graph.moves[pid]]
    return sum(1 for k in keys if keys and k == keys[0])


def _held(graph: "RulesetGraph", budget: int) -> tuple[set[int], set[int]]:
    """The positions whose moves the page holds, and those it lists (them and where their
    moves lead): every loaded position if they fit in about `budget` bytes of JSON, else
    those nearest the start (as a walk meets them) while the budget lasts."""
    def cost(pid: int) -> int:
        return 48 + len(graph.positions[pid].text) + 12 * len(graph.moves[pid])

    if sum(cost(pid) for pid in graph.positions) <= budget:
        return set(graph.positions), set(graph.positions)
    held, listed, spent = set(), {graph.start}, 0
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


def _walk_data(graph: "RulesetGraph", order: list["Position"], held: set[int],
               drawings: dict[int, str]) -> tuple[dict, list[str]]:
    """The JSON document the page's scripts read, and the distinct drawings it refers to:
    the listed positions in table order (by index), the moves of those held as (index of
    the position it leads to, index of its label), best first, each position's drawing by
    index (-1: none, show the text)."""
    index = {p.id: i for i, p in enumerate(order)}
    labels: dict[str, int] = {}
    pics: dict[str, int] = {}
    moves, pictures = [], []
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
        "ruleset": graph.rules.id, "file": graph.rules.folder.replace("/", "-"), "start": index[graph.start],
        "held": len(held), "rows": TABLE_ROWS,
        "id": [p.id for p in order], "t": [p.text for p in order], "v": [Value(p.value).code - 1 for p in order],
        "r": [p.remoteness for p in order], "g": [p.grundy for p in order],
        "reach": [int(p.reachable) for p in order], "m": moves, "k": [len(graph.moves[p.id]) for p in order],
        "l": list(labels), "d": pictures, "box": text_picture("\0", width="@W@"), "values": for_pages(),
    }, list(pics)


def _drawings(graph: "RulesetGraph", listed: set[int], budget: int) -> tuple[dict[int, str], bool]:
    """Drawings of the listed positions, nearest the start first (as a walk meets them),
    up to `budget` bytes, the start and its moves always; and whether every one is drawn."""
    rules, positions = graph.rules, graph.positions
    drawn: dict[int, str] = {}
    size, queue, seen = 0, deque([graph.start]), {graph.start}
    while queue:
        pid = queue.popleft()
        picture = rules.game.draw(rules, positions[pid].text)
        size += len(picture)
        if size > budget and pid != graph.start and len(drawn) > len(graph.moves[graph.start]):
            return drawn, False
        drawn[pid] = picture
        for edge in graph.moves[pid]:
            if edge.dst not in seen and edge.dst in listed:
                seen.add(edge.dst)
                queue.append(edge.dst)
    for pid in sorted(listed - set(drawn)):  # those no walk from the start meets
        picture = rules.game.draw(rules, positions[pid].text)
        size += len(picture)
        if size > budget:
            return drawn, False
        drawn[pid] = picture
    return drawn, True


def for_the_mover(value: str, remoteness: int | None, mover: str = "the player to move",
                  other: str = "the other player") -> str:
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


def _position_note(graph: "RulesetGraph", p: "Position") -> str:
    parts = []
    if p.grundy is not None:
        parts.append(f"Grundy value {p.grundy}")
    if not p.reachable:
        parts.append("play cannot reach this position from the start")
    parts.append(_legal(len(graph.moves[p.id])))
    return "; ".join(parts)


def _walk(graph: "RulesetGraph", drawings: dict[int, str]) -> list[str]:
    """The walk as written in the page: the start and its moves (the script redraws it for
    the line the address names, and fills in the moves played and the strip)."""
    start = graph.positions[graph.start]
    cards = []
    best = _best_count(graph, start.id)
    for k, edge in enumerate(graph.moves[start.id]):
        child = graph.positions[edge.dst]
        outcome, what = move_outcome(child.value, child.remoteness)
        cards.append(
            ('<li class="best">' if k < best else "<li>") + f'<a class="{outcome} second" href="#p{child.id}" '
            f'title="to {_e(child.text)}">{drawings.get(child.id) or text_picture(child.text)}'
            f'<span class="label">{_e(edge.move)}</span><span class="what">{_e(what)}'
            f'{" · best" if k < best else ""}</span></a></li>')
    verdict = for_the_mover(start.value, start.remoteness, "the first player", "the second player")
    return [
        '<section id="walk" aria-label="walk the game">',
        "<h2>Walk the game</h2>",
        '<p class="note">Each move is drawn as the position it leads to, best first, coloured by what it '
        "means for the player making it (green: a winning move); a ply is one move by either player. Click "
        "one to play it; the browser's Back button takes it back, or go "
        f'<a href="#p{start.id}">back to the start</a>. The first player stays at the bottom of a picture with '
        "two sides, the second at the top; positions are written from the side to move.</p>",
        f'<div id="here" data-value="{start.value}" data-id="{start.id}" data-ply="0"><div class="pic">'
        f'{drawings.get(start.id) or text_picture(start.text)}</div><div><div class="turn">Ply 0 · '
        f'<b>the first player</b> to move</div><div class="pos">{_e(start.text)} '
        f'<span class="note">(the start)</span></div><div class="verdict"><b class="{start.value}">'
        f'{_e(verdict)}</b></div><div class="note">{_e(_position_note(graph, start))}</div></div></div>',
        f'<ol id="moves" class="cards">{"".join(cards)}</ol>',
        '<div class="line"><h3>The line walked</h3>',
        f'<p id="line-from">From <a href="#p{start.id}"><code>{_e(start.text)}</code></a>, the start, the first '
        f"player to move: {_e(verdict)}.</p>",
        '<p id="line-none" class="note">No move played yet.</p><ol id="line"></ol>',
        '<p class="strip-row"><span class="note">Value for the <span id="strip-who">first player</span> after each '
        'ply (the number: plies left; ∞: a draw):</span> <span id="strip" class="strip"></span></p>',
        '<p class="controls"><span>Download the line:</span> <button type="button" id="save-csv">CSV</button> '
        '<button type="button" id="save-json">JSON</button></p>',
        "</div></section>",
    ]


def positions_csv(graph: "RulesetGraph") -> str:
    """Every loaded position as CSV, by id: the full table a page too large lists in part,
    each position's moves as a JSON list of [move, position id], best first."""
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(["id", "position", "value", "remoteness", "grundy", "reachable", "moves"])
    for pid, p in graph.positions.items():
        writer.writerow([pid, p.text, p.value, "" if p.remoteness is None else p.remoteness,
                         "" if p.grundy is None else p.grundy, str(p.reachable).lower(),
                         _json([[edge.move, edge.dst] for edge in graph.moves[pid]])])
    return out.getvalue()


def ruleset_page(graph: "RulesetGraph", pictures: list[tuple[str, str]], notes: list[str],
                 counts: dict[tuple[str, int], int]) -> str:
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


def _ruleset_page(graph: "RulesetGraph", pictures: list[tuple[str, str]], notes: list[str],
                  counts: dict[tuple[str, int], int], walk: int, drawing: int) -> str:
    s, rules = graph.summary, graph.rules
    start = graph.positions[graph.start]
    held, listed = _held(graph, walk)
    order = _table_order(graph, listed)
    every = len(order) == s.positions
    drawings, drawn = _drawings(graph, listed, drawing)
    data, pics = _walk_data(graph, order, held, drawings)
    body = [
        '<p><a href="../../index.html">All rulesets</a></p>',
        f"<h1>{_e(rules.id).replace(',', ',<wbr>')}</h1>",  # long ids break after a comma
        f"<p>{_e(rules.game.summary[:1].upper() + rules.game.summary[1:])}. "
        + ", ".join(f"{_e(k)}={_e(v)}" for k, v in s.parameters.items()) + ".</p>",
        f'<p>From the start <code>{_e(start.text)}</code>: <b class="{s.start_value}">'
        f"{_e(in_words(s.start_value, s.start_remoteness))}</b>.</p>",
        *_walk(graph, drawings),
    ]
    if len(held) < len(graph.positions):
        body.append(f'<p class="note">This page holds the moves of the {len(held):,} positions nearest the start '
                    f"(of {len(graph.positions):,}; a page stays under {PAGE_BYTES / 1e6:g} MB): "
                    '<a href="positions.csv">positions.csv</a> has every one.</p>')
    if not drawn:
        body.append(f'<p class="note">Of the {len(order):,} positions listed, the {len(drawings):,} nearest the start '
                    f"are drawn (a page keeps its drawings under {drawing / 1e6:g} MB); the walk shows the "
                    "others as text.</p>")
    body += [
        "<h2>Numbers</h2>",
        '<table class="numbers"><tbody>',
        *(f'<tr><th>{label}</th><td class="{f"n {cls}".strip()}">{s[key]:,}</td></tr>' for label, key, cls in (
            ("positions", "positions", ""), ("reachable from the start", "reachable", ""),
            ("moves", "transitions", ""), ("wins", "wins", "win"), ("losses", "losses", "loss"),
            ("ties", "ties", "tie"), ("draws", "draws", "draw"),
            ("longest forced win, loss or tie (plies)", "max_remoteness", ""))),
        "</tbody></table>",
        "<h2>Pictures</h2>",
    ]
    if pictures:
        body.append('<ul class="pictures">' + "".join(
            f'<li><a href="{_e(name)}">{_e(what)}</a></li>' for name, what in pictures) + "</ul>")
    body += [f'<p class="note">{_e(note)}</p>' for note in notes]
    if every:
        listing = f"Every position ({len(order):,}); those play cannot reach from the start are faded."
    elif len(held) == len(graph.positions):
        listing = f"The {len(order):,} positions reachable from the start (of {s.positions:,})."
    else:
        listing = (f"The {len(order):,} positions this page holds: the {len(held):,} nearest the start and where "
                   f"their moves lead (of {s.positions:,}).")
    body += ["<h2>Remoteness</h2>", f"<p>{remoteness_histogram(counts)} "
             '<span class="note">wins (and ties, yellow) above the line, losses below; every position</span></p>',
             "<h2>Positions</h2>", _LEGEND,
             f"<p>{listing} Positions are written from the side to move. Moves are listed best first (the best "
             "in bold), coloured by what they mean for the player making them. Click a position or a move to "
             f"walk from it; click a column's name to sort. Every position as a file: "
             f'<a href="positions.csv" download>positions.csv</a>.</p>',
             _controls(graph, every), '<div class="scroll"><table class="positions">',
             "<thead><tr>" + "".join(f'<th data-key="{key}"><button type="button">{name}</button></th>'
                                     for key, name in (("text", "position"), ("value", "value"),
                                                       ("remoteness", "remoteness"), ("grundy", "grundy"),
                                                       ("moves", "moves"))) + "</tr></thead>",
             "<tbody>"]
    for i, p in enumerate(order[:TABLE_ROWS]):
        classes = " ".join([p.value] + (["unreachable"] if not p.reachable else [])
                           + (["start"] if p.id == graph.start else []))
        body.append(
            f'<tr id="r{p.id}" data-i="{i}" class="{classes}"><td class="v"><a href="#p{p.id}"><code>{_e(p.text)}</code></a>'
            + (' <span class="note">start</span>' if p.id == graph.start else "")
            + f'</td><td class="v">{p.value}</td><td class="n">{"" if p.remoteness is None else p.remoteness}</td>'
            f'<td class="n g">{"—" if p.grundy is None else p.grundy}</td><td>{_moves_cell(graph, p, held)}</td></tr>')
    body += ["</tbody></table></div>",
             '<p class="controls"><button type="button" id="previous">previous</button> '
             '<button type="button" id="next">next</button></p>',
             '<div class="anchors">' + "".join(f'<i id="p{p.id}"></i>' for p in order) + "</div>",
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


def _moves_cell(graph: "RulesetGraph", position: "Position", held: set[int]) -> str:
    edges = graph.moves[position.id]
    if position.id not in held:
        return f'<span class="note">{_legal(len(edges))} (not held by this page)</span>'
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


#: The index's histograms, narrower than a page's: beside ten columns they still fit 1400 px.
INDEX_HISTOGRAM = 140


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
                f'<td data-label="start"><code title="{_e(row.start)}">{_e(row.start)}</code></td>'
                f'<td class="{row.start_value} verdict">{_e(in_words(row.start_value, row.start_remoteness))}</td>'
                f'<td class="n wins wide">{row.wins:,}</td><td class="n losses wide">{row.losses:,}</td>'
                f'<td class="n ties wide">{row.ties:,}</td><td class="n draws wide">{row.draws:,}</td>'
                f'<td>{value_bar(row.wins, row.losses, row.ties, row.draws, width=120)}</td>'
                f'<td class="wide">{remoteness_histogram(counts.get(ruleset, {}), width=INDEX_HISTOGRAM)}</td></tr>')
        body += ["</tbody></table></div>"]
    return _document("Tablebases", body)
