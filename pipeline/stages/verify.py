"""Stage 3: check that every stored value agrees with its children's values and with the rules.

Like the Syzygy verifier: the solution is not trusted because the solver produced it; each
position's value, remoteness and terminal status is re-derived from its children in one
pass over the moves and compared: on DuckDB a NumPy pass that looks children up by id
(pipeline/engines/arrays.py), on Spark a join (pipeline/sql/spark/verify.sql); neither
shares anything with the solvers' SQL. The result is a table of checks; any failure stops
the build before anything is published.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline.core import values
from pipeline.core.dataset import VERIFICATION
from pipeline.core.errors import DataError, VerificationError
from pipeline.datadir.layout import RulesetFiles
from pipeline.games import POSITION_KEY
from pipeline.stages.run import Run
from pipeline.storage import parts
from pipeline.storage.parquet import read_table, require, sha256, write_table
from pipeline.storage.progress import Stage

#: (check, what it requires, SQL over the view `facts` that is true where it fails). `facts`
#: is each engine's (Engine.facts); the checks are in the SQL both
#: engines share. Values are compared by code ({win}, …: pipeline/core/values.py).
CHECKS: list[tuple[str, str, str]] = [
    ("solved", "every position has a value, one of win, loss, tie, draw", "NOT solved OR code IS NULL"),
    ("children_exist", "every transition leads to a position", "children <> known_children"),
    ("moves_counted", "a position's move count is its number of transitions", "moves <> children"),
    (
        "terminal_has_no_moves",
        "no move leaves a position where the game is over",
        "terminal IS NOT NULL AND children > 0",
    ),
    (
        "dead_end_is_terminal",
        "a position without moves is one where the game is over",
        "terminal IS NULL AND children = 0",
    ),
    (
        "terminal_known",
        "a finished game is won, lost or tied",
        "terminal IS NOT NULL AND (terminal_code IS NULL OR terminal_code = {draw})",
    ),
    (
        "terminal_value",
        "a finished game has the value the rules give it, at remoteness 0",
        "terminal IS NOT NULL AND (value IS DISTINCT FROM terminal OR remoteness IS DISTINCT FROM 0)",
    ),
    (
        "win",
        "a win has a loss child at remoteness one less, and none nearer",
        "terminal IS NULL AND code = {win} AND NOT (loss_children > 0 AND remoteness = min_loss + 1)",
    ),
    (
        "loss",
        "a loss has only win children, the farthest at remoteness one less",
        "terminal IS NULL AND code = {loss} AND NOT (win_children = children AND remoteness = max_win + 1)",
    ),
    (
        "tie",
        "a tie has no loss child and a tie child at remoteness one less, and none nearer",
        "terminal IS NULL AND code = {tie} AND NOT (loss_children = 0 AND tie_children > 0"
        " AND remoteness = min_tie + 1)",
    ),
    (
        "draw",
        "a draw has no loss or tie child, some draw child, and no remoteness",
        "code = {draw} AND NOT (loss_children = 0 AND tie_children = 0 AND draw_children > 0 AND remoteness IS NULL)",
    ),
    (
        "winning_moves",
        "a position's winning moves are its moves to a lost position",
        "winning_moves IS DISTINCT FROM loss_children",
    ),
    (
        "grundy_defined",
        "in an impartial game, a Grundy value exactly where every child has one; else none",
        "(grundy IS NOT NULL OR grundy_height IS NOT NULL) <> (impartial AND grundy_children = children)",
    ),
    (
        "grundy_mex",
        "a Grundy value is the least value no child has",
        "grundy IS NOT NULL AND (grundy_taken OR grundy_below <> grundy)",
    ),
    (
        "grundy_acyclic",
        "a Grundy value's height is one more than its highest child's (no cycle)",
        "grundy IS NOT NULL AND grundy_height IS DISTINCT FROM coalesce(max_child_height + 1, 0)",
    ),
    (
        "grundy_zero_is_loss",
        "under normal play, Grundy value 0 exactly on lost positions",
        "normal_play AND grundy IS NOT NULL AND (grundy = 0) <> (code = {loss})",
    ),
]

VERIFICATION_SCHEMA = VERIFICATION.schema()


def _examples(run: Run, rows: list[tuple]) -> dict[int, str]:
    """The texts of failing positions (rows of the positions file: id, then text or key):
    a keyed space's made from their keys (Space.keyed), or for files alone `key <key>`."""
    if not rows or parts.read_schema(run.files.positions).names[1] != POSITION_KEY.name:
        return {row[0]: row[1] for row in rows}
    if run.rules is None or not (space := run.rules.game.space(run.rules)).keyed:
        return {row[0]: f"key {row[1]}" for row in rows}
    made = space.texts(np.array([row[1] for row in rows], dtype=np.int64)).to_pylist()
    return {row[0]: text for row, text in zip(rows, made)}


def verify(run: Run, published: frozenset[str] = frozenset()) -> pa.Table:
    """Check the run's solution against its positions and transitions (and, where the game
    is not `run.impartial`, that it has no Grundy value).

    Writes the verification file (one row per check) and raises VerificationError if any
    check fails. Where the solution is one of `published` (the digests of the solutions the
    catalog publishes), its verification file is published too and is left as it is: the
    result is compared with it instead (DataError if it says otherwise).
    """
    files, label, impartial = run.files, run.label, run.impartial
    for path, what in (
        (files.positions, "positions file"),
        (files.transitions, "transitions file"),
        (files.solution, "solution file"),
    ):
        require(path, what)
    read = run.reads(files.positions, files.transitions, files.solution)
    codes = {value.value: value.code for value in values.Value}
    positions = parts.read_metadata(files.positions).num_rows
    with Stage(f"verify {label}") as stage:
        db = run.engine
        try:
            for view in ("positions", "transitions", "solution"):
                db.register(view, getattr(files, view))
            conditions = [cond.format(**codes) for _, _, cond in CHECKS]
            # the rows failing some check only: nearly always none, and a scan with one
            # condition is ten times quicker than fifteen filtered aggregates over every row
            failing = " OR ".join(f"({cond})" for cond in conditions)
            columns = ", ".join(f"count(*) FILTER (WHERE {cond}), min(id) FILTER (WHERE {cond})" for cond in conditions)
            # per check: positions failing it, and the least failing id, over every part
            row: list = [0, None] * len(CHECKS)
            done = 0
            stage.phase("checking", 1.0)  # the bar counts the positions checked, part by part
            for held, part in db.check_facts(impartial, f"SELECT {columns} FROM facts WHERE {failing}"):
                for i in range(len(CHECKS)):
                    row[2 * i] += part[2 * i]
                    least = [id_ for id_ in (row[2 * i + 1], part[2 * i + 1]) if id_ is not None]
                    row[2 * i + 1] = min(least, default=None)
                done += held
                stage.count(done, positions)
            first = [id_ for id_ in row[1::2] if id_ is not None]
            examples = f"SELECT * FROM positions WHERE id IN ({', '.join(map(str, first))})"
            texts = _examples(run, db.rows(examples) if first else [])
        finally:
            db.release()
        failures = sum(row[0::2])
        stage.summary = f"{len(CHECKS)} checks on {positions:,} positions, " + (
            f"{failures:,} failures" if failures else "all passed"
        )
    digest = read.get(files.solution) or sha256(files.solution)
    result = pa.Table.from_pylist(
        [
            {
                "check": name,
                "requirement": requirement,
                "failures": row[2 * i],
                "example": texts.get(row[2 * i + 1]),
                "solution_sha256": digest,
            }
            for i, (name, requirement, _) in enumerate(CHECKS)
        ],
        schema=VERIFICATION_SCHEMA,
    )
    if digest in published:  # `tablebase verify` of a published ruleset checks; it never rewrites
        _compare_published(result, files.verification, label)
    else:
        write_table(result, files.verification)
        run.wrote(files.verification)
    failed = [r for r in result.to_pylist() if r["failures"]]
    if failed:
        raise VerificationError(
            f"verification of {label} failed: "
            + "; ".join(f"{r['check']}: {r['failures']:,} positions, e.g. {r['example']}" for r in failed)
        )
    return result


def _compare_published(result: pa.Table, path: Path, label: str) -> None:
    """DataError if the published verification file `path` does not hold `result`'s rows;
    one that cannot be read is left to `tablebase check`, which the command runs next."""
    try:
        rows = read_table(path).to_pylist()
    except (OSError, pa.ArrowException, DataError):
        return
    if rows != result.to_pylist():
        raise DataError(
            f"{path}: the published verification file of {label} does not say what verifying finds "
            f"(`tablebase build {label}` rewrites it)"
        )


def require_verified(files: RulesetFiles) -> None:
    """VerificationError unless files.verification passed for the current files.solution."""
    require(files.verification, "verification file")
    rows = read_table(files.verification).to_pylist()
    if not rows or any(r["failures"] for r in rows):
        raise VerificationError(f"{files.dir.name} did not pass verification: nothing to export")
    if rows[0]["solution_sha256"] != sha256(files.solution):
        raise VerificationError(f"{files.dir.name}: the solution changed since it was verified: run verify")
