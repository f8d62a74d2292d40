// The explorer with no server: a published bundle's Parquet files read in the browser by
// DuckDB-WASM over HTTP range requests, answering as `tablebase serve`'s API answers, so
// explorer.js walks a bundle on any static host. `tablebase publish --explorer` puts this
// file and the vendored DuckDB-WASM (explorer/duckdb/) into the bundle, the page at its root.
//
// A lookup reads what `tablebase probe` reads (pipeline/products/probe.py): the index's rows
// for the hash of the position's text, the lookup row of each candidate id whose text is the
// text, then its children's rows by id. Each query filters one file by equality on the column
// it is sorted by, so DuckDB reads the one row group whose min/max statistics hold the key,
// and each file's footer once a page (enable_object_cache). Several ids are asked as a UNION
// ALL of equalities and short ranges (`byId`): DuckDB 0.9 does not push `id IN (...)` into
// the scan, which then reads the whole file (on connect:cols=5,rows=6 it had not ended after
// 10 minutes: BENCHMARKS.md).
//
// DuckDB-WASM 1.28.0 (DuckDB 0.9.1) is the last release with Parquet compiled in; later ones
// fetch it as an extension from extensions.duckdb.org when first used, which a page that
// reads nothing but its own host cannot do.
import * as duckdb from './duckdb/duckdb.mjs';

const here = new URL('.', import.meta.url);  // the bundle's explorer/ folder
const bundle = new URL('..', here);          // the bundle: catalog.parquet, index/, lookup/
const PREFERENCE = ['win', 'tie', 'draw', 'loss'];
const OPPOSITE = {win: 'loss', loss: 'win', tie: 'tie', draw: 'draw'};

async function opened() {
  const worker = new Worker(new URL('duckdb/duckdb-browser-eh.worker.js', here));
  const db = new duckdb.AsyncDuckDB(new duckdb.VoidLogger(), worker);
  await db.instantiate(new URL('duckdb/duckdb-eh.wasm', here).href);
  // a host that ignores Range would make every lookup download whole files: refused instead
  await db.open({filesystem: {reliableHeadRequests: true, allowFullHTTPReads: false}});
  const con = await db.connect();
  // nothing is fetched from elsewhere: no extension is installed or loaded from DuckDB's site
  for (const setting of ['autoinstall_known_extensions = false', 'autoload_known_extensions = false',
    'enable_object_cache = true']) {
    await con.query('SET ' + setting);
  }
  const md5 = await con.prepare('SELECT md5(?) AS digest');
  await db.registerFileURL('catalog.parquet', new URL('catalog.parquet', bundle).href, duckdb.DuckDBDataProtocol.HTTP, false);
  const catalog = (await con.query('SELECT ruleset, game, folder, positions, start FROM read_parquet(\'catalog.parquet\') ORDER BY ruleset'))
    .toArray().map(row => ({...row.toJSON(), positions: Number(row.positions)}));
  // a ruleset's index (or lookup) is one file, index/<folder>.parquet, or a folder of parts in
  // its place, index/<folder>/part-NNNNN.parquet (`build --part-rows`, Spark's executors), as
  // the bundle's SHA256SUMS lists them
  const sums = await fetch(new URL('SHA256SUMS', bundle).href);
  if (!sums.ok) throw new Error('SHA256SUMS: HTTP ' + sums.status);
  const listed = new Set((await sums.text()).split('\n').filter(line => line.includes('  '))
    .map(line => line.slice(line.indexOf('  ') + 2)));
  // each ruleset's files under names of ours: the SQL names no text that came from a file or an address
  const files = new Map();
  for (const [k, row] of catalog.entries()) {
    const sources = {};
    for (const kind of ['index', 'lookup']) {
      const one = kind + '/' + row.folder + '.parquet', folder = kind + '/' + row.folder + '/';
      const names = listed.has(one) ? [one] : [...listed]
        .filter(name => name.startsWith(folder) && /^part-\d{5,}\.parquet$/.test(name.slice(folder.length)))
        .sort((a, b) => Number(a.slice(folder.length + 5, -8)) - Number(b.slice(folder.length + 5, -8)));
      if (!names.length) throw new Error('the bundle\'s SHA256SUMS lists no ' + kind + ' of ' + row.ruleset);
      const registered = [];
      for (const [n, name] of names.entries()) {
        await db.registerFileURL(kind + k + '_' + n + '.parquet', new URL(name, bundle).href, duckdb.DuckDBDataProtocol.HTTP, false);
        registered.push('\'' + kind + k + '_' + n + '.parquet\'');
      }
      sources[kind] = 'read_parquet([' + registered.join(', ') + '])';
    }
    files.set(row.ruleset, sources);
  }
  return {con, md5, catalog, files};
}

let ready = null;
function database() {
  if (ready === null) {
    ready = opened().catch(error => {
      ready = null;  // tried again on the next lookup
      throw new Error('the bundle cannot be read here: ' + (error && error.message ? error.message : error));
    });
  }
  return ready;
}

// Rows as plain objects; ids (BigInt) as decimal text, the only values put into SQL.
async function rows(con, sql) {
  return (await con.query(sql)).toArray().map(row => row.toJSON());
}
// Ids closer than a row group (8,192 rows: pipeline/stages/export.py LOOKUP_GROUP_ROWS,
// which tests/test_index.py holds this to) are asked in one branch, as a range DuckDB
// prunes row groups by (at most two row groups' reads) with the ids themselves as a filter
// after it: a position's moves often lead to neighbouring ids, and each branch of the UNION
// costs DuckDB-WASM a pass over every row group's statistics.
const SPAN = 8192n;
function byId(source, columns, ids) {
  const sorted = ids.map(id => BigInt(id)).sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const runs = [];
  for (const id of sorted) {
    const run = runs[runs.length - 1];
    if (run && id - run[0] < SPAN) run.push(id);
    else runs.push([id]);
  }
  return runs.map(run => 'SELECT ' + columns + ' FROM ' + source + ' WHERE ' + (run.length === 1
    ? 'id = ' + run[0]
    : 'id BETWEEN ' + run[0] + ' AND ' + run[run.length - 1] + ' AND id IN (' + run.join(', ') + ')')).join(' UNION ALL ');
}

// index.parquet's hash of a text (pipeline/core/dataset.py TEXT_HASH) from its MD5 digest in
// hex: the digest's last 4 bytes, little-endian (DuckDB's md5_number changed its type and
// order between versions; the digest did not).
function textHash(digest) {
  const bytes = digest.slice(24).match(/../g).map(pair => parseInt(pair, 16));
  return BigInt(bytes[0] + bytes[1] * 0x100 + bytes[2] * 0x10000 + bytes[3] * 0x1000000);
}

// Best first for the player moving (pipeline/core/values.py best_move_first): wins and ties
// fastest, then draws, then losses slowest; then by the move's name.
function bestFirst(a, b) {
  const rank = move => {
    const outcome = OPPOSITE[move.value], r = move.remoteness || 0;
    return [PREFERENCE.indexOf(outcome), outcome === 'loss' ? -r : r];
  };
  const [x, y] = [rank(a), rank(b)];
  return x[0] - y[0] || x[1] - y[1] || (a.move < b.move ? -1 : a.move > b.move ? 1 : 0);
}

async function lookup(ruleset, position) {
  const {con, md5, catalog, files} = await database();
  const row = catalog.find(r => r.ruleset === ruleset);
  if (!row) throw new Error(ruleset + ' is not in this bundle (it holds ' + catalog.map(r => r.ruleset).join(', ') + ')');
  const source = files.get(ruleset), text = position === 'start' ? row.start : position;
  const key = textHash((await md5.query(text)).toArray()[0].digest);
  const ids = (await rows(con, 'SELECT id FROM ' + source.index + ' WHERE hash = ' + key)).map(r => r.id);
  const found = ids.length
    ? (await rows(con, byId(source.lookup, 'id, position, value, remoteness, dst, move', ids))).find(r => r.position === text)
    : undefined;
  if (!found) throw new Error(JSON.stringify(text) + ' is not a position of ' + ruleset + ' (a position is named by its text as the tablebase writes it)');
  const dst = Array.from(found.dst, BigInt), names = Array.from(found.move);
  const children = new Map();
  if (dst.length) {
    for (const child of await rows(con, byId(source.lookup, 'id, position, value, remoteness', [...new Set(dst)]))) {
      children.set(BigInt(child.id), child);
    }
  }
  const moves = dst.map((id, m) => {
    const child = children.get(id);
    if (!child) throw new Error('the bundle\'s lookup file of ' + ruleset + ' has a move to a position it does not hold');
    return {move: names[m], position: child.position, value: child.value, remoteness: child.remoteness, outcome: OPPOSITE[child.value]};
  }).sort(bestFirst);
  return {ruleset, position: found.position, value: found.value, remoteness: found.remoteness,
    game_over: !moves.length, note: null, moves};
}

// explorer.js asks this instead of the API; it shows a position's text where a served
// explorer shows the game's picture (drawn by the game's Python, not here).
window.tablebaseSource = {
  catalog: async () => (await database()).catalog,
  lookup,
  picture: null,
};
