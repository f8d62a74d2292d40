// The explorer: a ruleset's positions walked one at a time through `tablebase serve`'s API,
// or, in a published bundle's page, through its Parquet files read in the browser (parquet.js,
// which sets window.tablebaseSource before this runs). The address holds the ruleset and the
// line played (#/<ruleset>/<position>/<position>..., each part URL-encoded), so a link
// reloads to the same place and the browser's Back and Forward walk it; each position is
// asked once and kept for the page's life.
'use strict';
(() => {
  const $ = id => document.getElementById(id);
  const OPPOSITE = {win: 'loss', loss: 'win', tie: 'tie', draw: 'draw'};
  const VERB = {win: 'wins', loss: 'loses', tie: 'ties', draw: 'draws'};
  const plies = n => n + (n === 1 ? ' ply' : ' plies');

  let ruleset = null;   // the ruleset's id
  let line = [];        // position texts, line[0] where the line begins; kept past `at` for Forward
  let at = 0;           // the index in `line` of the position shown
  let shown = 0;        // counts renders, so an answer that arrives late draws nothing
  let catalog = [];     // the built rulesets' catalog rows
  const asked = new Map();

  // The API's answer as JSON; an error thrown with the API's own sentence.
  async function api(path, query) {
    const url = path + (query ? '?' + new URLSearchParams(query) : '');
    let response;
    try {
      response = await fetch(url);
    } catch (error) {
      throw new Error('the server does not answer: is tablebase serve still running?');
    }
    const body = await response.json().catch(() => null);
    if (!response.ok) throw new Error(body && body.error ? body.error : 'the server answered ' + response.status);
    return body;
  }
  const rulesetPath = (r, kind) => '/api/rulesets/' + encodeURIComponent(r) + (kind === 'picture' ? '/picture' : '');
  // Where answers come from: the API, or a bundle's Parquet. `picture` null: the position's
  // text is shown in the picture's place.
  const source = window.tablebaseSource || {
    catalog: () => api('/api/rulesets'),
    lookup: (r, position) => api(rulesetPath(r, 'position'), {position}),
    picture: (r, position) => api(rulesetPath(r, 'picture'), {position}),
  };
  function once(kind, r, position) {
    const key = kind + '\n' + r + '\n' + position;
    if (!asked.has(key)) {
      const answer = source[kind](r, position);
      answer.catch(() => asked.delete(key));  // asked again next time: the server may be back
      asked.set(key, answer);
    }
    return asked.get(key);
  }
  const lookup = (r, position) => once('lookup', r, position);
  const picture = (r, position) => source.picture ? once('picture', r, position) : Promise.resolve(null);

  function fail(error) {
    $('error').textContent = error.message;
    $('error').hidden = false;
  }

  // --- the address -------------------------------------------------------------------------
  // Each part URL-encoded, but for the : = , of a ruleset's id, which an address may hold as
  // they are and a person reads more easily so ('/' stays encoded: it parts the parts).
  const part = text => encodeURIComponent(text).replace(/%3A|%3D|%2C/g, decodeURIComponent);
  const address = (r, positions) => '#/' + [r, ...positions].map(part).join('/');
  function parsed() {
    const parts = location.hash.replace(/^#\/?/, '').split('/').filter(p => p !== '').map(decodeURIComponent);
    return parts.length ? {r: parts[0], positions: parts.slice(1)} : null;
  }
  // Go to the line `positions` (a prefix of `line` keeps the plies after it, for Forward): a
  // history entry of its own (pushState fires no hashchange; Back fires one).
  function go(r, positions) {
    show(r, positions);
    const target = address(r, positions);
    if (location.hash !== target) history.pushState(null, '', target);
  }
  function show(r, positions) {
    const same = r === ruleset && positions.length <= line.length && positions.every((p, k) => p === line[k]);
    ruleset = r;
    if (!same) line = positions.length ? positions : ['start'];
    at = (positions.length || 1) - 1;
    $('ruleset').value = r;
    render();
  }
  function fromAddress() {
    const found = parsed();
    if (found === null) {
      const first = catalog[0];
      if (first) history.replaceState(null, '', address(first.ruleset, [first.start]));
      if (first) show(first.ruleset, [first.start]);
      return;
    }
    show(found.r, found.positions);
  }

  // --- moving ------------------------------------------------------------------------------
  const back = () => at > 0 && go(ruleset, line.slice(0, at));
  const forward = () => at + 1 < line.length && go(ruleset, line.slice(0, at + 2));
  function play(position) {
    if (line[at + 1] !== position) line = line.slice(0, at + 1).concat([position]);
    go(ruleset, line.slice(0, at + 2));
  }
  // The player's move, then (with the toggle) the tablebase's best answer to it.
  async function played(position) {
    play(position);
    if (!$('auto').checked) return;
    const r = ruleset, answer = await lookup(r, position).catch(fail);
    // unless the user went elsewhere meanwhile
    if (answer && !answer.game_over && r === ruleset && line[at] === position) play(answer.moves[0].position);
  }

  // --- drawing -----------------------------------------------------------------------------
  async function render() {
    const mine = ++shown, r = ruleset, positions = line.slice(), here = positions[at];
    $('back').disabled = at === 0;
    $('forward').disabled = at + 1 >= positions.length;
    let answer, drawn;
    try {
      [answer, drawn] = await Promise.all([lookup(r, here), picture(r, here)]);
    } catch (error) {
      if (mine === shown) fail(error);
      return;
    }
    if (mine !== shown) return;
    $('error').hidden = true;
    if (here === 'start') {  // the address names the start by its text from now on
      line[at] = positions[at] = answer.position;
      history.replaceState(null, '', address(r, line.slice(0, at + 1)));
    }
    $('here').dataset.value = answer.value;
    if (drawn) {
      $('picture').innerHTML = drawn.picture;  // shapes and text alone: the server checks it as the pages do
    } else {
      const text = document.createElement('pre');
      text.className = 'text';
      text.textContent = answer.position;
      $('picture').replaceChildren(text);
    }
    $('position').textContent = answer.position + (answer.note ? ' (' + answer.note + ')' : '');
    // the players are named from the start; a line begun elsewhere names them A and B
    const row = catalog.find(c => c.ruleset === r), names = row && row.start === positions[0]
      ? ['the first player', 'the second player'] : ['player A', 'player B'];
    const mover = names[at % 2];
    $('status').textContent = answer.game_over
      ? 'Game over: ' + mover + ' ' + VERB[answer.value] + '.'
      : answer.value === 'draw' ? 'A draw: neither player can force a win.'
      : mover[0].toUpperCase() + mover.slice(1) + ', to move, ' + VERB[answer.value] + ' in ' + plies(answer.remoteness) + '.';
    drawMoves(answer);
    document.title = answer.position + ' · ' + r + ' · tablebase explorer';
    const answers = await Promise.all(positions.map(p => lookup(r, p).catch(() => null)));
    if (mine === shown) drawLine(answers);
  }

  function drawMoves(answer) {
    const list = $('moves'), focused = list.contains(document.activeElement);
    list.replaceChildren();
    answer.moves.forEach((move, k) => {
      const button = document.createElement('button');
      button.type = 'button';
      button.className = move.outcome;
      button.dataset.position = move.position;
      button.dataset.remoteness = move.remoteness === null ? '' : move.remoteness;
      const what = move.remoteness === null ? VERB[move.outcome] : VERB[move.outcome] + ' in ' + plies(move.remoteness + 1);
      button.innerHTML = '<span><span class="key"></span><b class="name"></b></span><span class="what"></span>';
      button.querySelector('.key').textContent = k < 9 ? k + 1 + '.' : '';
      button.querySelector('.name').textContent = move.move;
      button.querySelector('.what').textContent = what;
      button.title = 'to ' + move.position;
      button.addEventListener('click', () => played(move.position));
      const item = document.createElement('li');
      item.append(button);
      list.append(item);
    });
    if (!answer.moves.length) list.innerHTML = '<li>no moves: the game is over</li>';
    // a move played from the keyboard leaves the focus on the next position's best move, not lost
    if (focused && answer.moves.length) list.querySelector('button').focus();
  }

  // The line as a list of plies and the value history: remoteness along the line, each ply
  // coloured by its value for the player to move where the line begins (GamesmanUni's value
  // history, turned: plies run along, the distance to the end upwards).
  function drawLine(answers) {
    const list = $('line');
    list.replaceChildren();
    answers.forEach((answer, k) => {
      const item = document.createElement('li');
      const link = document.createElement('a');
      link.href = address(ruleset, line.slice(0, k + 1));
      const before = answers[k - 1];
      const move = k === 0 ? null : before && before.moves.find(m => m.position === line[k]);
      link.textContent = k === 0 ? 'the start of the line' : move ? move.move : line[k];
      item.append(link);
      if (k === at) item.className = 'now', link.setAttribute('aria-current', 'step');
      list.append(item);
    });
    const step = 26, height = 90, top = 10, known = answers.filter(a => a && a.remoteness !== null);
    const most = Math.max(1, ...known.map(a => a.remoteness));
    const width = Math.max(240, step * answers.length + 20);
    const y = answer => answer.remoteness === null ? top : top + (height - 2 * top) * (1 - answer.remoteness / most);
    const points = [];
    let svg = '<svg width="' + width + '" height="' + (height + 16) + '" role="img" aria-label="remoteness along the line">';
    svg += '<line x1="10" x2="' + (width - 10) + '" y1="' + (height - top) + '" y2="' + (height - top) + '" stroke="#b0bec5"/>';
    answers.forEach((answer, k) => {
      if (!answer) return;
      const x = 14 + k * step, value = k % 2 === 0 ? answer.value : OPPOSITE[answer.value];
      points.push([x, y(answer), value, k, answer]);
    });
    svg += '<polyline fill="none" stroke="#90a4ae" points="' + points.map(p => p[0] + ',' + p[1]).join(' ') + '"/>';
    const cursor = 14 + at * step;
    svg += '<line x1="' + cursor + '" x2="' + cursor + '" y1="0" y2="' + height + '" stroke="#37474f" stroke-dasharray="3 2"/>';
    for (const [x, py, value, k, answer] of points) {
      const r = answer.remoteness === null ? 'draw' : 'remoteness ' + answer.remoteness;
      svg += '<circle class="point ' + value + '" data-ply="' + k + '" cx="' + x + '" cy="' + py + '" r="6"><title>ply ' + k +
        ': ' + value + ' for the player who moves first in the line, ' + r + '</title></circle>';
      svg += '<text x="' + x + '" y="' + (height + 12) + '" font-size="10" text-anchor="middle" fill="#607d8b">' + k + '</text>';
    }
    $('chart').innerHTML = svg + '</svg>';
    $('chart').querySelectorAll('.point').forEach(point =>
      point.addEventListener('click', () => go(ruleset, line.slice(0, Number(point.dataset.ply) + 1))));
  }

  // --- the page's controls -----------------------------------------------------------------
  async function start() {
    $('back').addEventListener('click', back);
    $('forward').addEventListener('click', forward);
    $('ruleset').addEventListener('change', event => {
      const row = catalog.find(c => c.ruleset === event.target.value);
      go(event.target.value, [row ? row.start : 'start']);
    });
    document.addEventListener('keydown', event => {
      if (event.altKey || event.ctrlKey || event.metaKey || /^(SELECT|INPUT|TEXTAREA)$/.test(event.target.tagName)) return;
      if (event.key === 'ArrowLeft') back();
      else if (event.key === 'ArrowRight') forward();
      else if (/^[1-9]$/.test(event.key)) {
        const button = $('moves').querySelectorAll('button')[Number(event.key) - 1];
        if (button) button.click();
      } else return;
      event.preventDefault();
    });
    window.addEventListener('hashchange', fromAddress);
    catalog = (await source.catalog().catch(fail)) || [];
    for (const row of catalog) {
      const option = document.createElement('option');
      option.value = row.ruleset;
      option.textContent = row.ruleset + ' (' + row.positions.toLocaleString('en') + ' positions)';
      $('ruleset').append(option);
    }
    if (!catalog.length && $('error').hidden) fail(new Error(window.tablebaseSource
      ? 'the bundle holds no ruleset' : 'nothing is built in the server\'s data folder: build a ruleset first'));
    fromAddress();
  }
  start();
})();
