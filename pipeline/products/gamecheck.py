"""`tablebase check-game`: does a game keep the contract the pipeline relies on?

GamesmanOne tests every game against its solver interface; these are the same checks on
one (small) ruleset, run on every registered game by the tests:
  - the game has every required member (pipeline.games.check_contract);
  - positions: the leading columns, then exactly the game's documented columns; ids and
    texts unique; every text canonical (canonical_position gives it back); the start and
    every legal start among them; terminal values only 'win', 'loss' or 'tie', and in an
    impartial game, where play reaches them, all 'loss' or all 'win' (misère);
  - transitions: distinct (src, dst) pairs in ascending order, joining known positions,
    each with a label; none from a finished position, at least one from every other;
  - rank, where given: one integer of 32 bits per position, falling along every transition;
  - search, where given (Space.search): walked level by level here as the Spark engine's
    executors walk it, it finds the space's positions, ids and moves;
  - size, where given: its counts bound what was built (equal where it says exact);
  - every member gives back what the contract says (pipeline/games/contract.py's
    GAME_RETURNS, SPACE_RETURNS): `size()` a Size, `sides()` None or two texts, …;
  - draw: the start and the first positions drawn as well-formed inline SVG for the pages,
    holding only what a page's picture may (pipeline/products/pictures.py): no script.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from pipeline.core.errors import DataError, TablebaseError
from pipeline.core.values import TERMINAL
from pipeline.engines.spark_enumerate import walk
from pipeline.games import (
    POSITION_COLUMNS,
    POSITION_KEY,
    RANKS,
    TRANSITION_SCHEMA,
    Game,
    Search,
    Size,
    Space,
    broken_plugin,
    check_contract,
    failed,
    find_game,
    guarded,
    impartial_problem,
    position_texts,
)
from pipeline.games.rulesets import Ruleset
from pipeline.games.simple import SimpleSpace
from pipeline.products.pictures import picture_problem

#: Positions beyond which check-game refuses a ruleset: it holds everything in memory.
LIMIT = 2_000_000


def check_game(name: str, ruleset: str | None = None) -> list[str]:
    """Every problem found in the game `name` on `ruleset` (default: the game's defaults)."""
    broken = broken_plugin(name)
    if broken is not None:
        return [broken]
    game = find_game(name)
    problems = check_contract(game)
    if problems:
        return problems
    game = guarded(game, f"game {name}")  # a plug-in's is already, as the registry loads it
    rules = Ruleset.parse(ruleset or name)
    if rules.game_name != name:
        return [f"{rules.id} is not a ruleset of {name}"]
    label = f"{name} on {rules.id}"
    try:
        size = game.size(rules)
        if size is not None and size.positions > LIMIT:
            raise TablebaseError(f"{rules.id} has up to {size.positions:,} positions: check a smaller ruleset")
        return _check_space(game, rules, label, size)
    except DataError as error:  # what the pipeline found wrong in the game's output
        return [f"{label}: {error}"]
    except (TablebaseError, MemoryError):
        raise
    except (Exception, SystemExit) as error:  # noqa: BLE001 - a game's own bug, reported as such
        return [f"{label}: the game failed: {failed(error)}"]


#: Positions whose drawings are checked, besides the start.
DRAWN = 200


def _check_space(game: Game, rules: Ruleset, label: str, size: Size | None) -> list[str]:
    problems = []
    space = game.space(rules)
    if isinstance(space, SimpleSpace):  # a game without size() searched no further than check-game holds
        space.most = LIMIT
    positions = space.positions()
    expected = POSITION_COLUMNS.names + list(game.columns)
    if space.keyed:  # the key in place of the text (Space.keyed)
        expected[POSITION_COLUMNS.get_field_index("text")] = POSITION_KEY.name
    if positions.schema.names != expected:
        return [f"{label}: positions() has columns {positions.schema.names}, not {expected}"]
    ids = positions["id"].to_pylist()
    texts = position_texts(space, positions).to_pylist()
    if len(set(ids)) != len(ids):
        problems.append(f"{label}: position ids are not unique")
    if len(set(texts)) != len(texts):
        problems.append(f"{label}: position texts are not unique")
    for start in game.starts(rules):
        if start not in set(texts):
            problems.append(f"{label}: the start {start!r} is not among the positions")
    for text in texts:
        canonical = game.canonical_position(rules, text)
        if canonical != text:
            problems.append(f"{label}: the text {text!r} reads back as {canonical!r}")
            break
    for text in [game.start(rules), *texts[:DRAWN]]:
        problem = picture_problem(game.draw(rules, text))
        if problem:
            problems.append(f"{label}: draw() of {text!r} {problem}")
            break
    for text in [game.start(rules), *texts[:DRAWN]]:  # what play and the commands ask of a position
        game.sides(rules, text)
        game.note(rules, text)
    terminal = positions["terminal"].to_pylist()
    others = set(terminal) - {*(value.value for value in TERMINAL), None}
    if others:
        problems.append(
            f"{label}: terminal values other than {', '.join(repr(v.value) for v in TERMINAL)}: {sorted(others)}"
        )
    finished = {i for i, t in zip(ids, terminal) if t is not None}

    table = pa.Table.from_batches(list(space.transitions()), schema=TRANSITION_SCHEMA)
    src, dst = table["src"].to_numpy(), table["dst"].to_numpy()
    pairs = src * (int(max(ids, default=0)) + 1) + dst
    if np.any(np.diff(pairs) <= 0):
        problems.append(f"{label}: transitions are not distinct and ascending by (src, dst)")
    known = set(ids)
    if not set(src.tolist()) <= known or not set(dst.tolist()) <= known:
        problems.append(f"{label}: a transition leads to or from a position that is not listed")
    sources = set(src.tolist())
    if sources & finished:
        problems.append(
            f"{label}: a move leaves a finished position, e.g. {texts[ids.index(min(sources & finished))]!r}"
        )
    if known - finished - sources:
        problems.append(
            f"{label}: a position has no move and no outcome, e.g. "
            f"{texts[ids.index(min(known - finished - sources))]!r}"
        )
    if not all(table["move"].to_pylist()):
        problems.append(f"{label}: a move has no label")
    if game.impartial:  # the finished positions play reaches (chopsticks lists others too)
        starts = set(game.starts(rules))
        reached = _reachable({i for i, t in zip(ids, texts) if t in starts}, src, dst)
        problem = impartial_problem(game, {t for i, t in zip(ids, terminal) if t is not None and i in reached})
        if problem is not None:
            problems.append(f"{label}: {problem}")

    rank = space.rank()
    if rank is not None:
        rank = np.asarray(rank)
        if rank.shape != (len(ids),):
            problems.append(f"{label}: rank() gives {rank.size} values for {len(ids)} positions")
        elif rank.size and not np.issubdtype(rank.dtype, np.integer):
            problems.append(f"{label}: rank() gives {rank.dtype}, not integers")
        elif rank.size and not RANKS[0] <= rank.min() <= rank.max() <= RANKS[1]:
            problems.append(
                f"{label}: rank() goes from {rank.min()} to {rank.max()}, beyond the 32 bits "
                f"the pipeline holds it in ({RANKS[0]:,} to {RANKS[1]:,})"
            )
        else:
            by_id = dict(zip(ids, rank.tolist()))
            if any(by_id[d] >= by_id[s] for s, d in zip(src.tolist(), dst.tolist()) if s in by_id and d in by_id):
                problems.append(f"{label}: the rank does not fall along every move")
    if type(space).transitions_from is not Space.transitions_from:
        if rank is None:
            if space.transitions_from(np.zeros(0, np.int64)) is not None:  # None: not offered here
                problems.append(f"{label}: transitions_from() is offered without a rank(): enumerate never asks for it")
        else:
            problems.extend(_check_transitions_from(space, label, ids, np.asarray(rank), table))
    search = space.search()
    if search is not None:
        problems.extend(_check_search(search, label, positions, table))
    if size is not None:
        if (size.positions != len(ids)) if size.exact else (size.positions < len(ids)):
            problems.append(f"{label}: size() counts {size.positions:,} positions, the space holds {len(ids):,}")
        if size.transitions < len(table):
            problems.append(
                f"{label}: size() bounds the transitions by {size.transitions:,}, the space has {len(table):,}"
            )
    return problems


def search_walk(search: Search) -> tuple[pa.Table, list[tuple[int, int, str]]]:
    """The positions (positions_part's columns) and the moves (src, dst, move name, sorted)
    a Search finds, walked level by level in this process as the Spark engine's task walks
    a game's first levels (pipeline/engines/spark_enumerate.py's `walk`), for small rulesets."""
    levels = [(keys, codes) for _, keys, codes in walk(search)]
    ids: dict[int, int] = {}
    tables = []
    for level in range(len(levels) - 1, -1, -1) if search.descending else range(len(levels)):
        keys, codes = levels[level]
        at = np.lexsort((keys, codes)) if search.by_code else np.argsort(keys)
        numbered = np.arange(len(ids), len(ids) + keys.size, dtype=np.int64)
        ids.update(zip(keys[at].tolist(), numbered.tolist(), strict=True))
        tables.append(search.positions(numbered, keys[at], codes[at], np.full(keys.size, level)))
    moves = []
    for level, (keys, codes) in enumerate(levels):
        played = keys[codes == 0]
        if not played.size:
            continue
        rows, made, kids = (np.asarray(part).tolist() for part in search.children(played, level))
        if len(set(zip(rows, kids, strict=True))) != len(rows):
            raise DataError("search.children() gave two moves from one position to one child")
        for row, move, kid in zip(rows, made, kids, strict=True):
            if kid not in ids:
                raise DataError(f"search.children() gave a move to {kid}, a key the search did not find")
            moves.append((ids[int(played[row])], ids[kid], search.moves[move]))
    return pa.concat_tables(tables).combine_chunks(), sorted(moves)


def _check_search(search: Search, label: str, positions: pa.Table, transitions: pa.Table) -> list[str]:
    """The positions and moves `search` finds are the space's own, the same ids included."""
    if not isinstance(search, Search):
        return [f"{label}: search() gave {type(search).__name__}, not a Search or None"]
    found, moves = search_walk(search)
    if found.column_names != positions.column_names:
        return [f"{label}: search.positions() has columns {found.column_names}, not {positions.column_names}"]
    for name in found.column_names:
        ours, theirs = found[name], positions[name]
        if pa.types.is_dictionary(theirs.type):  # the words, whatever each dictionary holds
            ours, theirs = ours.cast(pa.string()), theirs.cast(pa.string())
        if ours.to_pylist() != theirs.to_pylist():
            return [f"{label}: the search finds other positions than positions() lists ({name} differs)"]
    listed = sorted(
        zip(
            transitions["src"].to_pylist(),
            transitions["dst"].to_pylist(),
            transitions["move"].cast(pa.string()).to_pylist(),
            strict=True,
        )
    )
    if moves != listed:
        return [f"{label}: the search finds other moves than transitions() gives"]
    return []


def _reachable(starts: set, src: np.ndarray, dst: np.ndarray) -> set:
    """The ids play reaches from `starts`."""
    children: dict[int, list[int]] = {}
    for s, d in zip(src.tolist(), dst.tolist()):
        children.setdefault(s, []).append(d)
    seen, todo = set(starts), list(starts)
    while todo:
        for child in children.get(todo.pop(), ()):
            if child not in seen:
                seen.add(child)
                todo.append(child)
    return seen


def _check_transitions_from(space: Space, label: str, ids: list, rank: np.ndarray, table: pa.Table) -> list[str]:
    """transitions_from(ids) must give transitions()'s rows of those sources, in order:
    asked rank by rank, as enumerate asks (pipeline/stages/enumerate.py)."""
    order = np.argsort(rank, kind="stable")
    ordered = np.asarray(ids)[order]
    ranks = rank[order]
    bounds = np.flatnonzero(np.diff(ranks)) + 1
    src = table["src"].to_numpy()
    given = [(asked, space.transitions_from(asked)) for asked in map(np.sort, np.split(ordered, bounds))]
    if all(batches is None for _, batches in given):
        return []  # not offered for these rules: enumerate reorders transitions()' rows
    for asked, batches in given:
        if batches is None:
            return [f"{label}: transitions_from() gave moves for some ranks' positions and None for others"]
        rows = pa.Table.from_batches(list(batches), schema=TRANSITION_SCHEMA)
        if rows.to_pylist() != table.filter(pa.array(np.isin(src, asked))).to_pylist():
            return [f"{label}: transitions_from() of one rank's positions differs from transitions()' rows for them"]
    return []
