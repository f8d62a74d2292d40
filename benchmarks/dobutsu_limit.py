"""Dōbutsu shōgi against the compiled limit, count by count and position by position.

    .venv/bin/python benchmarks/dobutsu_limit.py [--data DATA] [--sample N] [--counts FILE]

The compiled limit (../shared/limit/dobutsu/, not part of the project: an independent C++
enumeration and retrograde analysis) prints its counts as JSON (`-j`) and N positions spread
over its index with their values (`-d N`). This compares both with the built tablebase of
`dobutsu` in DATA: positions, catches and tries, wins, losses and draws (mirror images apart
and identified), the moves, the most moves from one position, the start, the largest
remoteness, wins and losses at every remoteness, and every sampled position's value and
remoteness. `--counts FILE` takes the limit's JSON from an earlier run instead of running it
(about 3 minutes and 1.5 GiB); the sample then comes from `--dump FILE` or is skipped.
Prints one line per comparison and exits 1 if any differs.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import duckdb
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).resolve().parent))
from run import build_limit, limit_argv

from pipeline.games.rulesets import Ruleset


def sfen(board: str, hand: str) -> str:
    """The limit's dump line's board (12 cells, rows 1 to 4, mover upper case moving up
    towards row 1) and hands as this project's position text."""
    rows = []
    for r in range(4):
        row, run = "", 0
        for cell in board[3 * r : 3 * r + 3]:
            if cell == ".":
                run += 1
                continue
            row += (str(run) if run else "") + cell
            run = 0
        rows.append(row + (str(run) if run else ""))
    return f"{'/'.join(rows)} b {hand}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data", help="the data folder holding dobutsu (default data)")
    parser.add_argument("--sample", type=int, default=10_000, help="positions the limit dumps (default 10,000)")
    parser.add_argument("--counts", help="the limit's JSON counts from an earlier run (-j), instead of running it")
    parser.add_argument("--dump", help="the limit's dump from an earlier run (-d), with --counts")
    args = parser.parse_args(argv)
    data = Path(args.data)
    tablebase = data / "dobutsu" / "default" / "tablebase.parquet"
    transitions = data / "dobutsu" / "default" / "transitions.parquet"
    if not tablebase.exists():
        raise SystemExit(f"no dobutsu tablebase in {data}: build it first (make dobutsu)")
    work = Path(tempfile.mkdtemp(prefix="dobutsu-limit-"))
    if args.counts:
        counts = json.loads(Path(args.counts).read_text())
        dump = Path(args.dump) if args.dump else None
    else:
        print(build_limit())
        command = limit_argv(Ruleset.parse("dobutsu"))
        if command is None:
            raise SystemExit("the compiled limit of dobutsu is not built: see ../shared/limit/dobutsu/README.md")
        dump = work / "dump.txt"
        subprocess.run([*command, "-j", str(work / "counts.json"), "-d", str(args.sample), str(dump)], check=True)
        counts = json.loads((work / "counts.json").read_text())

    con = duckdb.connect()
    con.execute(f"CREATE VIEW t AS SELECT * FROM read_parquet('{tablebase}')")
    ours = dict(
        zip(
            ["positions", "catch", "try", "win", "loss", "draw", "max_moves", "max_remoteness"],
            con.execute(
                """SELECT count(*), count(*) FILTER (WHERE moves = 0 AND value = 'win'),
                          count(*) FILTER (WHERE moves = 0 AND value = 'loss'),
                          count(*) FILTER (WHERE value = 'win'), count(*) FILTER (WHERE value = 'loss'),
                          count(*) FILTER (WHERE value = 'draw'), max(moves), max(remoteness) FROM t"""
            ).fetchall()[0],
        )
    )
    ours["nonterminal"] = ours["positions"] - ours["catch"] - ours["try"]
    ours["moves"] = con.execute(f"SELECT count(*) FROM read_parquet('{transitions}')").fetchall()[0][0]
    start = con.execute("SELECT value, remoteness FROM t WHERE id = 0").fetchall()[0]
    ours["start"] = {"value": start[0], "remoteness": start[1]}
    by_remoteness = {
        r: (w, lo)
        for r, w, lo in con.execute(
            "SELECT remoteness, count(*) FILTER (WHERE value = 'win'), count(*) FILTER (WHERE value = 'loss') "
            "FROM t WHERE remoteness IS NOT NULL GROUP BY remoteness"
        ).fetchall()
    }
    ours["by_remoteness"] = [
        {"remoteness": r, "win": by_remoteness[r][0], "loss": by_remoteness[r][1]} for r in sorted(by_remoteness)
    ]
    differ = 0
    for key in [*ours]:
        same = ours[key] == counts.get(key)
        differ += not same
        shown = "every remoteness" if key == "by_remoteness" else ours[key]
        print(f"{'same' if same else 'DIFFERS'}: {key}: ours {shown}" + ("" if same else f", limit {counts.get(key)}"))
    if dump is not None and dump.exists():
        sample = []
        for line in dump.read_text().splitlines():
            board, hand, _, value, remoteness = line.split()
            word = {"W": "win", "L": "loss", "D": "draw"}[value]
            sample.append((sfen(board, hand), word, None if remoteness == "-" else int(remoteness)))
        con.register("sample", pa.table({"position": [s[0] for s in sample]}))
        found = {
            p: (v, r)
            for p, v, r in con.execute(
                "SELECT position, value, remoteness FROM t SEMI JOIN sample USING (position)"
            ).fetchall()
        }
        wrong = [s for s in sample if found.get(s[0]) != (s[1], s[2])]
        differ += bool(wrong)
        print(
            f"{'same' if not wrong else 'DIFFERS'}: {len(sample):,} sampled positions' values and remoteness"
            + (f": {len(wrong):,} differ, e.g. {wrong[0]} (ours {found.get(wrong[0][0])})" if wrong else "")
        )
    return 1 if differ else 0


if __name__ == "__main__":
    sys.exit(main())
