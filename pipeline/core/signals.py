"""SIGINT and SIGTERM end every command within two seconds, whatever it is waiting on.

Python runs a signal's handler in the main thread, between two steps of Python code, so a
main thread held in C never sees it: DuckDB's client looks for signals only between its
tasks (a `sleep_ms`, a read that blocks, are one task), and opening a FIFO that no one
writes waits for ever. So a watcher thread wakes on every signal (Python's wakeup fd, which
its C-level handler writes whatever the main thread does): it interrupts the DuckDB
connections that run a statement (`interrupting`), and where the command has not ended
GRACE seconds later, removes this process's scratch (`scratch`) and ends the process with
the line and status the command line gives an interrupted command.

Only the standard library: the command line installs the watcher before anything heavy loads.
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import Protocol

#: Seconds the command has to end by itself after a signal (measured: an interrupted
#: DuckDB statement and a build's unwinding take 0.1-0.3 s) before the watcher ends it.
GRACE = 1.5

#: The signals received, in order (SIGINT, SIGTERM): the first decides nothing, a SIGTERM
#: among them makes the status 143.
received: list[int] = []

#: Taken by whoever writes the last line and ends the process (the main thread or the
#: watcher), never released: one line, one status.
_leaving = threading.Lock()


class Interruptible(Protocol):
    def interrupt(self) -> None: ...


_running: set[Interruptible] = set()
_scratch: dict[Path, Path] = {}  # folder: the folder below which emptied parents go
_guard = threading.Lock()


def note(number: int) -> None:
    """Record that signal `number` arrived (the handlers' and the watcher's record)."""
    if number in (signal.SIGINT, signal.SIGTERM):
        received.append(number)


def status() -> int | None:
    """The exit status the signals received ask for: 143 after a SIGTERM, 130 after a
    SIGINT; None where none came."""
    if signal.SIGTERM in received:
        return 143
    return 130 if received else None


def watch(last_words: Callable[[], str]) -> None:
    """Start the watcher (from the main thread, once its handlers are installed);
    `last_words()` is the line the process ends with when the watcher ends it."""
    reader, writer = socket.socketpair()
    writer.setblocking(False)
    signal.set_wakeup_fd(writer.fileno(), warn_on_full_buffer=False)
    threading.Thread(target=_watch, args=(reader, writer, last_words), name="signals", daemon=True).start()


def _watch(reader: socket.socket, writer: socket.socket, last_words: Callable[[], str]) -> None:
    deadline = None
    while True:  # `writer` is kept referenced here: closed, the wakeup fd would be another file's
        reader.settimeout(None if deadline is None else max(0.0, deadline - time.monotonic()))
        try:
            got = reader.recv(64)
        except TimeoutError:
            got = b""
        for number in got:
            if number in (signal.SIGINT, signal.SIGTERM):
                note(number)
                deadline = deadline or time.monotonic() + GRACE
                _interrupt_running()
        if deadline is not None and time.monotonic() >= deadline:
            leave(last_words())


def _interrupt_running() -> None:
    with _guard:
        running = list(_running)
    for con in running:
        with suppress(Exception):  # a connection closed meanwhile has nothing to interrupt
            con.interrupt()


def leave(line: str, code: int | None = None) -> None:
    """Remove this process's scratch, write `line` to stderr and end the process at once
    with `code` (the signals' status by default). The first caller wins; any later one
    waits here until the process is gone."""
    _leaving.acquire()
    with _guard:
        folders = list(_scratch.items())
    for folder, root in folders:
        shutil.rmtree(folder, ignore_errors=True)
        for parent in folder.parents:  # .staging/<pid>, .staging: as `DataDir.drop` leaves them
            if parent == root or not parent.is_relative_to(root):
                break
            try:
                parent.rmdir()
            except OSError:  # not empty: another process's scratch
                break
    for stream in (sys.stdout, sys.stderr):
        try:  # noqa: SIM105 - whatever is left unwritten of the output, the line must go out
            stream.flush()
        except BaseException:  # noqa: BLE001
            pass
    os.write(2, f"error: {line}\n".encode(errors="replace"))
    os._exit(code if code is not None else status() or 130)


@contextmanager
def interrupting(con: Interruptible) -> Iterator[None]:
    """While the block runs `con`'s statements, a signal interrupts `con` (DuckDB then raises
    its InterruptException in the thread that runs them)."""
    with _guard:
        _running.add(con)
    try:
        yield
    finally:
        with _guard:
            _running.discard(con)


def scratch(folder: Path, root: Path) -> None:
    """Have `folder` removed if the watcher must end the process, and its parents below
    `root` that this leaves empty."""
    with _guard:
        _scratch[folder] = root


def scratch_gone(folder: Path) -> None:
    """`folder` is removed (or no longer this process's to remove)."""
    with _guard:
        _scratch.pop(folder, None)
