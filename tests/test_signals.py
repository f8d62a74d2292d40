"""SIGINT and SIGTERM end every command within 2 seconds, whatever it waits on: a DuckDB
statement, a read of a FIFO no one writes, a stage of a build, the prompt of `play`. Each
ends in one line and status 130 or 143, with nothing left behind; a FIFO or a device in
place of a data file is refused at once, never opened."""

from __future__ import annotations

import os
import re
import signal
import stat
import subprocess
import sys
import time
from contextlib import suppress
from pathlib import Path

import pytest

from tests.command import tablebase
from tests.test_faults import SLOW, assert_intact, digests, until_stage

#: The most a signal may take to end a command (pipeline.core.signals ends it after 1.5 s).
WITHIN = 2.0

#: The status each signal ends a command with.
STATUS = {signal.SIGINT: 130, signal.SIGTERM: 143}
SIGNALS = pytest.mark.parametrize("number", list(STATUS), ids=["SIGINT", "SIGTERM"])


@pytest.fixture(scope="module")
def data(tmp_path_factory) -> Path:
    """A data folder with one small ruleset built (queries only read it)."""
    folder = tmp_path_factory.mktemp("signals")
    built = subprocess.run(
        [sys.executable, "-m", "pipeline", "build", "chopsticks", "-q", "--data", str(folder)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    return folder


@pytest.fixture()
def fifo(tmp_path) -> Path:
    path = tmp_path / "fifo"
    os.mkfifo(path)
    return path


def start(*args: str, command: list[str] | None = None, env: dict[str, str] | None = None) -> subprocess.Popen:
    return subprocess.Popen(
        [*(command or [sys.executable, "-m", "pipeline"]), *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )


def threads_waiting(process: subprocess.Popen) -> set[str]:
    """What the process's threads wait on in the kernel (`wchan`: wait_for_partner is
    an open() of a FIFO that has no writer, do_nanosleep a sleep)."""
    found = set()
    for task in Path(f"/proc/{process.pid}/task").glob("*"):
        with suppress(OSError):  # the thread ended meanwhile
            found.add((task / "wchan").read_text())
    return found


def until(process: subprocess.Popen, ready, what: str) -> None:
    """Wait until `ready()`, while the process runs (30 s at most: a loaded machine)."""
    deadline = time.monotonic() + 30
    while not ready():
        assert process.poll() is None, f"ended before {what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"never {what}"
        time.sleep(0.02)


def duckdb_runs(process: subprocess.Popen) -> bool:
    """DuckDB is loaded and its worker threads run: the statement follows within milliseconds."""
    maps = Path(f"/proc/{process.pid}/maps")
    return "duckdb" in maps.read_text() and len(list(Path(f"/proc/{process.pid}/task").glob("*"))) > 3


def assert_ended_by(process: subprocess.Popen, number: int) -> str:
    """Send `number`; the process ends within WITHIN seconds with its status and one line
    (no traceback). That line."""
    sent = time.monotonic()
    process.send_signal(number)
    try:
        _, err = process.communicate(timeout=30)
    finally:
        process.kill()
    took = time.monotonic() - sent
    assert process.returncode == STATUS[number], err
    assert len(err.strip().splitlines()) == 1 and err.startswith("error: "), err
    assert took < WITHIN, f"{took:.2f} s"
    return err


#: Statements that run until stopped: a scan DuckDB can interrupt between its tasks, and a
#: task that never returns to look (DuckDB's client looks for signals only between tasks).
LONG = {
    "scan": "SELECT count(*) FROM range(10000000000000)",
    "sleep": "SELECT sleep_ms(600000)",
}


@SIGNALS
@pytest.mark.parametrize("statement", list(LONG.values()), ids=list(LONG))
def test_a_signal_ends_a_long_query(data, number, statement, tmp_path):
    """...and leaves no spill folder behind: the process ends past atexit (os._exit), and
    left an empty tablebase-spill-* in the temp folder at every signal."""
    temp = tmp_path / "temp"
    temp.mkdir()
    process = start("sql", statement, "--data", str(data), env={**os.environ, "TMPDIR": str(temp)})
    until(process, lambda: duckdb_runs(process), "started the query")
    time.sleep(0.3)
    err = assert_ended_by(process, number)
    assert err.split(": ", 2)[2].strip() == "the statement stopped, and nothing of its result was written", err
    assert list(temp.iterdir()) == []


@SIGNALS
@pytest.mark.parametrize("reader", ["read_text", "read_csv"])
def test_a_signal_ends_a_read_of_a_fifo_no_one_writes(data, fifo, number, reader):
    # read_text's open() of the FIFO waits for ever, signals or not; read_csv's fails
    # (EINTR) and was said as an error ("Interrupted system call", status 1)
    process = start("sql", "--read-files", f"SELECT * FROM {reader}('{fifo}')", "--data", str(data))
    until(process, lambda: "wait_for_partner" in threads_waiting(process), "opened the FIFO")
    assert_ended_by(process, number)


@SIGNALS
def test_a_signal_ends_play_at_its_prompt(data, number):
    process = start("play", "chopsticks", "--data", str(data))
    until(process, lambda: "your move> " in os.read(process.stdout.fileno(), 4096).decode(), "prompted")
    assert_ended_by(process, number)


# Two stages of four: test_faults.py sends SIGINT in each, and a build up to a stage costs
# seconds of the suite's ten minutes
@pytest.mark.parametrize("stage", ["solve", "export"])
def test_sigterm_in_a_stage_is_one_line_and_loses_nothing(data, tmp_path, stage):
    folder = tmp_path / "data"
    subprocess.run(["cp", "-a", str(data), str(folder)], check=True)
    before = digests(folder)
    process = start("build", SLOW, "-v", "--data", str(folder))
    lines = until_stage(process, stage)
    sent = time.monotonic()
    process.send_signal(signal.SIGTERM)
    lines += process.stderr.readlines()
    assert process.wait(timeout=30) == 143 and time.monotonic() - sent < WITHIN
    errors = [line for line in lines if line.startswith("error:")]
    assert len(errors) == 1 and errors[0].startswith(f"error: terminated during {stage} {SLOW}"), "".join(lines)
    assert_intact(folder, before)


#: `tablebase build …` whose solve waits in C for a FIFO no one writes (as a plug-in, or
#: DuckDB reading a file, might): no Python handler runs there, so the watcher ends it.
STUCK_IN_SOLVE = """
import sys, duckdb
from pipeline import cli
from pipeline.stages import build
fifo = sys.argv.pop()
def solve(run):
    duckdb.connect().sql(f"SELECT * FROM read_text('{fifo}')").fetchall()
build.solve = solve
sys.argv[0] = "tablebase"
cli.main()
"""


@SIGNALS
def test_a_build_held_in_c_is_ended_and_its_scratch_removed(data, tmp_path, fifo, number):
    folder = tmp_path / "data"
    subprocess.run(["cp", "-a", str(data), str(folder)], check=True)
    before = digests(folder)
    process = start(
        "build", "sticks:rows=3", "-q", "--data", str(folder), str(fifo), command=[sys.executable, "-c", STUCK_IN_SOLVE]
    )
    until(process, lambda: "wait_for_partner" in threads_waiting(process), "opened the FIFO")
    assert (folder / ".staging").exists()
    err = assert_ended_by(process, number)
    assert re.match(r"error: (interrupted|terminated)", err)
    assert_intact(folder, before)


#: Where a data file is read by each command that reads it.
READERS = {
    "catalog.parquet": [["sql", "SELECT 1"], ["probe", "chopsticks", "start"], ["draw", "chopsticks"]],
    "chopsticks/default/tablebase.parquet": [
        ["sql", "SELECT count(*) FROM tablebase"],
        ["probe", "chopsticks", "start"],
    ],
    "chopsticks/default/transitions.parquet": [["sql", "SELECT count(*) FROM transitions"], ["export", "chopsticks"]],
    "chopsticks/default/positions.parquet": [["export", "chopsticks"], ["verify", "chopsticks"]],
    "chopsticks/default/summary.parquet": [["draw", "chopsticks"], ["export", "chopsticks"]],
    "chopsticks/default/solution.parquet": [["verify", "chopsticks"]],
}


@pytest.mark.parametrize("name", list(READERS))
@pytest.mark.parametrize("kind", ["fifo", "device"])
def test_a_fifo_or_device_in_place_of_a_data_file_is_refused_at_once(data, tmp_path, name, kind):
    folder = tmp_path / "data"
    subprocess.run(["cp", "-a", str(data), str(folder)], check=True)
    (folder / name).unlink()
    if kind == "fifo":
        os.mkfifo(folder / name)
    else:
        try:  # /dev/zero's twin: endless bytes
            os.mknod(folder / name, stat.S_IFCHR | 0o644, os.makedev(1, 5))
        except PermissionError:
            pytest.skip("making a device takes root (CAP_MKNOD)")
    for args in READERS[name]:
        extra = ["--out", str(tmp_path / "pages")] if args[0] == "draw" else []
        result = tablebase(*args, *extra, data=folder, timeout=60)
        what = "a FIFO" if kind == "fifo" else "a character device"
        lines = result.stderr.strip().splitlines()  # progress lines, then the error
        errors = [line for line in lines if line.startswith("error:")]
        assert result.returncode == 1 and errors == lines[-1:], (args, result.stderr)
        assert f"is not a regular file but {what}" in errors[0], (args, result.stderr)
