"""Files written whole or not at all: a file or a folder written aside and renamed into
place, and the syncs that make the rename durable. Without pyarrow, for the commands that
only read (pipeline/storage/parquet.py writes Parquet through these)."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside `path`; renamed onto it only if the block completes.

    The file is flushed to the disk before the rename and the rename after it, so a crash
    or power cut leaves the old file or the new one, never a truncated one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        sync(tmp)
        os.replace(tmp, path)
        sync(path.parent)
    finally:
        tmp.unlink(missing_ok=True)


@contextmanager
def atomic_folder(path: Path) -> Iterator[Path]:
    """A temporary folder beside `path`, put in its place (the old folder removed) only if
    the block completes: a failure part-way (a full disk, a refused picture) leaves the old
    folder whole, or none, never one with some files new and some missing.

    A kill between the two renames leaves the old folder hidden beside (`.NAME.old-PID`);
    the next run for `path` removes such leftovers."""
    path.parent.mkdir(parents=True, exist_ok=True)
    for left in path.parent.glob(f".{path.name}.*-*"):  # a killed run's, hidden: never published
        pid = left.name.rpartition("-")[2]
        if left.is_dir() and not left.is_symlink() and pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(left, ignore_errors=True)
    tmp = path.with_name(f".{path.name}.new-{os.getpid()}")
    old = path.with_name(f".{path.name}.old-{os.getpid()}")
    tmp.mkdir()
    try:
        yield tmp
        for child in tmp.iterdir():
            sync(child)
        if path.is_symlink() or path.exists():
            os.rename(path, old)
        os.rename(tmp, path)
        sync(path.parent)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
        if old.is_symlink():
            old.unlink()
        elif old.exists():
            shutil.rmtree(old, ignore_errors=True)


def _alive(pid: int) -> bool:
    """Whether process `pid` runs (on this machine): its leftovers are not yet leftovers."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except (PermissionError, OSError):
        return True
    return True


def sync(path: Path) -> None:
    """fsync a file or a folder (a folder's entries: a rename is durable once it is synced)."""
    if path.is_dir() and os.name == "nt":
        return  # Windows cannot open a folder to sync it
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)
