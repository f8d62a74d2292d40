"""Progress of long stages, on stderr through the `tablebase` logger.

A stage (`enumerate chopsticks`, `solve …`, `verify …`, `export …`, `publish …`) is a
`Stage`. What it shows depends on `configure`, which the commands call:

- on a terminal, one Rich progress bar per stage, with its counts and time left (where
  the stage can tell its share done; enumerate cannot: games do not know their move count
  before generating them), left on screen when the stage ends; the line fits the
  terminal's width, 80 columns included (`_Line`);
- elsewhere (a pipe, a file, CI), one line per stage when it ends, with its counts and time,
  and every HEARTBEAT seconds while it runs a line saying where it is (`Stage.beat`), so
  that a long stage's log shows it is alive;
- with -v also a line when a stage begins and its per-rank and per-level lines
  (`log.debug`); with -q nothing but warnings and errors.

Without `configure` (the library used from Python), stages only log, at INFO when they end.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, TypeAlias

log = logging.getLogger("tablebase")

#: The innermost stage an exception last left (e.g. "solve chopsticks"), for error messages.
failed_in: list[str] = []

#: The Rich console bars are drawn on, when `configure` found stderr to be a terminal.
_console: Any = None

#: Seconds between a running stage's lines off a terminal; None: no such lines (the
#: library used from Python, or -q).
HEARTBEAT = 30.0
_heartbeat: float | None = None


def configure(quiet: bool = False, verbose: bool = False) -> None:
    """Log to stderr: warnings only if `quiet`, per-rank and per-level lines too if
    `verbose`; on a terminal (unless `quiet`) stages draw progress bars and log lines
    print above them."""
    global _console
    level = logging.WARNING if quiet else logging.DEBUG if verbose else logging.INFO
    console = None
    if not quiet and (_isatty(sys.stderr) or os.environ.get("TTY_COMPATIBLE") or os.environ.get("FORCE_COLOR")):
        from rich.console import Console  # 40 ms of start-up: only where bars may be drawn

        console = Console(stderr=True)
    bars = console is not None and console.is_terminal and not console.is_dumb_terminal
    handler = _ConsoleHandler(console) if bars else logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(message)s", datefmt="%H:%M:%S"))
    logging.basicConfig(level=level, handlers=[handler], force=True)
    log.setLevel(logging.NOTSET)  # the root's level decides, whatever an earlier caller set
    # filelock says at DEBUG every time a data folder's lock is taken and let go: its own news
    logging.getLogger("filelock").setLevel(logging.WARNING)
    _console = console if bars else None
    global _heartbeat
    _heartbeat = HEARTBEAT if not quiet and not bars else None


def _isatty(stream: Any) -> bool:
    """Whether `stream` says it is a terminal (False where it cannot say)."""
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):
        return False


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
        self._done: float | None = None  # share of the stage done, where it can tell
        self._count: Count = ""
        self._beating: threading.Event | None = None
        self._expected: tuple[float, float] | None = None  # (when, seconds) of a statement `expecting` waits on

    def __enter__(self) -> Stage:
        self.start = time.perf_counter()
        failed_in.clear()
        log.debug("%s …", self.what)
        if _console is not None and log.isEnabledFor(logging.INFO):
            self._bar = _progress(_console)
            self._task = self._bar.add_task(self.what, total=None, count="")
            self._bar.start()
        elif _heartbeat is not None and log.isEnabledFor(logging.INFO):
            self._beating = threading.Event()
            self._beater = threading.Thread(target=self._beats, args=(self._beating, _heartbeat), daemon=True)
            self._beater.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.seconds = time.perf_counter() - self.start
        if self._beating is not None:  # stopped before the stage's last line, so none comes after it
            self._beating.set()
            self._beater.join()
        if exc[0] is None:
            self._end_phase()
            if self._bar is not None:
                self._bar.update(self._task, description=self.what, total=1, completed=1, count=self.summary)
            else:
                log.info("%s: %s in %.2f s", self.what, self.summary or "done", self.seconds)
        elif not failed_in:
            failed_in.append(self.what)
        if self._bar is not None:
            self._bar.stop()

    def _beats(self, stop: threading.Event, seconds: float) -> None:
        while not stop.wait(seconds):
            self.beat()

    def beat(self) -> None:
        """Log where the stage is: its phase, its count, the time so far and, where it can
        tell its share done, the time left (off a terminal, every HEARTBEAT seconds)."""
        now = time.perf_counter()
        elapsed, done, expected = now - self.start, self._done, self._expected
        if expected is not None:
            done = self._before + self._share * min(0.95, (now - expected[0]) / max(expected[1], 0.01))
        where = ": ".join(part for part in (self._phase, _count_text(self._count)) if part)
        left = _left(elapsed, done)
        log.info(
            "%s: %s%s so far%s",
            self.what,
            f"{where}, " if where else "",
            _clock(elapsed),
            "" if left is None else f", about {_clock(left)} left",
        )

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
        self._show(None if of is None else done / of if of else 1.0, (done, of, unit))

    @contextmanager
    def expecting(self, seconds: float, count: str = "") -> Iterator[None]:
        """While the block runs one long statement that reports no progress of its own
        (DuckDB's estimate of a join and aggregation stops at a few percent, Spark's is per
        job), move the bar through the phase as time passes against `seconds`, the time the
        statement is expected to take (a stage's model, measured), never past 95% of it."""
        if self._bar is None:  # the heartbeat's lines (`beat`) move through the phase as time passes
            self._show(0.0, count)
            self._expected = (time.perf_counter(), seconds)
            try:
                yield
            finally:
                self._expected = None
            self._show(1.0, count)
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

    def _show(self, fraction: float | None, count: Count) -> None:
        self._count = count
        if fraction is not None:
            self._done = min(1.0, self._before + self._share * fraction)
        if self._bar is None:
            return
        if fraction is None:
            self._bar.update(self._task, description=self.what, phase=self._phase, count=count)
        else:
            self._bar.update(
                self._task, description=self.what, phase=self._phase, count=count, total=1.0, completed=self._done
            )


#: What a stage has counted: text, or (done, of or None, unit) for `_count_text` to write.
Count: TypeAlias = "str | tuple[int, int | None, str]"


def _count_text(count: Count, short: bool = False) -> str:
    """A stage's count in words; `short`: large numbers in k, M or G, to fit 80 columns."""
    if isinstance(count, str):
        return count
    done, of, unit = count
    number = _short if short else "{:,}".format
    return f"{number(done)} {unit}" if of is None else f"{number(done)} of {number(of)} {unit}"


def _short(number: int) -> str:
    for size, suffix in ((10**9, " G"), (10**6, " M"), (10**4, " k")):
        if number >= size:
            scaled = number / size if suffix != " k" else number / 1000
            return f"{scaled:.1f}{suffix}" if scaled < 100 else f"{scaled:.0f}{suffix}"
    return f"{number:,}"


def _left(elapsed: float, done: float | None) -> float | None:
    """Time left at the pace so far, where the share done is known and not nothing."""
    return None if not done else elapsed * (1 - done) / done


#: Columns a bar takes at most and at least: 30 where there is room, 10 at 80 columns.
BAR_WIDEST, BAR_NARROWEST = 30, 10
#: Columns a stage's name is padded to where there is room, so that a build's bars line up.
NAME_COLUMNS = 40


def _line(
    width: int,
    what: str,
    phase: str,
    count: Count,
    done: float | None,
    elapsed: float,
    left: float | None,
    finished: bool,
) -> list[tuple[str, str]]:
    """A stage's line in `width` columns, as (text, style) pieces. While the stage runs its
    counts and times are kept whole: numbers are shortened (k, M, G) where the exact ones do
    not fit, the bar narrowed to 10 columns, then the stage's name cut before its phase
    (`solve chopsticks:fi…: by rank`). A finished stage's line drops its bar where it does
    not fit, and wraps rather than lose a word of its summary."""
    times = (
        f"in {_clock(elapsed)}" if finished else _clock(elapsed) + ("" if left is None else f", {_clock(left)} left")
    )
    name = what if finished or not phase else f"{what}: {phase}"
    counts = _count_text(count)
    narrowest = 0 if finished else BAR_NARROWEST
    if not finished and len(name) + len(counts) + len(times) + narrowest + 3 > width:
        counts = _count_text(count, short=True)
    fixed = len(times) + (len(counts) + 1 if counts else 0) + 2  # the spaces around the bar
    room = width - fixed - narrowest
    if len(name) > room and not finished:
        keep = f": {phase}" if phase and len(phase) + 3 < room else ""
        name = what[: max(0, room - len(keep) - 1)] + "…" + keep
    column = max(len(name), min(NAME_COLUMNS, room))
    bar = max(narrowest, min(BAR_WIDEST, width - fixed - column))
    if finished and bar < BAR_NARROWEST:
        bar = 0
    filled = round(bar * (1.0 if finished else done or 0.0))
    pieces = [(name.ljust(column), "")]
    if bar:
        pieces += [
            (" ", ""),
            ("━" * filled, "bar.finished" if finished else "bar.complete"),
            ("━" * (bar - filled), "bar.back"),
        ]
    if counts:
        pieces += [(" ", ""), (counts, "progress.download")]
    return pieces + [(" ", ""), (times, "progress.elapsed")]


def _progress(console: Any) -> Any:
    from rich.progress import Progress, ProgressColumn
    from rich.text import Text

    class Line(ProgressColumn):
        """The whole line, laid out for the terminal's width as it is now (`_line`)."""

        def render(self, task: Any) -> Text:
            elapsed = task.finished_time if task.finished else task.elapsed or 0.0
            done = task.completed if task.total else None
            text = Text(no_wrap=not task.finished, overflow="crop")
            for piece, style in _line(
                console.width - 1,
                task.description,
                task.fields.get("phase", ""),
                task.fields.get("count", ""),
                done,
                elapsed,
                _left(elapsed, done),
                task.finished,
            ):
                text.append(piece, style=style or None)
            return text

    return Progress(Line(), console=console, transient=False, redirect_stdout=False, redirect_stderr=False)


def _clock(seconds: float) -> str:
    seconds = int(seconds + 0.5)
    return (
        f"{seconds // 3600}:{seconds // 60 % 60:02d}:{seconds % 60:02d}"
        if seconds >= 3600
        else f"{seconds // 60}:{seconds % 60:02d}"
    )
