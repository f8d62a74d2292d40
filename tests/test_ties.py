"""Ties: games that end with nobody winning, in both solvers and the verifier.

The solvers are game-agnostic: they read positions.parquet and transitions.parquet. These
tests write small move graphs by hand and at random (with and without cycles, with won,
lost and tied ends) and compare both solvers with a naive solver written here from the
definitions in pipeline/core/values.py: the mover prefers win > tie > draw > loss; a win is one
ply after its nearest lost child, a loss one after its farthest won child, a tie one after
its nearest tied child; what never ends is a draw.
"""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from pipeline.core.dataset import POSITIONS
from pipeline.core.errors import VerificationError
from pipeline.core.values import BAND, PREFERENCE, Value, in_words, score
from pipeline.datadir.layout import DataDir, RulesetFiles
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from pipeline.storage.parquet import read_table
from tests.staged import staged


def write_graph(files, terminal: dict[int, str], children: dict[int, list[int]], ranked: bool) -> None:
    """Positions 0..n-1 (text 'p<id>'), `terminal` values where the game is over, moves to
    `children`; with `ranked`, rank = id (every move must go to a lower id)."""
    n = len(children)
    files.dir.mkdir(parents=True, exist_ok=True)
    positions = pa.table(
        {
            "id": pa.array(range(n), pa.int64()),
            "text": [f"p{i}" for i in range(n)],
            "terminal": [terminal.get(i) for i in range(n)],
            "moves": pa.array([len(children[i]) for i in range(n)], pa.int32()),
            "rank": pa.array(list(range(n)) if ranked else [None] * n, pa.int32()),
        },
        schema=POSITIONS.schema(),
    )
    pq.write_table(positions, files.positions)
    pairs = sorted((i, j) for i in range(n) for j in children[i])
    moves = pa.array([f"to p{j}" for _, j in pairs]).dictionary_encode()
    transitions = pa.table(
        {
            "src": pa.array([i for i, _ in pairs], pa.int64()),
            "dst": pa.array([j for _, j in pairs], pa.int64()),
            "move": moves,
        }
    )
    pq.write_table(transitions, files.transitions)


def naive(terminal: dict[int, str], children: dict[int, list[int]]) -> dict[int, tuple[str, int | None]]:
    """Round by round from the definitions: wins and losses first, then ties; the rest draws."""
    known = {i: (terminal[i], 0) for i in terminal if terminal[i] != "tie"}
    for r in range(1, len(children) + 1):
        new = {}
        for i, kids in children.items():
            if i in known or not kids:
                continue
            if any(known.get(c) == ("loss", r - 1) for c in kids):
                new[i] = ("win", r)
            elif all(c in known and known[c][0] == "win" for c in kids) and max(known[c][1] for c in kids) == r - 1:
                new[i] = ("loss", r)
        known.update(new)
        if not new:  # nothing won or lost in r - 1: nothing is in r either
            break
    ties = {i: ("tie", 0) for i in terminal if terminal[i] == "tie"}
    for r in range(1, len(children) + 1):
        new = {
            i: ("tie", r)
            for i, kids in children.items()
            if i not in known and i not in ties and any(ties.get(c) == ("tie", r - 1) for c in kids)
        }
        ties.update(new)
        if not new:
            break
    known.update(ties)
    return {i: known.get(i, ("draw", None)) for i in children}


def solved_values(files) -> dict[int, tuple[str, int | None]]:
    table = read_table(files.solution).to_pylist()
    return {row["id"]: (row["value"], row["remoteness"]) for row in table}


def random_graph(seed: int, n: int, acyclic: bool, most: int = 4) -> tuple[dict[int, str], dict[int, list[int]]]:
    """n positions, some finished (won, lost or, twice as often, tied), the others with 1 to
    `most` moves to random positions (lower ones only where `acyclic`). With cycles, few
    moves per position leave room for draws beside the ties."""
    rng = random.Random(seed)
    terminal, children = {}, {}
    for i in range(n):
        targets = list(range(i)) if acyclic else [j for j in range(n) if j != i]
        if i < 3 or not targets or rng.random() < 0.15:
            terminal[i], children[i] = rng.choice(["win", "loss", "tie", "tie"]), []
        else:
            children[i] = sorted(rng.sample(targets, min(len(targets), rng.randint(1, most))))
    return terminal, children


def test_the_random_cyclic_graphs_have_every_value():
    found = [value for seed in range(12) for value, _ in naive(*random_graph(seed, 40, False, 2 + seed % 3)).values()]
    assert {value: found.count(value) > 20 for value in ("win", "loss", "tie", "draw")} == dict.fromkeys(
        ("win", "loss", "tie", "draw"), True
    )


#: p0 lost, p1 tied, p2 won at the end; p3 -> p1 (tie in 1); p4 -> p1, p2 (tie in 1: better
#: than losing); p5 -> p3, p0 (win in 1: better than a tie); p6 -> p4, p3 (tie in 2);
#: p7 -> p2 (loss in 1); p8 <-> p9 endless, p9 also -> p3 (tie in 2, better than the draw);
#: p8 -> p9 (tie in 3); p10 <-> p11 with p11 -> p2: draws (a draw beats losing).
HAND = (
    {0: "loss", 1: "tie", 2: "win"},
    {0: [], 1: [], 2: [], 3: [1], 4: [1, 2], 5: [0, 3], 6: [3, 4], 7: [2], 8: [9], 9: [3, 8], 10: [11], 11: [2, 10]},
)
HAND_VALUES = {
    0: ("loss", 0),
    1: ("tie", 0),
    2: ("win", 0),
    3: ("tie", 1),
    4: ("tie", 1),
    5: ("win", 1),
    6: ("tie", 2),
    7: ("loss", 1),
    8: ("tie", 3),
    9: ("tie", 2),
    10: ("draw", None),
    11: ("draw", None),
}


def test_hand_made_graph_with_ties_draws_and_cycles(tmp_path):
    files = RulesetFiles(tmp_path / "hand")
    write_graph(files, *HAND, ranked=False)
    assert naive(*HAND) == HAND_VALUES
    staged(solve, files, tmp_path / "tmp", impartial=False)
    assert solved_values(files) == HAND_VALUES
    staged(verify, files, tmp_path / "tmp", impartial=False)


@pytest.mark.parametrize("seed", range(12))
def test_retrograde_analysis_agrees_with_the_definitions_on_random_graphs(tmp_path, seed):
    terminal, children = random_graph(seed, 40, acyclic=False, most=2 + seed % 3)
    files = RulesetFiles(tmp_path / "random")
    write_graph(files, terminal, children, ranked=False)
    staged(solve, files, tmp_path / "tmp", impartial=False)
    assert solved_values(files) == naive(terminal, children)
    staged(verify, files, tmp_path / "tmp", impartial=False)


@pytest.mark.parametrize("seed", range(12))
def test_both_solvers_agree_with_the_definitions_without_cycles(tmp_path, seed):
    terminal, children = random_graph(seed, 40, acyclic=True)
    expected = naive(terminal, children)
    assert all(value != "draw" for value, _ in expected.values())
    results = []
    for ranked in (True, False):
        files = RulesetFiles(tmp_path / str(ranked) / "random")
        write_graph(files, terminal, children, ranked=ranked)
        staged(solve, files, tmp_path / "tmp", impartial=True)
        assert solved_values(files) == expected
        staged(verify, files, tmp_path / "tmp", impartial=True)
        results.append(read_table(files.solution))
    assert results[0].equals(results[1])  # Grundy values and heights too


@pytest.mark.parametrize(
    "where, value, remoteness, check",
    [
        (4, "tie", 2, "tie"),  # not the nearest tie
        (4, "loss", 1, "loss"),  # a tie child is not a won one
        (3, "draw", None, "draw"),  # a tie child beats endless play
        (10, "tie", 1, "tie"),  # no tie child
        (1, "draw", None, "terminal_value"),
    ],
)
def test_the_verifier_refuses_wrong_ties(tmp_path, where, value, remoteness, check):
    files = RulesetFiles(tmp_path / "hand")
    write_graph(files, *HAND, ranked=False)
    staged(solve, files, tmp_path / "tmp", impartial=False)
    table = read_table(files.solution)
    rows = table.to_pylist()
    rows[where].update(value=value, remoteness=remoteness)
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), files.solution)
    with pytest.raises(VerificationError, match=check):
        staged(verify, files, tmp_path / "tmp", impartial=False)


def test_a_game_that_is_not_impartial_has_no_grundy_values(tmp_path):
    files = RulesetFiles(tmp_path / "hand")
    terminal, children = random_graph(3, 30, acyclic=True)
    write_graph(files, terminal, children, ranked=True)
    staged(solve, files, tmp_path / "tmp", impartial=False)
    table = read_table(files.solution)
    assert table["grundy"].null_count == table["grundy_height"].null_count == table.num_rows
    staged(verify, files, tmp_path / "tmp", impartial=False)
    with pytest.raises(VerificationError, match="grundy_defined"):
        staged(verify, files, tmp_path / "tmp", impartial=True)


def test_the_value_domain_is_defined_once():
    assert [v.value for v in PREFERENCE] == ["win", "tie", "draw", "loss"]
    assert sorted(v.code for v in Value) == [1, 2, 3, 4]
    # scores order the child's values from the parent's worst to best, quick before slow
    assert (
        score(Value.WIN, 7)
        < score(Value.WIN, 8)
        < score(Value.TIE, 9)
        < score(Value.TIE, 0)
        < score(Value.LOSS, 9)
        < score(Value.LOSS, 0)
        < 3 * BAND
    )
    assert in_words("loss", 26) == "the second player wins in 26 plies"
    assert in_words("tie", 9) == "a tie in 9 plies"


@pytest.mark.parametrize("seed", range(4))
def test_the_benchmarks_yardstick_agrees_with_the_solver(tmp_path, seed):
    """benchmarks/yardstick.py, the NumPy solver `make bench` measures against, knows ties too."""
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location(
        "yardstick", Path(__file__).resolve().parent.parent / "benchmarks" / "yardstick.py"
    )
    yardstick = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(yardstick)
    terminal, children = random_graph(seed, 40, acyclic=False)
    files = RulesetFiles(tmp_path / "random")
    write_graph(files, terminal, children, ranked=False)
    staged(solve, files, tmp_path / "tmp", impartial=False)
    counts = yardstick.solve_dir(files.dir, tmp_path / "mine.npz")
    compared = yardstick.compare(files.solution, tmp_path / "mine.npz")
    assert compared["value_differences"] == compared["remoteness_differences"] == 0
    assert {k: counts[k] for k in ("wins", "losses", "ties", "draws")} == {
        k: compared["pipeline"][k] for k in ("wins", "losses", "ties", "draws")
    }


def test_a_catalog_row_from_before_ties_is_brought_up_to_date(tmp_path):
    """A data folder built by 0.2 (no `ties` column) keeps working: its rows get ties = 0."""
    from pipeline.datadir.catalog import write_catalog
    from pipeline.datadir.check import check
    from pipeline.games.rulesets import Ruleset
    from pipeline.stages.build import build

    data = DataDir(tmp_path)
    build(Ruleset.parse("sticks:rows=2"), data)
    summary = data.ruleset(Ruleset.parse("sticks:rows=2")).summary
    old = pq.read_table(summary)
    pq.write_table(old.drop_columns(["ties"]), summary)
    assert write_catalog(data) == 1
    assert pq.read_table(data.catalog)["ties"].to_pylist() == [0]
    assert pq.read_table(summary).equals(old)
    assert check(tmp_path) == []


def test_pages_of_a_catalog_from_before_ties_are_drawn(tmp_path):
    """The index reads the catalog itself: an old one is rewritten first, not a traceback."""
    from pipeline.games.rulesets import Ruleset
    from pipeline.products.draw import draw
    from pipeline.stages.build import build

    data = DataDir(tmp_path)
    rules = Ruleset.parse("sticks:rows=2")
    build(rules, data)
    for path in (data.ruleset(rules).summary, data.catalog):
        pq.write_table(pq.read_table(path).drop_columns(["ties"]), path)
    (tmp_path / "SHA256SUMS").unlink()  # 0.2 kept none
    written = draw([rules.id], tmp_path, graphs=False)
    assert (tmp_path / "pages" / "index.html") in written
    assert pq.read_table(data.catalog)["ties"].to_pylist() == [0]
