"""The DuckDB engine: one in-process database per stage, the default on one machine.

The solvers' SQL is in pipeline/sql/duckdb/: rank by rank, one INSERT a rank into temporary
tables; where moves can cycle, retrograde analysis (pipeline/engines/retrograde.py) keeps
each position's state in NumPy arrays and joins each level's frontier, passed in as an
Arrow table, to a reverse adjacency in DuckDB. Verify's facts and export's reachable
positions, which look every move's child up by id, are NumPy passes
(pipeline/engines/arrays.py): an id is an index there, where SQL hash-joins every move.
"""

from __future__ import annotations

import itertools
import threading
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar, NamedTuple

import duckdb
import numpy as np
import pyarrow as pa

from pipeline.core import values
from pipeline.engines import arrays
from pipeline.engines.arrays import child_floors, floor_above
from pipeline.engines.base import (
    Capabilities,
    EngineKind,
    Steps,
    Tally,
    WrittenMoves,
    by_id_join,
    counting,
    declared,
    literal,
)
from pipeline.engines.lookup import lookup_batches
from pipeline.engines.retrograde import Retrograde
from pipeline.storage import parts
from pipeline.storage.db import connect, quote_path, set_variables, sql_text
from pipeline.storage.parquet import AS_TYPED, Encoding, read_table, write_batches, write_select


class DuckDBEngine:
    # the games' generators run here (in_process)
    capabilities: ClassVar[Capabilities] = Capabilities(name="duckdb", sql_folder="duckdb", local_moves=True)

    @staticmethod
    def require() -> None:
        """DuckDB is a dependency: always there."""

    @staticmethod
    def heap() -> None:
        """Nothing outside this process: pipeline/stages/estimate.py's model counts DuckDB's memory."""

    @staticmethod
    def explain(error: BaseException) -> None:
        """DuckDB's errors are the command line's to word (pipeline/cli.py): queries raise them too."""

    def __init__(self, temp_dir: Path):
        self.temp_dir = temp_dir
        self.paths: dict[str, Path] = {}
        self._solver: DuckDBSolver | None = None
        self._connect()

    def _connect(self) -> None:
        # a cursor of the process's database (pipeline/storage/db.py): its temporary tables
        # and variables are its own, gone when it is closed
        self.con = connect(self.temp_dir)
        set_variables(self.con, **values.sql_variables())

    def register(self, view: str, path: Path) -> None:
        source = parts.sql_source(path)  # the file, or its folder of parts' glob
        set_variables(self.con, **{view: source})
        self.paths[view] = path
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM read_parquet({quote_path(source)})")

    def rows(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()

    def one_of(self, expression: str, words: Sequence[str]) -> str:
        """As an ENUM, which reaches Arrow as a dictionary: the Parquet writer, one thread,
        then writes its codes rather than hashing every row's text (a sixth of writing a
        tablebase); DuckDB's threads make the codes."""
        return f"CAST({expression} AS ENUM({', '.join(literal(word) for word in words)}))"

    def text_hash(self, expression: str) -> str:
        return f"CAST(md5_number({expression}) >> 96 AS BIGINT)"

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
        """In this process, as DuckDB gives the rows: one file, unless `encoding.part_rows`
        asks for parts (its rows, not `order`, cut them)."""
        return write_select(self.con, sql, path, schema, encoding, counting(tally, progress), convert)

    def write_lookup(
        self,
        tablebase: Path,
        transitions: Path,
        path: Path,
        schema: pa.Schema,
        encoding: Encoding,
        progress: Callable[[int], None] | None = None,
    ) -> int:
        """In this process, a row group of the tablebase and about a batch of moves held."""
        return write_batches(lookup_batches(tablebase, transitions), path, schema, encoding, counting(None, progress))

    def transitions(
        self,
        rules: Any,
        space: Any,
        numbering: Any,
        bound: int,
        scratch: Path,
        generated: Callable[[int], None] | None = None,
    ) -> Iterator[pa.RecordBatch]:
        """The game's generators run in this process (DuckDB is not needed for that)."""
        from pipeline.graph.moves import in_process

        return in_process(space, numbering, scratch, generated)

    def write_transitions(
        self, rules: Any, space: Any, numbering: Any, bound: int, path: Path, encoding: Encoding
    ) -> WrittenMoves:
        """Never asked: the moves are made in this process, which writes them (enumerate)."""
        raise NotImplementedError("DuckDB's moves are made in this process: enumerate writes them")

    def write_searched(
        self,
        rules: Any,
        search: Any,
        files: Any,
        schema: pa.Schema,
        encodings: tuple[Encoding, Encoding],
        with_counts: Callable[[pa.Table, Any, pa.Array], pa.Table],
        found: Callable[[int], None] | None = None,
    ) -> tuple[int, int]:
        """Never asked: a space that lists its positions part by part is enumerated in this
        process, part by part (enumerate's _streamed)."""
        raise NotImplementedError("DuckDB enumerates in this process: enumerate writes the files")

    def solver(self, impartial: bool) -> DuckDBSolver:
        self._solver = DuckDBSolver(self, impartial)
        return self._solver

    def check_facts(self, impartial: bool, query: str) -> Iterator[tuple[int, tuple]]:
        """Verify's facts by NumPy passes (pipeline/engines/arrays.py), a part of the
        positions at a time (ids are indexes), each checked by `query` on the thread that
        made it, with a cursor of its own: the checks run beside the reading of the next
        parts, not after them on this one."""
        local = threading.local()
        cursors: list[Any] = []

        def check(facts: pa.Table) -> tuple[int, tuple]:
            if not hasattr(local, "con"):
                local.con = self.con.cursor()
                cursors.append(local.con)
            local.con.register("facts", facts)
            try:
                row = local.con.execute(query).fetchall()[0]
            finally:
                local.con.unregister("facts")
            return facts.num_rows, row

        try:
            yield from arrays.verify_parts(
                self.paths["positions"], self.paths["transitions"], self.paths["solution"], impartial, check
            )
        finally:
            for cursor in cursors:
                cursor.close()

    def reach(self, starts: list[int]) -> Reached:
        """The view `reach` (id, seen) by a NumPy pass (pipeline/engines/arrays.py). Where
        the positions' ids are 0..n-1 they are a range beside the marks, not an array."""
        seen = arrays.reachable(self.paths["positions"], self.paths["transitions"], np.array(starts, np.int64))
        self.con.register("reach_seen", pa.table({"seen": seen}))
        if arrays.dense_ids(self.paths["positions"]) is not None:
            self.con.execute(
                f"CREATE OR REPLACE TEMP VIEW reach AS SELECT r.range AS id, s.seen "
                f"FROM range({seen.size}) AS r POSITIONAL JOIN reach_seen AS s"
            )
        else:
            self.con.register("reach_ids", read_table(self.paths["positions"], columns=["id"]))
            self.con.execute(
                "CREATE OR REPLACE TEMP VIEW reach AS SELECT i.id, s.seen "
                "FROM reach_ids AS i POSITIONAL JOIN reach_seen AS s"
            )
        return Reached(int(seen.sum()))

    def by_id(self, views: dict[str, str]) -> tuple[str, str]:
        """Side by side row for row (POSITIONAL JOIN: no hash join, no sort) where every
        view holds the ids 0..n-1 in order, as the stages write them (the files' ids read a
        row group at a time; reach's are a range where the positions' are)."""
        dense = {view: arrays.dense_ids(self.paths[view]) if view in self.paths else None for view in views.values()}
        if "reach" in views.values() and self.paths.get("positions"):
            dense["reach"] = arrays.dense_ids(self.paths["positions"])
        if None not in dense.values() and len(set(dense.values())) == 1:
            (first, positions), *others = views.items()
            return positions + " AS " + first + "".join(
                f" POSITIONAL JOIN {view} AS {alias}" for alias, view in others
            ), ""
        return by_id_join(views)

    def release(self) -> None:
        """A fresh cursor of the same database: what the last stage made (the solver's
        tables, their memory) goes with the old one, and the solver's own database and
        scratch files."""
        if self._solver is not None:
            self._solver.close()
            self._solver = None
        self.con.close()
        self.paths = {}
        self._connect()

    def close(self) -> None:
        if self._solver is not None:
            self._solver.close()
        self.con.close()


#: mypy checks here that the class is an Engine (pipeline/engines/base.py).
_CHECKED: EngineKind = DuckDBEngine


def _sql(name: str) -> str:
    """The text of pipeline/sql/duckdb/<name>.sql, its columns named from the declaration."""
    return declared(sql_text(name, DuckDBEngine.capabilities.sql_folder))


def _as_words(solution: str) -> str:
    """A solution query with its value as an ENUM of the value words, which reaches Arrow
    as a dictionary: the solution's writer takes the codes rather than hashing each row's
    word (the solution file reads the same)."""
    words = ", ".join(literal(word) for word in values.WORDS)
    return f"SELECT * REPLACE (CAST(value AS ENUM({words})) AS value) FROM ({solution.strip().rstrip(';')})"


def run_sql(con: duckdb.DuckDBPyConnection, name: str, **variables: Any) -> None:
    """Run every statement of pipeline/sql/duckdb/<name>.sql with `getvariable(...)` values set."""
    set_variables(con, **variables)
    con.execute(_sql(name))


class Reached:
    """Steps that are done at once: what a single pass found."""

    def __init__(self, count: int):
        self.count = count

    def first(self) -> int:
        return self.count

    def step(self, level: int) -> int:
        return 0


#: A rank of more positions than this is solved in parts of this many: each part's moves
#: are grouped by source into an array indexed by id (rank_setup.sql's perfect_ht_threshold),
#: and its join and grouping stay within DuckDB's memory (a rank of 135 M positions, 5×6
#: Connect-Four's widest, ran out of 4 GB whole).
PART = 1 << 24
#: Ranks' results are held as tables where at most this many are held at once (a few
#: hundred MB); more are written to a scratch file a rank (5×6 Connect-Four holds 268 M).
HELD_IN_MEMORY = 1 << 26
#: Solving rank by rank, positions and transitions files of at most this many rows are read
#: once into memory (128 MB as two INTEGER columns) rather than a rank at a time:
#: sticks:rows=10's 56 ranks read their moves in 0.2 s instead of 0.6.
LOAD_ROWS = 1 << 24
#: A ranked ruleset of at most this many positions and moves is solved by levels (NumPy's
#: retrograde analysis, as one whose moves may cycle), to the same solution: each rank
#: costs about 20 ms of statements whatever its size. Solve's seconds by rank and by levels
#: (2 cores, 2026-11-29, rev held in NumPy's arrays: retrograde.HELD): sticks:rows=6 (10,897
#: moves) 0.59 and 0.06, connect:cols=4,rows=4 (304,574) 0.51 and 0.15,
#: chopsticks:fingers=12,hands=3 (568,854) 2.02 and 0.30, connect:cols=4,rows=5 (3.2 M) 1.24
#: and 0.95; connect:cols=5,rows=4 (8.8 M) 2.13 and 2.18, sticks:rows=10 (14.5 M) 2.55 and
#: 2.61: even, and rank by rank holds two ranks, not every move.
LEVELS_UP_TO = 1 << 22


class Held(NamedTuple):
    """One rank's results (or a part's), held while a later rank's moves may lead into them."""

    first: int
    last: int
    source: str  # how SQL reads them: a table, or read_parquet of a scratch file
    path: Path | None = None  # the scratch file


class DuckDBSolver:
    """sql/duckdb/rank_*.sql where positions have a rank, else retrograde analysis
    (pipeline/engines/retrograde.py: values, then ties, then Grundy values).

    Rank by rank, each rank's results are kept while a later rank's moves may lead into
    them: a rank's moves lead no lower than the least child of the transitions' row groups
    from it on (their min/max), so what lies below that is dropped once its rows are in the
    solution. Connect-Four's moves all lead one rank down: two ranks are held, never every
    position. A small ruleset's results are held as tables; a large one's are written to a
    scratch file a rank, read back where a later rank's moves lead (DuckDB's memory holds a
    rank's join and grouping, which spill to disk where they must, not every result)."""

    def __init__(self, engine: DuckDBEngine, impartial: bool):
        self.con = engine.con
        self.paths = engine.paths
        self.scratch = engine.temp_dir
        self.impartial = impartial
        set_variables(self.con, impartial=impartial)
        self._level_sql: str | None = None  # ranks() reads it
        self.retrograde: Retrograde | None = None
        self.held: list[Held] = []  # each rank's results held, lowest first
        self.floors: tuple[np.ndarray, np.ndarray] | None = None
        self.in_memory = True

    def by_rank(self, positions: int, moves: int) -> bool:
        return max(positions, moves) > LEVELS_UP_TO

    def ranks(self) -> list[tuple[int, int, int, int]]:
        run_sql(self.con, "rank_setup")
        rows = max(parts.read_metadata(self.paths[view]).num_rows for view in ("positions", "transitions"))
        if rows <= LOAD_ROWS:
            run_sql(self.con, "rank_load")
        self._level_sql = _sql("rank_level" if self.impartial else "rank_values")
        self.floors = child_floors(self.paths["transitions"])
        ranks = self.con.execute(
            "SELECT rank, min(id), max(id), count(*) FROM pos GROUP BY rank ORDER BY rank"
        ).fetchall()
        self.in_memory = self._most_held(ranks) <= HELD_IN_MEMORY
        return ranks

    def _most_held(self, ranks: list[tuple[int, int, int, int]]) -> int:
        """The most results `rank` will hold at once, ranks kept as long as a later rank's
        moves may lead into them."""
        held: list[tuple[int, int]] = []  # (last id, positions)
        most = 0
        for _, _lo, hi, count in ranks:
            held.append((hi, count))
            most = max(most, sum(size for _, size in held))
            floor = self._floor(hi)
            while held and held[0][0] < floor:
                held.pop(0)
        return most

    def rank(self, lo: int, hi: int) -> Iterator[pa.RecordBatch]:
        for first in range(lo, hi + 1, PART):
            yield from self._part(first, min(hi, first + PART - 1), lo)
        floor = self._floor(hi)
        while self.held and self.held[0].last < floor:  # no later rank's move leads there
            dropped = self.held.pop(0)
            if dropped.path is None:
                self.con.execute(f"DROP TABLE {dropped.source}")
            else:
                dropped.path.unlink()

    def _part(self, lo: int, hi: int, rank_lo: int) -> Iterator[pa.RecordBatch]:
        """Solve the positions lo..hi of the rank from `rank_lo` and give their rows."""
        set_variables(self.con, lo=lo, hi=hi)
        run_sql(self.con, "rank_moves")
        (child_lo,) = self.con.execute("SELECT getvariable('child_lo')").fetchall()[0]
        needed = [held.source for held in self.held if held.last >= child_lo and held.first < rank_lo]
        # no rank held: the view as rank_setup.sql makes it, empty (never a dropped table)
        self.con.execute(
            "CREATE OR REPLACE TEMP VIEW children AS "
            + (
                " UNION ALL ".join(f"SELECT * FROM {source}" for source in needed)
                if needed
                else "SELECT NULL::INTEGER AS id, NULL::INTEGER AS score, NULL::INTEGER AS grundy, "
                "NULL::INTEGER AS height WHERE false"
            )
        )
        assert self._level_sql is not None  # ranks() comes first
        self.con.execute(self._level_sql)
        self.con.execute("CREATE OR REPLACE TEMP VIEW solved AS SELECT * FROM rank_result")
        yield from self.con.sql(_as_words(_sql("rank_solution"))).to_arrow_reader(1 << 20)
        if self.in_memory:
            self.con.execute(f"ALTER TABLE rank_result RENAME TO res_{lo}")
            self.held.append(Held(lo, hi, f"res_{lo}"))
        else:
            self.scratch.mkdir(parents=True, exist_ok=True)
            path = self.scratch / f"rank-{lo}.parquet"
            self.con.execute(f"COPY rank_result TO {quote_path(path)} (FORMAT parquet)")
            self.con.execute("DROP TABLE rank_result")
            self.held.append(Held(lo, hi, f"read_parquet({quote_path(path)})", path))

    def _floor(self, hi: int) -> int:
        """The least id a move out of a position above `hi` may lead to."""
        assert self.floors is not None
        return floor_above(self.floors, hi)

    def _retrograde(self) -> Retrograde:
        if self.retrograde is None:
            self.retrograde = Retrograde(
                self.paths["positions"], self.paths["transitions"], self.scratch, self.impartial
            )
        return self.retrograde

    def values(self) -> Steps:
        return self._retrograde().values

    def ties(self) -> Steps:
        return self._retrograde().ties

    def grundy(self) -> Steps:
        grundy = self._retrograde().grundy
        assert grundy is not None, "Grundy values are computed for impartial games only"
        return grundy

    def _rest(self, ranked: bool) -> Iterator[pa.RecordBatch]:
        """Rank by rank every row was given already; else the retrograde analysis's state."""
        if ranked:
            return iter(())
        return self._retrograde().solution()

    def write(
        self, ranked: bool, path: Path, schema: pa.Schema, encoding: Encoding, given: Iterator[pa.RecordBatch]
    ) -> int:
        """In this process: the ranks' rows as each is solved, then the rest."""
        return write_batches(itertools.chain(given, self._rest(ranked)), path, schema, encoding)

    def close(self) -> None:
        """Drop what the retrograde analysis holds (its database, its scratch files)."""
        if self.retrograde is not None:
            self.retrograde.close()
            self.retrograde = None
