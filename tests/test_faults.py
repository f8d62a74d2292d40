"""Faults a user meets: Ctrl-C and kill -9 at any moment, builds running side by side,
a full disk, hostile SQL. After each: one line and the right exit status, the tablebases
built before intact and checking, the catalog complete, no scratch left behind."""

from __future__ import annotations

import errno
import os
import re
import shlex
import signal
import subprocess
import sys
import time
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.datadir.check import check
from pipeline.products.draw import GRAPHVIZ_HINT
from tests.command import forked, tablebase

#: Long enough to be interrupted inside every stage, and no longer: each stage lasts 0.4 s or
#: more on a quiet 2-core machine (verify, the shortest, 0.41 s; enumerate 0.8, solve 1.2,
#: export 0.8), more under load. fingers=9 took 2.6 times as long, and the tests that kill a
#: build in each stage pay for every stage before it.
SLOW = "chopsticks:fingers=8,hands=4,split=any"
#: How far into a stage a test lets the build get before the fault: a quarter of the shortest.
INTO = 0.1
QUICK = ["chopsticks", "sticks:rows=3"]


# Builds run in a process of their own here, as the kills, PIDs and scratch they meet are a
# process's: started anew where a test signals or kills it (start), else forked with the
# libraries loaded (run); the tests of what a command refuses and says run it in this one
# (tablebase).
def run(*args: str, data: Path) -> subprocess.CompletedProcess:
    return forked(*args, "--data", str(data), timeout=300)


def start(*args: str, data: Path) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "pipeline", *args, "--data", str(data)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """A data folder with two small rulesets built."""
    data = tmp_path_factory.mktemp("faults")
    assert run("build", *QUICK, "-q", data=data).returncode == 0
    return data


def copied(base: Path, copy: Path) -> Path:
    """A copy of the base folder at `copy`, as built (cp -a keeps its times), for a test to change."""
    subprocess.run(["cp", "-a", str(base), str(copy)], check=True)
    return copy


@pytest.fixture()
def data(base, tmp_path) -> Path:
    return copied(base, tmp_path / "data")


def digests(data: Path) -> dict[str, str]:
    return {row["ruleset"]: row["tablebase_sha256"] for row in pq.read_table(data / "catalog.parquet").to_pylist()}


def assert_intact(data: Path, before: dict[str, str]) -> None:
    """What was built before is there and checks; no scratch is left."""
    assert check(data) == []
    after = digests(data)
    assert {k: after.get(k) for k in before} == before
    leftovers = [p for p in (".staging", ".tmp", ".trash") if (data / p).exists()]
    assert not leftovers, leftovers


#: The stages of a build, each announced on stderr as "<stage> <ruleset> …" with -v.
STAGES = ["enumerate", "solve", "verify", "export"]


def until_stage(process: subprocess.Popen, stage: str, ruleset: str = SLOW) -> list[str]:
    """Read the build's progress until `stage` of `ruleset` begins; the lines read."""
    lines = []
    for line in process.stderr:
        lines.append(line)
        if f" {stage} {ruleset} …" in line:
            time.sleep(INTO)  # inside the stage, past its start
            return lines
    raise AssertionError(f"the build never reached {stage}: {''.join(lines)}")


def assert_one_error_line(lines: list[str], start: str) -> None:
    """Progress lines, then exactly one error line, and no traceback."""
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(start), "".join(lines)
    assert lines[-1].startswith("error:") and not any("Traceback" in line for line in lines)


@pytest.mark.parametrize("stage", STAGES)
def test_ctrl_c_in_any_stage_is_one_line_and_loses_nothing(data, stage):
    before = digests(data)
    process = start("build", SLOW, "-v", data=data)
    lines = until_stage(process, stage)
    process.send_signal(signal.SIGINT)
    lines += process.stderr.readlines()
    assert process.wait(timeout=120) == 130
    assert_one_error_line(lines, f"error: interrupted during {stage} {SLOW}")
    assert_intact(data, before)
    assert SLOW not in digests(data)


def test_ctrl_c_while_the_commands_load_is_one_line(data):
    process = start("build", SLOW, "-q", data=data)
    # not before Python's own start-up is over (a signal there is the interpreter's, before
    # any of our code runs: on a loaded machine 0.3 s was not always enough), but as the
    # command's libraries load: the first of them mapped into the process
    maps, deadline = Path(f"/proc/{process.pid}/maps"), time.monotonic() + 30
    while (
        maps.exists()
        and time.monotonic() < deadline
        and not re.search(r"/(numpy|duckdb|pyarrow|typer)[^/]*/", maps.read_text())
    ):
        time.sleep(0.005)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=60)
    assert process.returncode == 130 and len(err.strip().splitlines()) == 1, err


@pytest.mark.parametrize("stage", STAGES)
def test_a_build_killed_in_any_stage_leaves_scratch_the_next_build_removes(data, stage):
    before = digests(data)
    process = start("build", SLOW, "-v", data=data)
    until_stage(process, stage)
    process.kill()
    process.communicate(timeout=60)
    assert (data / ".staging").exists()  # what a kill leaves
    assert check(data) == [] and SLOW not in digests(data)
    assert run("build", "sticks:rows=2", "-q", data=data).returncode == 0
    assert_intact(data, before)


#: `tablebase …` that kills itself (SIGKILL) right after publish's first rename, which puts
#: the old folder aside in data/.trash/<pid>: the second would move the new one in.
KILLED_BETWEEN_RENAMES = """
import os, signal, sys
from pipeline import cli
rename = os.rename
def rename_then_die(source, target):
    rename(source, target)
    if ".trash" in str(target):
        os.kill(os.getpid(), signal.SIGKILL)
os.rename = rename_then_die
sys.argv[0] = "tablebase"
cli.main()
"""


@pytest.mark.parametrize("pid_reused", [False, True], ids=["pid-ended", "pid-reused"])
@pytest.mark.parametrize("game_folder", ["kept", "gone"])
def test_a_build_killed_between_the_renames_is_repaired_by_the_next(data, pid_reused, game_folder):
    before = digests(data)
    killed = subprocess.run(
        [sys.executable, "-c", KILLED_BETWEEN_RENAMES, "build", "sticks:rows=3", "-q", "--data", str(data)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert killed.returncode == -signal.SIGKILL, killed.stderr
    [aside] = (data / ".trash").glob("*/sticks/default")  # sticks:rows=3 is sticks' defaults
    assert not (data / "sticks" / "default").exists()
    sleeper = subprocess.Popen(["sleep", "600"])
    try:
        if pid_reused:  # another process runs with the killed build's PID by now
            owner = aside.parents[1]
            owner.rename(owner.with_name(str(sleeper.pid)))
        if game_folder == "gone":
            (data / "sticks").rmdir()  # sticks:rows=3 was its only ruleset
        result = run("build", "sticks:rows=2", "-q", data=data)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode == 0, result.stderr
    assert_intact(data, before)
    assert set(digests(data)) == {*before, "sticks:rows=2"}


def test_scratch_of_an_ended_process_goes_though_its_pid_runs_again(data):
    sleeper = subprocess.Popen(["sleep", "600"])  # has the PID of a build killed long ago
    pid = str(sleeper.pid)
    left = [
        data / ".staging" / pid / "sticks" / "rows-9" / "positions.parquet",
        data / ".tmp" / pid / "spill.parquet",
        data / f".catalog.parquet.{pid}.tmp",
        data / f".tablebases.duckdb.{pid}.tmp.wal",
        data / ".locks" / f"process.{pid}.lock",
    ]
    for path in left:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"left by a kill")
    try:
        result = run("build", "sticks:rows=2", "-q", data=data)
    finally:
        sleeper.kill()
        sleeper.wait()
    assert result.returncode == 0, result.stderr
    assert [path for path in left if path.exists()] == []
    assert_intact(data, digests(data))


#: A process with scratch in the data folder (argv[1]) until its stdin closes.
WORKING = """
import sys
from pathlib import Path
from pipeline.datadir.layout import DataDir
(DataDir(Path(sys.argv[1])).temp / "spill.parquet").touch()  # its scratch, made when asked for
print("ready", flush=True)
sys.stdin.read()
"""


def test_scratch_of_a_running_process_stays_until_it_ends(data):
    working = subprocess.Popen(
        [sys.executable, "-c", WORKING, str(data)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    assert working.stdout.readline() == "ready\n"
    scratch = data / ".tmp" / str(working.pid)
    assert run("build", "sticks:rows=2", "-q", data=data).returncode == 0
    assert scratch.is_dir()
    working.communicate(timeout=60)
    assert run("build", "sticks:rows=1", "-q", data=data).returncode == 0
    assert not scratch.exists() and not (data / ".locks" / f"process.{working.pid}.lock").exists()


@pytest.mark.parametrize("round_", range(3))
def test_builds_of_different_rulesets_side_by_side_all_land(data, round_):
    before = digests(data)
    others = ["sticks:rows=4", "nim", "chopsticks:split=any"][: 2 + round_ % 2]
    processes = [start("build", ruleset, "-q", data=data) for ruleset in others]
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    assert_intact(data, before)
    assert set(others) <= set(digests(data))


@pytest.mark.parametrize("round_", range(2))
def test_a_second_build_of_the_same_ruleset_is_refused_in_one_line(data, round_):
    before = digests(data)
    # The first build is held still while it holds the ruleset's lock, so the second meets
    # the lock whatever the machine's load, and a small ruleset does (SLOW's whole build
    # cost ~10 CPU-s a round here, for nothing this test asks)
    ruleset = "chopsticks:split=any"
    first = start("build", ruleset, "-v", data=data)
    until_stage(first, "enumerate", ruleset)  # it holds the ruleset's lock by now
    os.kill(first.pid, signal.SIGSTOP)
    try:
        second = run("build", ruleset, "-q", data=data)
    finally:
        os.kill(first.pid, signal.SIGCONT)
    _, err = first.communicate(timeout=300)
    assert first.returncode == 0, err
    assert second.returncode == 1
    lines = second.stderr.strip().splitlines()
    assert len(lines) == 1 and "being built by another process" in lines[0], second.stderr
    assert_intact(data, before)


@pytest.fixture()
def small_disk(tmp_path):
    """A 64 MiB file system of its own, to fill."""
    mount = tmp_path / "disk"
    mount.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)], capture_output=True)
    if result.returncode != 0:
        pytest.skip(f"cannot mount a small file system here: {result.stderr.decode().strip()}")
    yield mount
    subprocess.run(["umount", "-l", str(mount)], check=False)


def fill(folder: Path) -> Path:
    """Write zeros into `folder` until its file system is full; the file written (none if
    the build being tested had filled it already)."""
    filler = folder / "filler"
    try:
        with open(filler, "wb") as handle:
            while True:
                handle.write(b"\0" * (1 << 16))
                handle.flush()
    except OSError as error:
        if error.errno != errno.ENOSPC:
            raise
    return filler


@pytest.mark.parametrize("stage", STAGES + ["publish"])
def test_a_disk_full_in_any_stage_is_one_line_and_keeps_what_was_built(base, small_disk, stage):
    data = copied(base, small_disk / "data")
    before = digests(data)
    process = start("build", SLOW, "--no-size-check", "-v", data=data)
    if stage == "publish":  # exported: the folder is renamed into place, then the catalog written
        lines = []
        for line in process.stderr:
            lines.append(line)
            if f" export {SLOW}: " in line and " reachable in " in line:  # export has ended
                break
        os.kill(process.pid, signal.SIGSTOP)
        filler = fill(small_disk)
        os.kill(process.pid, signal.SIGCONT)
    else:
        lines = until_stage(process, stage)
        os.kill(process.pid, signal.SIGSTOP)  # held in the stage while the disk fills
        filler = fill(small_disk)
        os.kill(process.pid, signal.SIGCONT)
    lines += process.stderr.readlines()
    status = process.wait(timeout=120)
    filler.unlink(missing_ok=True)
    assert status == 1, "".join(lines)
    assert_one_error_line(lines, "error: no space left on the disk")
    assert_intact(data, before)
    assert SLOW not in digests(data)


def fill_leaving(folder: Path, free: int) -> Path:
    """Fill `folder`'s file system but `free` bytes; the file written."""
    filler = folder / "filler"
    stat = os.statvfs(folder)
    with open(filler, "wb") as handle:
        os.posix_fallocate(handle.fileno(), 0, stat.f_bavail * stat.f_frsize - free)
    return filler


@pytest.mark.parametrize(
    "rulesets, said",
    [
        (
            ["sticks:rows=7"],
            "error: no space left on the disk during publish sticks:rows=7: sticks:rows=7 is published",
        ),
        (["sticks:rows=6", "sticks:rows=7"], "error: no space left on the disk: every ruleset built is published"),
    ],
    ids=["one-ruleset", "several"],
)
def test_a_database_the_disk_cannot_hold_fails_the_build_and_says_how_to_finish(base, small_disk, rulesets, said):
    data = copied(base, small_disk / "data")
    filler = fill_leaving(small_disk, 400 << 10)  # the new folders fit, a new tablebases.duckdb (½ MB) not
    result = run("build", *rulesets, "--no-size-check", "-q", data=data)
    filler.unlink()
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith(said), line
    assert f"but {data / 'tablebases.duckdb'} could not be rewritten" in line
    assert set(rulesets) <= set(digests(data))  # published, and the catalog says so
    command = shlex.split(re.search(r"then run `(tablebase [^`]+)`", line).group(1))
    finish = subprocess.run([sys.executable, "-m", "pipeline", *command[1:]], capture_output=True, text=True)
    assert finish.returncode == 0, finish.stderr
    assert_intact(data, digests(data))
    assert not list(data.glob(".*.tmp*"))


@pytest.mark.parametrize("free", [0, 100 << 10, 300 << 10, 600 << 10])
def test_publish_onto_a_full_disk_names_the_output(data, small_disk, free):
    out = small_disk / "dist"
    filler = fill_leaving(small_disk, free)
    result = run("publish", "--out", str(out), "-q", data=data)
    filler.unlink()
    assert result.returncode == 1
    assert result.stderr.strip().splitlines() == [
        f"error: no space left on the disk of --out {out}: nothing half-written is left there; "
        f"free some space there and publish again, or publish elsewhere"
    ]
    assert [path.name for path in out.rglob(".*")] == []
    assert check(data) == []


def test_draw_onto_a_full_disk_keeps_the_page_drawn_before_whole(data, small_disk):
    """A page folder is written aside and put in place whole: a disk that fills part-way
    leaves the page drawn before (its index.html and pictures), not a folder without them."""
    out = small_disk / "pages"
    assert run("draw", "chopsticks", "--out", str(out), "-q", data=data).returncode == 0
    page = out / "chopsticks" / "default"
    before = {path.name: path.read_bytes() for path in page.iterdir()}
    assert "index.html" in before and "graph.dot" in before
    for free in (0, 8 << 10, 64 << 10):
        filler = fill_leaving(small_disk, free)
        result = run("draw", "chopsticks", "--out", str(out), "-q", data=data)
        filler.unlink()
        assert result.returncode == 1, free
        # where Graphviz is missing, draw says so once (GRAPHVIZ_HINT) before it draws: that
        # line is the machine's, not the fault's
        lines = [line for line in result.stderr.strip().splitlines() if GRAPHVIZ_HINT not in line]
        assert len(lines) == 1 and lines[0].startswith("error: no space left on the disk"), result.stderr
        assert lines[0].endswith("free some and run `tablebase draw` again"), lines[0]
        assert {path.name: path.read_bytes() for path in page.iterdir()} == before
        assert [path.name for path in out.rglob(".*")] == []  # nothing half-written beside it


@pytest.mark.parametrize(
    "statement",
    [
        "COPY (SELECT 1) TO 'catalog.parquet'",
        "ATTACH 'other.duckdb'",
        "DROP VIEW catalog",
        "SELECT * FROM read_text('/etc/passwd')",
        "SELECT 1; SELECT 2",
        "SET enable_external_access = true",
        "INSTALL httpfs",
        "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO 'catalog.parquet'",
        "WITH x AS (COPY (SELECT 1) TO 'y.csv') SELECT 1",
        "SELECT * FROM read_parquet('catalog.parquet')",
    ],
)
def test_hostile_sql_is_refused_in_one_line(data, statement):
    before = data_files(data)
    result = tablebase("sql", statement, data=data)
    assert result.returncode == 1
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert data_files(data) == before


# The views read the published files by name (DuckDB's allowed_paths), which would let a COPY
# that names one of them write over it in place (no temporary file beside it): every statement
# that could is refused before it reaches DuckDB, and DuckDB itself opens no other file.
@pytest.mark.parametrize(
    "template",
    [
        "WITH x AS (COPY (SELECT 1 AS a) TO '{file}' (FORMAT csv, USE_TMP_FILE false)) SELECT 1",
        "EXPLAIN ANALYZE COPY (SELECT 1 AS a) TO '{file}' (FORMAT parquet, USE_TMP_FILE false)",
        "EXPLAIN (FORMAT json) ANALYZE COPY (SELECT 1 AS a) TO '{file}' (FORMAT csv, USE_TMP_FILE false)",
        "/* x */ EXPLAIN ANALYZE WITH x AS (COPY (SELECT 1) TO '{file}' (USE_TMP_FILE false)) SELECT 1",
        "SELECT * FROM read_parquet('{other}')",
        "SELECT * FROM glob('{folder}/*')",
    ],
)
def test_sql_writes_no_published_file_and_reads_no_other(data, template):
    row = pq.read_table(data / "catalog.parquet").to_pylist()[0]
    published = data / row["tablebase_path"]
    other = published.with_name("positions.parquet")
    assert other.exists()
    before = data_files(data)
    for file in (published, data / "catalog.parquet"):
        statement = template.format(file=file, other=other, folder=published.parent)
        result = tablebase("sql", statement, data=data)
        assert result.returncode == 1, statement
        assert result.stderr.startswith("error: ") and len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert data_files(data) == before and check(data) == []


# Under --read-files a SELECT reads files, and each family of statement that would do more
# is refused by a line naming --allow-writes, the flag that would run it, with nothing written
# (two statements at once, which no flag runs, are refused first: "one SQL statement at a time")
@pytest.mark.parametrize(
    "statement, refusal",
    [
        ("COPY (SELECT 1) TO 'out.csv'", "COPY statements can change things"),
        ("EXPORT DATABASE 'out'", "EXPORT statements can change things"),
        ("ATTACH 'out.duckdb'", "ATTACH statements can change things"),
        ("INSTALL httpfs", "statements can change things"),
        ("LOAD httpfs", "LOAD statements can change things"),
        ("SET threads = 1", "SET statements can change things"),
        ("PRAGMA threads = 1", "SET statements can change things"),
        ("CREATE TABLE out AS SELECT 1", "CREATE statements can change things"),
        ("INSERT INTO catalog SELECT * FROM catalog", "INSERT statements can change things"),
        ("WITH x AS (COPY (SELECT 1) TO 'out.csv') SELECT 1", "holds another statement (COPY)"),
        (
            "WITH x AS (INSERT INTO catalog SELECT * FROM catalog RETURNING 1) SELECT 1",
            "holds another statement (INSERT)",
        ),
        ("SELECT * FROM query('SELECT 1')", "runs no table function query()"),
        ("SELECT 1; SELECT 2", "one SQL statement at a time"),
        ("SELECT * FROM json_execute_serialized_sql('{}')", "runs no table function json_execute_serialized_sql()"),
        ("SELECT * FROM checkpoint()", "runs no table function checkpoint()"),
        ("SELECT * FROM enable_logging()", "runs no table function enable_logging()"),
        ("SELECT * FROM read_duckdb('out.duckdb')", "runs no table function read_duckdb()"),
        ("SELECT * FROM read_csv('http://example.com/x.csv')", "reads local files only, not http://example.com/x.csv"),
        ("SELECT * FROM 's3://bucket/x.parquet'", "reads local files only, not s3://bucket/x.parquet"),
        ("SELECT * FROM read_text('ht' || 'tps://example.com/x')", "reads local files only, not https://example.com/x"),
        ("EXPLAIN ANALYZE COPY (SELECT 1) TO 'out.csv'", "not a COPY statement, which can change things"),
    ],
)
def test_read_files_refuses_what_more_than_reads_naming_allow_writes(base, tmp_path, monkeypatch, statement, refusal):
    from pipeline.products.query import QueryError, run_sql

    monkeypatch.chdir(tmp_path)
    before = data_files(base)
    with pytest.raises(QueryError) as raised:
        run_sql(base, statement, read_files=True)
    message = str(raised.value)
    flag = "one SQL statement" in refusal or "--allow-writes" in message  # no flag runs two at once
    assert refusal in message and flag and "\n" not in message, message
    assert list(tmp_path.iterdir()) == [] and data_files(base) == before


def test_a_read_file_refusal_is_one_line_at_the_command_line(data, tmp_path):
    result = tablebase(
        "sql", f"WITH x AS (COPY (SELECT 1) TO '{tmp_path / 'out.csv'}') SELECT 1", "--read-files", data=data
    )
    assert result.returncode == 1 and not (tmp_path / "out.csv").exists()
    assert result.stderr.strip() == (
        "error: --read-files runs a SELECT that only reads, and this one holds another "
        "statement (COPY); add --allow-writes to run it with DuckDB's full power "
        "(it lets DuckDB write files too)"
    )


def test_read_files_reads_parquet_csv_and_globs_outside_the_data_folder(base, tmp_path):
    from pipeline.products.query import run_sql

    pq.write_table(pq.read_table(base / "catalog.parquet", columns=["ruleset"]), tmp_path / "rules.parquet")
    (tmp_path / "moves.csv").write_text("ruleset,note\nchopsticks,mine\n")
    table = run_sql(
        base,
        f"""SELECT c.ruleset, m.note, (SELECT count(*) FROM '{tmp_path}/*.parquet') AS globbed
                              FROM read_parquet('{tmp_path}/rules.parquet') r JOIN read_csv('{tmp_path}/moves.csv') m
                              USING (ruleset) JOIN catalog c USING (ruleset)""",
        read_files=True,
    )
    assert table.to_pylist() == [{"ruleset": "chopsticks", "note": "mine", "globbed": len(digests(base))}]


def test_a_file_is_read_with_read_files_and_refused_without_it(data, tmp_path):
    pq.write_table(pq.read_table(data / "catalog.parquet", columns=["ruleset"]), tmp_path / "rules.parquet")
    statement = f"SELECT count(*) AS n FROM '{tmp_path}/rules.parquet'"
    refused = tablebase("sql", statement, data=data)
    assert refused.returncode == 1
    [line] = refused.stderr.strip().splitlines()
    assert line.startswith("error: ") and "add --read-files to read other files" in line, line
    read = tablebase("sql", statement, "--read-files", "-f", "csv", data=data)
    assert read.returncode == 0 and read.stdout.splitlines()[1:] == [str(len(digests(data)))], read.stderr


def data_files(data: Path) -> dict[Path, int]:
    """Every file's mtime but tablebase's own bookkeeping (the checksum cache, the locks),
    which reading commands write."""
    return {
        p: p.stat().st_mtime_ns
        for p in data.rglob("*")
        if p.is_file() and p.relative_to(data).parts[0] not in (".cache", ".locks")
    }


def test_output_never_overwrites_the_data_folder(data):
    result = tablebase("sql", "SELECT 1", "-f", "parquet", "-o", str(data / "catalog.parquet"), data=data)
    assert result.returncode == 1 and "inside the data folder" in result.stderr
    assert check(data) == []


def test_allow_writes_gives_duckdb_its_full_power(data, tmp_path):
    target = tmp_path / "copy.csv"
    result = tablebase("sql", f"COPY (SELECT ruleset FROM catalog) TO '{target}'", "--allow-writes", data=data)
    assert result.returncode == 0, result.stderr
    assert "chopsticks" in target.read_text()


@pytest.mark.parametrize(
    "args",
    [
        ["probe", "chopsticks", "²-1|1-1"],
        ["probe", "chopsticks", "9" * 5000 + "-1|1-1"],
        ["probe", "sticks:rows=3", "9" * 5000],
        ["probe", "sticks:rows=3", "-1"],
        ["build", "hackenbush:tree=1:999999999999999"],
        ["build", "chopsticks:fingers=" + "9" * 5000],
        ["build", "nim:start=" + "-".join(["3"] * 400)],
    ],
)
def test_a_users_odd_input_is_one_line(data, args):
    before = digests(data)
    result = tablebase(*args, data=data)
    assert result.returncode == 1, result.stderr
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert_intact(data, before)


def test_a_changed_tablebase_is_refused_by_probe_play_and_draw(data):
    import pyarrow as pa

    path = data / "chopsticks" / "default" / "tablebase.parquet"
    assert run("probe", "chopsticks", "1-1|1-1", data=data).returncode == 0  # its checksum is remembered
    table = pq.read_table(path)
    values = ["win" if v == "loss" else v for v in table["value"].to_pylist()]
    index = table.schema.get_field_index("value")
    pq.write_table(table.set_column(index, table.schema.field(index), pa.array(values)), path)
    for args in (["probe", "chopsticks", "1-1|1-1"], ["draw", "chopsticks", "--page-only"]):
        result = run(*args, data=data)
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and str(path) in lines[0] and "SHA-256" in lines[0], result.stderr
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "play", "chopsticks", "--data", str(data)],
        input="quit\n",
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1 and "SHA-256" in result.stderr


def test_ctrl_c_stops_a_long_query(data):
    process = start("sql", "SELECT sum(hash(i)) FROM range(100000000000) t(i)", data=data)
    time.sleep(3)
    process.send_signal(signal.SIGINT)
    _, err = process.communicate(timeout=30)
    assert process.returncode == 130 and len(err.strip().splitlines()) == 1, err


def test_a_copy_of_a_ruleset_folder_is_not_a_second_catalog_row(data):
    subprocess.run(["cp", "-a", str(data / "sticks" / "default"), str(data / "sticks" / "default.bak")], check=True)
    assert run("build", "sticks:rows=2", "-q", data=data).returncode == 0
    rulesets = pq.read_table(data / "catalog.parquet")["ruleset"].to_pylist()
    assert len(rulesets) == len(set(rulesets))
    assert check(data) == [f"{data / 'sticks' / 'default.bak'}: not in the catalog"]


def test_build_leaves_a_users_own_folders_alone(data):
    mine = data / "my_analysis"
    mine.mkdir()
    for name in ("precious.parquet", "transitions.parquet", "summary.parquet"):
        (mine / name).write_bytes(b"mine")
    assert run("build", "sticks:rows=2", "-q", data=data).returncode == 0
    assert sorted(p.name for p in mine.iterdir()) == ["precious.parquet", "summary.parquet", "transitions.parquet"]


def test_a_data_folder_with_a_comma_in_its_path_builds_and_travels(tmp_path):
    data = tmp_path / "a,b"
    assert run("build", "sticks:rows=2", "-q", data=data).returncode == 0
    assert check(data) == []
    result = subprocess.run(
        [
            sys.executable,
            "-c",
            "import duckdb; print(duckdb.connect('tablebases.duckdb', "
            "read_only=True).sql('SELECT count(*) FROM tablebase').fetchall()[0][0])",
        ],
        cwd=data,
        capture_output=True,
        text=True,
    )
    assert result.stdout.strip() == "5", result.stderr


def test_a_catalog_of_another_shape_is_one_line(data):
    import pyarrow as pa

    pq.write_table(pa.table({"a": [1]}), data / "catalog.parquet")
    for args in (["sql", "SELECT 1"], ["probe", "chopsticks", "1-1|1-1"]):
        result = tablebase(*args, data=data)
        assert result.returncode == 1 and len(result.stderr.strip().splitlines()) == 1, result.stderr


def test_a_ctrl_c_python_dropped_while_the_commands_load_still_interrupts():
    """A Ctrl-C raised inside a callback (importlib's module lock, while the commands load)
    is printed by Python and dropped; the command must stop there all the same."""
    code = (
        "import sys\n"
        "from pipeline import cli\n"
        "class Dropped:\n"
        "    exc_value = KeyboardInterrupt()\n"
        "cli._unraisable(Dropped())\n"
        "sys.argv = ['tablebase', 'games']\n"
        "cli.main()\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert done.returncode == 130 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "error: interrupted: a ruleset is published whole or not at all, and what was built before is kept"
    ]


LOOP = """
import sys
from pathlib import Path
from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
data, rules = DataDir(Path(sys.argv[1])), Ruleset.parse(sys.argv[2])
for _ in range(1000):
    data.drop(data.staging(rules).dir.parent.parent)
    data.drop(data.temp)
"""


def test_scratch_made_and_dropped_side_by_side_never_loses_a_folder(tmp_path):
    """Two processes each make their scratch folders under .staging and .tmp and drop them
    again, as builds do: the one dropping the last folder removes .staging or .tmp, never
    between the other's making of it and of its own folder inside."""
    (tmp_path / "data").mkdir()
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", LOOP, str(tmp_path / "data"), ruleset],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for ruleset in ("nim", "chopsticks")
    ]
    for process in processes:
        _, err = process.communicate(timeout=300)
        assert process.returncode == 0, err
    assert not [p for p in (".staging", ".tmp") if (tmp_path / "data" / p).exists()]


def test_sweep_of_a_data_folder_not_there_recovers_nothing(tmp_path):
    """Where no lock was taken (no fcntl, as on Windows, before filelock) the data folder was
    not made by the lock, and sweep said None for it: `build` then failed on tuple(None)."""
    from pipeline.datadir import layout

    assert layout.DataDir(tmp_path / "data").sweep() == []
