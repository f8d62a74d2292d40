"""A stage reads only files a stage wrote and nobody changed since (pipeline/datadir/written.py):
a file changed by hand, even one that is still valid Parquet, never reaches a tablebase."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline.datadir.check import check
from tests import command

RULESET = "chopsticks"
FOLDER = "chopsticks/default"
#: Each stage and the files it reads.
READS = {
    "solve": ("positions", "transitions"),
    "verify": ("positions", "transitions", "solution"),
    "export": ("positions", "transitions", "solution", "verification"),
}


def tablebase(*args: str, data: Path) -> subprocess.CompletedProcess:
    return command.tablebase(*args, "-q", data=data)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("custody") / "data"
    assert tablebase("build", RULESET, data=data).returncode == 0
    return data


@pytest.fixture()
def data(built, tmp_path) -> Path:
    copy = tmp_path / "data"
    subprocess.run(["cp", "-a", str(built), str(copy)], check=True)
    return copy


def tamper(path: Path) -> None:
    """One value of the file's first column changed, written back as valid Parquet."""
    table = pq.read_table(path)
    column = table.column(0)
    first = column[0].as_py()
    changed = first + 1 if isinstance(first, int) else (first or "") + "x"
    values = pa.array([changed, *column.to_pylist()[1:]], type=column.type)
    pq.write_table(table.set_column(0, table.field(0), values), path)


def flip_footer_byte(path: Path) -> None:
    raw = bytearray(path.read_bytes())
    raw[-12] ^= 0x01  # inside the footer's metadata, before its length and magic
    path.write_bytes(bytes(raw))


@pytest.mark.parametrize(
    ("stage", "kind"), [(stage, kind) for stage, kinds in READS.items() for kind in kinds], ids=lambda x: x
)
def test_a_stage_refuses_an_input_changed_by_hand(data, stage, kind):
    published = (data / FOLDER / "tablebase.parquet").read_bytes()
    catalog = (data / "catalog.parquet").read_bytes()
    path = data / FOLDER / f"{kind}.parquet"
    tamper(path)
    result = tablebase(stage, RULESET, data=data)
    assert result.returncode == 1, result.stdout
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(f"error: {path} changed since a stage wrote it") and "tablebase build chopsticks" in line, (
        line
    )
    assert (data / FOLDER / "tablebase.parquet").read_bytes() == published
    assert (data / "catalog.parquet").read_bytes() == catalog


def test_export_refuses_a_flipped_byte_in_a_footer_and_check_goes_on_saying_so(data):
    path = data / FOLDER / "positions.parquet"
    flip_footer_byte(path)
    result = tablebase("export", RULESET, data=data)
    assert result.returncode == 1
    assert "positions.parquet" in result.stderr and "changed since a stage wrote it" in result.stderr
    assert any("positions.parquet" in problem for problem in check(data))


def test_the_same_bytes_under_a_new_stat_are_read(data):
    path = data / FOLDER / "solution.parquet"
    copy = path.with_name("copy")
    shutil.copy(path, copy)
    copy.replace(path)  # another inode, other times, the same bytes
    result = tablebase("export", RULESET, data=data)
    assert result.returncode == 0, result.stderr
    assert check(data) == []


def test_the_stages_one_at_a_time_still_rebuild_a_published_ruleset(data):
    before = (data / FOLDER / "tablebase.parquet").read_bytes()
    for stage in ("enumerate", "solve", "verify", "export"):
        result = tablebase(stage, RULESET, data=data)
        assert result.returncode == 0, (stage, result.stderr)
    assert (data / FOLDER / "tablebase.parquet").read_bytes() == before
    assert check(data) == []


def test_a_folder_built_before_the_record_is_read_by_the_catalogs_digests(data):
    (data / ".cache" / "written.json").unlink()
    assert tablebase("export", RULESET, data=data).returncode == 0
    tamper(data / FOLDER / "transitions.parquet")
    result = tablebase("export", RULESET, data=data)
    assert result.returncode == 1
    assert "transitions.parquet changed since a stage wrote it" in result.stderr


def test_a_stage_of_an_unpublished_ruleset_refuses_a_file_no_stage_wrote(data):
    folder = data / "chopsticks" / "hands-1"
    assert tablebase("enumerate", "chopsticks:hands=1", data=data).returncode == 0
    positions = folder / "positions.parquet"
    table = pq.read_table(positions)
    pq.write_table(table.filter(pc.greater_equal(table["id"], 0)), positions)  # the same rows, other bytes
    result = tablebase("solve", "chopsticks:hands=1", data=data)
    assert result.returncode == 1
    assert f"{positions} changed since a stage wrote it" in result.stderr


# A publish killed between its renames: every state is repaired by the command `check` names.


def test_a_rebuild_killed_between_the_renames_is_named_and_put_back_by_export(data):
    """The old folder went to data/.trash, the new one never came: probe, sql and check say
    where it waits and that `tablebase export` puts it back, which it does."""
    aside = data / ".trash" / "999999999" / FOLDER
    aside.parent.mkdir(parents=True)
    (data / FOLDER).rename(aside)
    for args in (["probe", RULESET, "start"], ["sql", "SELECT count(*) FROM tablebase"]):
        result = tablebase(*args, data=data)
        assert result.returncode == 1
        [line] = result.stderr.strip().splitlines()
        assert str(aside) in line and f"`tablebase export --data {data}` puts it back" in line, line
    assert any(str(aside) in problem and "tablebase export" in problem for problem in check(data))
    assert tablebase("export", data=data).returncode == 0
    assert check(data) == [] and not aside.exists()
    assert tablebase("probe", RULESET, "start", data=data).returncode == 0


def test_a_first_build_killed_before_its_publish_leaves_a_folder_export_makes_whole(built, tmp_path):
    """Nothing published, the build's folder left in .staging by a dead process: `tablebase
    export` writes a catalog of no ruleset, which `check` passes (it once wanted a database
    no command would write)."""
    data = tmp_path / "data"
    staged = data / ".staging" / "999999999" / FOLDER
    shutil.copytree(built / FOLDER, staged)
    assert tablebase("export", data=data).returncode == 0
    assert check(data) == [] and not staged.exists()
    assert not (data / "tablebases.duckdb").exists()
    result = tablebase("sql", "SELECT count(*) FROM catalog", data=data)
    assert result.returncode == 1 and "no tablebase has been built" in result.stderr
