"""The verifier catches a wrong solution, and nothing unverified is exported."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import VerificationError
from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.export import export
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from tests.staged import staged


@pytest.fixture
def solved(tmp_path):
    rules = Ruleset.parse("chopsticks:split=dead")
    files = DataDir(tmp_path).ruleset(rules)
    staged(enumerate_ruleset, files, rules=rules)
    staged(solve, files, tmp_path / ".tmp")
    return rules, files, tmp_path / ".tmp"


def tamper(path, where, column, value):
    table = pq.read_table(path)
    rows = table.to_pylist()
    for row in rows:
        if where(row):
            row[column] = value
            break
    else:
        raise AssertionError("nothing to tamper with")
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), path)


def test_correct_solution_passes_every_check(solved):
    _, files, temp = solved
    result = staged(verify, files, temp)
    assert result.num_rows >= 8
    assert pc.sum(result["failures"]).as_py() == 0


@pytest.mark.parametrize(
    "where, column, value, check",
    [
        (lambda r: r["value"] == "win" and r["remoteness"] > 2, "remoteness", 1, "win"),
        (lambda r: r["value"] == "loss" and r["remoteness"] > 0, "value", "win", "win"),
        (lambda r: r["value"] == "loss" and r["remoteness"] > 2, "remoteness", 99, "loss"),
        (lambda r: r["value"] == "draw", "value", "loss", "loss"),
        (lambda r: r["value"] == "win" and r["remoteness"] > 1, "value", "draw", "draw"),
        (lambda r: r["remoteness"] == 0, "value", "draw", "terminal_value"),
        (lambda r: r["grundy"] == 1, "grundy", 2, "grundy_mex"),
        (lambda r: r["grundy"] == 0, "grundy", 5, "grundy_mex"),
        (lambda r: r["grundy"] is not None and r["remoteness"] > 0, "grundy_height", 0, "grundy_acyclic"),
        (lambda r: r["grundy"] is None, "grundy", 0, "grundy_defined"),
        (lambda r: r["value"] == "win" and r["remoteness"] > 0, "winning_moves", 0, "winning_moves"),
        (lambda r: r["winning_moves"] == 1, "winning_moves", 2, "winning_moves"),
        (lambda r: r["value"] == "loss" and r["remoteness"] > 0, "winning_moves", 1, "winning_moves"),
    ],
)
def test_tampered_solution_fails_and_is_not_exported(solved, where, column, value, check):
    rules, files, temp = solved
    tamper(files.solution, where, column, value)
    with pytest.raises(VerificationError, match=check):
        staged(verify, files, temp)
    with pytest.raises(VerificationError):
        staged(export, files, temp, rules=rules)
    assert not files.tablebase.exists()


def test_solution_changed_after_verification_is_not_exported(solved):
    rules, files, temp = solved
    staged(verify, files, temp)
    backup = files.solution.with_suffix(".bak")
    shutil.copy(files.solution, backup)
    tamper(files.solution, lambda r: r["value"] == "win", "remoteness", 1000)
    with pytest.raises(VerificationError, match="changed since"):
        staged(export, files, temp, rules=rules)
