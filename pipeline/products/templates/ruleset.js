// The script of a ruleset's page (ruleset.html inlines it), over the JSON document #data.
// The walk: the line the fragment #p<id>.<id>… names (a position, then each position a move
// led to; the start without one), its position drawn with its moves as cards, the moves
// played as a numbered list, a strip of the value at each ply and a download of the line.
// The table: search, filters, sorting and paging over the positions the page holds.
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
