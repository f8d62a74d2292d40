"""The data folder as the readers people use take it: each test is a one-liner a user would type.

DuckDB, pyarrow, Polars and pandas read the published files as they are, one file or one
game's files at once, and data/tablebases.duckdb opens from its own folder, from elsewhere
with `file_search_path`, with the oldest DuckDB its storage format promises, and after the
folder is copied. Every answer is checked: rows against the catalog's counts, columns
against pipeline/core/dataset.py, with no column added on the way.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import subprocess
import sys
from glob import glob
from pathlib import Path

import duckdb
import pandas as pd
import polars as pl
import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq
import pytest

from pipeline.core.dataset import CATALOG, POSITIONS, RULESET_FILES, TRANSITIONS, FileKind, game_fields
from pipeline.datadir.layout import DataDir
from pipeline.datadir.views import FOREIGN, connect_views
from pipeline.games import find_game
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from tests.documentation import sql_blocks

ROOT = Path(__file__).resolve().parent.parent
#: DuckDB 1.1.3, installed beside the venv's own by `make install` (see the Makefile).
OLD_DUCKDB = ROOT / ".venv" / "duckdb-1.1"

#: Several games, two rulesets or more of most, one with a hashed slug: small and fast.
RULESETS = [
    "chopsticks",
    "chopsticks:split=any",
    "sticks:rows=3",
    "sticks:rows=4",
    "nim",
    "nim:variant=arrow",
    "hackenbush:tree=1:2/3;2:4",
]
#: Another data folder's rulesets: none of the ones above.
OTHER_RULESETS = ["sticks:rows=2", "chopsticks:overflow=rollover"]
#: Games with several rulesets above, for the readers that take one game's files at once.
SEVERAL = ["chopsticks", "sticks", "nim"]
KINDS = {kind.name: kind for kind in RULESET_FILES}
VIEWS = ("catalog", "tablebase", "transitions")


def build_into(data: Path, rulesets: list[str]) -> Path:
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    for ruleset in rulesets:
        build(Ruleset.parse(ruleset), DataDir(data))
    return data


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """<project>/data holding RULESETS; tests that read `data/...` run in <project>."""
    return build_into(tmp_path_factory.mktemp("project") / "data", RULESETS)


@pytest.fixture(scope="module")
def other(tmp_path_factory) -> Path:
    """Another data folder, built with OTHER_RULESETS."""
    return build_into(tmp_path_factory.mktemp("other") / "data", OTHER_RULESETS)


@pytest.fixture(scope="module")
def superset(data, tmp_path_factory) -> Path:
    """A copy of `data` with one more ruleset: every file the copied views name is there,
    but the catalog differs."""
    copy = Path(shutil.copytree(data, tmp_path_factory.mktemp("superset") / "data"))
    return build_into(copy, ["sticks:rows=2"])


@pytest.fixture
def in_project(data, monkeypatch) -> Path:
    """The working directory is the data folder's parent, as after `make all`."""
    monkeypatch.chdir(data.parent)
    return data


@pytest.fixture(scope="module")
def catalog(data) -> list[dict]:
    return pq.read_table(data / "catalog.parquet").to_pylist()


# -- what the answers must be ------------------------------------------------------------


def counts(catalog: list[dict], column: str, game: str | None = None) -> dict[str, int]:
    """The catalog's `column` (positions, transitions) by ruleset, of one game or all."""
    return {row["ruleset"]: row[column] for row in catalog if game in (None, row["game"])}


def documented_names(kind: FileKind, game: str) -> list[str]:
    """The column names pipeline/core/dataset.py documents for a file of `kind` of `game`."""
    middle = list(find_game(game).columns) if kind.game_columns else []
    return [c.name for c in kind.head] + middle + [c.name for c in kind.tail]


def games(catalog: list[dict]) -> list[str]:
    return sorted({row["game"] for row in catalog})


def files(game: str, kind: str) -> list[str]:
    """One game's files of one kind, as a user globs them from the project folder."""
    return sorted(glob(f"data/{game}/*/{kind}.parquet"))


def by_ruleset(rows) -> dict[str, int]:
    return {str(ruleset): count for ruleset, count in rows}


# -- DuckDB ------------------------------------------------------------------------------


def test_one_file_read_alone_adds_no_column(in_project, catalog):
    for row in catalog:
        for kind in KINDS.values():
            path = f"data/{row['folder']}/{kind.name}.parquet"
            columns = duckdb.sql(f"FROM '{path}'").columns
            assert columns == pq.read_schema(path).names, path
            assert columns == documented_names(kind, row["game"]), path
        assert duckdb.sql(f"SELECT count(*) FROM 'data/{row['tablebase_path']}'").fetchall() == [(row["positions"],)]


@pytest.mark.parametrize("game", SEVERAL)
def test_one_game_glob_reads_every_ruleset_without_union_by_name(in_project, catalog, game):
    tablebase = duckdb.sql(f"FROM 'data/{game}/*/tablebase.parquet'")
    assert tablebase.columns == documented_names(KINDS["tablebase"], game)
    assert by_ruleset(
        duckdb.sql(f"SELECT ruleset, count(*) FROM 'data/{game}/*/tablebase.parquet' GROUP BY ALL").fetchall()
    ) == counts(catalog, "positions", game)
    transitions = duckdb.sql(f"FROM 'data/{game}/*/transitions.parquet'")
    assert transitions.columns == documented_names(TRANSITIONS, game)
    assert by_ruleset(
        duckdb.sql(f"SELECT ruleset, count(*) FROM 'data/{game}/*/transitions.parquet' GROUP BY ALL").fetchall()
    ) == counts(catalog, "transitions", game)


def check_views(con: duckdb.DuckDBPyConnection, catalog: list[dict]) -> None:
    """The three views answer with every ruleset's rows and the documented columns only."""
    assert con.sql("FROM catalog").columns == CATALOG.schema().names
    assert sorted(con.sql("SELECT ruleset FROM catalog").fetchall()) == sorted((r["ruleset"],) for r in catalog)
    tablebase = con.sql("FROM tablebase").columns
    every_game = {name for game in games(catalog) for name in documented_names(KINDS["tablebase"], game)}
    assert sorted(tablebase) == sorted(every_game)  # each once, nothing else
    assert by_ruleset(con.sql("SELECT ruleset, count(*) FROM tablebase GROUP BY ALL").fetchall()) == counts(
        catalog, "positions"
    )
    assert con.sql("FROM transitions").columns == TRANSITIONS.schema().names
    assert by_ruleset(con.sql("SELECT ruleset, count(*) FROM transitions GROUP BY ALL").fetchall()) == counts(
        catalog, "transitions"
    )


def test_in_memory_views_read_every_ruleset(data, catalog):
    with connect_views(data) as con:
        check_views(con, catalog)


def test_database_file_works_from_its_own_folder(data, catalog, monkeypatch):
    monkeypatch.chdir(data)
    with duckdb.connect("tablebases.duckdb", read_only=True) as con:
        check_views(con, catalog)


def test_database_file_works_from_elsewhere_with_file_search_path(data, catalog, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with duckdb.connect(str(data / "tablebases.duckdb"), read_only=True) as con:
        con.execute("SET file_search_path = ?", [str(data)])
        check_views(con, catalog)


#: Each view's comment and what DuckDB says when it reads `catalog` from elsewhere.
COMMENTS_READER = """
import json, sys, duckdb
con = duckdb.connect(sys.argv[1], read_only=True)
try:
    con.sql("SELECT count(*) FROM catalog").fetchall()
except duckdb.Error as error:
    refused = str(error)
print(json.dumps({
    "version": duckdb.__version__,
    "comments": dict(con.sql("SELECT view_name, comment FROM duckdb_views() WHERE NOT internal").fetchall()),
    "refused": refused,
}))
"""


@pytest.mark.parametrize("old", [True, False], ids=["duckdb-1.1", "duckdb-own"])
def test_each_view_says_how_to_open_the_database_from_elsewhere(data, tmp_path, old):
    """Opened from a folder without its files, DuckDB names neither the folder nor the
    setting that would find them; duckdb_views() does."""
    if old and not (OLD_DUCKDB / "duckdb").is_dir():
        pytest.fail(f"DuckDB 1.1.3 is not installed in {OLD_DUCKDB}: run `make dev`", pytrace=False)
    env = {**os.environ, "PYTHONPATH": str(OLD_DUCKDB)} if old else None
    done = subprocess.run(
        [sys.executable, "-c", COMMENTS_READER, str(data / "tablebases.duckdb")],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["version"] == "1.1.3") == old
    assert sorted(answer["comments"]) == sorted(VIEWS)
    assert 'No files found that match the pattern "catalog.parquet"' in answer["refused"]
    for comment in answer["comments"].values():
        assert "SET file_search_path" in comment and answer["refused"].split(": ", 1)[1] in comment


@pytest.mark.parametrize("args", [["sql", "SELECT count(*) FROM catalog"], ["probe", "chopsticks", "start"]])
def test_the_database_named_as_the_data_folder_names_its_folder(data, args):
    """It said `nothing is built in …/tablebases.duckdb: …/tablebases.duckdb/catalog.parquet is missing`."""
    done = subprocess.run(
        [sys.executable, "-m", "pipeline", *args, "--data", str(data / "tablebases.duckdb")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert done.returncode == 1 and done.stdout == ""
    assert done.stderr == (
        f"error: {data / 'tablebases.duckdb'} is the database of views over a data folder, not the folder: "
        f"name the folder it is in with --data {data}\n"
    )


# -- pyarrow -----------------------------------------------------------------------------


def grouped(table: pa.Table) -> dict[str, int]:
    rows = table.group_by("ruleset").aggregate([("ruleset", "count")]).to_pylist()
    return by_ruleset((r["ruleset"], r["ruleset_count"]) for r in rows)


@pytest.mark.parametrize("game", SEVERAL)
def test_pyarrow_dataset_reads_one_games_tablebases(in_project, catalog, game):
    dataset = ds.dataset(sorted(glob(f"data/{game}/*/tablebase.parquet")))
    assert dataset.schema.names == documented_names(KINDS["tablebase"], game)
    assert grouped(dataset.to_table()) == counts(catalog, "positions", game)


@pytest.mark.parametrize("game", SEVERAL)
def test_pyarrow_dataset_reads_one_games_transitions(in_project, catalog, game):
    dataset = ds.dataset(sorted(glob(f"data/{game}/*/transitions.parquet")))
    assert dataset.schema.names == documented_names(TRANSITIONS, game)
    for ruleset, transitions in counts(catalog, "transitions", game).items():
        assert dataset.count_rows(filter=ds.field("ruleset") == ruleset) == transitions


@pytest.mark.parametrize("game", SEVERAL)
def test_pyarrow_groups_one_games_transitions_by_ruleset(in_project, catalog, game):
    table = ds.dataset(sorted(glob(f"data/{game}/*/transitions.parquet"))).to_table()
    assert grouped(table) == counts(catalog, "transitions", game)


@pytest.mark.parametrize("game", SEVERAL)
def test_pyarrow_hive_partitioning_adds_no_column(in_project, catalog, game):
    dataset = ds.dataset(
        sorted(glob(f"data/{game}/*/tablebase.parquet")), partitioning="hive", partition_base_dir=f"data/{game}"
    )
    assert dataset.schema.names == documented_names(KINDS["tablebase"], game)
    assert dataset.count_rows() == sum(counts(catalog, "positions", game).values())


def test_pyarrow_read_table_of_one_file(in_project, catalog):
    for row in catalog:
        table = pq.read_table(f"data/{row['tablebase_path']}")
        assert table.schema.names == documented_names(KINDS["tablebase"], row["game"])
        assert table.num_rows == row["positions"]
        assert table.column("ruleset").unique().to_pylist() == [row["ruleset"]]


# -- Polars ------------------------------------------------------------------------------


@pytest.mark.parametrize("hive_partitioning", [None, True])
@pytest.mark.parametrize("game", SEVERAL)
def test_polars_scans_one_game_lazily(in_project, catalog, game, hive_partitioning):
    scan = pl.scan_parquet(f"data/{game}/*/tablebase.parquet", hive_partitioning=hive_partitioning)
    assert scan.collect_schema().names() == documented_names(KINDS["tablebase"], game)
    rows = scan.group_by("ruleset").len().collect()
    assert dict(rows.iter_rows()) == counts(catalog, "positions", game)


@pytest.mark.parametrize("game", SEVERAL)
def test_polars_merges_dictionary_columns_across_rulesets(in_project, catalog, game):
    """`ruleset` and `move` are stored dictionary-encoded, a dictionary per file."""
    moves = pl.scan_parquet(f"data/{game}/*/transitions.parquet").collect()
    assert moves.columns == TRANSITIONS.schema().names
    assert dict(moves.group_by("ruleset").len().iter_rows()) == counts(catalog, "transitions", game)
    for path in files(game, "transitions"):  # every move keeps its own file's text
        expected = pq.read_table(path).to_pylist()
        ruleset = expected[0]["ruleset"]
        assert moves.filter(pl.col("ruleset") == ruleset).to_dicts() == expected, path


def as_dict(entries) -> dict:
    """A map value as a dict, whether a reader gives a dict, pairs or key/value structs."""
    if isinstance(entries, dict):
        return entries
    return dict((e["key"], e["value"]) if isinstance(e, dict) else e for e in entries)


def test_polars_reads_the_catalog_with_its_map_column(in_project, catalog):
    read = pl.read_parquet("data/catalog.parquet")
    assert read.columns == CATALOG.schema().names
    assert read.height == len(catalog)
    assert [as_dict(p) for p in read["params"].to_list()] == [as_dict(r["params"]) for r in catalog]
    assert as_dict(read.filter(pl.col("ruleset") == "chopsticks:split=any")["params"][0])["split"] == "any"


# -- pandas ------------------------------------------------------------------------------


def test_pandas_reads_one_file(in_project, catalog):
    for row in catalog:
        frame = pd.read_parquet(f"data/{row['tablebase_path']}")
        assert list(frame.columns) == documented_names(KINDS["tablebase"], row["game"])
        assert len(frame) == row["positions"]
        assert int(frame["remoteness"].isna().sum()) == row["draws"]  # NULL stays missing


@pytest.mark.parametrize("game", SEVERAL)
def test_pandas_concat_of_one_games_files(in_project, catalog, game):
    frame = pd.concat([pd.read_parquet(path) for path in files(game, "tablebase")], ignore_index=True)
    assert list(frame.columns) == documented_names(KINDS["tablebase"], game)
    assert frame.groupby("ruleset").size().to_dict() == counts(catalog, "positions", game)


@pytest.mark.parametrize("game", SEVERAL)
def test_pandas_reads_a_list_of_one_games_files(in_project, catalog, game):
    for kind, column in (("tablebase", "positions"), ("transitions", "transitions")):
        frame = pd.read_parquet(files(game, kind))
        assert list(frame.columns) == documented_names(KINDS[kind], game)
        sizes = frame.groupby("ruleset", observed=True).size().to_dict()
        assert {str(k): v for k, v in sizes.items()} == counts(catalog, column, game)


# -- schemas -----------------------------------------------------------------------------


@pytest.mark.parametrize("kind", list(KINDS), ids=str)
def test_every_file_of_a_kind_and_game_has_the_documented_schema(data, catalog, kind):
    for game in games(catalog):
        paths = sorted(data.glob(f"{game}/*/{kind}.parquet"))
        assert len(paths) == len(counts(catalog, "positions", game))
        decoded = game_fields(pq.read_schema(paths[0].parent / "positions.parquet"), POSITIONS)
        assert [f.name for f in decoded] == list(find_game(game).columns)
        documented = KINDS[kind].schema(decoded)
        for path in paths:
            schema = pq.read_schema(path)
            assert schema.equals(documented), f"{path}:\n{schema}\ndocumented:\n{documented}"
            # identical, nested field names and nullability included
            assert schema.to_string(show_schema_metadata=False) == pq.read_schema(paths[0]).to_string(
                show_schema_metadata=False
            ), path


def test_catalog_has_the_documented_schema(data):
    assert pq.read_schema(data / "catalog.parquet").equals(CATALOG.schema())


# -- the database with the oldest DuckDB it promises -------------------------------------

OLD_READER = """
import json, duckdb
con = duckdb.connect("tablebases.duckdb", read_only=True)
print(json.dumps({
    "version": duckdb.__version__,
    **{view: con.sql(f"SELECT ruleset, count(*) FROM {view} GROUP BY ALL").fetchall() for view in %r},
    **{view + "_columns": con.sql(f"FROM {view}").columns for view in %r},
    "positions": con.sql("SELECT ruleset, positions FROM catalog").fetchall(),
}))
""" % (VIEWS, VIEWS)  # noqa: UP031 - with %r the script's own braces stay as they are


def test_database_file_opens_with_duckdb_1_1(data, catalog):
    if not (OLD_DUCKDB / "duckdb").is_dir():
        pytest.fail(f"DuckDB 1.1.3 is not installed in {OLD_DUCKDB}: run `make install`", pytrace=False)
    env = {**os.environ, "PYTHONPATH": str(OLD_DUCKDB)}
    done = subprocess.run([sys.executable, "-c", OLD_READER], cwd=data, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert answer["version"] == "1.1.3"
    assert by_ruleset(answer["catalog"]) == {r["ruleset"]: 1 for r in catalog}
    assert by_ruleset(answer["positions"]) == counts(catalog, "positions")
    assert by_ruleset(answer["tablebase"]) == counts(catalog, "positions")
    assert by_ruleset(answer["transitions"]) == counts(catalog, "transitions")
    assert answer["catalog_columns"] == CATALOG.schema().names
    assert sorted(answer["tablebase_columns"]) == sorted(
        {name for game in games(catalog) for name in documented_names(KINDS["tablebase"], game)}
    )
    assert answer["transitions_columns"] == TRANSITIONS.schema().names


#: The documentation's way to read one parameter of the catalog's map, on every DuckDB version
#: (docs/reference/dataset.md).
PARAMS_SQL = [block for block in sql_blocks().values() if "element_at(params" in block]

PARAMS_READER = """
import json, sys, duckdb
con = duckdb.connect("tablebases.duckdb", read_only=True)
print(json.dumps({
    "version": duckdb.__version__,
    "rows": con.sql(sys.argv[1]).fetchall(),
    "subscript": con.sql("SELECT params['split'] FROM catalog WHERE ruleset = 'chopsticks:split=any'").fetchall()[0][0],
}))
"""


@pytest.mark.parametrize("old", [True, False], ids=["duckdb-1.1", "duckdb-own"])
def test_the_readmes_params_lines_read_the_text_on_duckdb_1_1_and_the_projects_own(data, catalog, old):
    if old and not (OLD_DUCKDB / "duckdb").is_dir():
        pytest.fail(f"DuckDB 1.1.3 is not installed in {OLD_DUCKDB}: run `make dev`", pytrace=False)
    env = (
        {**os.environ, "PYTHONPATH": str(OLD_DUCKDB)}
        if old
        else {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    )
    assert len(PARAMS_SQL) == 1, "the documentation shows how to read the catalog's params on every DuckDB"
    done = subprocess.run(
        [sys.executable, "-c", PARAMS_READER, PARAMS_SQL[0]], cwd=data, env=env, capture_output=True, text=True
    )
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert (answer["version"] == "1.1.3") == old
    expected = sorted(
        [row["ruleset"], dict(row["params"]).get("fingers"), dict(row["params"]).get("split")]
        for row in catalog
        if row["game"] == "chopsticks"
    )
    assert answer["rows"] == expected and expected[0][1] == "5"
    # what the README warns of: DuckDB 1.1's subscript gives a list, later ones the text
    assert answer["subscript"] == (["any"] if old else "any")


# -- the folder moved --------------------------------------------------------------------


def test_copied_folder_database_reads_the_copy(data, catalog, tmp_path, monkeypatch):
    copy = Path(shutil.copytree(data, tmp_path / "elsewhere" / "data"))
    # The copy's chopsticks tablebase cut to 10 rows: a view that showed 224 would read the original.
    cut = copy / "chopsticks" / "default" / "tablebase.parquet"
    pq.write_table(pq.read_table(cut).slice(0, 10), cut)
    monkeypatch.chdir(copy)
    with duckdb.connect("tablebases.duckdb", read_only=True) as con:
        read = by_ruleset(con.sql("SELECT ruleset, count(*) FROM tablebase GROUP BY ALL").fetchall())
        assert read == {**counts(catalog, "positions"), "chopsticks": 10}
        assert by_ruleset(con.sql("SELECT ruleset, count(*) FROM transitions GROUP BY ALL").fetchall()) == counts(
            catalog, "transitions"
        )
        views = con.sql("SELECT sql FROM duckdb_views() WHERE NOT internal").fetchall()
        assert not [sql for (sql,) in views if str(data) in sql]  # no path of the original folder


def test_the_database_is_written_from_a_folder_holding_another_catalog(data, catalog, tmp_path, monkeypatch):
    """DuckDB looks for the views' files in the working directory first: the database written
    from one holding another data folder's catalog once failed its own check, and the build with it."""
    from pipeline.datadir.views import write_database

    copy = Path(shutil.copytree(data, tmp_path / "copy"))
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    shutil.copy(data / "catalog.parquet", elsewhere)
    pq.write_table(pq.read_table(elsewhere / "catalog.parquet").slice(0, 1), elsewhere / "catalog.parquet")
    monkeypatch.chdir(elsewhere)
    write_database(copy)
    monkeypatch.chdir(copy)
    with duckdb.connect("tablebases.duckdb", read_only=True) as con:
        read = by_ruleset(con.sql("SELECT ruleset, count(*) FROM tablebase GROUP BY ALL").fetchall())
    assert read == counts(catalog, "positions")


@pytest.fixture
def copied(data, tmp_path) -> Path:
    """The database of a copy of `data`."""
    return Path(shutil.copytree(data, tmp_path / "copy" / "data")) / "tablebases.duckdb"


FOLDERS_AND_VIEWS = [(folder, view) for folder in ("superset", "other") for view in VIEWS]


@pytest.mark.parametrize(("folder", "view"), FOLDERS_AND_VIEWS)
def test_copied_database_never_reads_another_data_folder(copied, monkeypatch, request, folder, view):
    """`superset`: every file the views name is there, under another catalog; `other`: other rulesets."""
    monkeypatch.chdir(request.getfixturevalue(folder))
    with duckdb.connect(str(copied), read_only=True) as con, pytest.raises(duckdb.Error):
        con.sql(f"SELECT count(*) FROM {view}").fetchall()


@pytest.mark.parametrize(("folder", "view"), FOLDERS_AND_VIEWS)
def test_copied_database_says_it_is_in_another_data_folder(copied, monkeypatch, request, folder, view):
    """Where the files the view names are there, the guard speaks; where one is missing,
    DuckDB fails on it first, naming the relative path it looked for (it binds the file
    list before any condition runs). Either way nothing is read."""
    monkeypatch.chdir(request.getfixturevalue(folder))
    missing = folder == "other" and view != "catalog"
    with duckdb.connect(str(copied), read_only=True) as con:
        expected = (
            "No files found that match the pattern" if missing else "catalog.parquet in this folder is not the one"
        )
        with pytest.raises(duckdb.Error, match=expected) as refused:
            con.sql(f"SELECT count(*) FROM {view}").fetchall()
    assert missing or FOREIGN in str(refused.value)


def test_the_database_never_mixes_files_of_two_folders(copied, tmp_path, monkeypatch):
    """A working directory holding one of the files must not stand in for the database's
    own folder, even with file_search_path pointing there."""
    own = copied.parent
    row = pq.read_table(own / "catalog.parquet").to_pylist()[0]
    partial = tmp_path / "partial"
    (partial / row["folder"]).mkdir(parents=True)
    (partial / row["tablebase_path"]).write_bytes((own / row["tablebase_path"]).read_bytes())
    monkeypatch.chdir(partial)
    with duckdb.connect(str(copied), read_only=True) as con:
        con.execute("SET file_search_path = ?", [str(own)])
        with pytest.raises(duckdb.Error, match="some files were found in another folder"):
            con.sql("SELECT count(*) FROM tablebase").fetchall()
