"""`tablebase ARGS` run in this process, as the installed script runs it (pipeline.cli.main),
for tests that check only what a command prints and its exit status.

A new Python for each command line costs about a CPU-second of start-up and imports, and
the suite ran hundreds of them. Tests about the process itself (signals, kills, start-up,
the real entry point's exit) keep starting one. Tests that need a process of their own but
not its start (a memory limit, a plug-in on PYTHONPATH, a device as standard output) fork
one from a process with the libraries loaded (`forked`, tests/zygote.py).
"""

from __future__ import annotations

import faulthandler
import io
import logging
import os
import signal
import subprocess
import sys
from contextlib import chdir, redirect_stderr, redirect_stdout
from pathlib import Path
from typing import IO


def tablebase(
    *args: str, data: Path | None = None, input: str | bytes = b"", cwd: Path | None = None, timeout: float = 300
) -> subprocess.CompletedProcess[str]:
    """Run `tablebase ARGS [--data DATA]` with `input` on standard input, in `cwd` (this
    one by default): its exit status and what it wrote, as subprocess.run(text=True) gives them.
    A command still running after `timeout` seconds ends this process, its threads' stacks
    printed: a command held for ever (a FIFO opened) fails the test rather than hang the suite."""
    from pipeline import cli
    from pipeline.storage import progress

    argv = ["tablebase", *args, *(["--data", str(data)] if data is not None else [])]
    raw = input.encode() if isinstance(input, str) else input
    # byte streams under the text ones, as a process has: commands read stdin.buffer
    stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    out, err = io.BytesIO(), io.BytesIO()
    stdout = io.TextIOWrapper(out, encoding="utf-8", write_through=True)
    stderr = io.TextIOWrapper(err, encoding="utf-8", write_through=True)
    # what main changes for the process it expects to end: handlers, hooks, --debug's variable
    saved = sys.argv, sys.stdin, signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)
    hook, environ = sys.unraisablehook, dict(os.environ)
    # and the logging it configures (progress.configure), which later tests in this process
    # would otherwise log through, and whose cached levels they would see
    root, loggers = logging.getLogger(), [logging.getLogger(), progress.log, logging.getLogger("filelock")]
    handlers, levels, drawn = (
        root.handlers[:],
        [each.level for each in loggers],
        (progress._console, progress._heartbeat),
    )
    sys.argv, sys.stdin = argv, stdin
    faulthandler.dump_traceback_later(timeout, exit=True)
    try:
        with chdir(cwd or os.getcwd()), redirect_stdout(stdout), redirect_stderr(stderr):
            try:
                cli.main()
                status = 0
            except SystemExit as leaving:
                status = leaving.code if isinstance(leaving.code, int) else 1
    finally:
        faulthandler.cancel_dump_traceback_later()
        sys.argv, sys.stdin = saved[0], saved[1]
        signal.signal(signal.SIGINT, saved[2])
        signal.signal(signal.SIGTERM, saved[3])
        sys.unraisablehook = hook
        os.environ.clear()
        os.environ.update(environ)
        root.handlers[:] = handlers
        for each, level in zip(loggers, levels, strict=True):
            each.setLevel(level)  # which also empties every logger's cache of levels
        progress._console, progress._heartbeat = drawn
    return subprocess.CompletedProcess(
        argv, status, out.getvalue().decode(errors="replace"), err.getvalue().decode(errors="replace")
    )


class _Zygote:
    """tests/zygote.py, started on first use by this test process and ended with it."""

    def __init__(self) -> None:
        import atexit
        import socket
        import threading

        self.lock = threading.Lock()
        self.control, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        self.process = subprocess.Popen(
            [sys.executable, "-m", "tests.zygote", str(theirs.fileno())],
            pass_fds=[theirs.fileno()],
            cwd=Path(__file__).resolve().parent.parent,
            stdin=subprocess.DEVNULL,
        )
        theirs.close()
        atexit.register(self.close)

    def close(self) -> None:
        self.control.close()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()

    def run(self, request: dict, fds: list[int], timeout: float) -> tuple[int, int]:
        """(pid, exit status) of the child forked for `request`; the child is killed after
        `timeout` seconds (subprocess.TimeoutExpired)."""
        import json
        import socket

        with self.lock:
            socket.send_fds(self.control, [json.dumps(request).encode()], fds)
            self.control.settimeout(60)
            started = self.control.recv(1 << 16)
            if not started:
                raise RuntimeError(f"tests/zygote.py ended (exit status {self.process.poll()}) before forking")
            pid = json.loads(started)["pid"]
            self.control.settimeout(timeout)
            try:
                answer = self.control.recv(1 << 16)
            except TimeoutError:
                os.kill(pid, signal.SIGKILL)
                self.control.settimeout(60)
                self.control.recv(1 << 16)
                raise subprocess.TimeoutExpired(request["argv"], timeout) from None
            return pid, json.loads(answer)["status"]


_zygote: _Zygote | None = None


def forked(
    *args: str,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    input: str | None = None,
    timeout: float = 300,
    limit: int | None = None,
    stdout: IO | None = None,
) -> subprocess.CompletedProcess[str]:
    """`python -m pipeline ARGS` as subprocess.run(capture_output=True, text=True) gives it,
    in a process forked from one with the libraries loaded (tests/zygote.py): for tests of
    what a command says and its exit status that need a process of their own (a memory
    limit, a plug-in on PYTHONPATH, a device as its standard output), not of the process's
    start. `limit`: its address space in bytes. Standard input is `input`, else empty;
    standard output the open file `stdout` (and the result's stdout None), else captured."""
    import tempfile

    global _zygote
    if _zygote is None:
        _zygote = _Zygote()
    with tempfile.TemporaryFile() as stdin, tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        stdin.write((input or "").encode())
        stdin.seek(0)
        request = {
            "argv": list(args),
            "env": dict(os.environ if env is None else env),
            "cwd": str(cwd or os.getcwd()),
            "limit": limit,
        }
        given = stdout.fileno() if stdout is not None else out.fileno()
        _, status = _zygote.run(request, [stdin.fileno(), given, err.fileno()], timeout)
        out.seek(0)
        err.seek(0)
        said = None if stdout is not None else out.read().decode(errors="replace")
        return subprocess.CompletedProcess(["tablebase", *args], status, said, err.read().decode(errors="replace"))
