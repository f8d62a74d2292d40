"""Stage 2: value, remoteness and Grundy value of every position, in DuckDB.

Values and their order of preference: pipeline/values.py (win > tie > draw > loss for the
player to move); the SQL gets their codes and score constants from there as variables.

Where the game gives a rank that every move lowers (positions.parquet's `rank` column;
enumerate then numbers positions rank by rank), positions are solved rank by rank from the
lowest (sql/rank_*.sql): every child of a rank's positions is solved already, so one
INSERT per rank computes value, remoteness, Grundy value and height from the children,
reading each transition once.

Otherwise moves can cycle, and retrograde analysis runs level by level. Level 0 is the
positions where the game is over. Each level joins the positions won or lost at the level
before to their parents (sql/solve_level.sql), so every transition is looked at once in
the whole solve: the work grows with the transitions, not with transitions x depth. Then,
where some finished games are ties, the ties spread the same way to the positions neither
won nor lost (sql/solve_tie_level.sql). Positions never decided are draws.

Grundy values (impartial games only): positions are peeled from those without moves
upwards (sql/grundy_*.sql): each level pushes the values just computed to their parents
through the same reverse adjacency, so again each transition is looked at once. What is
never peeled can reach a cycle and has no Grundy value.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import duckdb
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import dataset, values
from pipeline.db import connect, run_sql, set_variables, sql_text
from pipeline.errors import DataError
from pipeline.layout import RulesetFiles
from pipeline.parquet import require, write_select
from pipeline.progress import Timer, log


#: solution.parquet
SOLUTION = dataset.SOLUTION.schema()


@dataclass(frozen=True)
class Solved:
    levels: int
    decided: int
    positions: int
    grundy_levels: int
    grundy_known: int


def solve(files: RulesetFiles, temp_dir: Path, label: str = "", impartial: bool = True) -> Solved:
    """Read files.positions and files.transitions; write files.solution. Grundy values
    only where `impartial` (Game.impartial); NULL otherwise."""
    require(files.positions, "positions file")
    require(files.transitions, "transitions file")
    label = label or files.dir.name
    with Timer(f"solve {label}"):
        con = connect(temp_dir)
        set_variables(con, impartial=impartial, **values.sql_variables())
        total, ranked = con.execute(
            "SELECT count(*), count(*) > 0 AND count(rank) = count(*) FROM read_parquet(?)", [str(files.positions)]
        ).fetchall()[0]
        if ranked:
            solved = _by_rank(con, files, label, total, impartial)
            con.close()
            return solved
        run_sql(con, "solve_setup", positions=files.positions, transitions=files.transitions)
        with Timer(f"solve {label}: values"):
            levels, decided = _values(con, label, total)
        if impartial:
            with Timer(f"solve {label}: Grundy values"):
                grundy_levels, grundy_known = _grundy(con, files, label, total)
            grundy = "gst.grundy, gst.height FROM st POSITIONAL JOIN gst"
        else:
            grundy_levels, grundy_known = 0, 0
            grundy = "NULL, NULL FROM st"
        # st and gst keep the positions file's order (by id): no sort needed
        write_select(con, f"""
            SELECT st.id, getvariable('value_names')[CASE st.val WHEN 0 THEN getvariable('draw') ELSE st.val END],
                   st.rem, {grundy}""", files.solution, SOLUTION, delta=("id",))
        con.close()
    return Solved(levels, decided, total, grundy_levels, grundy_known)


def _by_rank(con: duckdb.DuckDBPyConnection, files: RulesetFiles, label: str, total: int, impartial: bool) -> Solved:
    run_sql(con, "rank_setup", positions=files.positions)
    dead_ends = con.execute("SELECT count(*) FROM pos WHERE moves = 0 AND terminal IS NULL").fetchall()[0][0]
    if dead_ends:
        raise DataError(f"{files.positions} has {dead_ends:,} positions without moves and without a terminal value")
    ranks = con.execute("SELECT rank, min(id), max(id), count(*) FROM pos GROUP BY rank ORDER BY rank").fetchall()
    if any(hi - lo + 1 != count for _, lo, hi, count in ranks) or any(
        later[1] <= earlier[2] for earlier, later in zip(ranks, ranks[1:])
    ):
        raise DataError(f"{files.positions} is not numbered rank by rank")
    if len(ranks) >= values.BAND - 1:  # remoteness < ranks must fit in one band of sql/rank_level.sql's scores
        raise DataError(f"{files.positions} has {len(ranks):,} ranks, more than this solver handles ({values.BAND - 2:,})")
    level_sql = sql_text("rank_level")
    set_variables(con, transitions=files.transitions)
    done = 0
    with Timer(f"solve {label}: by rank"):
        for rank, lo, hi, count in ranks:
            set_variables(con, lo=lo, hi=hi)
            con.execute(level_sql)
            done += count
            log.info("solve %s: rank %d: %s positions (%s of %s)", label, rank, f"{count:,}", f"{done:,}", f"{total:,}")
    write_select(con, """
        SELECT id, getvariable('value_names')[CASE score // getvariable('band') WHEN 0 THEN getvariable('win')
                                                WHEN 1 THEN getvariable('tie') ELSE getvariable('loss') END],
               CASE score // getvariable('band') WHEN 0 THEN score
                    WHEN 1 THEN 2 * getvariable('band') - 1 - score
                    ELSE 3 * getvariable('band') - 1 - score END,
               grundy, height
        FROM res  -- in id order already (sql/rank_level.sql)""", files.solution, SOLUTION, delta=("id",))
    return Solved(len(ranks), total, total, len(ranks) if impartial else 0, total if impartial else 0)


def _values(con: duckdb.DuckDBPyConnection, label: str, total: int) -> tuple[int, int]:
    frontier = con.sql("SELECT id, val FROM st WHERE val IN (getvariable('win'), getvariable('loss'))").to_arrow_table()
    levels, decided = _by_level(con, frontier, "solve_level", lambda t: pc.greater(t["val"], 0),
                                f"solve {label}: depth %d: %s won or lost (%s of {total:,})")
    frontier = con.sql("SELECT id, val FROM st WHERE val = getvariable('tie')").to_arrow_table()
    if frontier.num_rows:
        tie_levels, tied = _by_level(con, frontier, "solve_tie_level", lambda t: pc.greater(t["val"], 0),
                                     f"solve {label}: tie depth %d: %s tied (%s tied)")
        levels, decided = max(levels, tie_levels), decided + tied
    log.info("solve %s: %s positions never decided are draws", label, f"{total - decided:,}")
    return levels, decided


def _grundy(con: duckdb.DuckDBPyConnection, files: RulesetFiles, label: str, total: int) -> tuple[int, int]:
    run_sql(con, "grundy_setup", positions=files.positions)
    frontier = con.sql("SELECT id, grundy FROM gst WHERE gpending = 0").to_arrow_table()
    levels, known = _by_level(con, frontier, "grundy_level", lambda t: pc.is_valid(t["grundy"]),
                              f"solve {label}: Grundy height %d: %s computed (%s of {total:,})")
    log.info("solve %s: %s positions can reach a cycle: no Grundy value", label, f"{total - known:,}")
    return levels, known


def _by_level(con: duckdb.DuckDBPyConnection, frontier: pa.Table, sql_name: str,
              finished: Callable[[pa.Table], pa.ChunkedArray], progress: str) -> tuple[int, int]:
    """Run sql/<sql_name>.sql level after level on the `frontier` it returns, until empty.

    The statement gets the positions finished on the level before as the table
    `frontier` and the variable `level`; it returns the rows it touched, of which
    `finished` picks the next frontier. Returns the number of levels and of positions
    finished (the first frontier included).
    """
    level_sql = sql_text(sql_name)
    done = frontier.num_rows
    level = 0
    while frontier.num_rows:
        log.info(progress, level, f"{frontier.num_rows:,}", f"{done:,}")
        level += 1
        set_variables(con, level=level)
        con.register("frontier", frontier)
        touched = con.sql(level_sql).to_arrow_table()
        con.unregister("frontier")
        frontier = touched.filter(finished(touched))
        done += frontier.num_rows
    return level, done
