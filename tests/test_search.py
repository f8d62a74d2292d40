"""Space.search (pipeline/games/contract.py): a game's level-by-level search, walked here in
this process the way the Spark engine walks it on its executors (pipeline/engines/
spark_enumerate.py), gives the positions, ids and moves the game's own space lists.

The engine's walk is held to the same files in tests/test_engines.py (connect, on Spark);
this holds every game that offers a search, on small rulesets, without Spark."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pipeline.games import Search
from pipeline.games.rulesets import Ruleset

#: A few levels each, the game's every path: lines, ties, full boards (connect); catches,
#: tries, drops, positions met again at a later depth (dobutsu).
RULESETS = [
    "connect:cols=3,k=3,rows=2",
    "connect:cols=4,k=3,rows=3",
    "dobutsu:pieces=g",
    "dobutsu:pieces=c,try=off",
]


def walk(search: Search) -> tuple[pa.Table, list[tuple[int, int, str]]]:
    """The positions (as positions_part's columns) and the moves (src, dst, move name) found
    by `search`, level by level, in this process."""
    levels: list[tuple[np.ndarray, np.ndarray]] = []
    seen: set[int] = set()
    keys = np.unique(search.starts())
    while keys.size:
        codes = search.codes(keys, len(levels))
        assert codes.dtype == np.int8 and codes.shape == keys.shape
        levels.append((keys, codes))
        seen.update(keys.tolist())
        open_keys = keys[codes == 0]
        _, _, kids = search.children(open_keys, len(levels) - 1) if open_keys.size else (None, None, np.zeros(0))
        kids = np.unique(kids)
        if search.rank(len(levels) - 1) is None:
            kids = np.array([k for k in kids.tolist() if k not in seen], dtype=np.int64)
        keys = kids
    order = range(len(levels) - 1, -1, -1) if search.descending else range(len(levels))
    ids: dict[int, int] = {}
    tables = []
    for level in order:
        keys, codes = levels[level]
        at = np.lexsort((keys, codes)) if search.by_code else np.argsort(keys)
        keys, codes = keys[at], codes[at]
        first = len(ids)
        numbered = np.arange(first, first + keys.size, dtype=np.int64)
        ids.update(zip(keys.tolist(), numbered.tolist(), strict=True))
        tables.append(search.positions(numbered, keys, codes, np.full(keys.size, level)))
    moves = []
    for level, (keys, codes) in enumerate(levels):
        open_keys = keys[codes == 0]
        if not open_keys.size:
            continue
        rows, made, kids = search.children(open_keys, level)
        pairs = {(int(row), int(kid)) for row, kid in zip(rows.tolist(), kids.tolist(), strict=True)}
        assert len(pairs) == rows.size, "two moves from one position to one child"
        for row, move, kid in zip(rows.tolist(), made.tolist(), kids.tolist(), strict=True):
            moves.append((ids[int(open_keys[row])], ids[kid], search.moves[move]))
    return pa.concat_tables(tables).combine_chunks(), sorted(moves)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_a_games_search_finds_its_spaces_positions_ids_and_moves(ruleset):
    rules = Ruleset.parse(ruleset)
    space = rules.game.space(rules)
    search = space.search()
    assert search is not None
    positions, moves = walk(search)
    listed = space.positions().combine_chunks()
    assert positions.column_names == listed.column_names
    for name in positions.column_names:
        ours, theirs = positions[name], listed[name]
        if pa.types.is_dictionary(theirs.type):  # the words, whatever each dictionary holds
            ours, theirs = ours.cast(pa.string()), theirs.cast(pa.string())
        assert ours.to_pylist() == theirs.to_pylist(), f"{ruleset}: {name} differs"
    transitions = pa.Table.from_batches(list(space.transitions()))
    listed_moves = list(
        zip(
            transitions["src"].to_pylist(),
            transitions["dst"].to_pylist(),
            transitions["move"].cast(pa.string()).to_pylist(),
            strict=True,
        )
    )
    assert moves == sorted(listed_moves)


@pytest.mark.parametrize("ruleset", ["connect:cols=4,k=3,rows=3", "dobutsu:pieces=g"])
def test_a_searchs_ranks_are_the_spaces(ruleset):
    rules = Ruleset.parse(ruleset)
    space = rules.game.space(rules)
    search = space.search()
    assert search is not None
    rank = space.rank()
    if rank is None:
        assert search.rank(0) is None
        return
    positions, _ = walk(search)
    plies = positions["discs"].to_numpy()
    assert [search.rank(int(ply)) for ply in plies] == np.asarray(rank).tolist()
