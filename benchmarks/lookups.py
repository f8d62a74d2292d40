"""How long a lookup takes from the shell: `tablebase probe` and `tablebase query`, each as
its own process, against `python -c "import duckdb"` run the same way (the ratio is what
compares across machines: most of a lookup is Python loading its libraries).

    .venv/bin/python benchmarks/lookups.py [--repeat N] [--data DIR]

Without --data, chopsticks is built first into a fresh folder under benchmarks/out/. Each
command runs --repeat times (11), alternating with the others so that all see the same
machine; the median is reported, with the machine's load average before and after.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "benchmarks" / "out"
TABLEBASE = [sys.executable, "-m", "pipeline"]


def commands(data: Path) -> dict[str, list[str]]:
    """The lookups measured, and the yardstick they are divided by, by name."""
    return {
        'python -c "import duckdb"': [sys.executable, "-c", "import duckdb"],
        "tablebase probe chopsticks start": [*TABLEBASE, "probe", "chopsticks", "start", "--data", str(data)],
        "tablebase query principal_variation": [
            *TABLEBASE,
            "query",
            "principal_variation",
            "-p",
            "ruleset=chopsticks",
            "-p",
            "position=start",
            "--data",
            str(data),
        ],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=11)
    parser.add_argument("--data", type=Path, help="a data folder where chopsticks is built")
    arguments = parser.parse_args()
    data = arguments.data
    if data is None:
        data = OUT / "lookups"
        shutil.rmtree(data, ignore_errors=True)
        subprocess.run([*TABLEBASE, "build", "-q", "chopsticks", "--data", str(data)], check=True, cwd=ROOT)
    runs = commands(data)
    seconds: dict[str, list[float]] = {name: [] for name in runs}
    load = os.getloadavg()[0]
    for _ in range(arguments.repeat):
        for name, argv in runs.items():
            began = time.perf_counter()
            subprocess.run(argv, check=True, cwd=ROOT, stdout=subprocess.DEVNULL)
            seconds[name].append(time.perf_counter() - began)
    yardstick = statistics.median(seconds['python -c "import duckdb"'])
    print(f"load average {load:.2f} before, {os.getloadavg()[0]:.2f} after; median of {arguments.repeat} runs\n")
    print("| command | seconds | × import duckdb |\n|---|---|---|")
    for name, times in seconds.items():
        print(f"| `{name}` | {statistics.median(times):.3f} | {statistics.median(times) / yardstick:.1f} |")


if __name__ == "__main__":
    main()
