"""pipeline/storage/db.py: one in-memory DuckDB database per process and spill folder."""

from __future__ import annotations

from pipeline.storage import db


def test_stages_after_one_that_spilled_still_connect(tmp_path):
    """DuckDB refuses to change its spill folder once it holds files: a big ruleset's
    solve spills, then its verify connects again with the same folder."""
    first = db.connect(tmp_path / "spill", memory_limit="32MB")
    first.execute("SET preserve_insertion_order = false")
    first.execute("CREATE TEMP TABLE big AS SELECT i, md5(i::VARCHAR) AS h FROM range(2000000) t(i)")
    assert first.sql("SELECT count(*) FROM (SELECT DISTINCT h FROM big)").fetchall() == [(2000000,)]
    second = db.connect(tmp_path / "spill", memory_limit="32MB")
    assert second.sql("SELECT 42").fetchall() == [(42,)]
    other = db.connect(tmp_path / "elsewhere", memory_limit="32MB")
    assert other.sql("SELECT 7").fetchall() == [(7,)]
    first.close()
