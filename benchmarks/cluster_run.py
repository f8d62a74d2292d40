"""One ruleset built by the Spark engine on a standalone cluster on this machine, as issue 36
asks to show it: the peaks of the `tablebase` process, of its driver JVM and of each
executor, and the tablebase compared with DuckDB's as sets of rows.

    .venv/bin/python benchmarks/cluster_run.py [--workers 2] [--worker-memory 4g]
        [--driver-memory 1g] RULESET

A master and WORKERS workers of one core each (benchmarks/run.py `standalone_cluster`, the
recipe of docs/how-to/spark.md), the build run as `tablebase build RULESET --engine spark`
with TABLEBASE_SPARK_MASTER set and `spark.driver.memory` DRIVER_MEMORY; the same ruleset then
built by DuckDB into another folder. Memory is sampled twice a second from /proc: the
`tablebase` process alone, its children (the driver JVM), and every executor JVM with its
Python workers (the worker JVMs' descendants). Data under benchmarks/out/cluster_run/.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import duckdb

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.run import standalone_cluster  # noqa: E402

OUT = Path(__file__).resolve().parent / "out" / "cluster_run"


def _children() -> dict[int, list[int]]:
    """Every process's children, by pid, from /proc."""
    found: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as stat:
                parent = int(stat.read().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        found.setdefault(parent, []).append(int(entry))
    return found


def _rss(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/statm") as statm:
            return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError):
        return 0


def _tree(pid: int, children: dict[int, list[int]]) -> list[int]:
    out, todo = [], [pid]
    while todo:
        here = todo.pop()
        out.append(here)
        todo += children.get(here, [])
    return out


class Peaks(threading.Thread):
    """Peak resident bytes of the build process, of its descendants, and of each executor
    (a child of a worker JVM, with its own Python workers)."""

    def __init__(self, build: int, workers: list[int]):
        super().__init__(daemon=True)
        self.build, self.workers = build, workers
        self.process = self.driver_jvm = 0
        self.executors: dict[int, int] = {}
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            children = _children()
            self.process = max(self.process, _rss(self.build))
            below = [pid for pid in _tree(self.build, children) if pid != self.build]
            self.driver_jvm = max(self.driver_jvm, sum(map(_rss, below)))
            for worker in self.workers:
                for executor in children.get(worker, []):
                    held = sum(map(_rss, _tree(executor, children)))
                    self.executors[executor] = max(self.executors.get(executor, 0), held)
            time.sleep(0.5)


def _worker_pids() -> list[int]:
    """The standalone workers' JVMs (started by standalone_cluster)."""
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as cmdline:
                    if b"org.apache.spark.deploy.worker.Worker" in cmdline.read():
                        found.append(int(entry))
            except OSError:
                continue
    return found


def _tablebase(con: duckdb.DuckDBPyConnection, data: Path) -> str:
    """The data folder's one tablebase as SQL: one file, or the glob of its parts."""
    named = con.execute("SELECT tablebase_path FROM read_parquet(?)", [str(data / "catalog.parquet")]).fetchone()
    return f"read_parquet('{data / named[0]}')"


def gib(value: int) -> str:
    return f"{value / 2**30:.2f} GiB"


def compare(spark_data: Path, duck_data: Path) -> tuple[list[int], list[int], list[list[tuple]]]:
    """The two tablebases' rows counted, the rows of each missing from the other (as
    multisets), and their catalog rows' figures."""
    con = duckdb.connect()
    # each folder's tablebase where its catalog names it: one file, or the glob of its parts
    sources = [_tablebase(con, data) for data in (spark_data, duck_data)]
    counts = [con.execute(f"SELECT count(*) FROM {source}").fetchone()[0] for source in sources]
    differ = [
        con.execute(f"SELECT count(*) FROM (SELECT * FROM {one} EXCEPT ALL SELECT * FROM {other})").fetchone()[0]
        for one, other in (sources, sources[::-1])
    ]
    catalogs = [
        con.execute(
            f"SELECT positions, transitions, wins, losses, ties, draws, reachable, start_value, "
            f"start_remoteness FROM '{data}/catalog.parquet'"
        ).fetchall()
        for data in (spark_data, duck_data)
    ]
    return counts, differ, catalogs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("ruleset")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--worker-memory", default="4g")
    parser.add_argument("--driver-memory", default="1g")
    args = parser.parse_args()
    tablebase = Path(sys.executable).parent / "tablebase"
    shutil.rmtree(OUT, ignore_errors=True)
    spark_data, duck_data = OUT / "spark", OUT / "duckdb"
    with standalone_cluster(args.workers, OUT, args.worker_memory) as url:
        env = {
            **os.environ,
            "TABLEBASE_SPARK_MASTER": url,
            # with more settings (an event log, say) from the caller's environment
            "TABLEBASE_SPARK_CONF": f"spark.driver.memory={args.driver_memory} "
            f"spark.executor.memory={args.worker_memory} {os.environ.get('TABLEBASE_SPARK_CONF', '')}",
        }
        began = time.monotonic()
        with open(OUT / "spark-build.log", "wb") as log:
            build = subprocess.Popen(
                [str(tablebase), "-v", "build", args.ruleset, "--engine", "spark", "--data", str(spark_data)],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
            )
            peaks = Peaks(build.pid, _worker_pids())
            peaks.start()
            code = build.wait()
            peaks.stop.set()
            peaks.join()
        spark_seconds = time.monotonic() - began
    if code != 0:
        print(f"the Spark build failed ({code}): see {OUT / 'spark-build.log'}")
        return 1
    began = time.monotonic()
    subprocess.run(
        [str(tablebase), "build", args.ruleset, "--engine", "duckdb", "--data", str(duck_data)],
        check=True,
        capture_output=True,
    )
    duck_seconds = time.monotonic() - began
    counts, differ, catalogs = compare(spark_data, duck_data)
    stages = [
        line.split(" ", 1)[1].strip()
        for line in (OUT / "spark-build.log").read_text().splitlines()
        if line[:2].isdigit() and " in " in line
    ]
    print(
        f"ruleset {args.ruleset}; {args.workers} workers of 1 core, {args.worker_memory}; driver {args.driver_memory}"
    )
    print(f"Spark build {spark_seconds:.1f} s (DuckDB {duck_seconds:.1f} s)")
    for stage in stages:
        print("  " + stage)
    print(f"tablebase process peak {gib(peaks.process)}, its driver JVM {gib(peaks.driver_jvm)}")
    for pid, peak in sorted(peaks.executors.items()):
        print(f"executor {pid} (JVM and Python workers) peak {gib(peak)}")
    print(f"rows: Spark {counts[0]:,}, DuckDB {counts[1]:,}; only in Spark's {differ[0]}, only in DuckDB's {differ[1]}")
    print(f"catalog rows equal: {catalogs[0] == catalogs[1]} {catalogs[0]}")
    return 0 if counts[0] == counts[1] and differ == [0, 0] and catalogs[0] == catalogs[1] else 1


if __name__ == "__main__":
    sys.exit(main())
