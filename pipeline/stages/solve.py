"""Stage 2: win / loss / draw and remoteness of every position, by retrograde analysis in DuckDB.

Level 0 is the terminal positions. Each level joins the positions decided at the level
before to their parents (sql/solve_level.sql), so every transition is looked at once in
the whole solve: the work grows with the transitions, not with transitions x depth.
Positions never decided are draws.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow.compute as pc

from pipeline.db import connect, quote_path, run_sql, set_variables, sql_text
from pipeline.layout import RulesetFiles
from pipeline.parquet import atomic_path, require
from pipeline.progress import Timer, log


@dataclass(frozen=True)
class Solved:
    levels: int
    decided: int
    positions: int


def solve(files: RulesetFiles, temp_dir: Path, label: str = "") -> Solved:
    """Read files.positions and files.transitions; write files.solution."""
    require(files.positions, "positions file")
    require(files.transitions, "transitions file")
    label = label or files.dir.name
    with Timer(f"solve {label}"):
        con = connect(temp_dir)
        run_sql(con, "solve_setup", positions=files.positions, transitions=files.transitions)
        total = con.execute("SELECT count(*) FROM st").fetchall()[0][0]
        frontier = con.sql("SELECT id, val FROM st WHERE val > 0").to_arrow_table()
        decided = frontier.num_rows
        level_sql = sql_text("solve_level")
        level = 0
        while frontier.num_rows:
            log.info("solve %s: depth %d: %s decided (%s of %s)", label, level,
                     f"{frontier.num_rows:,}", f"{decided:,}", f"{total:,}")
            level += 1
            set_variables(con, level=level)
            con.register("frontier", frontier)
            touched = con.sql(level_sql).to_arrow_table()
            con.unregister("frontier")
            frontier = touched.filter(pc.greater(touched["val"], 0))
            decided += frontier.num_rows
        log.info("solve %s: %s positions never decided are draws", label, f"{total - decided:,}")
        with atomic_path(files.solution) as tmp:
            con.execute(
                f"""COPY (
                    SELECT id::BIGINT AS id,
                           CASE val WHEN 1 THEN 'win' WHEN 2 THEN 'loss' ELSE 'draw' END AS value,
                           rem AS remoteness
                    FROM st
                ) TO {quote_path(tmp)} (FORMAT parquet, COMPRESSION zstd)"""
            )
        con.close()
    return Solved(levels=level, decided=decided, positions=total)
