"""Whole builds before and after: each ruleset built by the pipeline as of commit REV and as
it is now, back to back with the compiled limit, in the same run (the machine is shared and
noisy: only figures measured together compare).

    .venv/bin/python benchmarks/versus.py [--before REV] RULESET...

For each, the fastest of --repeat runs (before and now alternating): wall seconds, the peak memory of the process tree, the peak size of the data
folder (published files and scratch) and the ratio to the limit's wall seconds. Each build
runs `python -m pipeline build RULESET -q` in a fresh data folder under benchmarks/out/.
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

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import OUT, ROOT, TreePeak, build_limit, checkout, limit_argv

from pipeline.games.rulesets import Ruleset


class DiskPeak(threading.Thread):
    """The largest total size of the files under a folder, sampled every half second."""

    def __init__(self, folder: Path):
        super().__init__(daemon=True)
        self.folder, self.peak, self._done = folder, 0, threading.Event()

    def run(self) -> None:
        while not self._done.wait(0.5):
            total = 0
            for path in self.folder.rglob("*"):
                try:
                    total += path.stat().st_size if path.is_file() else 0
                except OSError:
                    continue
            self.peak = max(self.peak, total)

    def stop(self) -> None:
        self._done.set()
        self.join()


def timed(argv: list[str], code: Path | None, data: Path | None) -> tuple[float, float, float]:
    """Wall seconds, peak MiB of the process tree, peak MiB under `data`."""
    env = dict(os.environ)
    if code is not None:
        env["PYTHONPATH"] = str(code)
    disk = DiskPeak(data) if data is not None else None
    began = time.perf_counter()
    proc = subprocess.Popen(argv, env=env, cwd=code or ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    tree = TreePeak(proc.pid)
    tree.start()
    if disk:
        disk.start()
    _, err = proc.communicate()
    seconds = time.perf_counter() - began
    tree.stop()
    if disk:
        disk.stop()
    if proc.returncode:
        raise SystemExit(f"{' '.join(argv)} failed: {err.decode(errors='replace').strip().splitlines()[-1:]}")
    return seconds, tree.peak_kib / 1024, (disk.peak if disk else 0) / 2**20


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--before", help="the commit to compare with (git rev); without it, only this checkout against the limit"
    )
    parser.add_argument(
        "--repeat",
        type=int,
        default=2,
        help="runs of each, before and now alternating; the fastest is reported (default 2)",
    )
    parser.add_argument("rulesets", nargs="+")
    args = parser.parse_args(argv)
    print(build_limit())
    codes = ([checkout(args.before, OUT / f"code-{args.before}")] if args.before else []) + [ROOT]
    rows = [
        "| ruleset | limit s |"
        + (" before s | peak | disk | × limit |" if args.before else "")
        + " now s | peak | disk | × limit |",
        "|---|---:|" + "---:|" * 4 * len(codes),
    ]
    for text in args.rulesets:
        rules = Ruleset.parse(text)
        limit = limit_argv(rules)
        limits: list[float] = []
        runs: dict[Path, list[tuple[float, float, float]]] = {code: [] for code in codes}
        for _ in range(args.repeat):
            if limit:  # the limit between the builds, so that each repeat sees the same machine
                limits.append(timed(limit, None, None)[0])
            for code in runs:
                data = OUT / "versus-data"
                shutil.rmtree(data, ignore_errors=True)
                data.mkdir(parents=True)
                runs[code].append(
                    timed([sys.executable, "-m", "pipeline", "build", rules.id, "--data", str(data), "-q"], code, data)
                )
                shutil.rmtree(data, ignore_errors=True)
        limit_s = min(limits) if limits else None
        cells = [f"`{rules.id}`", f"{limit_s:.2f}" if limit_s else "–"]
        for measured in runs.values():
            seconds, peak, disk = min(measured)
            cells += [
                f"{seconds:.1f}",
                f"{peak / 1024:.1f} GiB",
                f"{disk / 1024:.1f} GiB",
                f"{seconds / limit_s:.1f}×" if limit_s else "–",
            ]
        rows.append("| " + " | ".join(cells) + " |")
        print(rows[-1], flush=True)
    print("\n".join(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
