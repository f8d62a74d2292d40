"""The benchmark suite: time and size every pipeline stage on growing chopsticks rulesets,
then on rulesets of other games (4×4 tic-tac-toe: ties, a game that is not impartial).

    make bench
    .venv/bin/python benchmarks/run.py [--sizes ID ...] [--others ID ...] [--out FILE] [--data DIR]
        [--repeat N] [--commit REV] [--update-doc] [--wait-quiet S] [--quiet-stages] [--no-whole-build]
        [--engine duckdb|spark [--spark-cluster WORKERS]]

For each ruleset every stage runs as its own child process of the CLI
(`python -m pipeline STAGE RULESET --data DIR`), so each stage is measured alone: wall
seconds, CPU seconds, the child's peak resident memory (ru_maxrss from os.wait4), and
the CPU time the rest of the machine used meanwhile (from /proc/stat: the machine has
2 cores and is shared, so that figure says whether a number is inflated). The stages
log (unless --quiet-stages, which passes -q), and the pipeline's own timers are read
from the log: in-process seconds, and the solve stage's parts.

Right after the solve stage the NumPy yardstick (benchmarks/yardstick.py) solves the same
files in its own child process; its answer must equal the pipeline's position by
position. Last, the whole build runs again as one process (`python -m pipeline build`),
as `make all` runs it. Positions and transitions come from the Parquet metadata of the
stage outputs.

Output: progress lines while running, markdown tables at the end. --out FILE also writes
them (JSON if FILE ends in .json, markdown otherwise); --update-doc rewrites the
generated part of BENCHMARKS.md (between its marker comments). --commit REV benchmarks
pipeline/ as committed at REV (extracted with git archive) instead of the working tree.
Exit status 1 if a stage fails or the yardstick disagrees with the pipeline.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import os
import platform
import re
import resource
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
sys.path.insert(0, str(ROOT / "benchmarks"))
import yardstick  # noqa: E402  (benchmarks/ is not a package)

#: Growing sizes ending at the target ruleset (positions, transitions):
#: 0.51 M / 2.9 M, 1.9 M / 11 M, 2.4 M / 12 M, 9.4 M / 65 M.
DEFAULT_SIZES = [
    "chopsticks:fingers=10,hands=4",
    "chopsticks:fingers=12,hands=4",
    "chopsticks:fingers=20,hands=3",
    "chopsticks:fingers=15,hands=4",
]
#: Other games, measured the same way after the sizes and left out of the growth table
#: (which follows one game as it grows): 4×4 tic-tac-toe with three in a row, 6.0 M / 23 M,
#: solved rank by rank with ties.
OTHER_GAMES = ["tictactoe:cols=4,rows=4"]
STAGES = ["enumerate", "solve", "verify", "export"]
#: The stage whose output file carries the row count reported for it.
OUTPUTS = {"enumerate": "transitions", "solve": "solution", "verify": "verification", "export": "tablebase"}
DOC = ROOT / "BENCHMARKS.md"
#: The source tree whose `pipeline` package the children run (the working tree unless --commit).
CODE = ROOT
BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
#: Seconds between "still running" lines.
HEARTBEAT = 20.0
#: With --wait-quiet: a child starts once the rest of the machine uses less than this many cores.
QUIET_CORES = 0.25
#: A run during which the rest of the machine used more than this many cores on average
#: competed for the CPU; with --retries it is run again.
CONTENDED_CORES = 0.1
#: The pipeline's Timer lines ("HH:MM:SS what: done in 1.23 s"), logged without -q.
#: The pipeline's timer lines: a stage's end ("HH:MM:SS solve RULESET: what it did in 1.23 s")
#: and, with -v, each phase's ("HH:MM:SS solve RULESET: values: done in 0.45 s").
TIMER_LINE = re.compile(
    r"^\d\d:\d\d:\d\d (\w+ \S+: [^:]+): done in ([0-9.]+) s$"
    r"|^\d\d:\d\d:\d\d (\w+ \S+): .* in ([0-9.]+) s$"
)
MIB = 1024 * 1024


# -- running one child and measuring it ---------------------------------------------


@dataclass
class Run:
    seconds: float
    cpu_seconds: float
    peak_mib: float
    load: float  # 1-minute load average when the run ended
    others_cpu: float | None  # CPU seconds the rest of the machine used meanwhile (/proc/stat)
    phases: dict[str, float] = field(default_factory=dict)  # the pipeline's own timers (--phases)

    @property
    def contended(self) -> bool:
        return self.others_cpu is not None and self.others_cpu > CONTENDED_CORES * self.seconds


class ChildFailed(RuntimeError):
    pass


def busy_seconds() -> float | None:
    """CPU seconds the whole machine has spent busy since boot (None without /proc/stat).

    Includes steal: time the hypervisor gave this VM's CPUs to someone else.
    """
    try:
        with open("/proc/stat") as stat:
            fields = [int(x) for x in stat.readline().split()[1:9]]
    except (OSError, ValueError):
        return None
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def wait_quiet(limit: float) -> None:
    """Wait (at most `limit` seconds) until the rest of the machine uses under QUIET_CORES cores."""
    began = time.perf_counter()
    told = False
    while True:
        before = busy_seconds()
        if before is None:
            return
        time.sleep(0.5)
        used = (busy_seconds() - before) / 0.5  # cores; this process sleeps: all of it is others' work
        waited = time.perf_counter() - began
        if used < QUIET_CORES:
            if told:
                print(f"      … quiet after {waited:.0f} s", flush=True)
            return
        if waited >= limit:
            print(f"      … still busy ({used:.1f} cores used by others) after {waited:.0f} s: going ahead", flush=True)
            return
        if not told:
            print(f"      … waiting for the machine to go quiet ({used:.1f} cores used by others)", flush=True)
            told = True


def _heartbeat(what: str, began: float, done: threading.Event) -> None:
    while not done.wait(HEARTBEAT):
        print(f"      … {what} still running ({time.perf_counter() - began:.0f} s)", flush=True)


def run_child(argv: list[str], log: Path, what: str, stdout: Path | None = None, quiet_wait: float = 0) -> Run:
    """Run argv to completion; its wall and CPU seconds and its own peak RSS.

    stderr (and stdout unless `stdout` is given) goes to `log`. Peak memory is the
    child's ru_maxrss from os.wait4; where wait4 is missing, the growth of
    RUSAGE_CHILDREN's maximum is used (then a child smaller than an earlier one reads 0).
    """
    if quiet_wait > 0:
        wait_quiet(quiet_wait)
    env = dict(
        os.environ,
        PYTHONUNBUFFERED="1",
        PYTHONPATH=os.pathsep.join(filter(None, [str(CODE), os.environ.get("PYTHONPATH")])),
    )
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    done = threading.Event()
    log_start = log.stat().st_size if log.exists() else 0
    with open(log, "ab") as err, open(stdout or log, "ab") as out:
        err.write(f"$ {' '.join(argv)}\n".encode())
        err.flush()
        busy = busy_seconds()
        began = time.perf_counter()
        proc = subprocess.Popen(argv, stdout=out, stderr=err, cwd=CODE, env=env)
        beat = threading.Thread(target=_heartbeat, args=(what, began, done), daemon=True)
        beat.start()
        tree = TreePeak(proc.pid)
        tree.start()
        try:
            if hasattr(os, "wait4"):
                _, status, usage = os.wait4(proc.pid, 0)
                proc.returncode = os.waitstatus_to_exitcode(status)
                seconds = time.perf_counter() - began
                peak_kib = usage.ru_maxrss
                cpu = usage.ru_utime + usage.ru_stime
            else:  # pragma: no cover - not Linux
                proc.wait()
                seconds = time.perf_counter() - began
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                peak_kib = max(0, after.ru_maxrss - before.ru_maxrss)
                cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        except BaseException:
            proc.kill()
            proc.wait()
            raise
        finally:
            done.set()
            tree.stop()
    # the Spark engine's JVM is a child of the stage's process: count the whole tree
    peak_kib = max(peak_kib, tree.peak_kib) if sys.platform != "darwin" else peak_kib
    busy_after = busy_seconds()
    others = None if busy is None or busy_after is None else max(0.0, busy_after - busy - cpu)
    if proc.returncode != 0:
        tail = log.read_text(errors="replace").splitlines()[-15:]
        raise ChildFailed(f"{what} failed with exit status {proc.returncode}:\n    " + "\n    ".join(tail))
    # ru_maxrss is KiB on Linux, bytes on macOS
    peak = peak_kib / 1024 if sys.platform != "darwin" else peak_kib / MIB
    with open(log, "rb") as handle:
        handle.seek(log_start)
        timers = [TIMER_LINE.match(line) for line in handle.read().decode(errors="replace").splitlines()]
    phases = {(m.group(1) or m.group(3)): float(m.group(2) or m.group(4)) for m in timers if m}
    return Run(
        round(seconds, 3),
        round(cpu, 3),
        round(peak, 1),
        round(os.getloadavg()[0], 2),
        None if others is None else round(others, 2),
        phases,
    )


class TreePeak(threading.Thread):
    """The largest resident memory of a process and all its descendants together, sampled
    from /proc twice a second (Linux; elsewhere it stays 0)."""

    def __init__(self, pid: int):
        super().__init__(daemon=True)
        self.pid, self.peak_kib, self._done = pid, 0, threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.5):
            self.peak_kib = max(self.peak_kib, self.sample())

    def stop(self) -> None:
        self._done.set()
        self.join()

    def sample(self) -> int:
        parents: dict[int, int] = {}
        rss: dict[int, int] = {}
        for entry in Path("/proc").glob("[0-9]*"):
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
                parents[int(entry.name)] = int(fields[1])
                rss[int(entry.name)] = int(fields[21]) * (os.sysconf("SC_PAGE_SIZE") // 1024)
            except (OSError, ValueError, IndexError):
                continue
        tree, grew = {self.pid}, True
        while grew:
            found = {pid for pid, parent in parents.items() if parent in tree} - tree
            tree |= found
            grew = bool(found)
        return sum(rss.get(pid, 0) for pid in tree)


@dataclass(frozen=True)
class Plan:
    """How often to run each child."""

    repeat: int = 1  # runs of every child
    retries: int = 0  # extra runs while every run so far competed for the CPU
    quiet_wait: float = 0  # seconds to wait for a quiet machine before each run


def measure(what: str, argv: list[str], log: Path, plan: Plan, stdout: Path | None = None, after=None) -> list[Run]:
    """Run argv plan.repeat times, and up to plan.retries more while every run was contended.

    `after(run)` is called after each run (to collect what the run wrote).
    """
    runs: list[Run] = []
    while len(runs) < plan.repeat or (all(r.contended for r in runs) and len(runs) < plan.repeat + plan.retries):
        extra = len(runs) >= plan.repeat
        label = what + (
            " (again: the runs so far competed for the CPU)"
            if extra
            else f" (run {len(runs) + 1}/{plan.repeat})"
            if plan.repeat > 1
            else ""
        )
        print(f"    {label} …", flush=True)
        run = run_child(argv, log, label, stdout=stdout, quiet_wait=plan.quiet_wait)
        if after is not None:
            after(run)
        runs.append(run)
        print(
            f"    {label}: {run.seconds:.2f} s, {run.cpu_seconds:.1f} CPU s, peak {run.peak_mib:,.0f} MiB{_noise(run)}",
            flush=True,
        )
    return runs


# -- one ruleset ----------------------------------------------------------------------


@dataclass
class Stage:
    name: str
    runs: list[Run]
    rows: int  # rows of the stage's main output file
    output_mib: float  # size on disk of what the stage wrote

    # Times come from the fastest run that did not compete for the CPU (the fastest of all
    # if every run did: others' work only ever adds time); the peak is the largest of any run.
    @property
    def best(self) -> Run:
        clean = [r for r in self.runs if not r.contended]
        return min(clean or self.runs, key=lambda r: r.seconds)

    @property
    def contended(self) -> bool:
        return self.best.contended

    @property
    def seconds(self) -> float:
        return self.best.seconds

    @property
    def cpu_seconds(self) -> float:
        return self.best.cpu_seconds

    @property
    def peak_mib(self) -> float:
        return max(r.peak_mib for r in self.runs)

    @property
    def others_cpu(self) -> float | None:
        return self.best.others_cpu

    def phase(self, name: str) -> float | None:
        """The pipeline's own timer `name` (ruleset id left out) in the fastest run, if logged."""
        return self.best.phases.get(name)

    @property
    def phase_names(self) -> list[str]:
        return list(self.best.phases)


@dataclass
class Result:
    ruleset: str
    positions: int = 0
    transitions: int = 0
    stages: dict[str, Stage] = field(default_factory=dict)
    yardstick: Stage | None = None
    yardstick_report: dict = field(default_factory=dict)
    check: dict = field(default_factory=dict)
    whole_build: Stage | None = None
    limit: Stage | None = None  # the compiled limit on the same ruleset, where it has the game
    growth: bool = True  # one of the growing sizes (else one of the other games)

    @property
    def limit_ratio(self) -> float | None:
        """One-process build seconds / the compiled limit's seconds, measured in the same run."""
        if self.limit is None or self.whole_build is None:
            return None
        return self.whole_build.seconds / max(self.limit.seconds, 1e-3)

    @property
    def total_seconds(self) -> float:
        return sum(s.seconds for s in self.stages.values())

    @property
    def total_cpu_seconds(self) -> float:
        return sum(s.cpu_seconds for s in self.stages.values())

    @property
    def peak_mib(self) -> float:
        return max(s.peak_mib for s in self.stages.values())

    @property
    def others_cpu(self) -> float | None:
        known = [s.others_cpu for s in self.stages.values() if s.others_cpu is not None]
        return sum(known) if known else None

    @property
    def ratio(self) -> float | None:
        if self.yardstick is None or "solve" not in self.stages:
            return None
        return self.stages["solve"].seconds / self.yardstick.seconds

    @property
    def values_ratio(self) -> float | None:
        """(solve - its Grundy timer) / yardstick: the part of solve the yardstick also does."""
        if self.ratio is None:
            return None
        grundy = self.stages["solve"].phase("solve: Grundy values")
        if grundy is None:
            return None
        return (self.stages["solve"].seconds - grundy) / self.yardstick.seconds

    @property
    def agrees(self) -> bool:
        if not self.check:
            return False
        mine, theirs = self.yardstick_report, self.check["pipeline"]
        return (
            all(mine.get(k) == theirs.get(k) for k in ("wins", "losses", "ties", "draws", "max_remoteness"))
            and self.check["value_differences"] == 0
            and self.check["remoteness_differences"] == 0
        )


def _noise(run: Run) -> str:
    others = "" if run.others_cpu is None else f", others used {run.others_cpu:.1f} CPU s"
    return f" (load {run.load}{others})"


def _cpu(value: float | None) -> str:
    return "–" if value is None else f"{value:.1f}"


def _mib(*paths: Path) -> float:
    return round(sum(p.stat().st_size for p in paths if p.exists()) / MIB, 1)


def bench_ruleset(ruleset: str, data: Path, plan: Plan, whole_build: bool, phases: bool) -> Result:
    from pipeline.datadir.layout import DataDir
    from pipeline.games.rulesets import Ruleset

    rules = Ruleset.parse(ruleset)
    files = DataDir(data).ruleset(rules)
    log = data / f"{rules.game_name}.{rules.slug}.log"
    result = Result(rules.id)
    py = sys.executable

    def short_timer_names(run: Run) -> None:
        run.phases = {k.replace(f" {rules.id}", ""): v for k, v in run.phases.items()}

    for name in STAGES:
        argv = [py, "-m", "pipeline", name, rules.id, "--data", str(data)] + (["-v"] if phases else ["-q"])
        runs = measure(f"{name} {rules.id}", argv, log, plan, after=short_timer_names)
        if name == "enumerate":
            result.positions = pq.read_metadata(files.positions).num_rows
            result.transitions = pq.read_metadata(files.transitions).num_rows
            print(f"    {result.positions:,} positions, {result.transitions:,} transitions", flush=True)
            out_mib = _mib(files.positions, files.transitions)
        elif name == "export":
            out_mib = _mib(files.tablebase, files.summary)
        else:
            out_mib = _mib(getattr(files, OUTPUTS[name]))
        rows = pq.read_metadata(getattr(files, OUTPUTS[name])).num_rows
        result.stages[name] = Stage(name, runs, rows, out_mib)
        if name == "solve":
            run_yardstick(result, files.dir, data, log, plan)
        if name == "verify":
            failures = sum(r["failures"] for r in pq.read_table(files.verification).to_pylist())
            if failures:
                raise ChildFailed(f"verification of {rules.id} reports {failures} failures")
    print(f"    stages total {result.total_seconds:.2f} s, peak {result.peak_mib:,.0f} MiB", flush=True)
    if whole_build:
        whole = data / "whole-build"
        runs = measure(
            f"build {rules.id} (one process)",
            [py, "-m", "pipeline", "build", rules.id, "--data", str(whole), "-q"],
            log,
            plan,
            after=lambda run: shutil.rmtree(whole, ignore_errors=True),
        )
        result.whole_build = Stage("build", runs, result.positions, 0.0)
        argv = limit_argv(rules)
        if argv:
            result.limit = Stage(
                "limit", measure(f"compiled limit {' '.join(argv[1:])}", argv, log, plan), result.positions, 0.0
            )
    return result


# -- a Spark standalone cluster on this machine ----------------------------------------


@contextlib.contextmanager
def standalone_cluster(workers: int, folder: Path, memory: str = "4g") -> Iterator[str]:
    """A Spark master and `workers` workers of one core each, started from the pip wheel's
    spark-class as the README shows; the master's URL. Stopped when the block ends."""
    import socket

    import pyspark

    spark_class = Path(pyspark.__file__).parent / "bin" / "spark-class"
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    url = f"spark://127.0.0.1:{port}"
    logs = folder / "cluster"
    logs.mkdir(parents=True, exist_ok=True)
    started: list[subprocess.Popen] = []

    def start(name: str, *args: str) -> None:
        with open(logs / f"{name}.log", "wb") as out:
            started.append(
                subprocess.Popen(
                    [str(spark_class), *args], stdout=out, stderr=subprocess.STDOUT, start_new_session=True
                )
            )

    try:
        start(
            "master",
            "org.apache.spark.deploy.master.Master",
            "--host",
            "127.0.0.1",
            "--port",
            str(port),
            "--webui-port",
            "0",
        )
        for i in range(workers):
            start(
                f"worker-{i}",
                "org.apache.spark.deploy.worker.Worker",
                url,
                "--cores",
                "1",
                "--memory",
                memory,
                "--webui-port",
                "0",
            )
        deadline = time.monotonic() + 120
        while (logs / "master.log").read_text(errors="replace").count("Registering worker") < workers:
            if time.monotonic() > deadline or any(proc.poll() is not None for proc in started):
                raise ChildFailed(f"the standalone cluster did not start: see {logs}")
            time.sleep(0.5)
        print(f"standalone cluster {url}: {workers} workers of 1 core and {memory}", flush=True)
        yield url
    finally:
        for proc in reversed(started):
            os.killpg(proc.pid, signal.SIGTERM)
        for proc in started:
            proc.wait()


# -- the compiled limit ---------------------------------------------------------------


#: The compiled C++ solver a build is measured against (bulk generation and retrograde
#: analysis in memory, no files): not part of the project, so looked for beside it.
LIMIT = Path(os.environ.get("TABLEBASE_LIMIT", ROOT.parent / "shared" / "limit"))


def limit_argv(rules) -> list[str] | None:
    """The compiled limit's command for `rules`, or None where it does not have that game
    or variant (it knows chopsticks with attacks only, sticks with whole rows taken,
    connect, and dobutsu with its default rules)."""
    changed = dict(rules.changed)
    if rules.game_name == "dobutsu" and not changed:
        binary = limit_bin().parent / "dobutsu" / "bin" / "dobutsu"  # a program of its own folder (limit/dobutsu/)
        return [str(binary)] if binary.exists() else None
    if rules.game_name == "chopsticks" and set(changed) <= {"fingers", "hands"}:
        program, args = "chopsticks", [str(rules["fingers"]), str(rules["hands"])]
    elif rules.game_name == "sticks" and set(changed) <= {"rows", "play"}:
        program, args = "sticks", [str(rules["rows"]), str(rules["play"])]
    elif rules.game_name == "connect":
        program, args = "connect4", [str(rules["cols"]), str(rules["rows"]), str(rules["k"])]
    else:
        return None
    binary = limit_bin() / program
    return [str(binary), *args] if binary.exists() else None


def limit_bin() -> Path:
    """Where the limit's programs are: beside its sources, or, where those are read-only,
    in a scratch copy outside the project (build_limit)."""
    return (LIMIT if writable(LIMIT) else Path(tempfile.gettempdir()) / "tablebase-limit") / "bin"


def writable(folder: Path) -> bool:
    """Whether `folder` is meant to be written: its mode lets its owner write, not only
    os.access's answer, which is yes for root in a folder shared read-only."""
    return os.access(folder, os.W_OK) and bool(folder.stat().st_mode & stat.S_IWUSR)


def build_limit() -> str:
    """Build the compiled limit if it is there and not built; one line saying what was found."""
    script = LIMIT / "build.sh"
    if not script.exists():
        return f"no compiled limit at {LIMIT} (TABLEBASE_LIMIT): ratios to it are left out"
    where = limit_bin().parent
    if not (where / "bin" / "sticks").exists():
        if shutil.which("g++") is None:
            return "the compiled limit needs g++ to build (apt-get install g++): ratios to it are left out"
        if where != LIMIT:  # its sources are read-only: built from a copy in the temp folder
            where.mkdir(parents=True, exist_ok=True)
            for source in LIMIT.iterdir():
                if source.is_file():
                    shutil.copyfile(source, where / source.name)
        done = subprocess.run(["sh", str(where / "build.sh")], cwd=where, capture_output=True, text=True)
        if done.returncode:
            return f"the compiled limit did not build ({(done.stderr or done.stdout).strip().splitlines()[-1:]})"
    dobutsu = LIMIT / "dobutsu"
    if (dobutsu / "build.sh").exists() and not (where / "dobutsu" / "bin" / "dobutsu").exists():
        if where != LIMIT:
            (where / "dobutsu").mkdir(parents=True, exist_ok=True)
            for source in dobutsu.iterdir():
                if source.is_file():
                    shutil.copyfile(source, where / "dobutsu" / source.name)
        done = subprocess.run(["sh", "build.sh"], cwd=where / "dobutsu", capture_output=True, text=True)
        if done.returncode:
            return f"the compiled limit of dobutsu did not build ({(done.stderr or done.stdout).strip()[-200:]})"
    return f"compiled limit: {where / 'bin'}"


def run_yardstick(result: Result, directory: Path, data: Path, log: Path, plan: Plan) -> None:
    answer = data / "yardstick.npz"
    stdout = data / "yardstick.json"
    reports: dict[int, dict] = {}

    def collect(run: Run) -> None:  # the yardstick prints its counts and phases as JSON
        reports[id(run)] = json.loads(stdout.read_text().splitlines()[-1])
        run.phases = reports[id(run)]["seconds"]
        stdout.unlink()

    runs = measure(
        f"yardstick {result.ruleset}",
        [sys.executable, str(ROOT / "benchmarks" / "yardstick.py"), str(directory), "--out", str(answer)],
        log,
        plan,
        stdout=stdout,
        after=collect,
    )
    result.yardstick = Stage("yardstick", runs, result.positions, _mib(answer))
    report = reports[id(result.yardstick.best)]
    result.yardstick_report = report
    result.check = yardstick.compare(directory / "solution.parquet", answer)
    answer.unlink(missing_ok=True)
    verdict = "agrees position by position" if result.agrees else f"DISAGREES: {result.check}"
    values = "" if result.values_ratio is None else f", without its Grundy values {result.values_ratio:.2f}"
    print(
        f"    yardstick {verdict} (phases {report['seconds']}); solve / yardstick = {result.ratio:.2f}{values}",
        flush=True,
    )


# -- the machine and the code ------------------------------------------------------------


def machine() -> dict:
    import duckdb
    import numpy
    import pyarrow

    model = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1024**3
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {
        "cpu": model,
        "cores": cores,
        "memory_gib": round(mem, 1),
        "os": f"{platform.system()} {platform.release()}",
        "python": platform.python_version(),
        "duckdb": duckdb.__version__,
        "pyarrow": pyarrow.__version__,
        "numpy": numpy.__version__,
        "memory_limit": os.environ.get("TABLEBASE_MEMORY_LIMIT", "4GB (pipeline default)"),
    }


def checkout(rev: str, into: Path) -> Path:
    """Extract pipeline/ as of commit `rev` into `into` (a tree `python -m pipeline` can run from)."""
    into.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(["git", "archive", rev, "pipeline"], cwd=ROOT, capture_output=True, check=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive.stdout, check=True)
    return into


def code_version(rev: str | None) -> dict:
    """The commit and whether (and how) the pipeline's code differs from it."""

    def git(*args: str) -> str:
        try:
            return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            return ""

    digest = hashlib.sha256()
    for path in sorted((CODE / "pipeline").rglob("*")):
        if path.suffix in (".py", ".sql"):
            digest.update(str(path.relative_to(CODE)).encode())
            digest.update(path.read_bytes())
    if rev is not None:  # an extracted commit: no uncommitted changes by construction
        return {
            "source": f"pipeline/ extracted from `{rev}`",
            "commit": git("rev-parse", "--short", rev),
            "pipeline_changed_files": 0,
            "pipeline_sha256": digest.hexdigest()[:12],
        }
    changed = git("status", "--porcelain", "--", "pipeline")
    return {
        "source": "working tree",
        "commit": git("rev-parse", "--short", "HEAD") or "unknown",
        "pipeline_changed_files": len(changed.splitlines()) if changed else 0,
        "pipeline_sha256": digest.hexdigest()[:12],
    }


# -- reporting ----------------------------------------------------------------------------


def _rate(count: int, seconds: float) -> str:
    if not seconds:
        return "–"
    rate = count / seconds
    return f"{rate / 1e6:.2f} M" if rate >= 1e6 else f"{rate / 1e3:.0f} k"


def _secs(stage: Stage, bold: bool = False) -> str:
    """Seconds, marked † when even the reported run competed for the CPU."""
    text = f"**{stage.seconds:.2f}**" if bold else f"{stage.seconds:.2f}"
    return text + (" †" if stage.contended else "")


def ruleset_table(r: Result) -> list[str]:
    y = r.yardstick_report
    lines = [
        f"### `{r.ruleset}`",
        "",
        f"{r.positions:,} positions, {r.transitions:,} transitions"
        + (
            f"; {y['wins']:,} wins, {y['losses']:,} losses, {y.get('ties', 0):,} ties, {y['draws']:,} draws, "
            f"max remoteness {y['max_remoteness']}"
            if y
            else ""
        )
        + ".",
        "",
        "| stage | seconds | CPU s | others' CPU s | peak MiB | transitions/s | positions/s | output |",
        "|---|---:|---:|---:|---:|---:|---:|---|",
    ]
    for s in r.stages.values():
        out = f"{s.rows:,} rows, {s.output_mib:,.1f} MiB"
        lines.append(
            f"| {s.name} | {_secs(s)} | {s.cpu_seconds:.1f} | {_cpu(s.others_cpu)} | {s.peak_mib:,.0f} | "
            f"{_rate(r.transitions, s.seconds)} | {_rate(r.positions, s.seconds)} | {out} |"
        )
    lines.append(
        f"| **all four stages** | **{r.total_seconds:.2f}** | {r.total_cpu_seconds:.1f} | "
        f"{_cpu(r.others_cpu)} | **{r.peak_mib:,.0f}** | {_rate(r.transitions, r.total_seconds)} | "
        f"{_rate(r.positions, r.total_seconds)} | |"
    )
    if r.whole_build:
        w = r.whole_build
        lines.append(
            f"| `build` in one process | {_secs(w)} | {w.cpu_seconds:.1f} | {_cpu(w.others_cpu)} | "
            f"{w.peak_mib:,.0f} | "
            f"{_rate(r.transitions, w.seconds)} | {_rate(r.positions, w.seconds)} | |"
        )
    if r.yardstick:
        s = r.yardstick
        phases = ", ".join(f"{k} {v:.2f}" for k, v in y["seconds"].items())
        lines.append(
            f"| NumPy yardstick (solve only) | {_secs(s)} | {s.cpu_seconds:.1f} | "
            f"{_cpu(s.others_cpu)} | {s.peak_mib:,.0f} | "
            f"{_rate(r.transitions, s.seconds)} | {_rate(r.positions, s.seconds)} | in-process s: {phases} |"
        )
        values = (
            ""
            if r.values_ratio is None
            else f" (solve less its Grundy-values timer / yardstick: **{r.values_ratio:.2f}×**)"
        )
        lines += [
            "",
            f"Pipeline solve / yardstick: **{r.ratio:.2f}×**{values}. Yardstick vs pipeline solution: "
            + (
                "value and remoteness agree at every position."
                if r.agrees
                else f"**DISAGREE**: `{json.dumps(r.check)}`"
            ),
        ]
    timers = []
    for s in r.stages.values():
        main = s.phase(s.name)
        parts = [
            f"{name.split(': ', 1)[1]} {s.phase(name):.2f}" for name in s.phase_names if name.startswith(f"{s.name}: ")
        ]
        if main is not None:
            timers.append(f"{s.name} {main:.2f}" + (f" ({', '.join(parts)})" if parts else ""))
    if timers:
        lines += ["", "The pipeline's own timers, in-process seconds: " + "; ".join(timers) + "."]
    return lines + [""]


def summary_table(results: list[Result]) -> list[str]:
    lines = [
        "| ruleset | positions | transitions | enumerate s | solve s | verify s | export s | total s | "
        "peak MiB | build transitions/s | others' CPU s | one-process build s / MiB | yardstick s | solve / yardstick (without Grundy) | "
        "compiled limit s / MiB | build / limit |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        st = {name: f"{r.stages[name].seconds:.2f}" if name in r.stages else "–" for name in STAGES}
        whole = f"{r.whole_build.seconds:.1f} / {r.whole_build.peak_mib:,.0f}" if r.whole_build else "–"
        ys = f"{r.yardstick.seconds:.2f}" if r.yardstick else "–"
        ratio = (
            (
                f"{r.ratio:.2f}"
                + ("" if r.values_ratio is None else f" ({r.values_ratio:.2f})")
                + ("" if r.agrees else " (answers differ!)")
            )
            if r.ratio
            else "–"
        )
        lines.append(
            f"| `{r.ruleset}` | {r.positions:,} | {r.transitions:,} | {st['enumerate']} | {st['solve']} | "
            f"{st['verify']} | {st['export']} | **{r.total_seconds:.2f}** | {r.peak_mib:,.0f} | "
            f"{_rate(r.transitions, r.total_seconds)} | {_cpu(r.others_cpu)} | {whole} | {ys} | {ratio} | "
            + (
                f"{r.limit.seconds:.2f} / {r.limit.peak_mib:,.0f} | **{r.limit_ratio:.1f}×** |"
                if r.limit_ratio
                else "– | – |"
            )
        )
    return lines + [""]


def _in_process(r: Result, column: str) -> float | None:
    """Seconds of a growth-table column: the pipeline's own timer when it was logged (no
    interpreter start-up in it), else the child's wall seconds; the yardstick's own phases."""
    if column == "yardstick":
        return sum(r.yardstick_report["seconds"].values()) if r.yardstick_report else None
    stage = r.stages.get(column.split(":")[0])
    if stage is None:
        return None
    timer = stage.phase(column)
    if timer is not None or ":" in column:
        return timer
    return stage.seconds


def _exponent(points: list[tuple[float, float]]) -> str:
    """b in seconds ~ transitions^b, least squares on logarithms."""
    import math

    points = [(math.log(x), math.log(y)) for x, y in points if x > 0 and y and y > 0]
    if len(points) < 2:
        return "–"
    mx = sum(x for x, _ in points) / len(points)
    my = sum(y for _, y in points) / len(points)
    var = sum((x - mx) ** 2 for x, _ in points)
    return f"{sum((x - mx) * (y - my) for x, y in points) / var:.2f}" if var else "–"


def growth_table(results: list[Result]) -> list[str]:
    """Seconds per million transitions: constant down a column if time is proportional to transitions."""
    columns = list(STAGES)
    for name in results[-1].stages["solve"].phase_names:
        if name.startswith("solve: "):
            columns.insert(columns.index("verify"), name)
    columns.append("yardstick")
    lines = [
        "Seconds per million transitions, in-process (the pipeline's own timers when logged, so the "
        "CLI's start-up is left out; the yardstick's own phases). Constant down a column means time "
        "proportional to transitions; the last row fits seconds ∝ transitions^b over all sizes.",
        "",
        "| ruleset | transitions | × smallest | " + " | ".join(columns) + " |",
        "|---|---:|---:|" + "---:|" * len(columns),
    ]
    base = results[0]
    for r in results:
        cells = []
        for column in columns:
            seconds = _in_process(r, column)
            cells.append("–" if seconds is None or not r.transitions else f"{seconds / r.transitions * 1e6:.3f}")
        count = f"{r.transitions / 1e6:.1f} M" if r.transitions >= 100_000 else f"{r.transitions:,}"
        lines.append(
            f"| `{r.ruleset}` | {count} | {r.transitions / base.transitions:.1f} | " + " | ".join(cells) + " |"
        )
    exponents = [_exponent([(r.transitions, _in_process(r, column)) for r in results]) for column in columns]
    lines.append("| exponent b | | | " + " | ".join(exponents) + " |")
    return lines + [""]


def markdown(report: dict, results: list[Result]) -> str:
    m, c = report["machine"], report["code"]
    growing = [r for r in results if r.growth]
    lines = [
        f"Run {report['finished']} by `{report['command']}` "
        f"({report['repeat']} run{'s' if report['repeat'] > 1 else ''} of every child, up to "
        f"{report['retries']} more while every run competed for the CPU; seconds of the fastest run that "
        f"did not compete, else of the fastest, marked †; peak of the largest run).",
        "",
        f"Machine: {m['cpu']}, {m['cores']} cores, {m['memory_gib']} GiB, {m['os']}. "
        f"Python {m['python']}, DuckDB {m['duckdb']}, pyarrow {m['pyarrow']}, NumPy {m['numpy']}. "
        f"TABLEBASE_MEMORY_LIMIT: {m['memory_limit']}. Engine: {report.get('engine', 'duckdb')}"
        + (
            f" (Spark master {report['spark_master']}; peak memory counts the stage's process tree, the JVM included)"
            if report.get("spark_master")
            else ""
        )
        + ".",
        f"Code: {c['source']}, commit {c['commit']}"
        + (
            f" with {c['pipeline_changed_files']} uncommitted file(s) under pipeline/"
            if c["pipeline_changed_files"]
            else ""
        )
        + f" (pipeline sources sha256 {c['pipeline_sha256']}).",
        f"Start-up of a CLI child (`python -m pipeline version`: Python + DuckDB + pyarrow imports): "
        f"{report['startup_seconds']:.2f} s, included in every stage's seconds.",
        f'{report.get("limit", "compiled limit: not run")}; "build / limit": the one-process build\'s seconds '
        "over the compiled limit's (../shared/limit/: C++, generation and retrograde analysis in memory, no "
        "files, no verification), measured in the same run.",
        f"1-minute load average: {report['load_before']} before, {report['load_after']} after. "
        f'"Others\' CPU s": CPU time the rest of the machine (other users, hypervisor steal) used '
        f"while a stage ran, from /proc/stat; well above 0 means the stage competed for the "
        f"{m['cores']} cores and its seconds are inflated.",
        "",
        "#### Summary",
        "",
        *summary_table(results),
        *(["#### Growth", "", *growth_table(growing)] if growing else []),
        "#### Per ruleset",
        "",
    ]
    for r in results:
        lines += ruleset_table(r)
    return "\n".join(lines).rstrip() + "\n"


def update_doc(path: Path, text: str) -> None:
    doc = path.read_text() if path.exists() else f"# Benchmarks\n\n{BEGIN}\n{END}\n"
    if BEGIN not in doc or END not in doc:
        raise SystemExit(f"{path} has no {BEGIN} … {END} markers to write between")
    head, rest = doc.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    path.write_text(
        f"{head}{BEGIN}\n<!-- generated by benchmarks/run.py: do not edit by hand -->\n\n{text}\n{END}{tail}"
    )


def to_json(report: dict, results: list[Result]) -> dict:
    out = dict(report)
    out["results"] = []
    for r in results:
        item = asdict(r)
        item.update(
            total_seconds=round(r.total_seconds, 3),
            peak_mib=r.peak_mib,
            solve_over_yardstick=round(r.ratio, 3) if r.ratio else None,
            solve_without_grundy_over_yardstick=round(r.values_ratio, 3) if r.values_ratio else None,
            agrees=r.agrees,
        )
        for name, stage in r.stages.items():
            item["stages"][name].update(
                seconds=stage.seconds,
                cpu_seconds=stage.cpu_seconds,
                peak_mib=stage.peak_mib,
                transitions_per_second=round(r.transitions / stage.seconds),
                positions_per_second=round(r.positions / stage.seconds),
            )
        out["results"].append(item)
    return out


# -- main -------------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes",
        nargs="+",
        metavar="RULESET",
        help=f"ruleset ids of one game, smallest first (default: {' '.join(DEFAULT_SIZES)})",
    )
    parser.add_argument(
        "--others",
        nargs="*",
        metavar="RULESET",
        help="ruleset ids measured after the sizes, left out of the growth table (default: "
        f"{' '.join(OTHER_GAMES)} unless --sizes is given; none if given without ids)",
    )
    parser.add_argument("--out", type=Path, help="write the results here: JSON if it ends in .json, else markdown")
    parser.add_argument(
        "--data",
        type=Path,
        help="data directory; its files of these rulesets are overwritten "
        "(default: a temporary one under benchmarks/out/, removed afterwards)",
    )
    parser.add_argument(
        "--repeat", type=int, default=1, help="runs of each stage; the fastest uncontended one is reported (default 1)"
    )
    parser.add_argument(
        "--retries",
        type=int,
        default=2,
        help="extra runs of a stage while every run so far competed with other processes "
        f"for the CPU (they used over {CONTENDED_CORES} cores on average) (default 2)",
    )
    parser.add_argument(
        "--no-whole-build",
        dest="whole_build",
        action="store_false",
        help="skip the extra one-process `build` of each ruleset",
    )
    parser.add_argument(
        "--update-doc",
        action="store_true",
        help=f"rewrite the generated tables of {DOC.name} between its marker comments",
    )
    parser.add_argument("--keep", action="store_true", help="keep the temporary data directory")
    parser.add_argument(
        "--quiet-stages",
        dest="phases",
        action="store_false",
        help="run the stages with -q (by default they log, and the pipeline's own timers "
        "are read from the log: in-process seconds and the solve stage's parts)",
    )
    parser.add_argument(
        "--wait-quiet",
        type=float,
        default=120,
        metavar="SECONDS",
        help="before each child, wait up to this long for other processes to stop using "
        f"more than {QUIET_CORES} cores (default %(default)s; 0: don't wait)",
    )
    parser.add_argument(
        "--engine",
        choices=("duckdb", "spark"),
        help="run every stage on this engine (TABLEBASE_ENGINE for the children; default duckdb); "
        "TABLEBASE_SPARK_MASTER picks a Spark cluster",
    )
    parser.add_argument(
        "--spark-cluster",
        type=int,
        default=0,
        metavar="WORKERS",
        help="with --engine spark: start a standalone cluster of this many one-core workers on "
        "this machine from the pip wheel, run on it, stop it",
    )
    parser.add_argument(
        "--commit",
        metavar="REV",
        help="benchmark pipeline/ as committed at REV (e.g. HEAD) instead of the working tree",
    )
    args = parser.parse_args(argv)
    if args.spark_cluster and args.engine != "spark":
        parser.error("--spark-cluster needs --engine spark")
    if args.engine:
        os.environ["TABLEBASE_ENGINE"] = args.engine  # the children inherit it
    if args.others is None:
        args.others = OTHER_GAMES if args.sizes is None else []
    args.sizes = args.sizes or DEFAULT_SIZES
    global CODE

    def interrupted(signum: int, frame: object) -> None:
        raise KeyboardInterrupt

    # stop cleanly (kill the running child, remove the temporary data) on Ctrl-C or kill,
    # also when started in the background, where SIGINT comes ignored
    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)

    OUT.mkdir(parents=True, exist_ok=True)
    temporary = args.data is None
    data = Path(tempfile.mkdtemp(prefix="bench-", dir=OUT)) if temporary else args.data.resolve()
    data.mkdir(parents=True, exist_ok=True)
    if args.commit:
        CODE = checkout(args.commit, Path(tempfile.mkdtemp(prefix="code-", dir=OUT)))
    sys.path.insert(0, str(CODE))  # this process reads the layout from the same code as the children
    plan = Plan(repeat=max(1, args.repeat), retries=max(0, args.retries), quiet_wait=args.wait_quiet)
    command = "python benchmarks/run.py " + " ".join(argv if argv is not None else sys.argv[1:])
    report = {
        "command": command.strip(),
        "repeat": plan.repeat,
        "retries": plan.retries,
        "machine": machine(),
        "code": code_version(args.commit),
        "load_before": round(os.getloadavg()[0], 2),
        "engine": os.environ.get("TABLEBASE_ENGINE", "duckdb"),
        "spark_master": os.environ.get("TABLEBASE_SPARK_MASTER", "local[*]")
        if os.environ.get("TABLEBASE_ENGINE") == "spark"
        else None,
    }
    print(
        f"benchmark: data in {data}; {report['machine']['cpu']}, {report['machine']['cores']} cores, "
        f"load {report['load_before']}",
        flush=True,
    )
    report["limit"] = build_limit()
    print(report["limit"], flush=True)
    startup = run_child([sys.executable, "-m", "pipeline", "version"], data / "startup.log", "start-up")
    report["startup_seconds"] = startup.seconds
    results: list[Result] = []
    status = 0
    try:
        rulesets = [(ruleset, True) for ruleset in args.sizes] + [(ruleset, False) for ruleset in args.others]
        cluster = standalone_cluster(args.spark_cluster, data) if args.spark_cluster else contextlib.nullcontext()
        with cluster as url:
            if url:
                os.environ["TABLEBASE_SPARK_MASTER"] = url
                # Spark's default of 200 shuffle partitions makes every level step slow
                os.environ.setdefault("TABLEBASE_SPARK_CONF", "spark.sql.shuffle.partitions=8")
                report["spark_master"] = (
                    f"{url}: a standalone cluster of {args.spark_cluster} one-core workers "
                    f"on this machine, TABLEBASE_SPARK_CONF={os.environ['TABLEBASE_SPARK_CONF']}"
                )
            for i, (ruleset, growth) in enumerate(rulesets, 1):
                print(f"[{i}/{len(rulesets)}] {ruleset}", flush=True)
                results.append(bench_ruleset(ruleset, data, plan, args.whole_build, args.phases))
                results[-1].growth = growth
    except ChildFailed as error:
        print(f"error: {error}", file=sys.stderr)
        status = 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        status = 130
    finally:
        if temporary and not args.keep:
            shutil.rmtree(data, ignore_errors=True)
        if CODE != ROOT:
            shutil.rmtree(CODE, ignore_errors=True)
    # a ruleset that failed part-way is left out of the tables
    results = [r for r in results if len(r.stages) == len(STAGES)]
    if not results:
        return status or 1
    report["load_after"] = round(os.getloadavg()[0], 2)
    report["finished"] = datetime.now(UTC).strftime("%Y-%m-%d %H:%M UTC")
    text = markdown(report, results)
    print()
    print(text)
    if args.out:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        if args.out.suffix == ".json":
            args.out.write_text(json.dumps(to_json(report, results), indent=2) + "\n")
        else:
            args.out.write_text(text)
        print(f"wrote {args.out}")
    if args.update_doc:
        update_doc(DOC, text)
        print(f"updated {DOC}")
    if any(not r.agrees for r in results):
        print("error: the yardstick and the pipeline disagree", file=sys.stderr)
        status = status or 1
    return status


if __name__ == "__main__":
    sys.exit(main())
