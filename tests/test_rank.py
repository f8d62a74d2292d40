"""Solving rank by rank: the numbering enumerate writes, and agreement with retrograde analysis.

Games whose moves never return to a position give a rank that every move lowers
(`Space.rank`); enumerate then numbers positions rank by rank and the solver computes each
rank from the ranks below. Everywhere else retrograde analysis runs. Both solvers must give
the same solution, position by position, on the same files.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import DataError
from pipeline.datadir.layout import DataDir
from pipeline.engines import duckdb_engine
from pipeline.games import chopsticks
from pipeline.games.rulesets import Ruleset
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.solve import solve
from tests.staged import staged

RANKED = [
    "chopsticks",
    "chopsticks:fingers=4,hands=3,self_attack=true",
    "sticks:rows=5",
    "sticks:rows=4,play=normal,max_take=2",
    "nim:start=3-4-5",
    "nim:start=2-3-4,variant=coin,play=misere",
    "nim:start=2-3-3,variant=arrow-other",
    "hackenbush:fib=4",
]
CYCLIC = ["chopsticks:split=any", "chopsticks:overflow=rollover", "chopsticks:split=dead,self_attack=true"]


@pytest.fixture(autouse=True)
def rank_by_rank(monkeypatch):
    """Every ranked ruleset here solved rank by rank, however small: the DuckDB engine
    solves those below LEVELS_UP_TO by levels (Solver.by_rank)."""
    monkeypatch.setattr(duckdb_engine, "LEVELS_UP_TO", -1)


def enumerated(tmp_path, ruleset):
    rules = Ruleset.parse(ruleset)
    data = DataDir(tmp_path)
    files = data.ruleset(rules)
    files.dir.mkdir(parents=True)
    staged(enumerate_ruleset, files, rules=rules)
    return data, files


@pytest.mark.parametrize("ruleset", RANKED)
def test_ranked_positions_are_numbered_rank_by_rank(tmp_path, ruleset):
    _, files = enumerated(tmp_path, ruleset)
    positions = pq.read_table(files.positions, columns=["id", "rank", "moves"])
    transitions = pq.read_table(files.transitions, columns=["src", "dst"])
    ids, rank = positions["id"].to_numpy(), positions["rank"].to_numpy()
    assert positions["rank"].null_count == 0
    assert np.array_equal(ids, np.arange(len(ids)))
    assert np.all(np.diff(rank) >= 0)
    src, dst = transitions["src"].to_numpy(), transitions["dst"].to_numpy()
    assert np.all(np.diff(src) >= 0)
    assert np.all(rank[dst] < rank[src])
    assert np.array_equal(np.bincount(src, minlength=len(ids)), positions["moves"].to_numpy())


@pytest.mark.parametrize("ruleset", CYCLIC)
def test_rulesets_whose_moves_can_cycle_have_no_rank(tmp_path, ruleset):
    _, files = enumerated(tmp_path, ruleset)
    assert (
        pq.read_table(files.positions, columns=["rank"])["rank"].null_count
        == pq.read_metadata(files.positions).num_rows
    )


@pytest.mark.parametrize("ruleset", RANKED)
def test_rank_solver_agrees_with_retrograde_analysis(tmp_path, ruleset):
    data, files = enumerated(tmp_path, ruleset)
    solved = staged(solve, files, data.temp)
    assert solved.positions == solved.decided
    by_rank = pq.read_table(files.solution)
    # the same files without a rank: the solver falls back to retrograde analysis
    positions = pq.read_table(files.positions)
    at = positions.schema.get_field_index("rank")
    pq.write_table(positions.set_column(at, "rank", pa.nulls(positions.num_rows, pa.int32())), files.positions)
    staged(solve, files, data.temp)
    retrograde = pq.read_table(files.solution)
    assert by_rank.schema == retrograde.schema
    assert by_rank.equals(retrograde)


@pytest.mark.parametrize("ruleset", ["sticks:rows=6", "connect:cols=4,k=3,rows=3", "hackenbush:fib=4"])
def test_a_small_ranked_ruleset_is_solved_by_levels_to_the_rank_solvers_bytes(tmp_path, monkeypatch, ruleset):
    """Below LEVELS_UP_TO positions and moves a rank's few statements cost more than its
    positions: the DuckDB engine solves the ruleset by levels, to the same bytes; above it,
    rank by rank."""
    data, files = enumerated(tmp_path, ruleset)
    staged(solve, files, data.temp)
    by_rank = files.solution.read_bytes()
    solved: list[int] = []
    rank = duckdb_engine.DuckDBSolver.rank
    monkeypatch.setattr(
        duckdb_engine.DuckDBSolver, "rank", lambda self, lo, hi: solved.append(lo) or rank(self, lo, hi)
    )
    size = max(pq.read_metadata(path).num_rows for path in (files.positions, files.transitions))
    monkeypatch.setattr(duckdb_engine, "LEVELS_UP_TO", size)
    staged(solve, files, data.temp)
    assert not solved
    assert files.solution.read_bytes() == by_rank
    monkeypatch.setattr(duckdb_engine, "LEVELS_UP_TO", size - 1)
    staged(solve, files, data.temp)
    assert solved
    assert files.solution.read_bytes() == by_rank


def test_a_rank_that_does_not_fall_is_refused(tmp_path, monkeypatch):
    monkeypatch.setattr(chopsticks.RankedChopsticksSpace, "rank", lambda self: np.zeros(self.pair.size, np.int64))
    with pytest.raises(DataError, match="rank does not fall along the move"):
        enumerated(tmp_path, "chopsticks")


def test_positions_not_numbered_by_rank_are_refused(tmp_path):
    data, files = enumerated(tmp_path, "sticks:rows=4")
    positions = pq.read_table(files.positions)
    at = positions.schema.get_field_index("rank")
    reversed_rank = pa.array(positions["rank"].to_numpy()[::-1].copy(), pa.int32())
    pq.write_table(positions.set_column(at, "rank", reversed_rank), files.positions)
    with pytest.raises(DataError, match="not numbered rank by rank"):
        staged(solve, files, data.temp)


def test_a_rank_that_does_not_fall_is_refused_rank_by_rank(tmp_path, monkeypatch):
    """Sticks generates its moves rank by rank (Space.transitions_from): checked the same."""
    from pipeline.games._heaps import HeapSpace

    monkeypatch.setattr(HeapSpace, "rank", lambda self: np.zeros(self.keys().size, np.int64))
    with pytest.raises(DataError, match="rank does not fall along the move"):
        enumerated(tmp_path, "sticks:rows=4")


def test_a_move_to_no_listed_position_is_refused_rank_by_rank(tmp_path, monkeypatch):
    from pipeline.games._heaps import HeapSpace

    generate = HeapSpace.transitions_from

    def beyond(self, ids):
        for batch in generate(self, ids):
            dst = batch.column(1).to_numpy() + self.keys().size  # past the last position
            yield pa.RecordBatch.from_arrays([batch.column(0), pa.array(dst), batch.column(2)], schema=batch.schema)

    monkeypatch.setattr(HeapSpace, "transitions_from", beyond)
    with pytest.raises(DataError, match="a move to a position it did not list"):
        enumerated(tmp_path, "sticks:rows=4")


@pytest.mark.parametrize(
    "ruleset", ["sticks:rows=6", "octal:code=0.137,start=9-5", "chopsticks:fingers=6,hands=3,self_attack=true"]
)
def test_rank_by_rank_generation_writes_what_reordering_does(tmp_path, monkeypatch, ruleset):
    """The same files whether enumerate asks for the moves rank by rank or takes the game's
    transitions() and reorders them through scratch files."""
    from pipeline.games import Space
    from pipeline.games._heaps import HeapSpace

    _, direct = enumerated(tmp_path / "direct", ruleset)
    monkeypatch.setattr(HeapSpace, "transitions_from", Space.transitions_from)
    monkeypatch.setattr(chopsticks.RankedChopsticksSpace, "transitions_from", Space.transitions_from)
    _, reordered = enumerated(tmp_path / "reordered", ruleset)
    for name in ("positions", "transitions"):
        assert getattr(direct, name).read_bytes() == getattr(reordered, name).read_bytes()


def test_moves_read_rank_by_rank_from_the_file_solve_as_loaded_ones(tmp_path, monkeypatch):
    """Small positions and transitions files are loaded once (LOAD_ROWS); larger ones are
    read a rank at a time. Both give the same solution."""
    data, files = enumerated(tmp_path, "sticks:rows=5")
    staged(solve, files, data.temp)
    loaded = files.solution.read_bytes()
    monkeypatch.setattr(duckdb_engine, "LOAD_ROWS", 0)
    staged(solve, files, data.temp)
    assert files.solution.read_bytes() == loaded


def test_the_positions_file_written_beside_the_moves_is_the_one_written_after(tmp_path, monkeypatch):
    """Numbered by rank, a row group of positions.parquet is written once its positions'
    moves are counted (here row groups of 40 positions), while the moves are made: the
    same bytes as waiting for the last move."""
    from pipeline.graph import moves as moves_module
    from pipeline.stages import enumerate as enumerate_stage

    monkeypatch.setattr(enumerate_stage, "ROW_GROUP_ROWS", 40)
    _, beside = enumerated(tmp_path / "beside", "sticks:rows=6")
    monkeypatch.setattr(moves_module.Counted, "source", lambda self, src: None)  # only the end counts
    _, after = enumerated(tmp_path / "after", "sticks:rows=6")
    assert beside.positions.read_bytes() == after.positions.read_bytes()
    moves = pq.read_table(beside.positions, columns=["moves"])["moves"].to_numpy()
    src = pq.read_table(beside.transitions, columns=["src"])["src"].to_numpy()
    assert moves.sum() == src.size and (moves == np.bincount(src, minlength=moves.size)).all()


def test_moves_that_fail_midway_leave_no_positions_file(tmp_path, monkeypatch):
    from pipeline.games._heaps import HeapSpace

    generate = HeapSpace.transitions_from
    ranks = []

    def failing(self, ids):
        ranks.append(len(ids))
        if len(ranks) == 5:
            raise RuntimeError("the game broke at its fifth rank")
        yield from generate(self, ids)

    monkeypatch.setattr(HeapSpace, "transitions_from", failing)
    with pytest.raises(RuntimeError, match="fifth rank"):
        enumerated(tmp_path, "sticks:rows=5")
    assert not [path.name for path in tmp_path.rglob("*.parquet*")]


def test_moves_out_of_order_by_source_are_refused_where_positions_are_written_beside_them():
    from pipeline.graph.moves import Counted

    counted = Counted(by_rank=True)
    counted.source(np.array([3, 4, 4, 7]))
    counted.wait(7)  # positions 0..6 have all their moves
    with pytest.raises(DataError, match="out of order"):
        counted.source(np.array([5, 8]))
    with pytest.raises(DataError, match="out of order"):
        Counted(by_rank=True).source(np.array([2, 1]))


def _reversed_listing(monkeypatch, space_class):
    """The game lists its positions (and ranks) in reverse: ids unique, not ascending."""
    positions, rank = space_class.positions, space_class.rank
    monkeypatch.setattr(
        space_class, "positions", lambda self: positions(self).take(np.arange(positions(self).num_rows)[::-1].copy())
    )
    monkeypatch.setattr(space_class, "rank", lambda self: np.asarray(rank(self))[::-1].copy())


def test_a_game_listing_positions_out_of_id_order_still_gets_moves_sorted_by_source(tmp_path, monkeypatch):
    """Games without transitions_from make their moves in their own order, spilled and read
    back rank by rank; within a rank they are sorted by the new id, whatever order the game
    listed its positions in."""
    ruleset = "nim:start=2-3-4"
    _, usual = enumerated(tmp_path / "usual", ruleset)
    _reversed_listing(monkeypatch, type(Ruleset.parse(ruleset).game.space(Ruleset.parse(ruleset))))
    _, reversed_ = enumerated(tmp_path / "reversed", ruleset)
    src = pq.read_table(reversed_.transitions, columns=["src"])["src"].to_numpy()
    assert (src[1:] >= src[:-1]).all()

    def moves_by_text(files):
        table = pq.read_table(files.positions, columns=["text", "moves"]).to_pydict()
        return dict(zip(table["text"], table["moves"]))

    assert moves_by_text(reversed_) == moves_by_text(usual)


def test_a_transitions_file_that_cannot_be_written_leaves_no_scratch_moves(tmp_path, monkeypatch):
    from pipeline.stages import enumerate as enumerate_stage

    write = enumerate_stage.write_batches
    held = []  # as a traceback kept for a report holds the writer's frame

    def full_disk_for_the_moves(batches, path, *args, **kwargs):
        if path.name == "transitions.parquet":
            held.append(batches)
            next(iter(batches))  # the moves are spilled and being read back when the disk fills
            raise OSError(28, "No space left on device", str(path))
        return write(batches, path, *args, **kwargs)

    monkeypatch.setattr(enumerate_stage, "write_batches", full_disk_for_the_moves)
    with pytest.raises(OSError, match="No space"):
        enumerated(tmp_path, "nim:start=2-3-4")
    assert not list(tmp_path.rglob(".moves-*"))


@pytest.mark.parametrize("ruleset", ["sticks:rows=6", "connect:cols=4,k=3,rows=3"])
def test_a_rank_solved_in_parts_gives_the_same_solution(tmp_path, monkeypatch, ruleset):
    """A wide rank is solved in parts of PART positions (a billion positions' widest ranks
    ran out of memory whole): parts of 100 positions give the same bytes, also where the
    ranks' results are kept in scratch files (HELD_IN_MEMORY 0)."""
    data, files = enumerated(tmp_path, ruleset)
    staged(solve, files, data.temp)
    whole = files.solution.read_bytes()
    monkeypatch.setattr(duckdb_engine, "PART", 100)
    staged(solve, files, data.temp)
    assert files.solution.read_bytes() == whole
    monkeypatch.setattr(duckdb_engine, "LOAD_ROWS", 0)
    monkeypatch.setattr(duckdb_engine, "HELD_IN_MEMORY", 0)
    staged(solve, files, data.temp)
    assert files.solution.read_bytes() == whole
