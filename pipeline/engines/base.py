"""What every engine is (the Engine and Solver protocols) and the helpers they share; each
engine's module (duckdb_engine.py, spark_engine.py) builds on this, and pipeline/engines/
(__init__.py) chooses one."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

import numpy as np
import pyarrow as pa

from pipeline.core.dataset import SOLVER_MADE
from pipeline.storage.parquet import AS_TYPED, Encoding

if TYPE_CHECKING:
    from pipeline.datadir.layout import RulesetFiles
    from pipeline.games.contract import Search, Space
    from pipeline.games.rulesets import Ruleset
    from pipeline.graph.numbering import RankNumbering


class Steps(Protocol):
    """A computation that runs level by level: `first()` sets up level 0 and says how many
    positions it holds; `step(level)` computes the next level from the last and says how
    many positions it finished (0: done)."""

    def first(self) -> int: ...

    def step(self, level: int) -> int: ...


class Solver(Protocol):
    """The solve stage's steps (pipeline/stages/solve.py runs them in order)."""

    def by_rank(self, positions: int, moves: int) -> bool:
        """Whether a ranked ruleset of `positions` and `moves` is solved rank by rank (else
        by levels, as one whose moves may cycle: the same solution)."""

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

    def write(
        self, ranked: bool, path: Path, schema: pa.Schema, encoding: Encoding, given: Iterator[pa.RecordBatch]
    ) -> int:
        """Write the solution file at `path` with `schema`: the rows `given` (the ranks'
        `rank` rows, solving them as they are read) and then the rows not given yet (id,
        value, remoteness, grundy, grundy_height, in id order), where the engine holds them
        (in this process, or Spark's executors); the number of rows."""


class Tally(Protocol):
    """What is counted of the rows an engine writes, row group by row group, wherever they
    are written: in this process, or by each of Spark's executors into a copy of its own
    (a copy of the empty one given, so it pickles), which are then merged into the one given."""

    def add(self, table: pa.Table) -> None:
        """Count one row group, as written."""

    def merge(self, other: Any) -> None:
        """Add the counts of another of its kind."""


@dataclass(frozen=True)
class WrittenMoves:
    """What `Engine.write_transitions` wrote: the moves, and each source's count of them
    (indexed by source, below the bound), which the positions file records."""

    rows: int
    counts: np.ndarray


@dataclass(frozen=True)
class Capabilities:
    """What an engine is and can do, declared once by its class (`Engine.capabilities`)."""

    #: Its name, as --engine takes it.
    name: str
    #: Its folder of SQL files under pipeline/sql/.
    sql_folder: str
    #: Whether it makes the moves in this process, so that a game that lists its positions part
    #: by part (Space.streams) is enumerated part by part (pipeline/stages/enumerate.py).
    local_moves: bool


class Engine(Protocol):
    """A session of one engine, opened on a scratch folder (`EngineKind(scratch)`).

    Each engine's module assigns its class to an `EngineKind`, where mypy checks that it is
    one: class variables, static methods and every method's signature."""

    capabilities: ClassVar[Capabilities]

    def __init__(self, scratch: Path) -> None: ...

    @staticmethod
    def require() -> None:
        """TablebaseError in one line saying what to install, unless it can run here
        (checked without starting it)."""

    @staticmethod
    def heap() -> int | None:
        """Bytes of this machine's memory it holds outside this process (Spark's JVM in local
        mode), or None where the stages run in this process, as pipeline/stages/estimate.py's
        model counts them."""

    @staticmethod
    def explain(error: BaseException) -> tuple[str, str] | None:
        """(what failed, why) in words for an error of its own libraries, else None."""

    def register(self, view: str, path: Path) -> None:
        """The Parquet file at `path` as the view `view`."""

    def rows(self, sql: str) -> list[tuple]:
        """The rows of a query in the shared dialect over the registered views."""

    def one_of(self, expression: str, words: Sequence[str]) -> str:
        """An expression in the shared dialect whose value is one of `words`, as the engine
        best hands it to `write` for a dictionary column (the same value either way)."""

    def text_hash(self, expression: str) -> str:
        """An expression in the shared dialect for index.parquet's `hash` of a text
        (pipeline/core/dataset.py TEXT_HASH), as BIGINT."""

    def write(
        self,
        sql: str,
        path: Path,
        schema: pa.Schema,
        encoding: Encoding = AS_TYPED,
        order: Sequence[str] = ("id",),
        tally: Tally | None = None,
        convert: Callable[[pa.RecordBatch], pa.RecordBatch] | None = None,
        progress: Callable[[int], None] | None = None,
        keys: tuple[int, int] | None = None,
    ) -> int:
        """Write a query's rows (in order of the columns `order`, the first an integer, as
        its ORDER BY or `by_id` puts them) to the Parquet file `path` with exactly `schema`,
        atomically and deterministically (the same rows give the same bytes on every
        engine); the number of rows.

        An engine whose rows are elsewhere (Spark's executors) writes them there, as a
        folder of parts cut by ranges of `order`'s first column. So `tally` counts each row group where it is written, and `convert`, which
        makes each batch of the query's rows into the file's (export: keys into texts), runs
        there too: both must pickle. `progress(rows so far)` is called in this process as
        the rows are written (as each row group is, or once at the end). `keys`: the least
        and the greatest value of `order`'s first column, where the caller knows them, so
        that an engine that cuts the rows by its ranges need not find them first (bounds
        that are off make parts of uneven sizes, never rows out of order)."""

    def write_lookup(
        self,
        tablebase: Path,
        transitions: Path,
        path: Path,
        schema: pa.Schema,
        encoding: Encoding,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """Write lookup.parquet at `path` from the tablebase and its moves, merged as they are
        read (pipeline/engines/lookup.py), where the engine holds them: in this process, or
        by Spark's executors a part of the tablebase each (a folder of parts); the rows.
        `progress` as `write`'s."""

    def transitions(
        self,
        rules: Ruleset,
        space: Space,
        numbering: RankNumbering | None,
        bound: int,
        scratch: Path,
        generated: Callable[[int], None] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """Every move of `space` as batches of (src, dst, move), numbered by `numbering` where
        the game has a rank, in the published order (pipeline/stages/enumerate.py); the
        sources are below `bound`. `generated(moves so far)`, where the engine can tell,
        follows the generation before the first batch comes."""

    def write_transitions(
        self,
        rules: Ruleset,
        space: Space,
        numbering: RankNumbering | None,
        bound: int,
        path: Path,
        encoding: Encoding,
    ) -> WrittenMoves:
        """Where the moves are made away from this process (not `capabilities.local_moves`):
        write them, as `transitions` gives them, where they are made, as a folder of parts
        at `path` (pipeline/storage/parts.py), none passing through this process."""

    def write_searched(
        self,
        rules: Ruleset,
        search: Search,
        files: RulesetFiles,
        schema: pa.Schema,
        encodings: tuple[Encoding, Encoding],
        with_counts: Callable[[pa.Table, Any, pa.Array], pa.Table],
        found: Callable[[int], None] | None = None,
    ) -> tuple[int, int]:
        """Where the moves are made away from this process, and the game's space can search
        (Space.search): find the positions level by level where the moves are made, number
        them in the game's order, and write `files`' positions (of `schema`, each batch of
        the game's columns given its moves and rank by `with_counts`) and transitions, with
        `encodings`, as folders of parts, none passing through this process. `found`
        follows the positions found so far. (positions, transitions)."""

    def solver(self, impartial: bool) -> Solver: ...

    def check_facts(self, impartial: bool, query: str) -> Iterator[tuple[int, tuple]]:
        """The row `query` (a SELECT over the view `facts`, pipeline/stages/verify.py's
        checks) gives on each part of the positions' facts, with the number of positions
        in the part: the checks' counts add up over the parts."""

    def reach(self, starts: list[int]) -> Steps: ...

    def by_id(self, views: dict[str, str]) -> tuple[str, str]:
        """FROM and ORDER BY clauses that put the rows of `views` (alias: view, the first
        the positions) side by side by id, in id order (no ORDER BY where they come in that
        order, or where `write` puts them in order itself)."""
        ...

    def release(self) -> None:
        """Drop every view and table made since it was opened or last released: a stage
        leaves the session as it found it, its memory free for the next."""

    def close(self) -> None: ...


#: An engine's class: its declarations, and a session when called with a scratch folder.
EngineKind = type[Engine]


def by_id_join(views: dict[str, str], ordered: bool = True) -> tuple[str, str]:
    """Engine.by_id as joins on id, then a sort (unless not `ordered`)."""
    (first, positions), *others = views.items()
    joins = "".join(f" JOIN {view} AS {alias} ON {alias}.id = {first}.id" for alias, view in others)
    return f"{positions} AS {first}{joins}", f"ORDER BY {first}.id" if ordered else ""


def counting(tally: Tally | None, progress: Callable[[int], None] | None) -> Callable[[pa.Table], None] | None:
    """`Engine.write`'s `tally` and `progress` as write_batches' `observe`, for the rows
    written in this process."""
    if tally is None and progress is None:
        return None
    written = 0

    def observe(table: pa.Table) -> None:
        nonlocal written
        written += table.num_rows
        if tally is not None:
            tally.add(table)
        if progress is not None:
            progress(written)

    return observe


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


def declared(sql: str) -> str:
    """An engine's SQL text with `{solver_made}` as the solver-made columns' names, each after
    a comma (pipeline/core/dataset.py's SOLVER_MADE): the statements that pass a solver's
    rows on name them from the declaration, not from a list of their own."""
    return sql.replace("{solver_made}", "".join(f", {column.name}" for column in SOLVER_MADE))
