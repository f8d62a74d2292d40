"""The dataset as it leaves the machine: safe names, an earlier layout met, folders published
whole, `tablebase check` catching every changed byte, `tablebase publish`'s bundle."""

from __future__ import annotations

import errno
import hashlib
import os
import re
import shutil
import zipfile
from collections import deque
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
import pytest

from pipeline.core.dataset import RULESET_FILES
from pipeline.datadir.check import check
from pipeline.datadir.layout import BY_KIND, DataDir
from pipeline.games.rulesets import Ruleset, load_ruleset_file
from pipeline.products.publish import publish
from pipeline.stages.build import build
from tests.command import tablebase

ROOT = Path(__file__).resolve().parent.parent
SAFE = re.compile(r"[a-z0-9._-]+")


@pytest.fixture()
def data(built, tmp_path) -> Path:
    """A copy of the session's built data folder, free to damage."""
    copy = tmp_path / "data"
    shutil.copytree(built, copy)
    return copy


# -- names ---------------------------------------------------------------------------


def test_every_ruleset_of_the_ruleset_file_gets_its_own_safe_folder():
    folders = [rules.folder for rules, _ in load_ruleset_file(ROOT / "rulesets.toml")]
    assert len(set(folders)) == len(folders)
    for folder in folders:
        game, slug = folder.split("/")
        assert SAFE.fullmatch(game) and SAFE.fullmatch(slug) and "=" not in folder
        assert len(folder) < 120


@pytest.mark.parametrize(
    "ruleset, folder",
    [
        ("chopsticks", "chopsticks/default"),
        ("chopsticks:fingers=10,split=any", "chopsticks/fingers-10.split-any"),
        ("nim:start=1-2-3-4-5,variant=arrow-other", "nim/start-1-2-3-4-5.variant-arrow-other"),
        ("sticks:max_take=2,play=normal,rows=10", "sticks/max_take-2.play-normal.rows-10"),
    ],
)
def test_plain_parameters_read_back_from_the_folder_name(ruleset, folder):
    assert Ruleset.parse(ruleset).folder == folder


def test_values_with_other_characters_get_a_hash_and_stay_distinct():
    trees = ["1:2/3;2:4", "1:2/3;3:4", "1:2;2:3/4", "1:2/3/4"]
    slugs = [Ruleset.parse(f"hackenbush:tree={tree}").slug for tree in trees]
    assert len(set(slugs)) == len(slugs)
    assert all(SAFE.fullmatch(slug) and re.search(r"\._[0-9a-f]{10}$", slug) for slug in slugs)


# -- the earlier layout ----------------------------------------------------------------


def _old_layout(data: Path) -> None:
    """What the previous version wrote: data/<ruleset id>/<kind>.parquet."""
    for rules in ("chopsticks", "chopsticks:split=any"):
        old = data / rules
        shutil.copytree(DataDir(data).ruleset(Ruleset.parse(rules)).dir, old, dirs_exist_ok=True)


def test_a_command_meeting_the_earlier_layout_says_so_in_one_line(data):
    _old_layout(data)
    for args in (("probe", "chopsticks", "1-1|1-1"), ("sql", "SELECT 1"), ("check",)):
        result = tablebase(*args, "--data", str(data))
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "earlier" in lines[0] and "layout" in lines[0], result.stderr


def test_a_build_keeps_the_earlier_layouts_folders_but_the_one_it_rebuilds_and_names_them(data, caplog):
    """A user's tablebases are never deleted without a word: a build of another ruleset keeps
    them (it once deleted them all) and says how to rebuild them; rebuilding one replaces it."""
    import logging

    _old_layout(data)
    with caplog.at_level(logging.INFO, logger="tablebase"):
        build(Ruleset.parse("sticks:rows=1"), DataDir(data))
    assert [folder.name for folder in DataDir(data).old_layout()] == ["chopsticks", "chopsticks:split=any"]
    assert "`tablebase build chopsticks chopsticks:split=any` rebuilds them" in caplog.text
    build(Ruleset.parse("chopsticks:split=any"), DataDir(data))
    assert [folder.name for folder in DataDir(data).old_layout()] == ["chopsticks"]
    assert (data / "chopsticks" / "split-any" / "tablebase.parquet").exists()
    result = tablebase("sql", "SELECT 1", "--data", str(data))
    assert result.returncode == 1 and "`tablebase build chopsticks` rebuilds them" in result.stderr


# -- publishing a folder whole -------------------------------------------------------------


def test_a_folder_left_aside_by_a_killed_publish_is_put_back(data):
    store = DataDir(data)
    rules = Ruleset.parse("chopsticks")
    before = sha(store.ruleset(rules).tablebase)
    # killed between the two renames: the old folder aside, nothing in its place
    aside = store.trash / "999999999" / rules.folder
    aside.parent.mkdir(parents=True)
    os.rename(store.ruleset(rules).dir, aside)
    build(Ruleset.parse("sticks:rows=1"), store)
    assert sha(store.ruleset(rules).tablebase) == before
    assert not store.trash.exists()


def test_the_game_folder_is_synced_after_the_new_folder_moves_in(data, monkeypatch):
    store = DataDir(data)
    rules = Ruleset.parse("sticks:rows=2")
    game = store.ruleset(rules).dir.parent
    catalog = store.catalog.stat().st_mtime_ns
    synced = []

    def sync(path: Path) -> None:  # what the folder holds, and whether the catalog names it yet
        synced.append((path, sorted(p.name for p in path.iterdir()), store.catalog.stat().st_mtime_ns == catalog))

    monkeypatch.setattr("pipeline.datadir.layout.sync", sync, raising=False)
    build(rules, store)
    assert (game, ["rows-2"], True) in synced


def test_a_new_folder_that_cannot_move_in_puts_the_old_one_back_at_once(data, monkeypatch):
    store = DataDir(data)
    rules = Ruleset.parse("sticks:rows=2")
    before = sha(store.ruleset(rules).tablebase)
    rename = os.rename

    def full(source, target):  # the second rename, the new folder into place, fails
        if ".staging" in str(source):
            raise OSError(errno.ENOSPC, "No space left on device", str(source), None, str(target))
        rename(source, target)

    monkeypatch.setattr(os, "rename", full)
    with pytest.raises(OSError):
        build(rules, store)
    assert sha(store.ruleset(rules).tablebase) == before
    assert check(data) == [] and not store.trash.exists()


def test_a_rebuild_replaces_the_whole_folder_at_once(data):
    store = DataDir(data)
    rules = Ruleset.parse("sticks:rows=2")
    folder = store.ruleset(rules).dir
    (folder / "stray.parquet").write_bytes(b"left by hand")
    before = {path.name: sha(path) for path in folder.glob("*.parquet") if path.name != "stray.parquet"}
    build(rules, store)
    assert {path.name: sha(path) for path in folder.glob("*.parquet")} == before  # same bytes, no stray


# -- check ---------------------------------------------------------------------------------


def test_a_built_data_folder_checks(built):
    assert check(built) == []


def test_a_changed_byte_is_one_line_naming_the_file(data):
    path = data / "chopsticks" / "split-any" / "tablebase.parquet"
    raw = bytearray(path.read_bytes())
    raw[len(raw) // 2] ^= 1
    path.write_bytes(bytes(raw))
    result = tablebase("check", str(data))
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [f"{path}: its SHA-256 differs from the catalog's"]


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda d: (d / "chopsticks" / "default" / "positions.parquet").unlink(), "positions.parquet: missing"),
        (lambda d: (d / "chopsticks" / "default" / "notes.parquet").write_bytes(b"x"), "notes.parquet: not a file of"),
        (lambda d: shutil.copytree(d / "sticks" / "rows-2", d / "sticks" / "rows-9"), "rows-9: not in the catalog"),
    ],
)
def test_a_missing_or_extra_file_is_reported(data, damage, expected):
    damage(data)
    problems = check(data)
    assert len(problems) == 1 and expected in problems[0], problems


def test_a_tablebase_that_disagrees_with_its_catalog_row_is_reported(data):
    """Rewritten consistently with its checksums (catalog, summary, SHA256SUMS), but one
    value changed: the counts catch it."""
    rules = Ruleset.parse("chopsticks")
    table = pq.read_table(DataDir(data).ruleset(rules).tablebase)
    values = table["value"].to_pylist()
    first_win = values.index("win")
    values[first_win] = "loss"
    import pyarrow as pa

    table = table.set_column(
        table.schema.get_field_index("value"), table.schema.field("value"), pa.array(values, pa.string())
    )
    _rewrite_consistently(data, rules, "tablebase", table)
    problems = check(data)
    assert len(problems) == 1 and "disagrees with its catalog row" in problems[0]
    assert "wins" in problems[0] and "losses" in problems[0]


def _rewrite_consistently(data, rules: Ruleset, kind: str, table) -> None:
    """`table` as the ruleset's file of `kind`, with its checksums in the catalog, the
    summary and SHA256SUMS rewritten to match: only a check of what it holds can tell."""
    import pyarrow as pa

    from pipeline.datadir.check import write_sums
    from pipeline.datadir.views import write_database

    store = DataDir(data)
    path = store.ruleset(rules).path(kind)
    pq.write_table(table, path, compression="zstd")
    for target in (store.catalog, store.ruleset(rules).summary):
        rows = pq.read_table(target)
        digests = [
            sha(path) if r == rules.id else d
            for r, d in zip(rows["ruleset"].to_pylist(), rows[f"{kind}_sha256"].to_pylist())
        ]
        index = rows.schema.get_field_index(f"{kind}_sha256")
        pq.write_table(rows.set_column(index, rows.schema.field(index), pa.array(digests, pa.string())), target)
    write_database(data)
    write_sums(store, {"catalog.parquet", "tablebases.duckdb", f"{rules.folder}/summary.parquet"})


def test_an_index_missing_a_position_is_reported(data):
    """Rewritten consistently with its checksums, one row short: check counts its rows."""
    rules = Ruleset.parse("chopsticks")
    path = DataDir(data).ruleset(rules).index
    table = pq.read_table(path)
    _rewrite_consistently(data, rules, "index", table.slice(1))
    problems = check(data)
    assert len(problems) == 1 and "holds 223 positions, the catalog 224" in problems[0], problems


def test_every_file_has_its_documented_schema(built):
    for kind in RULESET_FILES:
        for path in sorted(built.glob(f"*/*/{kind.name}.parquet")):
            schema = pq.read_schema(path).remove_metadata()
            assert schema.names[: len(kind.head)] == [c.name for c in kind.head], path


# -- reachable ---------------------------------------------------------------------------


def test_every_position_arising_from_any_legal_start_is_reachable(tmp_path):
    """Nim with an arrow: the first player may point at any heap size to begin (the README's nim variants)."""
    rules = Ruleset.parse("nim:variant=arrow")
    build(rules, DataDir(tmp_path))
    files = DataDir(tmp_path).ruleset(rules)
    table = pq.read_table(files.tablebase, columns=["id", "position", "reachable"]).to_pylist()
    moves = pq.read_table(files.transitions, columns=["src", "dst"]).to_pylist()
    children: dict[int, list[int]] = {}
    for move in moves:
        children.setdefault(move["src"], []).append(move["dst"])
    starts = [row["id"] for row in table if row["position"] in ("3-4-5@3", "3-4-5@4", "3-4-5@5")]
    seen, queue = set(starts), deque(starts)
    while queue:
        for child in children.get(queue.popleft(), []):
            if child not in seen:
                seen.add(child)
                queue.append(child)
    assert len(starts) == 3
    assert {row["id"] for row in table if row["reachable"]} == seen
    assert next(row for row in table if row["position"] == "3-4-5@5")["reachable"]


# -- publish -------------------------------------------------------------------------------


def test_the_bundle_holds_every_dataset_each_checking(built, tmp_path):
    (built / ".staging" / "leftover").mkdir(parents=True, exist_ok=True)
    written = publish(built, tmp_path / "dist")
    names = sorted(path.name for path in written)
    version = __import__("pipeline").__version__
    games = sorted({row["game"] for row in pq.read_table(built / "catalog.parquet").to_pylist()})
    assert names == sorted(
        [f"tablebase-{version}", f"tablebase-{version}.zip", "SHA256SUMS"]
        + [f"tablebase-{version}-{game}.zip" for game in games]
    )
    assert_sums(tmp_path / "dist", only=[name for name in names if name.endswith(".zip")])
    for archive in sorted((tmp_path / "dist").glob("*.zip")):
        with zipfile.ZipFile(archive) as handle:
            assert handle.testzip() is None
            assert not [n for n in handle.namelist() if any(part.startswith(".") for part in n.split("/"))]
            handle.extractall(tmp_path / "unpacked")
    for folder in sorted((tmp_path / "unpacked").iterdir()):
        assert check(folder) == [], folder
        assert_sums(folder)
        assert (folder / "LICENSE").read_text().count("CC0 1.0 Universal") >= 2
        con = duckdb.connect(str(folder / "tablebases.duckdb"), read_only=True)
        con.execute("SET file_search_path = ?", [str(folder)])
        assert con.sql("SELECT count(*) FROM tablebase").fetchall()[0][0] == sum(
            pq.read_table(folder / "catalog.parquet")["positions"].to_pylist()
        )
        con.close()


def test_the_data_card_names_every_ruleset_file_and_column(built, tmp_path):
    publish(built, tmp_path)
    version = __import__("pipeline").__version__
    card = (tmp_path / f"tablebase-{version}" / "DATASET.md").read_text()
    for row in pq.read_table(built / "catalog.parquet").to_pylist():
        assert f"`{row['ruleset']}`" in card and f"| `{row['folder']}` |" in card
    for kind in RULESET_FILES:
        assert f"{kind.name}/<game>/<slug>.parquet" in card
        for column in kind.columns:
            assert f"| `{column.name}` |" in card
    for game_column in ("mover", "opponent", "rows"):
        assert f"| `{game_column}` |" in card
    for reader in ("duckdb", "pyarrow", "polars", "pandas", "spark"):
        assert reader in card.lower()


@pytest.fixture(scope="module")
def bundle(built, tmp_path_factory) -> Path:
    """The session's data folder published once, unpacked."""
    out = tmp_path_factory.mktemp("dist")
    publish(built, out)
    return out / f"tablebase-{__import__('pipeline').__version__}"


def test_no_folder_of_the_bundle_mixes_kinds(bundle):
    """pandas and pyarrow given a folder read every Parquet file below it with the first one's
    columns: below the top, every folder holds one kind of file."""
    for folder in sorted(p for p in bundle.rglob("*") if p.is_dir()):
        kinds = {BY_KIND.owner(path.relative_to(bundle).as_posix()) for path in folder.rglob("*.parquet")}
        assert None not in kinds and len({kind for _, kind in kinds}) <= 1, folder
    catalog = pq.read_table(bundle / "catalog.parquet").to_pylist()
    assert sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*.parquet")) == sorted(
        ["catalog.parquet", *(f"{kind.name}/{row['folder']}.parquet" for row in catalog for kind in RULESET_FILES)]
    )


@pytest.mark.parametrize("kind, count", [("tablebase", "positions"), ("transitions", "transitions")])
def test_a_games_folder_reads_as_that_kind_alone_in_pandas_and_pyarrow(bundle, kind, count):
    import pandas as pd
    import pyarrow.dataset as ds

    catalog = [row for row in pq.read_table(bundle / "catalog.parquet").to_pylist() if row["game"] == "chopsticks"]
    schema = pq.read_schema(bundle / kind / "chopsticks" / "default.parquet")
    for table in (
        pd.read_parquet(bundle / kind / "chopsticks"),
        ds.dataset(bundle / kind / "chopsticks").to_table().to_pandas(),
    ):
        assert list(table.columns) == schema.names
        assert len(table) == sum(row[count] for row in catalog)
        assert set(table["ruleset"]) == {row["ruleset"] for row in catalog}
    everything = ds.dataset(bundle / kind).to_table()  # every game: here only chopsticks and sticks
    assert everything.num_rows == sum(row[count] for row in pq.read_table(bundle / "catalog.parquet").to_pylist())


def test_sql_query_probe_and_check_read_the_bundle(bundle):
    catalog = pq.read_table(bundle / "catalog.parquet").to_pylist()
    result = tablebase("sql", "SELECT count(*) FROM tablebase", "--data", str(bundle), "--format", "json")
    assert result.returncode == 0, result.stderr
    assert list(__import__("json").loads(result.stdout)[0].values()) == [sum(row["positions"] for row in catalog)]
    query = tablebase(  # a position parameter is looked up in the ruleset's tablebase file
        "query", "principal_variation", "-p", "ruleset=chopsticks", "-p", "position=1-1|1-1", "--data", str(bundle)
    )
    assert query.returncode == 0, query.stderr
    probe = tablebase("probe", "chopsticks", "start", "--data", str(bundle))
    assert probe.returncode == 0 and "loses in 8 plies" in probe.stdout, probe.stderr
    assert tablebase("check", str(bundle)).returncode == 0


def _by_ruleset_again(bundle: Path) -> None:
    """A ruleset's tablebase moved back into a folder of its own, as bundles had it before."""
    (bundle / "chopsticks" / "default").mkdir(parents=True)
    os.rename(bundle / "tablebase/chopsticks/default.parquet", bundle / "chopsticks/default/tablebase.parquet")


@pytest.mark.parametrize(
    "damage, expected",
    [
        (_by_ruleset_again, ["chopsticks: not a folder of the dataset", "default.parquet: missing"]),
        (
            lambda b: shutil.copy(b / "tablebase/sticks/rows-2.parquet", b / "tablebase/sticks/rows-9.parquet"),
            ["tablebase/sticks/rows-9.parquet: not in the catalog"],
        ),
        (lambda b: (b / "solution/sticks/notes.txt").write_text("mine"), ["notes.txt: not a file of the dataset"]),
    ],
)
def test_check_holds_a_bundle_to_its_layout_by_kind(bundle, tmp_path, damage, expected):
    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy)
    damage(copy)
    problems = check(copy)
    for line in expected:
        assert any(line in problem for problem in problems), problems


def test_publishing_twice_gives_the_same_archives(built, bundle, tmp_path):
    publish(built, tmp_path)  # the second time: the module's bundle was the first
    assert (tmp_path / bundle.name / "SHA256SUMS").read_text() == (bundle / "SHA256SUMS").read_text()


def test_a_data_folder_that_does_not_check_is_not_published(data, tmp_path):
    (data / "sticks" / "rows-2" / "tablebase.parquet").write_bytes(b"oops")
    result = tablebase("publish", "--data", str(data), "--out", str(tmp_path / "dist"))
    assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1
    assert "tablebase.parquet" in result.stderr and "nothing published" in result.stderr
    assert not (tmp_path / "dist").exists() or not list((tmp_path / "dist").iterdir())


def assert_sums(folder: Path, only: list[str] | None = None) -> None:
    """SHA256SUMS lists every file (or `only` these) with its checksum, as `sha256sum -c` reads it."""
    listed = {}
    for line in (folder / "SHA256SUMS").read_text().splitlines():
        digest, name = line.split("  ", 1)
        listed[name] = digest
    files = (
        set(only)
        if only is not None
        else ({p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()} - {"SHA256SUMS"})
    )
    assert set(listed) == files
    assert all(sha(folder / name) == digest for name, digest in listed.items())


def sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.mark.parametrize(
    "damage, expected",
    [
        (lambda d: (d / "notes.txt").write_text("mine"), "notes.txt: not a file of the dataset"),
        (lambda d: (d / "tablebases.duckdb").unlink(), "tablebases.duckdb: missing"),
    ],
)
def test_check_accounts_for_the_files_beside_the_catalog(data, damage, expected):
    damage(data)
    problems = check(data)
    assert len(problems) == 1 and expected in problems[0], problems


def test_checksums_naming_files_outside_the_folder_are_refused(built, tmp_path):
    publish(built, tmp_path / "dist")
    folder = tmp_path / "dist" / f"tablebase-{__import__('pipeline').__version__}"
    with open(folder / "SHA256SUMS", "a") as sums:
        sums.write(f"{'0' * 64}  ../../etc/passwd\n")
    assert any("outside the folder" in p for p in check(folder))


def test_publish_refuses_to_write_into_the_data_folder(data):
    result = tablebase("publish", "--data", str(data), "--out", str(data / "dist"))
    assert result.returncode == 1 and "inside the data folder" in result.stderr
    assert not (data / "dist").exists() and check(data) == []


def test_the_catalog_follows_the_folders_a_build_finds(data):
    """A build rewrites only its own catalog row when the catalog lists every other folder,
    and rebuilds the catalog from the summaries when it does not (a folder deleted by hand)."""
    store = DataDir(data)
    before = {row["ruleset"]: row for row in pq.read_table(store.catalog).to_pylist()}
    build(Ruleset.parse("sticks:rows=4"), store)
    after = {row["ruleset"]: row for row in pq.read_table(store.catalog).to_pylist()}
    assert set(after) == set(before) | {"sticks:rows=4"}
    assert all(after[ruleset] == row for ruleset, row in before.items())
    shutil.rmtree(data / Ruleset.parse("chopsticks:split=dead").folder)
    build(Ruleset.parse("sticks:rows=4"), store)
    assert set(pq.read_table(store.catalog)["ruleset"].to_pylist()) == set(after) - {"chopsticks:split=dead"}
    assert check(data) == []
