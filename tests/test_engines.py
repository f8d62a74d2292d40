"""The engine seam (pipeline/engines/): one session a build, handed to every stage, and what
differs between the engines declared by each, asked nowhere else."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.datadir.layout import DataDir
from pipeline.engines import engine_kind, explain
from pipeline.engines.duckdb_engine import DuckDBEngine
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.run import open_run
from pipeline.stages.solve import solve

PIPELINE = Path(__file__).resolve().parent.parent / "pipeline"


def test_a_build_opens_one_engine_session_for_all_its_stages(tmp_path, monkeypatch):
    opened = []
    real = DuckDBEngine.__init__

    def counted(self, temp_dir):
        opened.append(temp_dir)
        real(self, temp_dir)

    monkeypatch.setattr(DuckDBEngine, "__init__", counted)
    summary = build(Ruleset.parse("sticks:rows=3"), DataDir(tmp_path), engine=engine_kind("duckdb"))
    assert summary["positions"] > 0
    assert len(opened) == 1, opened


def test_a_stage_leaves_the_session_as_it_found_it(tmp_path):
    """The solver's tables go when the solve ends: verify and export do not carry them."""
    rules = Ruleset.parse("chopsticks:split=any")
    files = DataDir(tmp_path).ruleset(rules)
    with open_run(files, tmp_path / "tmp", rules, engine_kind("duckdb")) as run:
        enumerate_ruleset(run)
        solve(run)
        left = run.engine.con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone()[0]
        views = run.engine.con.execute(
            "SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal"
        ).fetchone()[0]
    assert (left, views) == (0, 0)


def test_no_module_outside_the_engines_asks_which_engine_it_is():
    """Each engine declares what differs (pipeline/engines/base.py's Engine); the rest of the
    pipeline names none of them."""
    named = re.compile(r"pipeline\.engines\.(duckdb|spark)_engine|engine_name\(|== \"(duckdb|spark)\"")
    found = [
        f"{path.relative_to(PIPELINE)}:{number}"
        for path in sorted(PIPELINE.rglob("*.py"))
        if path.parent.name != "engines"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if named.search(line)
    ]
    assert found == []


def test_spark_explains_its_own_errors_and_duckdb_leaves_its_to_the_command_line():
    pytest.importorskip("pyspark")
    import pipeline.engines.spark_engine  # noqa: F401 - an error can only be Spark's once it is loaded

    class Py4JJavaError(Exception):
        pass

    Py4JJavaError.__module__ = "py4j.protocol"
    error = Py4JJavaError("An error occurred\n: java.lang.IllegalStateException: the session was stopped\n\tat x")
    assert explain(error) == ("Spark failed", "the session was stopped")
    assert explain(ValueError("not an engine's")) is None
