"""A data folder whose rulesets' files are folders of parts (`tablebase build --part-rows`):
it checks, its views, probe, play and the database read it as they read one file each, it
publishes a bundle that checks and that pyarrow, pandas, Polars and DuckDB read, and a part
changed, gone or added is found by `check` and refused by the commands that read it."""

from __future__ import annotations

import shutil
import subprocess
import sys

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import DataError
from pipeline.datadir.layout import BY_KIND, BY_RULESET
from pipeline.games.rulesets import Ruleset
from pipeline.storage import parquet, parts
from pipeline.tablebases import Tablebases

RULESETS = ["chopsticks", "sticks:rows=5"]


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The same rulesets built into two folders: one file a kind, and folders of parts of
    about 48 rows in row groups of 16 rows (the index's and the lookup's too)."""
    one, cut = tmp_path_factory.mktemp("one"), tmp_path_factory.mktemp("cut")
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(parquet, "ROW_GROUP_ROWS", 16)
        patch.setattr("pipeline.stages.export.INDEX_GROUP_ROWS", 16)  # probe and play read across parts
        patch.setattr("pipeline.stages.export.LOOKUP_GROUP_ROWS", 16)
        Tablebases(one).build(*RULESETS)
        Tablebases(cut).build(*RULESETS, part_rows=40)
    return one, cut


@pytest.fixture()
def cut(built, tmp_path):
    """A copy of the folder of parts to damage."""
    copy = tmp_path / "cut"
    shutil.copytree(built[1], copy)
    return copy


def test_the_folder_of_parts_checks_and_reads_as_one_file_a_kind_does(built):
    one, cut = built
    assert Tablebases(cut).check() == []
    tablebase = cut / "chopsticks" / "default" / "tablebase"
    assert not tablebase.with_suffix(".parquet").exists() and len(list(tablebase.iterdir())) > 3
    assert {row.tablebase_path for row in Tablebases(one).catalog()} == {
        "chopsticks/default/tablebase.parquet",
        "sticks/rows-5/tablebase.parquet",
    }
    paths = {row.ruleset: row.tablebase_path for row in Tablebases(cut).catalog()}
    assert paths == {
        "chopsticks": "chopsticks/default/tablebase/part-*.parquet",
        "sticks:rows=5": "sticks/rows-5/tablebase/part-*.parquet",
    }
    query = "SELECT ruleset, value, remoteness, count(*) AS n FROM tablebase GROUP BY ALL ORDER BY ALL"
    assert Tablebases(cut).sql(query) == Tablebases(one).sql(query)
    moves = "SELECT ruleset, src, dst, move FROM transitions ORDER BY ALL"
    assert Tablebases(cut).sql(moves) == Tablebases(one).sql(moves)
    for ruleset in RULESETS:  # every position: the index and the lookup are read across their parts
        texts = Tablebases(one).sql(f"SELECT position FROM tablebase WHERE ruleset = '{ruleset}'")["position"]
        texts = texts.to_pylist()
        assert len(parts.parts(Tablebases(cut).store.published(Ruleset.parse(ruleset)).index)) > 1
        for text in texts:
            assert Tablebases(cut).probe(ruleset, text) == Tablebases(one).probe(ruleset, text), text
    # the database of views, opened from its folder by DuckDB's own client
    counted = "SELECT (SELECT count(*) FROM tablebase), (SELECT count(*) FROM transitions)"
    ours = duckdb.connect(str(cut / "tablebases.duckdb"), read_only=True)
    theirs = duckdb.connect(str(one / "tablebases.duckdb"), read_only=True)
    try:
        ours.execute(f"SET file_search_path = '{cut}'")
        theirs.execute(f"SET file_search_path = '{one}'")
        assert ours.sql(counted).fetchall() == theirs.sql(counted).fetchall()
    finally:
        ours.close()
        theirs.close()


def test_play_reads_the_parts(built):
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", "play", "chopsticks", "--data", str(built[1])],
        input="quit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert "the computer wins in 8 plies" in done.stdout


def test_the_bundle_of_parts_checks_and_every_reader_reads_it(built, tmp_path):
    Tablebases(built[1]).publish(tmp_path / "dist")
    bundle = next(path for path in (tmp_path / "dist").iterdir() if path.is_dir())
    assert Tablebases(bundle).check() == []
    folder = bundle / "tablebase" / "chopsticks" / "default"
    assert sorted(path.name for path in folder.iterdir())[0] == "part-00000.parquet"
    rows = pq.read_table(built[0] / "chopsticks" / "default" / "tablebase.parquet")
    assert pq.read_table(folder).sort_by("id") == rows.sort_by("id")
    glob = str(folder / "part-*.parquet")
    assert duckdb.sql(f"SELECT count(*) FROM read_parquet('{glob}')").fetchall() == [(rows.num_rows,)]
    pandas = pytest.importorskip("pandas")
    polars = pytest.importorskip("polars")
    assert len(pandas.read_parquet(folder)) == rows.num_rows
    assert polars.read_parquet(glob).height == rows.num_rows
    card = (bundle / "DATASET.md").read_text()
    assert "tablebase/chopsticks/*/part-*.parquet" in card  # the Hugging Face config finds the parts


def test_a_part_changed_is_found_and_refused(cut):
    part = cut / "chopsticks" / "default" / "tablebase" / parts.part_name(1)
    table = pq.read_table(part)
    pq.write_table(table.slice(0, table.num_rows - 1), part)
    problems = Tablebases(cut).check()
    assert any(str(part.parent) in line and "differs from the catalog" in line for line in problems), problems
    with pytest.raises(DataError, match="SHA-256 differs") as raised:
        Tablebases(cut).sql("SELECT count(*) FROM tablebase")
    assert f"{part.parent} is not the folder of parts the catalog records" in str(raised.value)  # not tablebase.parquet


def test_a_part_gone_or_added_is_found(cut):
    folder = cut / "sticks" / "rows-5" / "transitions"
    last = sorted(folder.iterdir())[-1]
    extra = folder / parts.part_name(len(list(folder.iterdir())))
    shutil.copy(last, extra)
    said = f"{folder}: its SHA-256 differs from the catalog's"  # one line for the folder
    assert said in Tablebases(cut).check()
    extra.unlink()
    last.unlink()
    assert said in Tablebases(cut).check()
    with pytest.raises(DataError):
        Tablebases(cut).sql("SELECT count(*) FROM transitions")


def test_a_stray_in_a_folder_of_parts_is_named(cut):
    stray = cut / "chopsticks" / "default" / "solution" / "notes.txt"
    stray.write_text("mine")
    assert any(str(stray) in line for line in Tablebases(cut).check())


@pytest.mark.parametrize(
    "layout, name, owner",
    [
        (BY_RULESET, "chopsticks/default/tablebase/part-00003.parquet", ("chopsticks/default", "tablebase")),
        (BY_RULESET, "chopsticks/default/tablebase/part-3.parquet", None),
        (BY_RULESET, "chopsticks/default/notakind/part-00003.parquet", None),
        (BY_KIND, "tablebase/chopsticks/default/part-00003.parquet", ("chopsticks/default", "tablebase")),
        (BY_KIND, "tablebase/chopsticks/default/other.parquet", None),
        (BY_RULESET, "chopsticks/default/index/part-00000.parquet", ("chopsticks/default", "index")),
        (BY_KIND, "lookup/chopsticks/default/part-00000.parquet", ("chopsticks/default", "lookup")),
        (BY_RULESET, "chopsticks/default/summary/part-00000.parquet", None),  # a few rows: one file
        (BY_KIND, "verification/chopsticks/default/part-00000.parquet", None),
    ],
)
def test_each_layout_knows_a_part_for_its_rulesets(layout, name, owner):
    assert layout.owner(name) == owner
