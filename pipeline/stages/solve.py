"""Stage 2: value, remoteness and Grundy value of every position, in DuckDB.

Values and their order of preference: pipeline/core/values.py (win > tie > draw > loss for the
player to move); the SQL gets their codes and score constants from there as variables.
The steps run on an engine (pipeline/engines/: DuckDB, or Spark); which solver, the loops
and the checks are here, once.

Where the game gives a rank that every move lowers (positions.parquet's `rank` column;
enumerate then numbers positions rank by rank), positions are solved rank by rank from the
lowest (DuckDB's pipeline/sql/duckdb/rank_*.sql, Spark's rank_level.sql): every child of a
rank's positions is solved already, so one INSERT per rank computes value, remoteness,
Grundy value and height from the children, reading each transition once.

A rank costs an engine a few statements whatever its size (DuckDB's, about 20 ms), so a small
ranked ruleset is solved as one without ranks (Solver.by_rank), to the same solution.

Otherwise moves can cycle, and retrograde analysis runs level by level. Level 0 is the
positions where the game is over. Each level passes the positions won or lost at the level
before to their parents, so every transition is looked at a constant number of times in
the whole solve: the work grows with the transitions, not with transitions x depth. Then,
where some finished games are ties, the ties spread the same way to the positions neither
won nor lost. Positions never decided are draws. DuckDB keeps the state in NumPy arrays and
joins each level's positions to a reverse adjacency (pipeline/engines/retrograde.py);
Spark updates tables (pipeline/sql/spark/solve_*.sql).

Grundy values (impartial games only): positions are peeled from those without moves
upwards: each level pushes the values just computed to their parents through the same
reverse adjacency, so again each transition is looked at once. What is never peeled can
reach a cycle and has no Grundy value.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa

from pipeline.core import dataset, values
from pipeline.core.errors import DataError
from pipeline.datadir.layout import RulesetFiles
from pipeline.engines import Solver, Steps, run_levels
from pipeline.stages.run import Run
from pipeline.storage import parts
from pipeline.storage.parquet import Encoding, require, with_dictionaries
from pipeline.storage.progress import Stage, log

#: solution.parquet
#: As written: the value a dictionary, which readers see as SOLUTION's string.
SOLUTION = with_dictionaries(dataset.SOLUTION.schema(), ("value",))


@dataclass(frozen=True)
class Solved:
    levels: int
    decided: int
    positions: int
    grundy_levels: int
    grundy_known: int


def solve(run: Run) -> Solved:
    """Read the run's positions and transitions files; write its solution file. Grundy
    values only where `run.impartial` (Game.impartial); NULL otherwise."""
    files, label, impartial = run.files, run.label, run.impartial
    require(files.positions, "positions file")
    require(files.transitions, "transitions file")
    run.reads(files.positions, files.transitions)
    with Stage(f"solve {label}") as stage:
        db = run.engine
        try:
            db.register("positions", files.positions)
            db.register("transitions", files.transitions)
            total, ranked, dead_ends = db.rows(
                "SELECT count(*), count(*) > 0 AND count(rank) = count(*),"
                " count(*) FILTER (WHERE moves = 0 AND terminal IS NULL) FROM positions"
            )[0]
            if ranked and dead_ends:
                raise DataError(
                    f"{files.positions} has {dead_ends:,} positions without moves and without a terminal value"
                )
            solver = db.solver(impartial)
            if ranked and not solver.by_rank(total, parts.read_metadata(files.transitions).num_rows):
                log.debug("solve %s: a small ruleset: by levels, not rank by rank", label)
                ranked = False
            if ranked:
                ranks = _ranks(solver, files)
                # each rank's rows are written as soon as it is solved
                solver.write(
                    True,
                    files.solution,
                    SOLUTION,
                    Encoding(delta=("id",), part_rows=run.part_rows),
                    _by_rank(stage, solver, ranks, label, total),
                )
                solved = Solved(len(ranks), total, total, len(ranks) if impartial else 0, total if impartial else 0)
            else:
                solved = _retrograde(stage, solver, label, total, impartial)
                stage.phase("writing", 0.05)
                solver.write(
                    False, files.solution, SOLUTION, Encoding(delta=("id",), part_rows=run.part_rows), iter(())
                )
            stage.summary = f"{total:,} positions, {solved.levels} {'ranks' if ranked else 'levels'}" + (
                f", {solved.grundy_known:,} Grundy values" if impartial else ""
            )
        finally:
            db.release()
    run.wrote(files.solution)
    return solved


def _ranks(solver: Solver, files: RulesetFiles) -> list[tuple[int, int, int, int]]:
    """(rank, first id, last id, positions) of every rank, lowest first, checked to be
    numbered rank by rank."""
    ranks = solver.ranks()
    if any(hi - lo + 1 != count for _, lo, hi, count in ranks) or any(
        later[1] <= earlier[2] for earlier, later in zip(ranks, ranks[1:])
    ):
        raise DataError(f"{files.positions} is not numbered rank by rank")
    if len(ranks) >= values.BAND - 1:  # remoteness < ranks must fit in one band of the packed scores
        raise DataError(
            f"{files.positions} has {len(ranks):,} ranks, more than this solver handles ({values.BAND - 2:,})"
        )
    return ranks


def _by_rank(
    stage: Stage, solver: Solver, ranks: list[tuple[int, int, int, int]], label: str, total: int
) -> Iterator[pa.RecordBatch]:
    """Solve rank by rank, giving the solution's rows as they are final (Solver.write gives
    the rest after them)."""
    done = 0
    stage.phase("by rank", 0.95)
    for rank, lo, hi, count in ranks:
        yield from solver.rank(lo, hi)
        done += count
        stage.count(done, total)
        log.debug("solve %s: rank %d: %s positions (%s of %s)", label, rank, f"{count:,}", f"{done:,}", f"{total:,}")


def _retrograde(stage: Stage, solver: Solver, label: str, total: int, impartial: bool) -> Solved:
    # values and Grundy values take about as long as each other (ties are few and quick)
    stage.phase("values", 0.5 if impartial else 0.95)
    levels, decided = _by_level(
        stage, total, solver.values(), f"solve {label}: depth %d: %s won or lost (%s of {total:,})"
    )
    tie_levels, tied = _by_level(stage, total, solver.ties(), f"solve {label}: tie depth %d: %s tied (%s tied)")
    log.debug("solve %s: %s positions never decided are draws", label, f"{total - decided - tied:,}")
    grundy_levels = grundy_known = 0
    if impartial:
        stage.phase("Grundy values", 0.45)
        grundy_levels, grundy_known = _by_level(
            stage, total, solver.grundy(), f"solve {label}: Grundy height %d: %s computed (%s of {total:,})"
        )
        log.debug("solve %s: %s positions can reach a cycle: no Grundy value", label, f"{total - grundy_known:,}")
    return Solved(max(levels, tie_levels), decided + tied, total, grundy_levels, grundy_known)


def _by_level(stage: Stage, total: int, steps: Steps, progress: str) -> tuple[int, int]:
    """Run `steps`, each level a line with -v; the bar counts the positions finished, of
    `total` (draws and positions that reach a cycle never are: the bar jumps at the end)."""

    def on_level(level: int, finished: int, done: int) -> None:
        stage.count(done, total)
        log.debug(progress, level, f"{finished:,}", f"{done:,}")

    return run_levels(steps, on_level)
