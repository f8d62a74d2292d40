"""Sizes known before building: the games' counts bound what is built (exactly where they
say so), and a ruleset that cannot fit the machine is refused up front, in one line."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.datadir.layout import DataDir
from pipeline.engines import engine_kind
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.stages.estimate import estimate, parse_size
from pipeline.tablebases import Tablebases

OTHERS = [
    "sticks:max_take=2,rows=5",
    "nim:variant=arrow-other",
    "nim:start=1-2-3-4,variant=coin",
    "hackenbush:fib=4",
    "hackenbush:tree=1:2/3;2:4",
    "chopsticks:self_attack=true,split=dead",
]
#: Far past 23 GiB of memory however it is counted: 131,790,399 and 2^27 positions.
OVERSIZE = ["chopsticks:fingers=40,hands=3", "hackenbush:tree=1:" + "/".join(str(n) for n in range(2, 29))]


def built_into(tmp_path_factory, name: str, rulesets: list[str]) -> Path:
    """A data folder of its own with `rulesets` built."""
    data = tmp_path_factory.mktemp(name)
    Tablebases(data).build(*rulesets)
    return data


@pytest.fixture(scope="module")
def others(tmp_path_factory) -> Path:
    return built_into(tmp_path_factory, "others", OTHERS)


def test_the_counts_bound_every_built_ruleset(built, others):
    rows = [row for data in (built, others) for row in pq.read_table(data / "catalog.parquet").to_pylist()]
    assert len(rows) == 5 + len(OTHERS)
    for row in rows:
        size = estimate(Ruleset.parse(row["ruleset"])).size
        if size.exact:
            assert size.positions == row["positions"], row["ruleset"]
        assert size.positions >= row["positions"] and size.transitions >= row["transitions"], row["ruleset"]


#: Besides the rulesets the other tests build (BUILT, OTHERS): every game's, and the narrow
#: boards whose bound ignored that play alternates (1×40 was asked 459.5 GiB for 41 positions).
NEAR = [
    "tictactoe",
    "tictactoe:k=2,rows=2",
    "octal:start=20",
    "nim:start=3-4-5,variant=coin",
    "sticks:rows=6",
    "dobutsu:pieces=g",
    "connect:cols=4,k=3,rows=3",
    "connect:cols=2,k=3,rows=4",
    "connect:cols=1,k=3,rows=5",
    "connect:cols=1,rows=40",
    "connect:cols=2,rows=8",
]


@pytest.fixture(scope="module")
def near(tmp_path_factory) -> Path:
    return built_into(tmp_path_factory, "near", NEAR)


def test_every_games_counts_are_within_three_times_what_is_built(built, others, near):
    """The bound (what `estimate` shows as "at most") and the counts a build is sized by
    (the game's likely ones, pipeline/stages/estimate.py) come within a factor of 3 of the
    positions built, for every game: a bound far above the truth refuses builds that fit."""
    from pipeline.games.registry import all_games
    from pipeline.stages.estimate import likely

    rows = [row for data in (built, others, near) for row in pq.read_table(data / "catalog.parquet").to_pylist()]
    builtin = {name for name, game in all_games().items() if type(game).__module__.startswith("pipeline.games.")}
    assert {row["ruleset"].split(":")[0] for row in rows} >= builtin
    for row in rows:
        rules = Ruleset.parse(row["ruleset"])
        size = rules.game.size(rules)
        truth = row["positions"]
        assert truth <= size.positions <= 3 * truth, (row["ruleset"], size.positions, truth)
        assert truth / 3 <= likely(size).positions <= 3 * truth, (row["ruleset"], likely(size).positions, truth)


#: Small rulesets of every game, a hackenbush path's positions listing 30 edges on average.
SMALL = [
    "tictactoe",
    "chopsticks:split=any",
    "sticks:rows=6",
    "nim:start=3-4-5,variant=coin",
    "octal:start=20",
    "hackenbush:tree=" + ";".join(f"{n}:{n + 1}" for n in range(1, 61)),
    "connect:cols=4,rows=4",
]


@pytest.mark.parametrize("ruleset", SMALL, ids=lambda ruleset: ruleset[:30])
def test_the_disk_estimate_holds_a_built_ruleset_and_its_data_folder(tmp_path, ruleset):
    """Besides the ruleset's files, the data folder's own (tablebases.duckdb alone 0.5 MB):
    the estimate of tictactoe's 6,046 positions and 19,107 moves said 0.5 MiB where its
    folder took 0.67 MB."""
    rules = Ruleset.parse(ruleset)
    build(rules, DataDir(tmp_path / "data"))
    taken = sum(path.stat().st_size for path in (tmp_path / "data").rglob("*") if path.is_file())
    assert taken <= estimate(rules).disk, ruleset


#: The data folder's peak (`du -sb` every 0.5 s; 5 s for 5×6) of `tablebase build` on
#: connect's boards (BENCHMARKS.md, "The disk a build takes"): since 0.16.0 with
#: lookup.parquet (5.7 B a position), which the smaller boards peak with as they end;
#: 5×6 as measured with index.parquet (0.15.0: its sort spills 11 GB to scratch, and
#: the lookup is written after that scratch is gone, 17.1 GB then in all).
CONNECT_PEAKS = {
    "connect:cols=4,rows=6": 273_720_681,
    "connect:cols=5,rows=5": 1_204_664_148,
    "connect:cols=6,rows=4": 1_702_375_533,
    "connect:cols=5,rows=6": 22_321_508_293,
}


@pytest.mark.parametrize("ruleset, peak", CONNECT_PEAKS.items())
def test_connect_is_estimated_above_the_disk_its_builds_took_and_within_half_again(ruleset, peak):
    """Sized by the positions connect expects (its sample of boards), not by its bound of
    several times as many: the ask is what the build takes, with a margin."""
    assert peak < estimate(Ruleset.parse(ruleset)).disk < 1.5 * peak


def test_connect_5x6_is_estimated_within_half_again_of_the_memory_its_build_took():
    """`make billion` peaked at 6.5 GiB (BENCHMARKS.md, "A billion positions")."""
    measured = 6.5 * 2**30
    assert measured < estimate(Ruleset.parse("connect:cols=5,rows=6")).memory < 1.5 * measured


@pytest.mark.parametrize(
    "ruleset, memory, disk",
    [("dobutsu", 5_602_140 * 1024, 17_296_528_141), ("dobutsu:try=off", 10_374_816 * 1024, 37_233_013_185)],
)
def test_dobutsu_is_estimated_within_half_again_of_what_its_build_took(ruleset, memory, disk):
    """The full game built stage by stage (BENCHMARKS.md, "Dōbutsu shōgi: the full game"):
    verify's 5.34 GiB was the most memory a stage took, and the data folder peaked at
    17.3 GB while it was solved; without the try, 9.9 GiB and 37.2 GB (the folder's peak
    less the full game's 11.8 GB beside it). The estimate sizes them by the positions and
    moves the game expects from its smaller rulesets, not by bounds of two to three times
    as many."""
    found = estimate(Ruleset.parse(ruleset))
    assert memory < found.memory < 1.5 * memory
    assert disk < found.disk < 1.5 * disk


def test_connect_5x6_fits_a_disk_of_60_GB():
    """The figures for any game (40 B a position, 4 B a move rank by rank) asked 125.5 GiB
    for the 14.7 GB 5×6 took, so `make billion` needed --no-size-check; connect's own ask
    a third of that, on a bound of 2.6 times its positions."""
    assert estimate(Ruleset.parse("connect:cols=5,rows=6")).disk < 60 * 10**9


@pytest.mark.parametrize(
    "ruleset", ["chopsticks:fingers=12,hands=3", "sticks:rows=10", SMALL[5]], ids=lambda ruleset: ruleset[:30]
)
def test_a_game_without_disk_figures_of_its_own_is_counted_for_texts_of_any_length(ruleset):
    """40 B a position and 16 B a move, 4 B rank by rank: hackenbush's texts list every
    edge left (a path of 500 edges took 60 B a position in its files), beside each move."""
    rules = Ruleset.parse(ruleset)
    size = rules.game.size(rules)
    assert size.disk_per_position is None and size.disk_per_transition is None
    per_transition = 4 if size.by_rank else 16
    assert estimate(rules).disk >= 40 * size.positions + per_transition * size.transitions


def run(*args: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, **(env or {})},
    )


@pytest.mark.parametrize("ruleset", OVERSIZE)
def test_a_ruleset_too_big_for_the_memory_is_refused_before_any_work(tmp_path, ruleset):
    result = run("build", ruleset, "--data", str(tmp_path / "data"), env={"TABLEBASE_MAX_MEMORY": "16GB"})
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "too big for this machine" in lines[0] and "14.9 GiB is available" in lines[0], (
        result.stderr
    )
    assert not list((tmp_path / "data").rglob("*.parquet"))


def test_a_ruleset_too_big_for_the_disk_is_refused_before_any_work(tmp_path):
    mount = tmp_path / "disk"
    mount.mkdir()
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", str(mount)], capture_output=True).returncode:
        pytest.skip("cannot mount a small file system here")
    try:
        result = run("build", "sticks:rows=9", "--data", str(mount / "data"))
        assert result.returncode == 1
        lines = result.stderr.strip().splitlines()
        assert len(lines) == 1 and "of disk" in lines[0] and "free" in lines[0], result.stderr
        assert not list(mount.rglob("*.parquet"))
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def test_estimate_says_what_a_build_needs_and_whether_it_fits(tmp_path):
    result = run(
        "estimate", "sticks:rows=12", OVERSIZE[0], "--data", str(tmp_path), env={"TABLEBASE_MAX_MEMORY": "16GB"}
    )
    assert result.returncode == 1
    lines = result.stdout.splitlines()
    assert lines[0].startswith("sticks:rows=12: at most ") and "of memory" in lines[0]
    assert lines[1].startswith("chopsticks:fingers=40,hands=3: 131,790,399 positions")
    assert lines[2].startswith("  does not fit: ")


@pytest.mark.parametrize("ruleset", ["octal:start=100", "sticks:rows=18", "hackenbush:fib=8"])
def test_rulesets_past_64_bit_keys_are_refused_by_the_estimate_alone(tmp_path, ruleset):
    """Their positions are numbered (heaps by keys of several words, hackenbush's 1.8
    billion within the ids' 32 bits): only the machine's memory and disk refuse them, in
    the estimate's one line."""
    result = run("estimate", ruleset, "--data", str(tmp_path), env={"TABLEBASE_MAX_MEMORY": "16GB"})
    assert result.returncode == 1, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and lines[0].startswith(f"{ruleset}: ") and "positions" in lines[0], result.stdout
    assert lines[1].startswith(f"  does not fit: {ruleset} is too big for this machine: it needs up to "), lines[1]


def test_hackenbush_is_estimated_with_the_edges_its_positions_list():
    """A path of 20,000 edges: 20,001 positions listing 200 million edges, which took
    7,299 MiB to enumerate (BENCHMARKS.md); 200 B a position would say 300 MiB."""
    path = "hackenbush:tree=" + ";".join(f"{n}:{n + 1}" for n in range(1, 20_001))
    assert estimate(Ruleset.parse(path)).memory > 7_299 << 20


def test_hackenbush_counts_are_exact_up_to_the_ids_limit_and_stop_past_it():
    """Counted in small numbers whatever the tree: a count past the cap is the cap plus one."""
    from pipeline.games.hackenbush import fibonacci_tree, subtree_sizes

    states, moves = subtree_sizes(fibonacci_tree(8))
    assert (states[1], moves) == (1_803_416_166, 57_811_845_159)
    assert subtree_sizes(fibonacci_tree(8), cap=1_803_416_165)[0][1] == 1_803_416_166
    assert subtree_sizes(fibonacci_tree(10))[0][1] == 2**31


@pytest.mark.parametrize(
    "text, size", [("4GB", 4 * 10**9), ("3.5GiB", int(3.5 * 2**30)), ("512MiB", 2**29), ("100", 100)]
)
def test_sizes_are_read_as_duckdb_writes_them(text, size):
    assert parse_size(text, "X") == size


def test_the_spark_engine_is_estimated_for_what_runs_on_this_machine(monkeypatch):
    """In local mode Spark's JVM heap is on this machine; on a cluster only the driver's
    share (the positions) is."""
    rules = Ruleset.parse("sticks:rows=11")
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.setenv("TABLEBASE_SPARK_CONF", "spark.driver.memory=6g")
    monkeypatch.delenv("TABLEBASE_SPARK_MASTER", raising=False)
    local = estimate(rules, engine_kind("spark")).memory
    monkeypatch.setenv("TABLEBASE_SPARK_MASTER", "spark://cluster:7077")
    cluster = estimate(rules, engine_kind("spark")).memory
    assert local - cluster == 6 << 30
    assert cluster < estimate(rules).memory
    assert estimate(rules, engine_kind("spark")).disk == estimate(rules).disk


def test_a_space_that_searches_is_estimated_on_a_cluster_at_the_drivers_own_needs(monkeypatch):
    """Spark's executors find its positions (Space.search): the driver holds none, so Tromp's
    7x6 board (4.5 x 10^12 positions) needs no more of this machine than a small one."""
    monkeypatch.delenv("SPARK_REMOTE", raising=False)
    monkeypatch.delenv("TABLEBASE_SPARK_CONF", raising=False)
    monkeypatch.setenv("TABLEBASE_SPARK_MASTER", "spark://cluster:7077")
    spark = engine_kind("spark")
    big, small = (
        estimate(Ruleset.parse(ruleset), spark) for ruleset in ("connect:cols=7,rows=6", "connect:cols=4,rows=4")
    )
    assert big.memory == small.memory < estimate(Ruleset.parse("connect:cols=4,rows=4")).memory
    assert big.disk > 1000 * small.disk  # the shared storage still holds the files
    assert estimate(Ruleset.parse("sticks:rows=11"), spark).memory > small.memory  # listed by the driver


@pytest.mark.parametrize(
    "ruleset",
    [f"sticks:rows={n}" for n in range(1, 9)]
    + [
        "sticks:rows=7,max_take=2",
        "octal:code=0.137,start=9-5",
        "octal:code=0.6,start=12",
        "octal:code=0.07,start=7-7-3",
        "octal:code=0.4,start=10",
        "octal:code=0.137,start=40",
    ],
)
def test_the_heap_games_bound_holds_and_is_tight_enough(ruleset):
    """The heap games' bound (tokens, and heaps weighing a token more) against the counts."""
    rules = Ruleset.parse(ruleset)
    space = rules.game.space(rules)
    positions = space.keys().size
    transitions = sum(batch.num_rows for batch in space.transitions())
    size = rules.game.size(rules)
    assert positions <= size.positions and transitions <= size.transitions
    if ruleset.startswith("sticks") and "max_take" not in ruleset and positions > 100:
        assert size.positions < 2 * positions, "the weight bound should be within 2x for sticks"
