"""The DuckDB engine's retrograde analysis (pipeline/engines/retrograde.py) in the situations a
small ruleset never puts it in: rev rewritten mid-solve, levels that go forward or through
rev, rev's moves in scratch files and a database file, Grundy values past the mask's
width, more than 255 levels, ties without a win or loss anywhere, ids that are not 0..n-1.
Each is checked against a naive solver written from the definitions (tests/test_ties.py's
for values, one here for Grundy values) and by the verifier."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.dataset import POSITIONS
from pipeline.datadir.layout import RulesetFiles
from pipeline.engines import retrograde
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from tests.staged import staged
from tests.test_ties import naive


def write(files: RulesetFiles, terminal: dict[int, str], children: dict[int, list[int]], ids=None) -> None:
    """Positions 0..n-1 (ids ids[i] where given), `terminal` values where the game is over,
    moves to `children`; no rank: moves may cycle."""
    n = len(children)
    ids = ids or list(range(n))
    files.dir.mkdir(parents=True, exist_ok=True)
    positions = pa.table(
        {
            "id": pa.array(ids, pa.int64()),
            "text": [f"p{i}" for i in range(n)],
            "terminal": [terminal.get(i) for i in range(n)],
            "moves": pa.array([len(children[i]) for i in range(n)], pa.int32()),
            "rank": pa.nulls(n, pa.int32()),
        },
        schema=POSITIONS.schema(),
    )
    pq.write_table(positions, files.positions)
    pairs = sorted((ids[i], ids[j]) for i in range(n) for j in set(children[i]))
    transitions = pa.table(
        {
            "src": pa.array([i for i, _ in pairs], pa.int64()),
            "dst": pa.array([j for _, j in pairs], pa.int64()),
            "move": pa.array(["m"] * len(pairs)).dictionary_encode(),
        }
    )
    pq.write_table(transitions, files.transitions, row_group_size=97)  # a source may span row groups


def naive_grundy(children: dict[int, list[int]]) -> dict[int, tuple[int | None, int | None]]:
    """(Grundy value, height) from the definitions: the mex of the children's values, one
    above the highest child; None where a cycle is reachable."""
    known: dict[int, tuple[int, int]] = {}
    changed = True
    while changed:
        changed = False
        for i, kids in children.items():
            if i not in known and all(c in known for c in kids):
                taken = {known[c][0] for c in kids}
                known[i] = (min(set(range(len(taken) + 1)) - taken), 1 + max((known[c][1] for c in kids), default=-1))
                changed = True
    return {i: known.get(i, (None, None)) for i in children}


def solved(files: RulesetFiles, impartial: bool, tmp_path) -> dict[int, tuple]:
    """Solve and verify; each position's (value, remoteness, grundy, height) by index."""
    staged(solve, files, tmp_path / "scratch", impartial=impartial)
    staged(verify, files, tmp_path / "scratch", impartial=impartial)
    rows = pq.read_table(files.solution).to_pylist()
    return {i: (row["value"], row["remoteness"], row["grundy"], row["grundy_height"]) for i, row in enumerate(rows)}


def expected(terminal, children, impartial: bool) -> dict[int, tuple]:
    grundy = naive_grundy(children) if impartial else dict.fromkeys(children, (None, None))
    return {i: (*value, *grundy[i]) for i, value in naive(terminal, children).items()}


def layered(seed: int, n: int, levels: int) -> tuple[dict[int, str], dict[int, list[int]]]:
    """A graph with long lines of play and cycles (benchmarks/loopy_graph.py's shape, small):
    position i > 2 moves to one or two of the positions just below it, to a few at random
    anywhere, and now and then to a finished position; a third of the finished are won."""
    rng = random.Random(seed)
    terminal, children = {0: "loss", 1: "loss", 2: "win"}, {0: [], 1: [], 2: []}
    for i in range(3, n):
        if rng.random() < 0.1:
            terminal[i], children[i] = rng.choice(["loss", "loss", "win"]), []
            continue
        below = range(max(0, i - n // levels), i)
        kids = {rng.choice(below) for _ in range(rng.randint(1, 2))}
        kids |= {rng.randrange(n) for _ in range(rng.randint(0, 2))} - {i}
        children[i] = sorted(kids)
    return terminal, children


@pytest.fixture(params=["held", "duckdb"])
def rev(request, monkeypatch) -> type:
    """rev as a small graph's NumPy arrays (HeldReverse), or in DuckDB as a larger graph's
    (Reverse, HELD lowered): the tests of what rev does run with both."""
    if request.param == "duckdb":
        monkeypatch.setattr(retrograde, "HELD", -1)
        return retrograde.Reverse
    return retrograde.HeldReverse


@pytest.fixture
def small_rev(monkeypatch):
    """rev rewritten whenever half its rows are dead, however few."""
    monkeypatch.setattr(retrograde, "COMPACT_ROWS", 0)


def test_rev_rewritten_mid_solve_changes_nothing(tmp_path, monkeypatch, small_rev, rev):
    terminal, children = layered(1, 3000, 150)
    files = RulesetFiles(tmp_path / "layered")
    write(files, terminal, children)
    rewrites = []
    compact = rev.compact

    def counted(self, live):
        dropped = compact(self, live)
        rewrites.append(dropped)
        return dropped

    monkeypatch.setattr(rev, "compact", counted)
    result = solved(files, False, tmp_path)
    assert result == expected(terminal, children, False)
    assert sum(1 for dropped in rewrites if dropped) >= 3, rewrites
    assert max(remoteness or 0 for _, remoteness, _, _ in result.values()) > 40


def test_levels_switch_between_a_pass_over_every_move_and_rev(tmp_path, monkeypatch, rev):
    """A level whose frontier's rows hold more than FORWARD_SHARE of the moves reads every
    move; the others join rev; both give the definitions' values."""
    terminal, children = layered(2, 2000, 60)
    files = RulesetFiles(tmp_path / "layered")
    write(files, terminal, children)
    monkeypatch.setattr(retrograde, "FORWARD_SHARE", 0.01)
    paths = []
    forward, parents = retrograde.Retrograde.forward, rev.parents
    monkeypatch.setattr(retrograde.Retrograde, "forward", lambda *args: paths.append("forward") or forward(*args))
    monkeypatch.setattr(rev, "parents", lambda *args: paths.append("rev") or parents(*args))
    assert solved(files, False, tmp_path) == expected(terminal, children, False)
    switches = sum(1 for before, after in zip(paths, paths[1:]) if before != after)
    assert switches >= 2, paths


def test_rev_in_scratch_files_and_a_database_file_and_frontiers_in_ranges_change_nothing(tmp_path, monkeypatch):
    """rev's moves in buckets of scratch files, rev in a database file, each frontier
    joined a few positions at a time and its parents applied a few at a time: the same
    bytes as held in NumPy's arrays and in DuckDB's memory, and no scratch left."""
    terminal, children = layered(3, 2000, 80)
    files = RulesetFiles(tmp_path / "layered")
    write(files, terminal, children)
    solved(files, True, tmp_path)
    in_memory = files.solution.read_bytes()
    monkeypatch.setattr(retrograde, "HELD", -1)
    solved(files, True, tmp_path)
    assert files.solution.read_bytes() == in_memory
    monkeypatch.setattr(retrograde, "BUCKET", 300)  # some 20 buckets
    monkeypatch.setattr(retrograde, "ON_DISK", 0)
    monkeypatch.setattr(retrograde, "FRONTIER", 7)
    monkeypatch.setattr(retrograde, "PARENTS", 50)
    built = []
    real = retrograde.Buckets.tables
    monkeypatch.setattr(retrograde.Buckets, "tables", lambda self: built.append(self.count) or real(self))
    solved(files, True, tmp_path)
    assert built and built[0] > 10
    assert files.solution.read_bytes() == in_memory
    assert not list((tmp_path / "scratch").rglob("*retrograde*")), "scratch left behind"


@pytest.mark.parametrize("mask_bits", [64, 8])
def test_grundy_values_past_the_masks_width(tmp_path, monkeypatch, mask_bits):
    """Position k moves to every position below it (Grundy value k, up to 99), and to a
    cycle for k in 80..89 (no Grundy value, and none above those)."""
    monkeypatch.setattr(retrograde, "MASK_BITS", mask_bits)
    children = {k: list(range(k)) for k in range(100)}
    children |= {100: [101], 101: [100, 0]}
    for k in range(80, 90):
        children[k].append(100)
    files = RulesetFiles(tmp_path / "nim")
    write(files, {0: "loss"}, children)
    result = solved(files, True, tmp_path)
    assert result == expected({0: "loss"}, children, True)
    assert [result[k][2] for k in (63, 64, 79, 80, 99)] == [63, 64, 79, None, None]


def test_random_impartial_graphs_with_many_moves(tmp_path, monkeypatch):
    """Grundy values spread over the mask's bits and past it (MASK_BITS 8), with cycles."""
    monkeypatch.setattr(retrograde, "MASK_BITS", 8)
    rng = random.Random(5)
    children = {0: [], 1: []}
    for i in range(2, 400):
        lower = rng.sample(range(i), min(i, rng.randint(1, 30)))
        children[i] = sorted(set(lower) | ({rng.randrange(400)} - {i} if rng.random() < 0.05 else set()))
    terminal = {0: "loss", 1: "loss"}
    files = RulesetFiles(tmp_path / "random")
    write(files, terminal, children)
    result = solved(files, True, tmp_path)
    assert result == expected(terminal, children, True)
    assert max(grundy or 0 for _, _, grundy, _ in result.values()) > 8


def test_a_tie_chain_longer_than_a_byte_of_levels(tmp_path):
    """p0 a tied end; p_k (0 < k < 600) moves to p_k-1, and where k is even to p1001, won
    (p1000 is a lost end): 599 ties in a row, each one ply further, so the ties' levels go
    past 255 and the remoteness array is widened. p600..p999 are a cycle: draws."""
    children = {k: [k - 1] + ([1001] if k % 2 == 0 else []) for k in range(1, 600)}
    children |= {0: [], 1000: [], 1001: [1000]}
    children |= {k: [k + 1] if k < 999 else [600] for k in range(600, 1000)}
    children = dict(sorted(children.items()))
    terminal = {0: "tie", 1000: "loss"}
    files = RulesetFiles(tmp_path / "chain")
    write(files, terminal, children)
    result = solved(files, False, tmp_path)
    assert result == expected(terminal, children, False)
    assert result[599][:2] == ("tie", 599)
    assert result[700][:2] == ("draw", None)


def test_ties_without_a_win_or_loss_anywhere(tmp_path):
    """Only tied ends: level 1 of values has nothing to pass on, and the first pass (which
    builds rev) comes with the ties."""
    terminal, children = {0: "tie", 1: "tie"}, {0: [], 1: [], 2: [0, 3], 3: [2], 4: [3, 5], 5: [4], 6: [5]}
    files = RulesetFiles(tmp_path / "ties")
    write(files, terminal, children)
    result = solved(files, False, tmp_path)
    assert result == expected(terminal, children, False)
    assert {value for value, *_ in result.values()} == {"tie"}


def test_ids_that_are_not_0_to_n_minus_1(tmp_path):
    terminal, children = layered(4, 500, 20)
    ids = [7 * i + 3 for i in range(len(children))]
    files = RulesetFiles(tmp_path / "sparse")
    write(files, terminal, children, ids)
    result = solved(files, True, tmp_path)
    assert result == expected(terminal, children, True)
    assert pq.read_table(files.solution)["id"].to_pylist() == ids
