"""Where the stages' SQL runs: DuckDB on one machine (the default), Apache Spark beyond it.

The stages (pipeline/stages/) hold the logic, written once: which solver, the rank and
level loops, the verifier's checks, the catalog row. An engine only executes. It reads the
ruleset's Parquet files as views (`register`), answers SQL written in the part of SQL both
engines speak the same way (`rows`, `write`: SELECT, joins, CASE, aggregates with FILTER,
min_by), and carries out the steps whose SQL differs between the engines, written once per
engine in pipeline/sql/<engine>/:

  transitions(…)     enumerate's moves, from the game's generators: in this process, or
                     part by part on Spark's executors
  solver(impartial)  the solve stage's steps (Solver below), over views positions and
                     transitions
  facts(impartial)   the verifier's view `facts`, part by part: one row per position with what its
                     children say (pipeline/stages/verify.py holds the checks over it)
  reach(starts)      the view `reach` (id, seen): what play from the starts can reach

Choose one with `--engine` or the environment variable TABLEBASE_ENGINE.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Callable, Iterator, Protocol

import pyarrow as pa

from pipeline.core.errors import RulesetError

if TYPE_CHECKING:
    from pipeline.games import Space
    from pipeline.games.rulesets import Ruleset
    from pipeline.graph.numbering import RankNumbering

ENGINES = ("duckdb", "spark")
#: The environment variable that picks the engine when --engine is not given.
ENV = "TABLEBASE_ENGINE"


class Steps(Protocol):
    """A computation that runs level by level: `first()` sets up level 0 and says how many
    positions it holds; `step(level)` computes the next level from the last and says how
    many positions it finished (0: done)."""

    def first(self) -> int: ...

    def step(self, level: int) -> int: ...


class Solver(Protocol):
    """The solve stage's steps (pipeline/stages/solve.py runs them in order)."""

    def ranks(self) -> list[tuple[int, int, int, int]]:
        """(rank, first id, last id, positions) of every rank, lowest first."""

    def rank(self, lo: int, hi: int) -> Iterator[pa.RecordBatch]:
        """Solve the positions lo..hi (one rank; every child of theirs is solved), and
        give the solution's rows that are final now, in id order (none, for an engine
        that gives every row at the end)."""

    def values(self) -> Steps:
        """Retrograde analysis of wins and losses: level k decides remoteness k."""

    def ties(self) -> Steps:
        """Then ties, from the tied ends up (only positions still undecided)."""

    def grundy(self) -> Steps:
        """Grundy values from the positions without moves up."""

    def rest(self, ranked: bool) -> Iterator[pa.RecordBatch]:
        """The solution's rows not given yet (id, value, remoteness, grundy,
        grundy_height), in id order, after the last rank or level."""


class Engine(Protocol):
    name: str

    def register(self, view: str, path: Path) -> None:
        """The Parquet file at `path` as the view `view`."""

    def rows(self, sql: str) -> list[tuple]:
        """The rows of a query in the shared dialect over the registered views."""

    def write(self, sql: str, path: Path, schema: pa.Schema, delta: tuple[str, ...] = ()) -> int:
        """Write a query's rows to the Parquet file `path` with exactly `schema`, atomically
        and deterministically (the same rows give the same bytes on every engine); the
        number of rows."""

    def transitions(self, rules: "Ruleset", space: "Space", numbering: "RankNumbering | None", bound: int,
                    scratch: Path, generated: Callable[[int], None] | None = None) -> Iterator[pa.RecordBatch]:
        """Every move of `space` as batches of (src, dst, move), numbered by `numbering` where
        the game has a rank, in the published order (pipeline/stages/enumerate.py); the
        sources are below `bound`. `generated(moves so far)`, where the engine can tell,
        follows the generation before the first batch comes."""

    def solver(self, impartial: bool) -> Solver: ...

    def facts(self, impartial: bool) -> Iterator[int]:
        """The view `facts` (pipeline/stages/verify.py's checks read it), a part of the
        positions each time the iterator gives how many it holds: the checks run on each
        part in turn."""

    def reach(self, starts: list[int]) -> Steps: ...

    def by_id(self, views: dict[str, str]) -> tuple[str, str]:
        """FROM and ORDER BY clauses that put the rows of `views` (alias: view, the first
        the positions) side by side by id, in id order."""
        ...

    def close(self) -> None: ...


def by_id_join(views: dict[str, str]) -> tuple[str, str]:
    """Engine.by_id as joins on id, then a sort."""
    (first, positions), *others = views.items()
    joins = "".join(f" JOIN {view} AS {alias} ON {alias}.id = {first}.id" for alias, view in others)
    return f"{positions} AS {first}{joins}", f"ORDER BY {first}.id"


def run_levels(steps: Steps, on_level: Callable[[int, int, int], None] | None = None) -> tuple[int, int]:
    """Run `steps` level after level until a level finishes nothing; `on_level(level,
    finished, done so far)` before each step. Returns the number of levels and of positions
    finished (level 0's included)."""
    finished = steps.first()
    done, level = finished, 0
    while finished:
        if on_level is not None:
            on_level(level, finished, done)
        level += 1
        finished = steps.step(level)
        done += finished
    return level, done


def engine_name(name: str | None = None, available: bool = False) -> str:
    """The engine to use: `name`, else $TABLEBASE_ENGINE, else duckdb. With `available`,
    also check (without starting it) that it can run here: one line saying what to install."""
    chosen = (name or os.environ.get(ENV) or "duckdb").strip().lower()
    if chosen not in ENGINES:
        source = "--engine" if name else ENV
        raise RulesetError(f"{source}: unknown engine {chosen!r} (known: {', '.join(ENGINES)})")
    if available and chosen == "spark":
        from pipeline.engines.spark_engine import require

        require()
    return chosen


def open_engine(name: str | None, temp_dir: Path) -> Engine:
    """A fresh engine session; close it when done."""
    chosen = engine_name(name)
    if chosen == "spark":
        from pipeline.engines.spark_engine import SparkEngine

        return SparkEngine(temp_dir)
    from pipeline.engines.duckdb_engine import DuckDBEngine

    return DuckDBEngine(temp_dir)


def literal(value: object) -> str:
    """A Python value as an SQL literal both engines read alike (for the shared dialect)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str) and not set(value) & set("'\\"):
        return "'" + value + "'"  # DuckDB doubles quotes, Spark escapes them: neither is needed
    raise TypeError(f"no SQL literal for {value!r}")
