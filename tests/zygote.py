"""A process that has the libraries every command imports loaded, and forks a command line
for each request: `python -m pipeline ARGS` without the half-second of imports.

`python -m pipeline` spends about 0.55 of its 0.65 s start importing NumPy, pyarrow, DuckDB
and Typer. The suite ran about 250 command lines in processes of their own (most to hold
one under a limit on its memory, or to load a plug-in from its PYTHONPATH); those that
only check what a command says and its exit status are forked from here instead
(tests/command.py's `forked`). The pipeline itself is not loaded here: each child imports
it, reads its environment and finds its plug-ins as a new process would. Tests of the
process itself (signals, kills, start-up, imports) still start a real one.

Run as `python -m tests.zygote FD`, FD a SOCK_SEQPACKET socket. A request is one message:
JSON {argv, env, cwd, limit} with three descriptors (standard input, output and error);
the answer is {"pid": N}, then {"status": S} when the child ends (S as subprocess gives:
the exit status, or minus the signal that ended it). One request at a time.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import resource
import runpy
import signal
import socket
import sys
import traceback

MESSAGE = 1 << 20


def _preload() -> None:
    """What every command imports before its work: loaded once here."""
    if os.environ.get("TABLEBASE_HUGEPAGES") != "1":  # as pipeline.cli.small_pages does before NumPy loads
        os.environ.setdefault("NUMPY_MADVISE_HUGEPAGE", "0")
    import click  # noqa: F401
    import duckdb  # noqa: F401
    import numpy  # noqa: F401
    import pyarrow
    import pyarrow.parquet  # noqa: F401
    import typer  # noqa: F401


def _child(request: dict, fds: list[int], control: socket.socket) -> None:
    """In the forked child: become `python -m pipeline ARGS` in the request's folder, with
    its environment, standard streams and address-space limit; never returns."""
    control.close()
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    code = 1
    try:
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        # sys.path as `python -m` makes it: the working folder first, then PYTHONPATH's
        extra = [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry]
        sys.path[:] = [os.getcwd(), *extra, *sys.path[1:]]
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 - the process's own
        sys.stdout = open(1, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", encoding="utf-8", closefd=False)  # noqa: SIM115
        if request.get("limit"):
            resource.setrlimit(resource.RLIMIT_AS, (request["limit"], request["limit"]))
        sys.argv = ["-m", *request["argv"]]
        try:
            runpy.run_module("pipeline", run_name="__main__", alter_sys=True)
            code = 0
        except SystemExit as leaving:
            if leaving.code is None or isinstance(leaving.code, int):
                code = leaving.code or 0
            else:
                print(leaving.code, file=sys.stderr)
                code = 1
        except KeyboardInterrupt:
            traceback.print_exc()
            code = -signal.SIGINT
        except BaseException:  # noqa: BLE001 - a traceback, as Python prints one
            traceback.print_exc()
            code = 1
        atexit._run_exitfuncs()
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(BaseException):  # a closed or full stream: as Python ends
                stream.flush()
        if code < 0:  # ended by a signal, as Python ends on an unhandled KeyboardInterrupt
            signal.signal(-code, signal.SIG_DFL)
            os.kill(os.getpid(), -code)
        os._exit(code)


def main() -> None:
    control = socket.socket(fileno=int(sys.argv[1]))
    _preload()
    while True:
        try:
            message, fds, _, _ = socket.recv_fds(control, MESSAGE, 3)
        except (ConnectionResetError, OSError):
            return
        if not message:  # the test process ended
            return
        request = json.loads(message)
        pid = os.fork()
        if pid == 0:
            _child(request, fds, control)
        for fd in fds:
            os.close(fd)
        control.send(json.dumps({"pid": pid}).encode())
        _, status = os.waitpid(pid, 0)
        control.send(json.dumps({"status": os.waitstatus_to_exitcode(status)}).encode())


if __name__ == "__main__":
    main()
