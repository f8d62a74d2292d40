"""The DuckDB engine: one in-process database per stage, the default on one machine.

The solvers' SQL is in pipeline/sql/duckdb/: state lives in temporary tables updated in
place (UPDATE … RETURNING gives each level's newly decided positions), and the level loops
pass the frontier in as an Arrow table. Verify's facts and export's reachable positions,
which look every move's child up by id, are NumPy passes (pipeline/engines/arrays.py):
an id is an index there, where SQL hash-joins every move.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Iterator

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import values
from pipeline.engines import arrays, by_id_join
from pipeline.db import connect, quote_path, run_sql, set_variables, sql_text
from pipeline.parquet import read_table, write_select


class DuckDBEngine:
    name = "duckdb"

    def __init__(self, temp_dir: Path):
        self.con = connect(temp_dir)
        self.paths: dict[str, Path] = {}
        set_variables(self.con, **values.sql_variables())

    def register(self, view: str, path: Path) -> None:
        set_variables(self.con, **{view: path})
        self.paths[view] = path
        self.con.execute(f"CREATE OR REPLACE TEMP VIEW {view} AS SELECT * FROM read_parquet({quote_path(path)})")

    def rows(self, sql: str) -> list[tuple]:
        return self.con.execute(sql).fetchall()

    def write(self, sql: str, path: Path, schema: pa.Schema, delta: tuple[str, ...] = ()) -> int:
        return write_select(self.con, sql, path, schema, delta=delta)

    def transitions(self, rules: Any, space: Any, numbering: Any, bound: int, scratch: Path,
                    generated: Callable[[int], None] | None = None) -> Iterator[pa.RecordBatch]:
        """The game's generators run in this process (DuckDB is not needed for that)."""
        from pipeline.stages.enumerate import in_process

        return in_process(space, numbering, scratch, generated)

    def solver(self, impartial: bool) -> "DuckDBSolver":
        return DuckDBSolver(self, impartial)

    def facts(self, impartial: bool) -> None:
        """Verify's facts by NumPy passes (pipeline/engines/arrays.py): ids are indexes."""
        self.con.register("facts", arrays.verify_facts(
            self.paths["positions"], self.paths["transitions"], self.paths["solution"], impartial))

    def reach(self, starts: list[int]) -> "Reached":
        """The table `reach` (id, seen) by a NumPy pass (pipeline/engines/arrays.py)."""
        seen = arrays.reachable(self.paths["positions"], self.paths["transitions"], np.array(starts, np.int64))
        ids = read_table(self.paths["positions"], columns=["id"])["id"]
        self.con.register("reach", pa.table({"id": ids, "seen": seen}))
        return Reached(int(seen.sum()))

    def by_id(self, views: dict[str, str]) -> tuple[str, str]:
        """Side by side row for row (POSITIONAL JOIN: no hash join, no sort) where every
        view holds the same ids in the same ascending order, as the stages write them."""
        ids = [self.con.sql(f"SELECT id FROM {view}").to_arrow_table()["id"].to_numpy() for view in views.values()]
        if all(np.array_equal(ids[0], other) for other in ids[1:]) and np.all(ids[0][1:] > ids[0][:-1]):
            (first, positions), *others = views.items()
            return positions + " AS " + first + "".join(f" POSITIONAL JOIN {view} AS {alias}" for alias, view in others), ""
        return by_id_join(views)

    def close(self) -> None:
        self.con.close()


class Reached:
    """Steps that are done at once: what a single pass found."""

    def __init__(self, count: int):
        self.count = count

    def first(self) -> int:
        return self.count

    def step(self, level: int) -> int:
        return 0


class Levels:
    """Steps over one of sql/duckdb/'s level statements: it gets the positions finished
    on the level before as the table `frontier` and the variable `level`, and returns the
    rows it touched, of which `finished` picks the next frontier."""

    def __init__(self, con, first: Callable[[], pa.Table], sql_name: str,
                 finished: Callable[[pa.Table], pa.ChunkedArray]):
        self.con, self._first, self.sql, self.finished = con, first, sql_text(sql_name), finished
        self.frontier = pa.table({})

    def first(self) -> int:
        self.frontier = self._first()
        return self.frontier.num_rows

    def step(self, level: int) -> int:
        set_variables(self.con, level=level)
        self.con.register("frontier", self.frontier)
        touched = self.con.sql(self.sql).to_arrow_table()
        self.con.unregister("frontier")
        self.frontier = touched.filter(self.finished(touched))
        return self.frontier.num_rows


#: Solving rank by rank, transitions files of at most this many moves are read once into
#: memory (128 MB as two INTEGER columns) rather than a rank at a time: sticks:rows=10's
#: 56 ranks read their moves in 0.2 s instead of 0.6.
LOAD_MOVES = 1 << 24


class DuckDBSolver:
    """sql/duckdb/rank_*.sql where positions have a rank, else solve_*.sql (values, then
    ties) and grundy_*.sql."""

    def __init__(self, engine: DuckDBEngine, impartial: bool):
        self.con = engine.con
        self.paths = engine.paths
        self.impartial = impartial
        set_variables(self.con, impartial=impartial)
        self._level_sql = None
        self._setup = False

    def ranks(self) -> list[tuple[int, int, int, int]]:
        run_sql(self.con, "rank_setup")
        if pq.read_metadata(self.paths["transitions"]).num_rows <= LOAD_MOVES:
            run_sql(self.con, "rank_load")
        self._level_sql = sql_text("rank_level")
        return self.con.execute("SELECT rank, min(id), max(id), count(*) FROM pos GROUP BY rank ORDER BY rank").fetchall()

    def rank(self, lo: int, hi: int) -> None:
        set_variables(self.con, lo=lo, hi=hi)
        self.con.execute(self._level_sql)

    def _retrograde(self) -> None:
        if not self._setup:
            run_sql(self.con, "solve_setup")
            self._setup = True

    def values(self) -> Levels:
        self._retrograde()
        return Levels(self.con, lambda: self.con.sql(
            "SELECT id, val FROM st WHERE val IN (getvariable('win'), getvariable('loss'))").to_arrow_table(),
            "solve_level", lambda t: pc.greater(t["val"], 0))

    def ties(self) -> Levels:
        self._retrograde()
        return Levels(self.con, lambda: self.con.sql(
            "SELECT id, val FROM st WHERE val = getvariable('tie')").to_arrow_table(),
            "solve_tie_level", lambda t: pc.greater(t["val"], 0))

    def grundy(self) -> Levels:
        self._retrograde()

        def first() -> pa.Table:
            run_sql(self.con, "grundy_setup")
            return self.con.sql("SELECT id, grundy FROM gst WHERE gpending = 0").to_arrow_table()

        return Levels(self.con, first, "grundy_level", lambda t: pc.is_valid(t["grundy"]))

    def write(self, path: Path, schema: pa.Schema, ranked: bool) -> None:
        if ranked:
            select = """
                SELECT id, getvariable('value_names')[CASE score // getvariable('band') WHEN 0 THEN getvariable('win')
                                                        WHEN 1 THEN getvariable('tie') ELSE getvariable('loss') END],
                       CASE score // getvariable('band') WHEN 0 THEN score
                            WHEN 1 THEN 2 * getvariable('band') - 1 - score
                            ELSE 3 * getvariable('band') - 1 - score END,
                       grundy, height
                FROM res  -- in id order already (sql/duckdb/rank_level.sql)"""
        else:
            # st and gst keep the positions file's order (by id): no sort needed
            grundy = "gst.grundy, gst.height FROM st POSITIONAL JOIN gst" if self.impartial else "NULL, NULL FROM st"
            select = f"""
                SELECT st.id, getvariable('value_names')[CASE st.val WHEN 0 THEN getvariable('draw') ELSE st.val END],
                       st.rem, {grundy}"""
        write_select(self.con, select, path, schema, delta=("id",))
