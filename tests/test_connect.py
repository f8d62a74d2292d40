"""Connect-Four's small boards (the connect game): John Tromp's published counts and results,
position texts, impossible boards, and the stages that stream a ruleset rank by rank.

The boards above 10^7 positions (4×6, 5×5, 6×4, 5×6) are measured by `make big`
(BENCHMARKS.md), not here.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import DataError, PositionError, RulesetError, VerificationError
from pipeline.datadir.layout import DataDir
from pipeline.engines import duckdb_engine
from pipeline.games import connect
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from pipeline.storage import parquet
from pipeline.tablebases import Tablebases
from tests import reference
from tests.staged import staged

#: tromp.github.io/c4/c4.html: width × height, positions (the empty board included) and
#: the start's value for the first player.
TROMP = {
    "connect:cols=4,rows=4": (161_029, "tie"),
    "connect:cols=5,rows=4": (3_945_711, "tie"),
    "connect:cols=4,rows=5": (1_706_255, "tie"),
}


@pytest.fixture(scope="module")
def tromp(tmp_path_factory) -> Path:
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    data = tmp_path_factory.mktemp("connect")
    Tablebases(data).build(*TROMP)
    return data


@pytest.mark.parametrize("ruleset", list(TROMP))
def test_small_boards_have_tromps_counts_and_results(tromp, ruleset):
    rules = Ruleset.parse(ruleset)
    summary = pq.read_table(DataDir(tromp).ruleset(rules).summary).to_pylist()[0]
    positions, value = TROMP[ruleset]
    assert (summary["positions"], summary["reachable"], summary["start_value"]) == (positions, positions, value)
    # every tie ends on the full board
    assert summary["start_remoteness"] == rules["cols"] * rules["rows"]


#: Tromp's counts of the boards too big to build in a test (the same table).
TROMP_LARGER = {(4, 6): 15_835_683, (5, 5): 69_763_700, (6, 4): 94_910_577, (5, 6): 1_044_334_437}


@pytest.mark.parametrize("board", [(4, 4), (5, 4), (4, 5), *TROMP_LARGER])
def test_the_likely_size_is_near_tromps_counts(board):
    """The estimate's likely counts (boards of the bound drawn at random, the share that are
    positions) come within a tenth of Tromp's counts, where the bound is up to 2.6 times
    them (5×6); and never below them by more than the sampling's error."""
    cols, rows = board
    real = TROMP_LARGER.get(board) or TROMP[f"connect:cols={cols},rows={rows}"][0]
    likely, moves = connect.likely_size(cols, rows, 4)
    plies, bound_moves = connect.size_bound(cols, rows, 4)
    assert 0.98 * real <= sum(likely) <= 1.1 * real < sum(plies)
    assert moves <= bound_moves
    assert likely == connect.likely_size(cols, rows, 4)[0]  # a fixed seed: the same figures each time


def test_4x4_every_value_is_the_references(tromp):
    rules = Ruleset.parse("connect:cols=4,rows=4")
    table = pq.read_table(DataDir(tromp).ruleset(rules).tablebase, columns=["position", "value", "remoteness"])
    expected = reference.solve("connect", {"cols": "4", "rows": "4"})
    got = {p: (v, r) for p, v, r in zip(*(table[c].to_pylist() for c in table.column_names))}
    assert got == {text: (value, remoteness) for text, (value, remoteness, _) in expected.items()}


# -- positions as users type them ---------------------------------------------------------


def test_position_texts_read_back_in_any_case_and_spacing():
    rules = Ruleset.parse("connect:cols=4,rows=4")
    assert connect.GAME.canonical_position(rules, " ..../..../..../.XO. ") == "..../..../..../.xo."
    assert rules.game.start(rules) == "..../..../..../...."


@pytest.mark.parametrize(
    "text, why",
    [
        ("..../..../.x../....", "column b has a disc above an empty cell"),
        ("..../..../..../xx..", "x has 2 disc(s) and o 0"),
        ("..../..../..../o...", "x has 0 disc(s) and o 1"),
        ("x.../x.../xo../xooo", "x has 4 in a line, but o moved after it"),
        ("xo../xo../xo../xo..", "both x and o have 4 in a line"),
        ("..../..../..../..x", "expected 4 row(s) of 4 cell(s)"),
        ("..../..../..../..a.", "expected 4 row(s) of 4 cell(s)"),
    ],
)
def test_impossible_boards_are_refused_in_one_line(text, why):
    rules = Ruleset.parse("connect:cols=4,rows=4")
    with pytest.raises(PositionError) as error:
        connect.GAME.canonical_position(rules, text)
    assert why in str(error.value) and "\n" not in str(error.value)


def test_a_board_no_alternating_order_builds_is_refused():
    """One column, o under x: x moves first, so the bottom disc is x's."""
    rules = Ruleset.parse("connect:cols=1,k=3,rows=4")
    with pytest.raises(PositionError, match="no order of moves"):
        connect.GAME.canonical_position(rules, "././x/o")
    assert connect.GAME.canonical_position(rules, "././o/x") == "././o/x"


def test_lines_a_last_move_completes_together_are_a_position():
    # x's last disc, in the middle of the bottom row, completes three lines of 3 at once
    rules = Ruleset.parse("connect:cols=5,k=3,rows=3")
    assert connect.GAME.canonical_position(rules, "...../oo.oo/xxxxx") == "...../oo.oo/xxxxx"
    # the bottom row's last disc could be any but the first column's, under o's discs
    rules = Ruleset.parse("connect:cols=4,rows=4")
    assert connect.GAME.canonical_position(rules, "o.../o.../o.../xxxx") == "o.../o.../o.../xxxx"
    with pytest.raises(PositionError, match="no last move could have made together"):
        # a row and a column of x's that share no top disc
        connect.GAME.canonical_position(Ruleset.parse("connect:cols=3,k=3,rows=3"), "xoo/xoo/xxx")


@pytest.mark.parametrize(
    "ruleset, why",
    [
        ("connect:cols=9,rows=7", "63-bit"),
        ("connect:cols=4,k=5,rows=4", "no line of 5 fits"),
    ],
)
def test_boards_beyond_the_keys_or_lines_that_cannot_fit_are_refused(ruleset, why):
    with pytest.raises(RulesetError, match=why):
        Ruleset.parse(ruleset)


def test_the_size_bounds_what_is_built():
    rulesets = [
        "connect:cols=4,rows=4",
        "connect:cols=3,k=3,rows=3",
        "connect:cols=5,k=2,rows=1",
        "connect:cols=3,k=1,rows=2",
    ]
    for ruleset in rulesets:
        rules = Ruleset.parse(ruleset)
        space = rules.game.space(rules)
        size = rules.game.size(rules)
        moves = sum(batch.num_rows for part in range(space.parts()) for batch in space.transitions_part(part))
        assert size.positions >= sum(space.sizes) and size.transitions >= moves
        plies, _ = connect.size_bound(rules["cols"], rules["rows"], rules["k"])
        assert all(bound >= built for bound, built in zip(plies, space.sizes)), ruleset


@pytest.mark.parametrize(("cols", "rows", "k"), [(3, 3, 2), (2, 4, 3), (3, 2, 1), (2, 3, 4), (1, 6, 3), (1, 3, 1)])
def test_the_size_bound_counts_the_boards_its_rules_allow(cols, rows, k):
    """size_bound against every board listed one by one: columns standing on the ground, x
    as many discs as o or one more, no k of one player in a column below its top, one
    column at most topped by a line of k, the last mover's, and no move out of that one;
    no column with more repeats (a disc on one of its player's) than the others have discs,
    and x's disc at the bottom of some column unless the board is empty."""
    from itertools import product

    def column(discs: tuple[int, ...]) -> tuple[bool, int | None] | None:
        """(fine, the owner of a line of k at its top) or None where a line stands below the top."""
        run, top = 0, None
        for at, disc in enumerate(discs):
            run = run + 1 if at and disc == discs[at - 1] else 1
            if run >= k:
                if at < len(discs) - 1:
                    return None
                top = disc
        return True, top

    columns = [c for h in range(rows + 1) for c in product((1, 0), repeat=h) if column(c) is not None]
    plies, transitions = [0] * (cols * rows + 1), 0
    for board in product(columns, repeat=cols):
        discs, xs = sum(map(len, board)), sum(map(sum, board))
        tops = [column(c)[1] for c in board if column(c)[1] is not None]
        last = 1 if discs % 2 else 0  # x (1) moves first
        if xs != (discs + 1) // 2 or len(tops) > 1 or (tops and tops[0] != last):
            continue
        if any(sum(a == b for a, b in zip(c, c[1:])) > discs - len(c) for c in board):
            continue
        if discs and not any(c and c[0] == 1 for c in board):
            continue
        plies[discs] += 1
        if not tops:
            transitions += sum(len(c) < rows for c in board)
    assert connect.size_bound(cols, rows, k) == (plies, transitions)


# -- the stages streaming a ruleset rank by rank ----------------------------------------------


@pytest.mark.parametrize("ruleset", ["connect:cols=4,rows=4", "connect:cols=3,k=1,rows=2"])
def test_streamed_enumerate_writes_the_bytes_of_the_whole_table_way(tmp_path, monkeypatch, ruleset):
    rules = Ruleset.parse(ruleset)
    streamed = DataDir(tmp_path / "streamed").ruleset(rules)
    streamed.dir.mkdir(parents=True)
    staged(enumerate_ruleset, streamed, tmp_path / "scratch", rules=rules)
    whole = DataDir(tmp_path / "whole").ruleset(rules)
    whole.dir.mkdir(parents=True)
    monkeypatch.setattr(connect.ConnectSpace, "streams", lambda self: False)
    staged(enumerate_ruleset, whole, tmp_path / "scratch", rules=rules)
    for kind in ("positions", "transitions"):
        assert getattr(streamed, kind).read_bytes() == getattr(whole, kind).read_bytes(), kind


def test_plies_kept_in_scratch_give_the_same_files(tmp_path, monkeypatch):
    rules = Ruleset.parse("connect:cols=4,k=3,rows=3")
    memory = build(Ruleset.parse(rules.id), DataDir(tmp_path / "memory"))
    monkeypatch.setattr(connect, "SPILL", 0)
    monkeypatch.setattr(connect, "HELD", 2)
    spilled = build(Ruleset.parse(rules.id), DataDir(tmp_path / "spilled"))
    assert {k: v for k, v in memory.items() if k.endswith("sha256")} == {
        k: v for k, v in spilled.items() if k.endswith("sha256")
    }
    assert not list((tmp_path / "spilled").rglob("keys-*.npy"))


def test_the_solver_holds_only_the_ranks_moves_lead_into(tmp_path, monkeypatch):
    """Every move leads one rank down: solving rank by rank from files read a rank at a
    time, each rank's results (in a scratch file) are dropped once the rank above is
    solved, and the values are those of a solve that keeps every rank."""
    rules = Ruleset.parse("connect:cols=4,rows=4")
    kept = DataDir(tmp_path / "kept")
    build(rules, kept)
    held = []
    original = duckdb_engine.DuckDBSolver.rank

    def rank(self, lo, hi):
        yield from original(self, lo, hi)
        held.append(sum(rank.last - rank.first + 1 for rank in self.held))
        assert all(rank.path is not None and rank.path.exists() for rank in self.held)  # scratch files

    monkeypatch.setattr(duckdb_engine.DuckDBSolver, "rank", rank)
    monkeypatch.setattr(duckdb_engine, "LEVELS_UP_TO", -1)  # rank by rank, small as it is (kept: by levels)
    monkeypatch.setattr(duckdb_engine, "LOAD_ROWS", 0)
    monkeypatch.setattr(duckdb_engine, "HELD_IN_MEMORY", 0)
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 4096)  # many row groups: floors by statistics
    streamed = DataDir(tmp_path / "streamed")
    build(rules, streamed)
    plies = rules.game.space(rules).sizes
    widest = max(a + b for a, b in zip(plies, plies[1:]))
    # two ranks, and where ranks share a row group of moves, what its statistics cannot tell apart
    assert len(held) == len(plies) and max(held) <= widest + 2 * 4096, (held, widest)
    assert held[-1] == 0  # the start's rank: no rank above needs anything
    columns = ["id", "value", "remoteness"]
    assert pq.read_table(streamed.ruleset(rules).solution, columns=columns) == pq.read_table(
        kept.ruleset(rules).solution, columns=columns
    )


@pytest.mark.parametrize("failing", ["positions", "transitions"])
def test_a_full_disk_under_either_file_stops_the_streamed_enumerate(tmp_path, monkeypatch, failing):
    """The positions and the moves are written by threads of their own: a write failing in
    either ends enumerate with that error (no wait for ever on the other), and no file is
    left half written."""
    import errno

    from pipeline.stages import enumerate as enumerate_stage

    real = enumerate_stage.write_batches

    def write_batches(batches, path, schema, *encoding, **options):
        if path.name.startswith(failing):

            def failing_batches():
                for number, batch in enumerate(batches):
                    if number == 3:
                        raise OSError(errno.ENOSPC, "No space left on device", str(path))
                    yield batch

            return real(failing_batches(), path, schema, *encoding, **options)
        return real(batches, path, schema, *encoding, **options)

    monkeypatch.setattr(enumerate_stage, "write_batches", write_batches)
    monkeypatch.setattr(connect.ConnectSpace, "_step", lambda self: 500)  # many parts, many batches
    rules = Ruleset.parse("connect:cols=4,rows=4")
    files = DataDir(tmp_path / "data").ruleset(rules)
    files.dir.mkdir(parents=True)
    with pytest.raises(OSError, match="No space left"):
        staged(enumerate_ruleset, files, tmp_path / "scratch", rules=rules)
    assert not list(files.dir.glob("*.parquet")) and not list(files.dir.glob(".*"))


# -- positions stored by key, their texts made once for the tablebase ------------------------


def test_positions_hold_keys_and_the_tablebase_their_texts(tromp):
    """positions.parquet holds Tromp's keys (Space.keyed); each tablebase text is the one
    its key makes, and reads back as the board it names."""
    rules = Ruleset.parse("connect:cols=4,rows=4")
    files = DataDir(tromp).ruleset(rules)
    positions = pq.read_table(files.positions)
    assert positions.column_names[:3] == ["id", "key", "terminal"]
    assert positions.schema.field("key").type == pa.int64()
    tablebase = pq.read_table(files.tablebase, columns=["id", "position"])
    assert tablebase["id"].equals(positions["id"])
    space = rules.game.space(rules)
    assert tablebase["position"].combine_chunks().equals(space.texts(positions["key"].to_numpy()))
    sample = tablebase["position"].to_pylist()[::997]
    assert [rules.game.canonical_position(rules, text) for text in sample] == sample
    assert "key" not in pq.read_schema(files.tablebase).names


@pytest.mark.parametrize("with_rules", [True, False])
def test_a_failing_check_names_the_board_its_key_makes(tmp_path, with_rules):
    """A wrong value is reported with its position's text, made from the key it is stored
    by; with the files alone (no ruleset to make texts), as the key."""
    rules = Ruleset.parse("connect:cols=3,k=3,rows=3")
    files = DataDir(tmp_path).ruleset(rules)
    staged(enumerate_ruleset, files, rules=rules)
    staged(solve, files, tmp_path / ".tmp")
    solution = pq.read_table(files.solution)
    rows = solution.to_pylist()
    wrong = next(row for row in rows if row["value"] == "win" and row["remoteness"] > 2)
    wrong["remoteness"] = 1
    pq.write_table(pa.Table.from_pylist(rows, schema=solution.schema), files.solution)
    key = pq.read_table(files.positions).filter(pc.equal(pq.read_table(files.positions)["id"], wrong["id"]))["key"]
    text = rules.game.space(rules).texts(key.to_numpy())[0].as_py()
    named = text if with_rules else f"key {key[0].as_py()}"
    with pytest.raises(VerificationError, match=f"win: 1 positions, e.g. {re.escape(named)}"):
        staged(verify, files, tmp_path / ".tmp", rules=rules if with_rules else None, impartial=False)


@pytest.mark.parametrize(
    "made",
    [
        lambda keys: pa.array(["x"] * (len(keys) - 1)),  # a text short
        lambda keys: pa.array(keys),  # numbers
        lambda keys: pa.array([None] * len(keys), pa.string()),  # no texts
        lambda keys: ["x"] * len(keys),  # not an Arrow array
    ],
)
def test_texts_that_are_not_one_a_key_stop_the_export(tmp_path, monkeypatch, made):
    """A game's texts(keys) that gives anything but one string a key stops export in one
    line, before a tablebase is written."""
    monkeypatch.setattr(connect.ConnectSpace, "texts", lambda self, keys: made(keys))
    rules = Ruleset.parse("connect:cols=3,k=3,rows=2")
    with pytest.raises(DataError, match=r"texts\(\) gave .*the game module is wrong"):
        build(rules, DataDir(tmp_path))
    assert not DataDir(tmp_path).ruleset(rules).tablebase.exists()
