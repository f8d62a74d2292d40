"""Ad hoc SQL through `tablebase` against the same SQL on the shipped tablebases.duckdb: every
packaged query (its header's example) and the README's SQL examples, each as its own process.

    .venv/bin/python benchmarks/adhoc_sql.py [--data DIR] [--repeat N] [--only NAME ...]

The yardstick opens DIR/tablebases.duckdb read-only from Python with DuckDB alone, points
file_search_path at DIR and fetches the same statement's rows with the same parameters (put
in canonical form first, as `tablebase query` does); `tablebase` prints its table to
/dev/null. Each pair runs --repeat times (3), alternating; the median wall time and the
largest peak RSS are reported, with their ratios (the target: within 1.5x). The same
statements are then timed inside this process, `run_sql` against DuckDB's connection to the
database file (both giving an Arrow table), which leaves out what `tablebase` takes to start
(Python, Typer, the checksums: 0.1-0.2 s beyond DuckDB's own since BENCHMARKS.md's "Start-up, round three"). A query whose example names a ruleset that
DIR does not hold is skipped, and says so.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))


TABLEBASE = [sys.executable, "-m", "pipeline"]

#: The yardstick: DuckDB alone over the shipped database file, rows fetched.
DUCKDB_ALONE = """
import json, sys, duckdb
data, sql, params = sys.argv[1], sys.argv[2], json.loads(sys.argv[3])
con = duckdb.connect(data + "/tablebases.duckdb", read_only=True)
con.execute("SET file_search_path = ?", [data])
con.sql(sql, params=params or None).fetchall()
"""


def readme_statements() -> dict[str, str]:
    """The ```sql blocks of the README and the documentation's pages (docs/) that run over the
    views (not those reading files themselves)."""
    text = "\n".join(path.read_text() for path in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))])
    blocks = list(dict.fromkeys(re.findall(r"```sql\n(.*?)```", text, re.S)))
    found = {}
    for sql in blocks:
        if "read_parquet" in sql:
            continue
        words = re.sub(r"\W+", " ", sql.split("FROM", 1)[1]).split()[:6]
        found["README: " + " ".join(words)] = sql
    return found


def cases(data: Path) -> list[tuple[str, list[str], str, dict[str, str]]]:
    """(name, tablebase's command, SQL, canonical parameters) for every measured statement."""
    import duckdb

    from pipeline.core.errors import TablebaseError
    from pipeline.products.query import checked_params, list_queries

    con = duckdb.connect()
    out = []
    for query in list_queries():
        if not query.example:
            continue
        words = shlex.split(query.example)[3:]
        params = dict(
            word.split("=", 1) for flag, word in zip(words, words[1:], strict=False) if flag in ("-p", "--param")
        )
        try:
            canonical = checked_params(data, query.parameters, params, con)
        except TablebaseError as error:  # a ruleset this folder does not hold
            print(f"skipped {query.name}: {str(error).splitlines()[0]}", file=sys.stderr)
            continue
        command = [*TABLEBASE, "query", query.name, *words, "--data", str(data)]
        out.append((query.name, command, query.path.read_text(), canonical))
    for name, sql in readme_statements().items():
        out.append((name, [*TABLEBASE, "sql", sql, "--data", str(data)], sql, {}))
    return out


def in_process(data: Path, sql: str, params: dict[str, str]) -> tuple[float, float]:
    """Seconds of `run_sql` and of DuckDB alone on the database file, for one statement."""
    import duckdb

    from pipeline.products.query import run_sql

    start = time.perf_counter()
    run_sql(data, sql, params)
    ours = time.perf_counter() - start
    start = time.perf_counter()
    con = duckdb.connect(str(data / "tablebases.duckdb"), read_only=True)
    con.execute("SET file_search_path = ?", [str(data)])
    con.sql(sql, params=params or None).to_arrow_table()
    con.close()
    return ours, time.perf_counter() - start


#: Runs each command it reads (a JSON list a line) and answers its wall seconds, peak RSS and
#: status: a process of the standard library alone, started before this one loads DuckDB, since
#: a child's peak RSS counts its parent's size at the fork.
RUNNER = """
import json, os, subprocess, sys, time
for line in sys.stdin:
    start = time.perf_counter()
    process = subprocess.Popen(json.loads(line), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - start
    print(json.dumps([seconds, usage.ru_maxrss * 1024, status, process.stderr.read().decode()]), flush=True)
"""


class Runner:
    """The small process that starts and measures the commands (RUNNER)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-c", RUNNER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
        )

    def timed(self, command: list[str]) -> tuple[float, int]:
        """Wall seconds and peak RSS (bytes) of one run; a failed run ends the benchmark."""
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(command) + "\n")
        self.process.stdin.flush()
        seconds, peak, status, stderr = json.loads(self.process.stdout.readline())
        if status:
            raise SystemExit(f"failed ({status}): {shlex.join(command)}\n{stderr}")
        return seconds, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=ROOT / "data")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--only", nargs="*", help="the names of the queries to run (all by default)")
    args = parser.parse_args()
    data = args.data.resolve()
    runner = Runner()

    print(
        "| statement | tablebase s | DuckDB alone s | ratio | tablebase MB | DuckDB alone MB | ratio "
        "| in process: run_sql s | DuckDB s | ratio |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    worst = worst_inside = 0.0
    for name, command, sql, params in cases(data):
        if args.only and name not in args.only:
            continue
        alone = [sys.executable, "-c", DUCKDB_ALONE, str(data), sql, json.dumps(params)]
        ours, theirs = [], []
        for _ in range(args.repeat):
            ours.append(runner.timed(command))
            theirs.append(runner.timed(alone))
        ours_s, theirs_s = statistics.median(t for t, _ in ours), statistics.median(t for t, _ in theirs)
        ours_m, theirs_m = max(m for _, m in ours) / 1e6, max(m for _, m in theirs) / 1e6
        inside = [in_process(data, sql, params) for _ in range(args.repeat)]
        inside_ours, inside_theirs = (statistics.median(times) for times in zip(*inside, strict=True))
        worst = max(worst, ours_s / theirs_s)
        worst_inside = max(worst_inside, inside_ours / inside_theirs)
        print(
            f"| {name} | {ours_s:.2f} | {theirs_s:.2f} | {ours_s / theirs_s:.2f} "
            f"| {ours_m:.0f} | {theirs_m:.0f} | {ours_m / theirs_m:.2f} "
            f"| {inside_ours:.3f} | {inside_theirs:.3f} | {inside_ours / inside_theirs:.2f} |",
            flush=True,
        )
    print(
        f"\nslowest ratio {worst:.2f} as processes, {worst_inside:.2f} in process "
        f"(load average {os.getloadavg()[0]:.2f})"
    )


if __name__ == "__main__":
    main()
