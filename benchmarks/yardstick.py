"""The yardstick: a compact in-memory NumPy retrograde solver to measure the pipeline's solve against.

It reads the same files the pipeline's solve stage reads (positions.parquet: id, terminal,
moves; transitions.parquet: src, dst), builds its own reverse index (an argsort of dst
giving every position's parents as one CSR array), then decides positions level by level
with counters, the algorithm of the pipeline's solver for rulesets whose moves can cycle
(pipeline/sql/solve_*.sql; where the game has a rank, the pipeline solves rank by rank
instead, but the yardstick stays the same fixed reference):

  level 0 is the terminal positions ('win' / 'loss' / 'tie' for the side to move);
  from the positions won or lost at level k, every undecided parent of a *lost* one is won
  at k + 1; every undecided parent of a *won* one has its counter of children not yet
  known won decreased, and a counter reaching 0 makes it lost at k + 1;
  then, from the tied positions of tie level k (level 0: the tied ends), every parent
  still undecided is tied at k + 1 (the mover prefers a tie to endless play);
  whatever is never decided is a draw (no remoteness).

Each level is vectorised over the whole frontier; no Python loop runs per position.

    python benchmarks/yardstick.py DIR [--out result.npz]

DIR holds positions.parquet and transitions.parquet. Prints one JSON line: counts, max
remoteness, levels and the seconds of each phase (read, index, levels, write). With
--out, writes id / val / rem arrays (val: 0 draw, 1 win, 2 loss, 3 tie; rem: -1 for a draw) so
that `compare` can check them position by position against the pipeline's solution.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

DRAW, WIN, LOSS, TIE = 0, 1, 2, 3
VALUE_CODES = {"draw": DRAW, "win": WIN, "loss": LOSS, "tie": TIE}


# -- reading ---------------------------------------------------------------------------


def read_positions(path: Path) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """ids (int64, ascending), terminal value code (int8: 0 none, 1 win, 2 loss, 3 tie), moves (int32)."""
    table = pq.read_table(path, columns=["id", "terminal", "moves"])
    ids = table["id"].to_numpy()
    if np.any(ids[1:] < ids[:-1]):  # the pipeline writes positions by id; sort if not
        table = table.take(np.argsort(ids, kind="stable"))
        ids = table["id"].to_numpy()
    code = pc.index_in(table["terminal"], value_set=pa.array(list(VALUE_CODES)))
    terminal = pc.fill_null(code, DRAW).to_numpy().astype(np.int8)
    moves = table["moves"].to_numpy().astype(np.int32)
    return ids, terminal, moves


def read_transitions(path: Path) -> tuple[np.ndarray, np.ndarray]:
    """src and dst as int64 arrays, read batch by batch into preallocated arrays."""
    file = pq.ParquetFile(path)
    rows = file.metadata.num_rows
    src = np.empty(rows, dtype=np.int64)
    dst = np.empty(rows, dtype=np.int64)
    at = 0
    for batch in file.iter_batches(columns=["src", "dst"], batch_size=1 << 20):
        n = batch.num_rows
        src[at : at + n] = batch.column(0).to_numpy()
        dst[at : at + n] = batch.column(1).to_numpy()
        at += n
    return src, dst


def to_index(ids: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Position ids (ascending, distinct) -> row numbers 0..n-1 (int32)."""
    n = len(ids)
    unknown = ValueError("a transition leads from or to an id that is not in positions.parquet")
    if len(values) == 0:
        return np.empty(0, dtype=np.int32)
    if n == 0 or values.min() < ids[0] or values.max() > ids[-1]:
        raise unknown
    if ids[-1] - ids[0] == n - 1:  # consecutive ids: a subtraction
        return (values - ids[0]).astype(np.int32)
    if ids[-1] - ids[0] < 2 * n:  # nearly consecutive: a lookup table is cheaper than a search
        lookup = np.full(int(ids[-1] - ids[0]) + 1, -1, dtype=np.int32)
        lookup[ids - ids[0]] = np.arange(n, dtype=np.int32)
        index = lookup[values - ids[0]]
    else:
        index = np.searchsorted(ids, values).astype(np.int32)
        index[ids[index] != values] = -1
    if (index < 0).any():
        raise unknown
    return index


# -- the reverse index -----------------------------------------------------------------


def reverse_index(src: np.ndarray, dst: np.ndarray, n: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of parents: the parents of row i are parents[start[i]:start[i + 1]]."""
    order = np.argsort(dst, kind="stable")
    parents = src[order]
    start = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(dst, minlength=n), out=start[1:])
    return start, parents


def distinct(values: np.ndarray) -> np.ndarray:
    """The distinct values, ascending. (np.unique without counts takes a hash-table path in
    NumPy >= 2.3 that is several times slower than sorting on arrays of millions.)"""
    values = np.sort(values)
    keep = np.ones(len(values), dtype=bool)
    keep[1:] = values[1:] != values[:-1]
    return values[keep]


def gather(start: np.ndarray, parents: np.ndarray, rows: np.ndarray) -> np.ndarray:
    """Concatenated parents of `rows` (with repeats when rows share a parent)."""
    first = start[rows]
    lengths = start[rows + 1] - first
    total = int(lengths.sum())
    if total == 0:
        return np.empty(0, dtype=parents.dtype)
    # position k of the output reads parents[first[j] + (k - offset of row j)]
    ends = np.cumsum(lengths)
    shift = np.repeat(first - (ends - lengths), lengths)
    return parents[shift + np.arange(total, dtype=np.int64)]


# -- the solve -------------------------------------------------------------------------


def retrograde(
    terminal: np.ndarray, moves: np.ndarray, start: np.ndarray, parents: np.ndarray
) -> tuple[np.ndarray, np.ndarray, int]:
    """val (int8: 0 draw, 1 win, 2 loss, 3 tie), rem (int32, -1 for draws) and the number of levels."""
    val = terminal.copy()
    rem = np.where(terminal > 0, 0, -1).astype(np.int32)
    pending = moves.copy()  # children not yet known to be won
    frontier = np.flatnonzero((terminal == WIN) | (terminal == LOSS)).astype(np.int32)
    level = 0
    while frontier.size:
        level += 1
        lost = frontier[val[frontier] == LOSS]
        won = frontier[val[frontier] == WIN]
        # a parent with a lost child is won
        p = gather(start, parents, lost)
        new_wins = distinct(p[val[p] == DRAW])
        val[new_wins] = WIN
        rem[new_wins] = level
        # a parent whose last pending child was won is lost
        p = gather(start, parents, won)
        p = p[val[p] == DRAW]
        touched, hits = np.unique(p, return_counts=True)
        pending[touched] -= hits.astype(np.int32)
        new_losses = touched[pending[touched] == 0]
        val[new_losses] = LOSS
        rem[new_losses] = level
        frontier = np.concatenate([new_wins, new_losses])
    frontier = np.flatnonzero(terminal == TIE).astype(np.int32)
    tie_level = 0
    while frontier.size:
        tie_level += 1
        p = gather(start, parents, frontier)
        frontier = distinct(p[val[p] == DRAW])
        val[frontier] = TIE
        rem[frontier] = tie_level
    return val, rem, max(level, tie_level)


def solve_dir(directory: Path, out: Path | None = None) -> dict:
    """Solve the ruleset whose enumerate outputs are in `directory`; return counts and timings."""
    seconds: dict[str, float] = {}
    clock = time.perf_counter()

    def lap(name: str) -> None:
        nonlocal clock
        now = time.perf_counter()
        seconds[name] = round(now - clock, 3)
        clock = now

    ids, terminal, moves = read_positions(directory / "positions.parquet")
    src, dst = read_transitions(directory / "transitions.parquet")
    lap("read")
    src = to_index(ids, src)
    dst = to_index(ids, dst)
    start, parents = reverse_index(src, dst, len(ids))
    del src, dst
    lap("index")
    val, rem, levels = retrograde(terminal, moves, start, parents)
    lap("levels")
    if out is not None:
        np.savez(out, id=ids, val=val, rem=rem)
        lap("write")
    counts = np.bincount(val, minlength=4)
    return {
        "positions": len(ids),
        "transitions": len(parents),
        "wins": int(counts[WIN]),
        "losses": int(counts[LOSS]),
        "ties": int(counts[TIE]),
        "draws": int(counts[DRAW]),
        "max_remoteness": int(rem.max()) if len(rem) and rem.max() >= 0 else None,
        "levels": levels,
        "seconds": seconds,
    }


# -- checking the pipeline's answer ----------------------------------------------------


def compare(solution: Path, result: Path) -> dict:
    """Compare the pipeline's solution.parquet (id, value, remoteness) with a yardstick result.

    Returns the pipeline's counts and the number of positions whose value or remoteness
    differs (an id missing from either side counts as a difference).
    """
    table = pq.read_table(solution, columns=["id", "value", "remoteness"])
    table = table.take(pc.sort_indices(table["id"]))
    ids = table["id"].to_numpy()
    value = pc.index_in(table["value"], value_set=pa.array(list(VALUE_CODES)))
    if value.null_count:
        raise ValueError(f"{solution} has values other than win / loss / tie / draw")
    val = value.to_numpy().astype(np.int8)
    rem = pc.fill_null(table["remoteness"], -1).to_numpy().astype(np.int32)
    counts = np.bincount(val, minlength=4)
    pipeline = {
        "wins": int(counts[WIN]),
        "losses": int(counts[LOSS]),
        "ties": int(counts[TIE]),
        "draws": int(counts[DRAW]),
        "max_remoteness": int(rem.max()) if len(rem) and rem.max() >= 0 else None,
    }
    with np.load(result) as mine:
        same_ids = len(mine["id"]) == len(ids) and np.array_equal(mine["id"], ids)
        if same_ids:
            value_diff = int(np.count_nonzero(mine["val"] != val))
            rem_diff = int(np.count_nonzero(mine["rem"] != rem))
        else:
            common, a, b = np.intersect1d(mine["id"], ids, assume_unique=True, return_indices=True)
            missing = len(mine["id"]) + len(ids) - 2 * len(common)
            value_diff = int(np.count_nonzero(mine["val"][a] != val[b])) + missing
            rem_diff = int(np.count_nonzero(mine["rem"][a] != rem[b])) + missing
    return {
        "pipeline": pipeline,
        "same_ids": bool(same_ids),
        "value_differences": value_diff,
        "remoteness_differences": rem_diff,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("dir", type=Path, help="directory with positions.parquet and transitions.parquet")
    parser.add_argument("--out", type=Path, help="write id / val / rem arrays here (.npz)")
    args = parser.parse_args(argv)
    print(json.dumps(solve_dir(args.dir, args.out)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
