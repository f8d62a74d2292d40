"""Spark's builds in one process, stage by stage: where its time goes (issue 36).

    .venv/bin/python benchmarks/spark_steps.py [--engine spark] RULESET...

Each ruleset is built in turn into one fresh data folder under benchmarks/out/, by one
Spark session (started first and timed alone, so the first ruleset pays the JVM's warming
up and the later ones do not). For each: the stages' own seconds as the pipeline logs them,
the build's wall seconds, the driver's (this process's) CPU seconds, the Spark jobs it ran,
and the peak resident memory of this process and of its JVM (sampled twice a second). With
`--engine duckdb` the same builds on DuckDB, for the comparison (no jobs, no JVM).
"""

from __future__ import annotations

import argparse
import logging
import os
import re
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from pipeline.datadir.layout import DataDir
from pipeline.engines import engine_kind
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.storage.progress import log

OUT = Path(__file__).resolve().parent / "out" / "spark_steps"


class Peaks(threading.Thread):
    """The largest resident memory of this process and of its children (the JVM), in bytes."""

    def __init__(self) -> None:
        super().__init__(daemon=True)
        self.driver = self.jvm = 0

    def run(self) -> None:
        me = os.getpid()
        while True:
            listed = subprocess.run(
                ["ps", "-o", "pid=,rss=", "--ppid", str(me), "-p", str(me)], capture_output=True, text=True
            ).stdout
            children = 0
            for line in listed.splitlines():
                pid, rss = (int(word) for word in line.split())
                if pid == me:
                    self.driver = max(self.driver, rss * 1024)
                else:
                    children += rss * 1024
            self.jvm = max(self.jvm, children)
            time.sleep(0.5)


class StageTimes(logging.Handler):
    """The seconds each stage's last line says it took ("… in 12.34 s")."""

    def __init__(self) -> None:
        super().__init__()
        self.seconds: dict[str, float] = {}

    def emit(self, record: logging.LogRecord) -> None:
        found = re.match(r"(\w+) \S+: .* in ([0-9.]+) s$", record.getMessage())
        if found:
            self.seconds[found.group(1)] = float(found.group(2))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("rulesets", nargs="+")
    parser.add_argument("--engine", default="spark")
    args = parser.parse_args()
    kind = engine_kind(args.engine)
    shutil.rmtree(OUT, ignore_errors=True)
    data = DataDir(OUT)
    stages = StageTimes()
    log.addHandler(stages)
    log.setLevel(logging.INFO)
    peaks = Peaks()
    peaks.start()
    jobs = lambda: 0  # noqa: E731 - DuckDB runs no job
    if args.engine == "spark":
        from pipeline.engines.spark_engine import session

        started = time.time()
        spark = session()
        print(f"session: {time.time() - started:.1f} s", flush=True)
        jobs = lambda: max(spark.sparkContext.statusTracker().getJobIdsForGroup() or [0])  # noqa: E731
    print(
        "| ruleset | enumerate s | solve s | verify s | export s | build s | driver CPU s | jobs | driver peak | JVM peak |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for ruleset in args.rulesets:
        stages.seconds.clear()
        first_job, started, cpu = jobs(), time.time(), os.times()
        build(Ruleset.parse(ruleset), data, engine=kind, size_check=False)
        wall, done = time.time() - started, os.times()
        seconds = " | ".join(
            f"{stages.seconds.get(stage, float('nan')):.1f}" for stage in ("enumerate", "solve", "verify", "export")
        )
        print(
            f"| `{ruleset}` | {seconds} | {wall:.1f} | {done.user - cpu.user + done.system - cpu.system:.1f} | "
            f"{jobs() - first_job} | {peaks.driver / 2**30:.2f} GiB | {peaks.jvm / 2**30:.2f} GiB |",
            flush=True,
        )
    shutil.rmtree(OUT, ignore_errors=True)


if __name__ == "__main__":
    main()
