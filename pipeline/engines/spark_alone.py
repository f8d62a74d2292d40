"""A small solve and verify on Spark in one task: the DuckDB engine's solver (ranks, or the
retrograde analysis of pipeline/engines/retrograde.py) run by one executor over the positions
and moves files, where Spark's own levels would cost a job or more a level or rank for a few
thousand positions (chopsticks' 35 positions took 25 s of levels, nim's six ranks 7 s); and
its verifier's facts (check_facts), where Spark's took ten jobs a build.

The task writes the solution to a scratch file every node sees and gives back each
analysis's positions finished level by level; the driver replays those counts as the
levels' steps (`Recorded`: the solve stage's progress and log lines are a solve's own) and
writes the solution as Spark writes any (SparkEngine.write_parts), so the files are the
same bytes either way. The verify's task gives back the verify query's row of each part of
the positions. Larger rulesets are solved and verified by Spark's own SQL (spark_engine.py).
"""

from __future__ import annotations

import contextlib
import itertools
import json
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa

from pipeline.core import dataset
from pipeline.engines.base import Steps, run_levels
from pipeline.engines.duckdb_engine import DuckDBEngine
from pipeline.storage import db, parts
from pipeline.storage.parquet import Encoding, with_dictionaries

#: A ruleset of at most this many positions ...
POSITIONS = 1 << 20
#: ... and this many moves is solved, and verified, by one task. The task's memory is the
#: DuckDB engine's for that much (its reverse moves in memory below retrograde.ON_DISK;
#: 2^20 positions and 2^23 moves take ~0.3 GB), its time a few seconds where Spark's levels
#: took a second or more each.
MOVES = 1 << 23
#: What the verify's task gives: each part's positions and the verify query's row of
#: it, as JSON (a count and a least id a check, however many checks there are).
FACTS_SCHEMA = "held long, row string"
#: What the solve's task gives: each analysis's positions finished at each level (a rank's at its
#: level, for a solve by rank: `analysis` "ranks").
COUNTS_SCHEMA = "analysis string, level int, finished long"
#: The analyses the task runs, in order, and what each records.
ANALYSES = ("values", "ties", "grundy")
#: The solution file the task writes, in its folder.
SOLUTION_FILE = "solution.parquet"


def small(positions: Path, transitions: Path) -> bool:
    """Whether a ruleset of these files is solved by one task (from their footers)."""
    return parts.read_metadata(positions).num_rows <= POSITIONS and parts.read_metadata(transitions).num_rows <= MOVES


def solve(positions: Path, transitions: Path, folder: Path, impartial: bool, ranked: bool) -> dict[str, list[int]]:
    """In this process, the DuckDB engine's solve of the files, its solution written to
    `folder`/SOLUTION_FILE; each analysis's positions finished at each level (level 0 first,
    as run_levels sees them: up to the first level that finishes none)."""
    with _duckdb(folder, positions=positions, transitions=transitions) as engine:
        solver = engine.solver(impartial)
        counts: dict[str, list[int]] = {}
        schema = with_dictionaries(dataset.SOLUTION.schema(), ("value",))
        if ranked:
            ranks = solver.ranks()
            counts["ranks"] = [count for _, _, _, count in ranks]
            given = itertools.chain.from_iterable(solver.rank(lo, hi) for _, lo, hi, _ in ranks)
            solver.write(True, folder / SOLUTION_FILE, schema, Encoding(), given)
        else:
            for name in ANALYSES if impartial else ANALYSES[:2]:
                counts[name] = _levels(getattr(solver, name)())
            solver.write(False, folder / SOLUTION_FILE, schema, Encoding(), iter(()))
        return counts


@contextlib.contextmanager
def _duckdb(folder: Path, **views: Path) -> Iterator[DuckDBEngine]:
    """The DuckDB engine over the files `views` (by view), its scratch in `folder`; closed
    after, its database for the folder forgotten (the executor's Python lives on)."""
    engine = DuckDBEngine(folder)
    try:
        for view, path in views.items():
            engine.register(view, path)
        yield engine
    finally:
        engine.close()
        db.forget(folder)


def _levels(steps: Steps) -> list[int]:
    """Run `steps`: the positions finished at each level, up to the first that finishes none."""
    finished: list[int] = []
    run_levels(steps, lambda _level, found, _done: finished.append(found))
    return finished


def solved_batches(
    positions: str, transitions: str, folder: str, impartial: bool, ranked: bool, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """On an executor (one task, whatever it is given): `solve`, its counts as rows."""
    for _ in batches:
        pass
    counts = solve(Path(positions), Path(transitions), Path(folder), impartial, ranked)
    rows = [
        (name, level, found) for name, found_by_level in counts.items() for level, found in enumerate(found_by_level)
    ]
    yield pa.RecordBatch.from_arrays(
        [
            pa.array([name for name, _, _ in rows], pa.string()),
            pa.array([level for _, level, _ in rows], pa.int32()),
            pa.array([found for _, _, found in rows], pa.int64()),
        ],
        names=["analysis", "level", "finished"],
    )


def checked(
    positions: Path, transitions: Path, solution: Path, folder: Path, impartial: bool, query: str
) -> list[tuple[int, tuple]]:
    """In this process, the DuckDB engine's check_facts of the files (its scratch in `folder`)."""
    with _duckdb(folder, positions=positions, transitions=transitions, solution=solution) as engine:
        return list(engine.check_facts(impartial, query))


def checked_batches(
    paths: tuple[str, str, str], folder: str, impartial: bool, query: str, batches: Iterator[pa.RecordBatch]
) -> Iterator[pa.RecordBatch]:
    """On an executor (one task, whatever it is given): `checked`, as rows."""
    for _ in batches:
        pass
    positions, transitions, solution = (Path(path) for path in paths)
    found = checked(positions, transitions, solution, Path(folder), impartial, query)
    yield pa.RecordBatch.from_arrays(
        [
            pa.array([held for held, _ in found], pa.int64()),
            pa.array([json.dumps(list(row)) for _, row in found], pa.string()),
        ],
        names=["held", "row"],
    )


class Recorded:
    """Steps that give the positions a task finished at each level, level 0 first."""

    def __init__(self, finished: list[int]):
        self.finished = finished

    def first(self) -> int:
        return self.step(0)

    def step(self, level: int) -> int:
        return self.finished[level] if level < len(self.finished) else 0
