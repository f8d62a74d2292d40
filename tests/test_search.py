"""Space.search (pipeline/games/contract.py): a game's level-by-level search, walked in this
process the way the Spark engine walks it on its executors (check-game's `search_walk`;
pipeline/engines/spark_enumerate.py), gives the positions, ids and moves the game's own
space lists.

The engine's walk is held to the same files in tests/test_engines.py (connect, on Spark);
check-game (`_check_search`) holds every game that offers a search to its space on the small
rulesets of tests/test_games.py, without Spark; this tests that check, and what the executors
check of a search."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

from pipeline.games import Search
from pipeline.games.rulesets import Ruleset
from pipeline.products.gamecheck import _check_search, search_walk


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
    positions, _ = search_walk(search)
    plies = positions["discs"].to_numpy()
    assert [search.rank(int(ply)) for ply in plies] == np.asarray(rank).tolist()


def test_a_walk_stops_before_the_level_that_would_pass_its_bound():
    """The Spark engine's task walks a search's first levels (spark_enumerate.walk) while
    they hold at most WALKED positions, and says whether it found every level; the starts
    are a level whatever their number."""
    from pipeline.engines.spark_enumerate import walk

    rules = Ruleset.parse("dobutsu:pieces=g")
    search = rules.game.space(rules).search()
    every = [keys.size for _, keys, _ in walk(search)]
    assert every[:7] == [1, 5, 25, 54, 158, 279, 656] and len(every) == 16

    def walked(most):
        levels = walk(search, most)
        sizes = []
        while True:
            try:
                sizes.append(next(levels)[1].size)
            except StopIteration as stop:
                return sizes, stop.value

    assert walked(1178) == (every[:7], False)
    assert walked(1177) == (every[:6], False)
    assert walked(0) == ([1], False)
    assert walked(sum(every)) == (every, True)


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
        ("codes", "walked", "terminal codes for"),
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
        "walked": lambda: list(spark_enumerate._walked("lying", 100, iter([keys]))),
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


def test_check_game_names_a_search_that_finds_other_ids_or_moves():
    """A search numbering a level in another order, or naming a move otherwise, than the
    space's own lists is a problem check-game reports in one line."""
    from pipeline.games.connect import ConnectSearch

    rules = Ruleset.parse("connect:cols=3,k=3,rows=2")
    space = rules.game.space(rules)
    positions = space.positions().combine_chunks()
    transitions = pa.Table.from_batches(list(space.transitions()))
    assert _check_search(space.search(), "connect", positions, transitions) == []

    class Ascending(ConnectSearch):
        descending = False

    class Renamed(ConnectSearch):
        def __init__(self, space):
            super().__init__(space)
            self.moves = self.moves[::-1]

    assert _check_search(Ascending(space), "connect", positions, transitions) == [
        "connect: the search finds other positions than positions() lists (key differs)"
    ]
    assert _check_search(Renamed(space), "connect", positions, transitions) == [
        "connect: the search finds other moves than transitions() gives"
    ]
