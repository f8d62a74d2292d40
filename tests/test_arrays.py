"""The DuckDB engine's NumPy passes (pipeline/engines/arrays.py) against plain Python, on
random graphs with arbitrary stored values: every fact of verify, and reachability, also
where the files are not in the order the stages write them (ids not 0..n-1, moves not
sorted by source, sources of one position split between row groups, Grundy values too
large for the bit masks)."""

from __future__ import annotations

import random
from collections import deque
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.dataset import SOLVER_MADE
from pipeline.core.keys import distinct, distinct_rows
from pipeline.core.values import WORDS
from pipeline.engines import arrays


def _graph(seed: int, n: int, ranked: bool, sparse: bool, shuffled: bool):
    rng = random.Random(seed)
    ids = sorted(rng.sample(range(3 * n), n)) if sparse else list(range(n))
    moves = set()
    for i in range(n):
        for _ in range(rng.choice([0, 0, 1, 2, 3, 5, 9])):
            j = rng.randrange(i) if ranked and i else rng.randrange(n)
            if not ranked or j < i:
                moves.add((ids[i], ids[j]))
    moves = sorted(moves)
    if rng.random() < 0.3:
        moves.append((ids[-1], 10 * n))  # a child that is no position
    if shuffled:
        rng.shuffle(moves)
    words = WORDS + ["bogus", None]
    positions = {
        "id": ids,
        "text": [f"p{i}" for i in ids],
        "terminal": [rng.choice(["win", "loss", "tie", None, None, None]) for _ in ids],
        "moves": [rng.randrange(4) for _ in ids],
        "rank": list(range(n)) if ranked else [None] * n,
    }
    solution = {
        "id": [i for i in ids if rng.random() < 0.95],
    }
    solution["value"] = [rng.choice(words) for _ in solution["id"]]
    solution["remoteness"] = [rng.choice([None, 0, 1, 2, 5, 7]) for _ in solution["id"]]
    solution["grundy"] = [rng.choice([None, 0, 1, 2, 3, 62, 63, 64, 70]) for _ in solution["id"]]
    solution["grundy_height"] = [rng.choice([None, 0, 1, 4]) for _ in solution["id"]]
    for column in SOLVER_MADE:  # carried into the facts as stored, whatever they hold
        solution[column.name] = [rng.choice([None, 0, 1, 3]) for _ in solution["id"]]
    return positions, solution, moves


def _write(tmp_path: Path, positions, solution, moves, group: int) -> tuple[Path, Path, Path]:
    paths = tmp_path / "positions.parquet", tmp_path / "transitions.parquet", tmp_path / "solution.parquet"
    pq.write_table(
        pa.table(
            positions,
            schema=pa.schema(
                [
                    ("id", pa.int64()),
                    ("text", pa.string()),
                    ("terminal", pa.string()),
                    ("moves", pa.int32()),
                    ("rank", pa.int32()),
                ]
            ),
        ),
        paths[0],
    )
    pq.write_table(
        pa.table(
            {"src": [m[0] for m in moves], "dst": [m[1] for m in moves]},
            schema=pa.schema([("src", pa.int64()), ("dst", pa.int64())]),
        ),
        paths[1],
        row_group_size=group,
    )
    pq.write_table(
        pa.table(
            solution,
            schema=pa.schema(
                [
                    ("id", pa.int64()),
                    ("value", pa.string()),
                    ("remoteness", pa.int32()),
                    ("grundy", pa.int32()),
                    ("grundy_height", pa.int32()),
                    *((column.name, column.type) for column in SOLVER_MADE),
                ]
            ),
        ),
        paths[2],
    )
    return paths


def _facts(positions, solution, moves) -> dict[int, dict]:
    """verify's facts, one position at a time."""
    named = [name for name in solution if name != "id"]
    stored = {i: dict(zip(named, row)) for i, *row in zip(solution["id"], *(solution[name] for name in named))}
    code = {word: c for c, word in enumerate(WORDS, start=1)}
    children: dict[int, list[int]] = {}
    for src, dst in moves:
        children.setdefault(src, []).append(dst)
    facts = {}
    for i in positions["id"]:
        kids = [stored.get(d) for d in children.get(i, [])]
        known = [k for k in kids if k is not None]

        def of(word, known=known):
            return [k for k in known if code.get(k["value"]) == code[word]]

        rem = lambda ks: [k["remoteness"] for k in ks if k["remoteness"] is not None]  # noqa: E731
        own = stored.get(i, {})
        g = own.get("grundy")
        child_grundy = {k["grundy"] for k in known if k["grundy"] is not None}
        facts[i] = {
            "solved": i in stored,
            "code": code.get(own.get("value")),
            "children": len(kids),
            "known_children": len(known),
            "loss_children": len(of("loss")),
            "win_children": len(of("win")),
            "tie_children": len(of("tie")),
            "draw_children": len(of("draw")),
            "min_loss": min(rem(of("loss")), default=None),
            "min_tie": min(rem(of("tie")), default=None),
            "max_win": max(rem(of("win")), default=None),
            "grundy_children": sum(k["grundy"] is not None for k in known),
            "grundy_taken": None if g is None else g in child_grundy,
            "grundy_below": 0 if g is None else len([v for v in child_grundy if v < g]),
            "max_child_height": max(
                (k["grundy_height"] for k in known if k["grundy_height"] is not None), default=None
            ),
            "value": own.get("value"),
            "remoteness": own.get("remoteness"),
            "grundy": g,
            "grundy_height": own.get("grundy_height"),
        } | {column.name: own.get(column.name) for column in SOLVER_MADE}  # as stored: the checks compare them
    return facts


CASES = [
    (seed, ranked, sparse, shuffled, group)
    for seed, (ranked, sparse, shuffled, group) in enumerate(
        [
            (True, False, False, 7),
            (True, True, False, 3),
            (False, False, True, 5),
            (False, True, True, 1000),
            (True, False, True, 4),
            (False, False, False, 2),
        ]
    )
]


@pytest.mark.parametrize("seed, ranked, sparse, shuffled, group", CASES)
def test_verify_facts_match_plain_python(tmp_path, seed, ranked, sparse, shuffled, group):
    positions, solution, moves = _graph(seed, 300, ranked, sparse, shuffled)
    paths = _write(tmp_path, positions, solution, moves, group)
    got = arrays.verify_facts(*paths, impartial=True).to_pylist()
    want = _facts(positions, solution, moves)
    assert [row["id"] for row in got] == positions["id"]
    for row in got:
        expected = want[row["id"]]
        assert {key: row[key] for key in expected} == expected, row["id"]
    terminals = [t for t in positions["terminal"] if t is not None]
    assert {row["normal_play"] for row in got} == {all(t == "loss" for t in terminals) if terminals else None}


def _reachable(positions, moves, starts) -> set[int]:
    children: dict[int, list[int]] = {}
    for src, dst in moves:
        children.setdefault(src, []).append(dst)
    seen, queue = set(starts), deque(starts)
    while queue:
        for child in children.get(queue.popleft(), []):
            if child not in seen and child in set(positions["id"]):
                seen.add(child)
                queue.append(child)
    return seen


@pytest.mark.parametrize("seed, ranked, sparse, shuffled, group", CASES)
def test_reachable_matches_breadth_first_search(tmp_path, seed, ranked, sparse, shuffled, group):
    positions, solution, moves = _graph(seed, 300, ranked, sparse, shuffled)
    paths = _write(tmp_path, positions, solution, moves, group)
    starts = [positions["id"][-1], positions["id"][len(positions["id"]) // 2]]
    seen = arrays.reachable(paths[0], paths[1], np.array(starts))
    assert {i for i, s in zip(positions["id"], seen) if s} == _reachable(positions, moves, starts)


@pytest.mark.parametrize("seed, ranked, sparse, shuffled, group", [case for case in CASES if not case[2]])
def test_reachable_by_sweeps_matches_breadth_first_search(tmp_path, monkeypatch, seed, ranked, sparse, shuffled, group):
    """Sweeps over the moves file in id order (many moves, ids 0..n-1) find what a breadth
    first search finds, in as many passes as the numbering needs (shuffled ids: several)."""
    monkeypatch.setattr(arrays, "SWEEP_MOVES", 0)
    positions, solution, moves = _graph(seed, 300, ranked, sparse, shuffled)
    paths = _write(tmp_path, positions, solution, moves, group)
    starts = [positions["id"][-1], positions["id"][len(positions["id"]) // 2]]
    passes = []
    sweeps = arrays._sweeps
    monkeypatch.setattr(arrays, "_sweeps", lambda *args: passes.append(1) or sweeps(*args))
    monkeypatch.setattr(arrays, "rank_starts", lambda path: None)  # as where moves cycle
    seen = arrays.reachable(paths[0], paths[1], np.array(starts))
    assert passes
    assert {i for i, s in zip(positions["id"], seen) if s} == _reachable(positions, moves, starts)


def test_one_sweep_marks_what_ids_breadth_first_from_the_start_reach(tmp_path, monkeypatch):
    """Ids going breadth first from the start (dobutsu's): one pass marks everything, moves
    back to earlier positions included; no second pass is needed to know it."""
    moves = [(0, 1), (0, 2), (1, 0), (1, 3), (2, 4), (3, 1), (3, 5), (4, 2), (5, 0)]
    path = tmp_path / "transitions.parquet"
    pq.write_table(pa.table({"src": [m[0] for m in moves], "dst": [m[1] for m in moves]}), path, row_group_size=2)
    passes = []
    row_groups = arrays.row_groups
    monkeypatch.setattr(arrays, "row_groups", lambda *args, **kw: passes.append(1) or row_groups(*args, **kw))
    seen = np.zeros(8, dtype=bool)
    seen[0] = True
    arrays._sweeps(path, 7, seen)
    assert seen[:7].tolist() == [True] * 6 + [False] and len(passes) == 1


@pytest.mark.parametrize("part_moves", [None, 50])
@pytest.mark.parametrize("seed, ranked", [(seed, ranked) for seed in range(4) for ranked in (True, False)])
def test_verify_parts_streamed_match_the_whole_facts(tmp_path, monkeypatch, seed, ranked, part_moves):
    """Where the files are as the stages write them (ids 0..n-1, a value for each, moves
    by source), verify's facts are made part by part, a window of children held: the same
    rows as made whole, with odd stored values, large Grundy values and moves that lead up
    as well as down (ranked or not). A row group whose positions lead by more than
    PART_MOVES moves is made in several parts (by the positions' count of moves, which
    here does not count the moves dropped below)."""
    if part_moves is not None:
        monkeypatch.setattr(arrays, "PART_MOVES", part_moves)
    rng = random.Random(seed)
    positions, _, moves = _graph(seed, 3000, ranked, False, False)
    ids = positions["id"]
    words = WORDS + ["bogus", None]
    solution = {
        "id": ids,
        "value": [rng.choice(words) for _ in ids],
        "remoteness": [rng.choice([None, 0, 1, 2, 5, 7]) for _ in ids],
        "grundy": [rng.choice([None, 0, 1, 2, 3, 62, 63, 64, 70]) for _ in ids],
        "grundy_height": [rng.choice([None, 0, 1, 4]) for _ in ids],
    } | {column.name: [rng.choice([None, 0, 1, 3]) for _ in ids] for column in SOLVER_MADE}
    moves = [move for move in moves if move[1] < len(ids)]
    paths = _write(tmp_path, positions, solution, moves, 97)
    for path in (paths[0], paths[2]):  # positions and solution in row groups of 500
        pq.write_table(pq.read_table(path), path, row_group_size=500)
    assert arrays._streamable(*paths)
    parts = list(arrays.verify_parts(*paths, impartial=True))
    assert len(parts) == 6 if part_moves is None else len(parts) > 6 * 10
    assert pa.concat_tables(parts).to_pylist() == arrays.verify_facts(*paths, impartial=True).to_pylist()


def test_verify_parts_checks_files_not_in_the_stages_order_whole(tmp_path):
    positions, solution, moves = _graph(1, 300, True, True, False)  # sparse ids
    paths = _write(tmp_path, positions, solution, moves, 7)
    assert not arrays._streamable(*paths)
    assert [part.num_rows for part in arrays.verify_parts(*paths, impartial=True)] == [300]


@pytest.mark.parametrize("size, spread", [(0, 1), (1, 1), (1000, 7), (1000, 10**12), (5000, 3)])
def test_distinct_gives_each_value_once_ascending(size, spread):
    keys = np.random.default_rng(size + spread).integers(-spread, spread, size, dtype=np.int64)
    got = distinct(keys)
    assert got.dtype == keys.dtype and got.tolist() == sorted(set(keys.tolist()))


@pytest.mark.parametrize(
    "size, low, high", [(0, 0, 1), (1, 0, 1), (1000, 0, 5), (3000, 0, 40), (1000, -3, 3), (1000, 0, 1 << 40)]
)
def test_distinct_rows_are_what_np_unique_gives_by_rows(size, low, high):
    """As one integer a row where the values allow it, by a sort of columns where they do not
    (negative values, or values whose product would not fit 62 bits)."""
    pairs = np.random.default_rng(size).integers(low, high, (size, 2), dtype=np.int64)
    got = distinct_rows(pairs)
    assert got.dtype == pairs.dtype and got.shape[1:] == (2,)
    assert got.tolist() == np.unique(pairs, axis=0).tolist() == sorted(map(list, set(map(tuple, pairs.tolist()))))
