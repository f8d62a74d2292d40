"""Progress of long stages, on stderr through the `tablebase` logger.

A stage (`enumerate chopsticks`, `solve …`, `verify …`, `export …`, `publish …`) is a
`Stage`. What it shows depends on `configure`, which the commands call:

- on a terminal, one Rich progress bar per stage, with its counts and time left (where
  the stage can tell its share done; enumerate cannot: games do not know their move count
  before generating them), left on screen when the stage ends;
- elsewhere (a pipe, a file, CI), one line per stage when it ends, with its counts and time;
- with -v also a line when a stage begins and its per-rank and per-level lines
  (`log.debug`); with -q nothing but warnings and errors.

Without `configure` (the library used from Python), stages only log, at INFO when they end.
"""

from __future__ import annotations

import logging
import sys
import threading
import time
from contextlib import contextmanager
from typing import Any, Iterator

log = logging.getLogger("tablebase")

#: The innermost stage an exception last left (e.g. "solve chopsticks"), for error messages.
failed_in: list[str] = []

#: The Rich console bars are drawn on, when `configure` found stderr to be a terminal.
_console: Any = None


def configure(quiet: bool = False, verbose: bool = False) -> None:
    """Log to stderr: warnings only if `quiet`, per-rank and per-level lines too if
    `verbose`; on a terminal (unless `quiet`) stages draw progress bars and log lines
    print above them."""
    global _console
    from rich.console import Console

    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    console = Console(stderr=True)
    bars = not quiet and console.is_terminal and not console.is_dumb_terminal
    handler = _ConsoleHandler(console) if bars else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    log.setLevel(logging.NOTSET)  # the root's level decides, whatever an earlier caller set
    _console = console if bars else None


class _ConsoleHandler(logging.Handler):
    """Log lines printed through the bars' console, so they land above a bar being drawn."""

    def __init__(self, console: Any):
        super().__init__()
        self.console = console

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.console.print(self.format(record), markup=False, highlight=False, soft_wrap=True)
        except Exception:  # noqa: BLE001 - logging never raises
            self.handleError(record)


class Stage:
    """One stage of work, `what` (e.g. "solve chopsticks"): a progress bar on a terminal,
    one line when it ends elsewhere (`summary`, set by the stage, says what it did).

    The stage moves the bar through its phases: `phase(name, share)` starts one that takes
    about `share` of the stage's time, then `count(done, of)` or `expecting(seconds)` say
    how far into it the stage is.
    """

    def __init__(self, what: str, unit: str = "positions"):
        self.what = what
        self.unit = unit
        self.summary = ""
        self._bar: Any = None
        self._before = 0.0  # share of the stage done before the current phase
        self._share = 0.0  # share of the current phase
        self._phase = ""

    def __enter__(self) -> "Stage":
        self.start = time.perf_counter()
        failed_in.clear()
        log.debug("%s …", self.what)
        if _console is not None and log.isEnabledFor(logging.INFO):
            self._bar = _progress(_console)
            self._task = self._bar.add_task(self.what, total=None, count="")
            self._bar.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
        if exc[0] is None:
            self._end_phase()
            if self._bar is not None:
                self._bar.update(self._task, description=self.what, total=1, completed=1,
                                 count=self.summary)
            else:
                log.info("%s: %s in %.2f s", self.what, self.summary or "done", self.seconds)
        elif not failed_in:
            failed_in.append(self.what)
        if self._bar is not None:
            self._bar.stop()

    def phase(self, name: str, share: float) -> None:
        """Begin the phase `name`, about `share` (0..1) of the stage's time (the one before
        ends: its time is logged with -v, for benchmarks/run.py's breakdown)."""
        self._end_phase()
        self._before = min(1.0, self._before + self._share) if self._phase else 0.0
        self._phase, self._share = name, share
        self._phase_start = time.perf_counter()
        self._show(0.0, "")

    def _end_phase(self) -> None:
        if self._phase:
            log.debug("%s: %s: done in %.2f s", self.what, self._phase, time.perf_counter() - self._phase_start)

    def count(self, done: int, of: int | None = None, unit: str | None = None) -> None:
        """`done` of `of` of the phase's units (positions unless `unit`); no `of`: the
        stage cannot tell how many there will be."""
        unit = unit or self.unit
        if of is None:
            self._show(None, f"{done:,} {unit}")
        else:
            self._show(done / of if of else 1.0, f"{done:,} of {of:,} {unit}")

    @contextmanager
    def expecting(self, seconds: float, count: str = "") -> Iterator[None]:
        """While the block runs one long statement that reports no progress of its own
        (DuckDB's estimate of a join and aggregation stops at a few percent, Spark's is per
        job), move the bar through the phase as time passes against `seconds`, the time the
        statement is expected to take (a stage's model, measured), never past 95% of it."""
        if self._bar is None:
            yield
            return
        began = time.perf_counter()
        stop = threading.Event()

        def tick() -> None:
            while not stop.wait(0.2):
                self._show(min(0.95, (time.perf_counter() - began) / max(seconds, 0.01)), count)

        self._show(0.0, count)
        ticker = threading.Thread(target=tick, daemon=True)
        ticker.start()
        try:
            yield
        finally:
            stop.set()
            ticker.join()
        self._show(1.0, count)

    def _show(self, fraction: float | None, count: str) -> None:
        if self._bar is None:
            return
        description = f"{self.what}: {self._phase}" if self._phase else self.what
        if fraction is None:
            self._bar.update(self._task, description=description, count=count)
        else:
            self._bar.update(self._task, description=description, count=count, total=1.0,
                             completed=min(1.0, self._before + self._share * fraction))


def _progress(console: Any) -> Any:
    from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn
    from rich.table import Column
    from rich.text import Text

    class Times(ProgressColumn):
        """Time spent, and time left where the stage can tell its share done."""

        def render(self, task: Any) -> Text:
            if task.finished:
                return Text(f"in {_clock(task.finished_time)}")
            left = task.time_remaining if task.total else None
            return Text(_clock(task.elapsed or 0) + ("" if left is None else f", {_clock(left)} left"))

    # one width for every stage's name, so that the bars of a build line up
    return Progress(TextColumn("{task.description}", table_column=Column(min_width=40)), BarColumn(bar_width=30), TextColumn("{task.fields[count]}"), Times(),
                    console=console, transient=False, redirect_stdout=False, redirect_stderr=False)


def _clock(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}" if seconds >= 3600 \
        else f"{seconds // 60}:{seconds % 60:02d}"
