"""Load on `tablebase serve`: clients asking random positions of one ruleset at once, and
the latency, lookups a second and the server's memory.

    .venv/bin/python benchmarks/serve_load.py RULESET --data DIR [--clients 8] [--requests 2000] [--rate 200] [--processes 2] [--client-processes 4]

The server is started here (`tablebase serve --port 0`, the serve extra) on the built
folder DIR and stopped at the end. Positions are drawn at random (--seed) from the
ruleset's tablebase; each client keeps one HTTP connection and asks
/api/rulesets/RULESET?position=… in turn: first as soon as answered (what the server can
do: its capacity), then, with --rate, at that many a second in all (the latency at that
load). The clients are threads of this process, or, with --client-processes K, spread over K
processes (forked), so that the clients' own Python (one GIL) does not bound what is
measured. Reported for each run: the latency's median, 90th and 99th percentiles and maximum,
and lookups a second; then the server's memory at the end, over all its processes (with
--processes, the supervisor and each process answering): resident (VmRSS), proportional
(Pss: a page two processes share counted half in each, so the sum is what the machine
gives them) and each process's peak (VmHWM, summed: an upper bound), from /proc; and the
machine's load before and after.
Then, in this process, where one lookup's time goes: the checksum checks before it
(`trusted`), the index, the lookup's row groups, and the decoded columns by id. Only the
standard library and the project (no HTTP client to install).
"""

from __future__ import annotations

import argparse
import http.client
import json
import os
import random
import re
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.parse
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def cpu_seconds(pid: int) -> float:
    """The process's user and system CPU seconds so far (/proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def server_seconds(pid: int) -> float:
    """CPU seconds of the server's processes that run now (one answering process that
    ended meanwhile takes its seconds with it: none does in a run that ends well)."""
    return sum(cpu_seconds(each) for each in tree(pid))


def tree(pid: int) -> list[int]:
    """`pid` and every process below it."""
    found = [pid]
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        found += tree(int(child))
    return found


def memory(pid: int) -> dict[str, int]:
    """VmRSS, VmHWM and Pss in KiB, each summed over the process and those below it."""
    found = {"VmRSS": 0, "VmHWM": 0, "Pss": 0}
    for each in tree(pid):
        lines = Path(f"/proc/{each}/status").read_text().splitlines()
        lines += Path(f"/proc/{each}/smaps_rollup").read_text().splitlines()
        for line in lines:
            name, _, value = line.partition(":")
            if name in found:
                found[name] += int(value.split()[0])
    return found


def load(
    base: str, ruleset: str, positions: list[str], clients: int, requests: int, rate: float | None = None
) -> tuple[list[float], float]:
    """Every request's latency in seconds, and the run's length. Without `rate`, each client
    asks again as soon as it is answered (a closed loop: the lookups a second it reaches is
    the server's capacity, and the latency then is clients / capacity, Little's law). With
    `rate`, the requests are sent at that many a second in all, spread over the clients,
    each timed from when it was due (a late client does not hide the wait: no coordinated
    omission)."""
    host, port = urllib.parse.urlsplit(base).netloc.split(":")
    latencies: list[float] = []
    failures: list[str] = []
    left = iter(range(requests))
    lock = threading.Lock()
    began = time.perf_counter()

    def client() -> None:
        connection = http.client.HTTPConnection(host, int(port), timeout=60)
        while True:
            with lock:
                number = next(left, None)
                if number is None:
                    break
                position = random.choice(positions)
            path = f"/api/rulesets/{urllib.parse.quote(ruleset)}?" + urllib.parse.urlencode({"position": position})
            start = time.perf_counter()
            if rate is not None:  # due at its place in the schedule, not when the last answer came
                start = began + number / rate
                time.sleep(max(0.0, start - time.perf_counter()))
            connection.request("GET", path)
            response = connection.getresponse()
            body = response.read()
            took = time.perf_counter() - start
            with lock:
                latencies.append(took)
                if response.status != 200:
                    failures.append(f"{response.status} {body[:200]!r}")
        connection.close()

    threads = [threading.Thread(target=client) for _ in range(clients)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, the first: {failures[0]}")
    return latencies, time.perf_counter() - began


def spread(
    base: str, ruleset: str, positions: list[str], clients: int, requests: int, rate: float | None, processes: int
) -> tuple[list[float], float, float]:
    """load() in `processes` forked processes, the clients, requests and rate shared among
    them: every latency, the run's length and the clients' CPU seconds (all processes)."""
    if processes == 1:
        cpu = time.process_time()
        latencies, took = load(base, ruleset, positions, clients, requests, rate)
        return latencies, took, time.process_time() - cpu
    began = time.perf_counter()
    pipes = []
    for number in range(processes):
        reading, writing = os.pipe()
        share = range(number, clients, processes), range(number, requests, processes)
        pid = os.fork()
        if pid == 0:  # a client process: its share of the load, its results down the pipe
            os.close(reading)
            status = 1
            try:
                random.seed(number)
                cpu = time.process_time()
                share_rate = rate * len(share[1]) / requests if rate else None
                latencies, _ = load(base, ruleset, positions, len(share[0]), len(share[1]), share_rate)
                with os.fdopen(writing, "w") as out:
                    json.dump([latencies, time.process_time() - cpu], out)
                status = 0
            finally:
                os._exit(status)
        os.close(writing)
        pipes.append((pid, reading))
    latencies, cpu = [], 0.0
    for pid, reading in pipes:
        with os.fdopen(reading) as answer:
            text = answer.read()
        _, status = os.waitpid(pid, 0)
        if status:
            raise SystemExit(f"a client process failed (status {status})")
        found, seconds = json.loads(text)
        latencies += found
        cpu += seconds
    return latencies, time.perf_counter() - began, cpu


def breakdown(data: Path, ruleset: str, positions: list[str], repeat: int = 200) -> dict[str, float]:
    """Milliseconds of one lookup's parts, each the mean of `repeat`, in this process."""
    from pipeline import Tablebases
    from pipeline.datadir.check import trusted
    from pipeline.games.rulesets import Ruleset
    from pipeline.products.probe import connection, find, index_ids, lookup_rows, text_hash
    from pipeline.server import position_answer

    rules = Ruleset.parse(ruleset)
    tables = Tablebases(data)
    files = tables.store.published(rules)
    tablebase, index, lookup = str(files.tablebase), str(files.index), str(files.lookup)
    sample = [random.choice(positions) for _ in range(repeat)]
    con = connection()
    rows = {}

    def candidates(position: str) -> None:
        index_ids(index, text_hash(position))

    def first(position: str) -> None:
        rows[position] = find(index, lookup, position)

    def children(position: str) -> None:
        lookup_rows(lookup, rows[position]["dst"])

    def columns(position: str) -> None:
        names = ", ".join(f'"{name}"' for name in rules.game.columns)
        con.execute(f"SELECT {names} FROM read_parquet(?) WHERE id = ?", [tablebase, rows[position]["id"]]).fetchall()

    parts = {
        "checksums checked (trusted)": lambda position: trusted(tables.store, rules),
        "the text's candidate ids from index.parquet (one row group)": candidates,
        "the position's row and moves from lookup.parquet (the index, then one row group)": first,
        "the children's rows from lookup.parquet (a row group each)": children,
        "the decoded columns by id from the tablebase (`?columns=true` only)": columns,
        "Tablebases.probe, whole": lambda position: tables.probe(rules, position),
        "the server's answer, whole (probe, stat before and after)": lambda position: position_answer(
            tables, ruleset, position
        ),
    }
    found = {}
    for name, part in parts.items():
        start = time.perf_counter()
        for position in sample:
            part(position)
        found[name] = (time.perf_counter() - start) / repeat * 1000
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("ruleset")
    parser.add_argument("--data", type=Path, required=True)
    parser.add_argument("--clients", type=int, default=8)
    parser.add_argument("--requests", type=int, default=2000)
    parser.add_argument("--sample", type=int, default=10_000, help="random positions drawn to ask from")
    parser.add_argument("--seed", type=int, default=35)
    parser.add_argument("--processes", type=int, default=1, help="tablebase serve --processes")
    parser.add_argument("--client-processes", type=int, default=1, help="processes the clients are spread over")
    parser.add_argument(
        "--rate", type=float, help="then as many requests again at this many a second in all (an open loop)"
    )
    arguments = parser.parse_args()
    random.seed(arguments.seed)

    from pipeline import Tablebases

    tables = Tablebases(arguments.data)
    positions = [
        row["position"]
        for row in tables.sql(
            f"SELECT position FROM tablebase WHERE ruleset = $ruleset USING SAMPLE reservoir({int(arguments.sample)} ROWS) REPEATABLE ({int(arguments.seed)})",
            {"ruleset": arguments.ruleset},
        ).to_pylist()
    ]
    row = next(row for row in tables.catalog() if row.ruleset == arguments.ruleset)
    server = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pipeline",
            "serve",
            "--port",
            "0",
            "--data",
            str(arguments.data),
            "--processes",
            str(arguments.processes),
        ],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        found = re.search(r"(http://127\.0\.0\.1:\d+)/", server.stderr.readline())
        assert found, "the server printed no address"
        base = found[1]
        before = os.getloadavg()
        load(base, arguments.ruleset, positions, arguments.clients, 50)  # warm: files in the page cache
        runs = {}
        rates = {"as fast as answered": None}
        if arguments.rate is not None:
            rates[f"at {arguments.rate:g} a second"] = arguments.rate
        for name, rate in rates.items():
            # the CPU each side spends: the clients share the machine's cores with the server
            server_cpu = server_seconds(server.pid)
            latencies, took, client_cpu = spread(
                base,
                arguments.ruleset,
                positions,
                arguments.clients,
                arguments.requests,
                rate,
                arguments.client_processes,
            )
            spent = (server_seconds(server.pid) - server_cpu, client_cpu)
            runs[name] = (latencies, took, spent)
        after = os.getloadavg()
        rss = memory(server.pid)
    finally:
        server.send_signal(signal.SIGTERM)
        server.wait(timeout=60)
    result = {
        "ruleset": arguments.ruleset,
        "positions": row.positions,
        "tablebase_bytes": (arguments.data / row.tablebase_path).stat().st_size,
        "transitions_bytes": (arguments.data / row.transitions_path).stat().st_size,
        "clients": arguments.clients,
        "processes": arguments.processes,
        "client_processes": arguments.client_processes,
    }
    for name, (latencies, took, (server_cpu, client_cpu)) in runs.items():
        cuts = statistics.quantiles(latencies, n=100)
        result[name] = {
            "requests": len(latencies),
            "p50_ms": round(cuts[49] * 1000, 1),
            "p90_ms": round(cuts[89] * 1000, 1),
            "p99_ms": round(cuts[98] * 1000, 1),
            "max_ms": round(max(latencies) * 1000, 1),
            "lookups_per_second": round(len(latencies) / took, 1),
            "server_cpu_ms_a_lookup": round(server_cpu / len(latencies) * 1000, 2),
            "clients_cpu_ms_a_lookup": round(client_cpu / len(latencies) * 1000, 2),
        }
    result |= {
        "server_rss_mib": round(rss["VmRSS"] / 1024, 1),
        "server_pss_mib": round(rss["Pss"] / 1024, 1),
        "server_peak_rss_mib": round(rss["VmHWM"] / 1024, 1),
        "load_before": [round(x, 2) for x in before],
        "load_after": [round(x, 2) for x in after],
        "cpus": os.cpu_count(),
    }
    print(json.dumps(result, indent=1))
    print("one lookup's parts, ms (mean, in one process, one at a time):")
    for name, ms in breakdown(arguments.data, arguments.ruleset, positions).items():
        print(f"  {ms:7.2f}  {name}")


if __name__ == "__main__":
    main()
