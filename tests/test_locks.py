"""Processes sharing a data folder: its locks (DataDir.lock) and each process's claim on its
scratch (DataDir.claim, seen by `sweep`), held across processes through filelock, also
where Python has no fcntl (Windows), where the folder used to take no lock at all."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.datadir.layout import DataDir

ROOT = Path(__file__).resolve().parent.parent

#: What each process runs first: Python as it is, or as on Windows, without fcntl.
PLATFORMS = {"fcntl": "", "no fcntl": "import sys; sys.modules['fcntl'] = None\n"}


def start(platform: str, code: str, data: Path) -> subprocess.Popen:
    """A process running `code` with `data` the DataDir over the folder; it says `ready`
    once it holds what it takes, and ends when its standard input closes."""
    script = f"{PLATFORMS[platform]}import sys\nfrom pathlib import Path\nfrom pipeline.datadir.layout import DataDir\ndata = DataDir(Path({str(data)!r}))\n"
    process = subprocess.Popen(
        [sys.executable, "-c", script + code],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    assert process.stdout is not None
    line = process.stdout.readline()
    assert line == "ready\n", line + process.communicate()[1]
    return process


def end(process: subprocess.Popen) -> None:
    _, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr


def run(platform: str, code: str, data: Path) -> str:
    script = f"{PLATFORMS[platform]}from pathlib import Path\nfrom pipeline.datadir.layout import DataDir\ndata = DataDir(Path({str(data)!r}))\n"
    done = subprocess.run([sys.executable, "-c", script + code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


TRY_PUBLISH = """
from pipeline.core.errors import DataError
try:
    with data.lock("publish", wait=False, busy="busy"):
        print("free")
except DataError as error:
    print(error)
"""


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_lock_held_by_one_process_is_busy_for_another(tmp_path, platform):
    holder = start(
        platform, 'with data.lock("publish"):\n    print("ready", flush=True)\n    sys.stdin.read()\n', tmp_path
    )
    assert run(platform, TRY_PUBLISH, tmp_path) == "busy"
    end(holder)
    assert run(platform, TRY_PUBLISH, tmp_path) == "free"


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_lock_is_taken_again_within_its_process(tmp_path, platform):
    code = 'with data.lock("publish"), data.lock("publish", wait=False):\n    print("twice")\n' + TRY_PUBLISH
    assert run(platform, code, tmp_path).split("\n") == ["twice", "free"]


@pytest.mark.parametrize("platform", PLATFORMS)
def test_a_running_process_keeps_its_claim_and_an_ended_ones_is_swept(tmp_path, platform):
    claimer = start(platform, 'data.claim()\nprint("ready", flush=True)\nsys.stdin.read()\n', tmp_path)
    lock_file = tmp_path / ".locks" / f"process.{claimer.pid}.lock"
    runs = f"print(data._runs({str(claimer.pid)!r}))"
    assert lock_file.exists()
    assert run(platform, runs, tmp_path) == "True"
    run(platform, "data.sweep()", tmp_path)
    assert lock_file.exists()  # its process runs: left alone
    end(claimer)
    assert run(platform, runs, tmp_path) == "False"
    run(platform, "data.sweep()", tmp_path)
    assert not lock_file.exists()


def test_a_claim_is_taken_again_after_the_folder_is_replaced(tmp_path):
    data = DataDir(tmp_path / "data")
    data.root.mkdir()
    data.claim()
    lock_file = data.root / ".locks" / f"process.{os.getpid()}.lock"
    assert lock_file.exists()
    lock_file.unlink()  # as when the data folder is deleted and made again under a process
    data.claim()
    assert lock_file.exists()
