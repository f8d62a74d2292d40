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


class Lying(Search):
    """A search that breaks the contract in the way `lie` names."""

    moves = ["a", "b"]

    def __init__(self, lie: str):
        self.lie = lie

    def starts(self) -> np.ndarray:
        return np.array([1], dtype=np.int64)

    def codes(self, keys: np.ndarray, level: int) -> np.ndarray:
        return np.zeros(keys.size - (self.lie == "codes"), dtype=np.int8)

    def children(self, keys: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        rows = np.arange(keys.size, dtype=np.int64)
        if self.lie == "twice":  # each position's one child, by both moves
            return np.repeat(rows, 2), np.tile([0, 1], keys.size), np.repeat(keys + 1, 2)
        if self.lie == "rows":
            return rows + 1, np.zeros(keys.size, np.int32), keys + 1
        return rows, np.full(keys.size, 2 if self.lie == "move" else 0, np.int32), keys + 1

    def positions(self, ids: np.ndarray, keys: np.ndarray, codes: np.ndarray, levels: np.ndarray) -> pa.Table:
        return pa.table({"id": ids[: ids.size - (self.lie == "positions")]})

    def rank(self, level: int) -> None:
        return None


@pytest.mark.parametrize(
    "lie, step, words",
    [
        ("codes", "coded", "terminal codes for"),
        ("twice", "moves", "two moves from one position to one child"),
        ("rows", "moves", "moves from no position"),
        ("move", "names", "move code out of its 2 names"),
        ("positions", "positions", "rows for 2 positions"),
    ],
)
def test_what_a_search_gives_the_executors_is_checked_there(monkeypatch, lie, step, words):
    """Each step the Spark engine's executors run (pipeline/engines/spark_enumerate.py), run
    here on a batch: a game's search that breaks its contract is a DataError in one line."""
    from pipeline.core.errors import DataError
    from pipeline.engines import spark_enumerate

    monkeypatch.setattr(spark_enumerate, "searched", lambda ruleset_id: Lying(lie))
    keys = pa.record_batch({"key": pa.array([5, 7], pa.int64())})
    numbered = pa.record_batch(
        {
            "id": pa.array([0, 1], pa.int64()),
            "key": keys.column(0),
            "code": pa.array([0, 0], pa.int8()),
            "level": pa.array([0, 0], pa.int32()),
        }
    )
    steps = {
        "coded": lambda: list(spark_enumerate._coded("lying", 0, iter([keys]))),
        "moves": lambda: list(spark_enumerate._moves("lying", iter([numbered.select(["id", "key", "level"])]))),
        "names": lambda: spark_enumerate.MoveNames("lying", ["a", "b"])(
            pa.record_batch(
                {
                    "ruleset": pa.nulls(1, pa.string()),
                    "src": pa.array([0], pa.int64()),
                    "dst": pa.array([1], pa.int64()),
                    "move": pa.array([2], pa.int32()),
                }
            )
        ),
        "positions": lambda: spark_enumerate.PositionRows("lying", pa.schema([("id", pa.int64())]), None)(numbered),
    }
    with pytest.raises(DataError, match=words):
        steps[step]()
