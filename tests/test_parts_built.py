"""The stages with their files as folders of parts (Run.part_rows, pipeline/storage/parts.py):
the same rows as with one file each, the files a lookup reads the same bytes, and a part
changed, gone or added after a stage wrote it refused before the next stage reads it."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import DataError
from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.export import export
from pipeline.stages.run import open_run
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from pipeline.storage import parquet, parts
from pipeline.storage.parquet import read_table

#: A loopy game; an impartial one with Grundy values, solved rank by rank; one streamed.
RULESETS = ["chopsticks", "sticks:rows=4", "connect:cols=3,k=3,rows=3"]
IN_PARTS = ("positions", "transitions", "solution", "tablebase", "index", "lookup")


def staged(root, ruleset, part_rows):
    data, rules = DataDir(root), Ruleset.parse(ruleset)
    files = data.staging(rules)
    with open_run(files, data.temp, rules, store=data, part_rows=part_rows) as run:
        enumerate_ruleset(run)
        solve(run)
        verify(run)
        summary = export(run)
    return files, summary


@pytest.fixture(autouse=True)
def small_row_groups(monkeypatch):
    """Row groups of 16 rows (the index's and the lookup's too), so that the small rulesets' files make parts of 32 rows."""
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 16)
    monkeypatch.setattr("pipeline.stages.export.INDEX_GROUP_ROWS", 16)
    monkeypatch.setattr("pipeline.stages.export.LOOKUP_GROUP_ROWS", 16)


@pytest.mark.parametrize("ruleset", RULESETS)
def test_the_stages_give_the_same_rows_in_parts(tmp_path, ruleset):
    one, whole = staged(tmp_path / "one", ruleset, None)
    cut, summary = staged(tmp_path / "cut", ruleset, 20)
    for kind in IN_PARTS:
        assert not cut.path(kind).exists() and len(parts.parts(cut.path(kind))) > 1, kind
        assert read_table(cut.path(kind)) == read_table(one.path(kind)), kind
        assert summary.__dict__.get(f"{kind}_sha256", parts.sha256(cut.path(kind))) == parts.sha256(cut.path(kind))
    checks = read_table(cut.verification)
    assert set(checks["solution_sha256"].to_pylist()) == {parts.sha256(cut.solution)}
    assert checks.drop(["solution_sha256"]) == read_table(one.verification).drop(["solution_sha256"])
    assert summary.tablebase_path.endswith("/tablebase/part-*.parquet")
    assert summary.transitions_path.endswith("/transitions/part-*.parquet")
    differ = {"tablebase_path", "transitions_path", "verification_sha256", *(f"{kind}_sha256" for kind in IN_PARTS)}
    assert {k: v for k, v in summary.__dict__.items() if k not in differ} == {
        k: v for k, v in whole.__dict__.items() if k not in differ
    }


def damage_changed(folder):
    first = folder / parts.part_name(0)
    pq.write_table(pq.read_table(first).slice(1), first)


def damage_gone(folder):
    sorted(folder.iterdir())[-1].unlink()


def damage_added(folder):
    last = sorted(folder.iterdir())[-1]
    (folder / parts.part_name(int(last.name[5:10]) + 1)).write_bytes(last.read_bytes())


@pytest.mark.parametrize("damage", [damage_changed, damage_gone, damage_added], ids=["changed", "gone", "added"])
def test_a_part_changed_after_a_stage_wrote_it_is_refused(tmp_path, damage):
    data, rules = DataDir(tmp_path), Ruleset.parse("nim:start=1-2-3")
    files = data.staging(rules)
    with open_run(files, data.temp, rules, store=data, part_rows=7) as run:
        enumerate_ruleset(run)
        damage(parts.located(files.transitions))
        with pytest.raises(DataError, match=r"transitions.* build it again"):
            solve(run)
