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

A build opens one session (`open_engine`) and hands it to every stage (pipeline/stages/run.py);
each stage leaves it as it found it (`release`). What differs between the engines is declared
by each engine's class, as dlt's destinations declare theirs: its `capabilities` (its name,
where its SQL is, whether it makes the moves in this process), what it holds of this machine's
memory outside this process (`heap`, for pipeline/stages/estimate.py), what it needs installed
(`require`) and how its errors read (`explain`). No module outside pipeline/engines/ asks which
engine it is.

Choose one with `--engine` or the environment variable TABLEBASE_ENGINE.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from pipeline.core.errors import RulesetError
from pipeline.engines.base import (
    Capabilities,
    Engine,
    EngineKind,
    Solver,
    Steps,
    by_id_join,
    literal,
    run_levels,
)

__all__ = [
    "ENGINES",
    "ENV",
    "Capabilities",
    "Engine",
    "EngineKind",
    "Solver",
    "Steps",
    "by_id_join",
    "engine_kind",
    "explain",
    "literal",
    "open_engine",
    "run_levels",
]

ENGINES = ("duckdb", "spark")
#: The environment variable that picks the engine when --engine is not given.
ENV = "TABLEBASE_ENGINE"


def engine_kind(name: str | None = None, available: bool = False) -> EngineKind:
    """The engine to use: `name`, else $TABLEBASE_ENGINE, else duckdb. With `available`,
    also check (without starting it) that it can run here: one line saying what to install."""
    chosen = (name or os.environ.get(ENV) or "duckdb").strip().lower()
    if chosen not in ENGINES:
        source = "--engine" if name else ENV
        raise RulesetError(f"{source}: unknown engine {chosen!r} (known: {', '.join(ENGINES)})")
    kind: EngineKind
    if chosen == "spark":
        from pipeline.engines.spark_engine import SparkEngine as kind
    else:
        from pipeline.engines.duckdb_engine import DuckDBEngine as kind
    if available:
        kind.require()
    return kind


def open_engine(kind: EngineKind | None, scratch: Path) -> Engine:
    """A fresh session of `kind` (None: engine_kind()'s) on `scratch`; close it when done."""
    return (kind or engine_kind())(scratch)


#: The module of each engine, by name: an error can only be an engine's if its module is loaded.
MODULES = {
    "duckdb": ("pipeline.engines.duckdb_engine", "DuckDBEngine"),
    "spark": ("pipeline.engines.spark_engine", "SparkEngine"),
}


def explain(error: BaseException) -> tuple[str, str] | None:
    """(what failed, why) for an error one of the engines explains in its own words, else
    None. Nothing is imported to tell: an engine not loaded raised nothing."""
    for module, kind in MODULES.values():
        loaded = sys.modules.get(module)
        found = getattr(loaded, kind).explain(error) if loaded is not None else None
        if found is not None:
            return found
    return None
