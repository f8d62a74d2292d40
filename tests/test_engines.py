"""The engine seam (pipeline/engines/): one suite run over every engine of the registry
(pipeline.engines.ENGINES), so that an engine added there is tested by adding it there.

Each engine, on small rulesets of several games (loopy chopsticks, a game of ties, Grundy
games, a plug-in, a game listed part by part), runs every stage to the rows of the
independent reference solver (tests/reference.py) and the same bytes as the first engine,
which builds the same bytes again; its verifier refuses a wrong value; its errors read
as one line. An engine that cannot run here (Spark without Java) is skipped, saying why.

Spark's own tests that need its session are here too, at the end, to share its JVM.

Each engine builds the rulesets once a test session (`builds`). Spark's session is the
process's one (spark_engine.session()): started by the first test that needs it, shared
by the rest of the worker's tests, stopped at exit.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
import pytest

import pipeline.stages.enumerate as enumerate_stage
from pipeline.core.dataset import SOLVER_MADE
from pipeline.core.errors import DataError, TablebaseError, VerificationError
from pipeline.datadir.layout import DataDir, RulesetFiles
from pipeline.engines import ENGINES, EngineKind, engine_kind, explain, spark_alone, spark_reach
from pipeline.games.connect import ConnectSpace
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.run import open_run
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from pipeline.storage import parts
from pipeline.storage.parquet import read_table
from pipeline.tablebases import Tablebases
from tests import reference
from tests.staged import staged
from tests.test_cross_check_games import params_of
from tests.test_ties import naive, random_graph, solved_values, write_graph

ROOT = Path(__file__).resolve().parent.parent
PIPELINE = ROOT / "pipeline"

#: One ruleset for each path through an engine, few levels each: every level or rank step
#: costs Spark a job, and each ruleset 10-15 s of its time. What differs only by game (octal's
#: and hackenbush's rules, misère play's ends: sticks) is the game's, which
#: tests/test_cross_check_games.py checks against the reference solver on every game.
RULESETS = [
    "chopsticks:fingers=3,split=any",  # cycles: draws, Grundy values only where no cycle is reachable
    "nim:start=1-2-2,variant=arrow",  # rank by rank, Grundy values, several legal starts
    "connect:cols=3,k=3,rows=2",  # ties, keys for texts, positions listed part by part (Space.streams)
    "takeaway:take=2,tokens=5",  # the example plug-in: no reference, compared across engines
]
#: Built besides by an engine that makes the moves in this process (Capabilities.local_moves):
#: a game listed whole whose moves are made in three parts, here one part after another. Where
#: the executors make the moves, every game's parts are made alike, as connect's above.
LOCAL_MOVES = ["tictactoe:cols=3,k=3,rows=1"]


def rulesets_of(kind: EngineKind) -> list[str]:
    """The rulesets `kind` builds."""
    return RULESETS + (LOCAL_MOVES if kind.capabilities.local_moves else [])


#: The rulesets the reference solver knows.
REFERENCED = [ruleset for ruleset in RULESETS + LOCAL_MOVES if Ruleset.parse(ruleset).game_name in reference.DEFAULTS]
#: The ruleset the first engine builds a second time, to the same bytes: few levels, moves
#: made in three parts.
REBUILT = "tictactoe:cols=3,k=3,rows=1"
#: The ruleset whose reachability Spark walks in one task for two levels only (spark_reach.WALKED
#: lowered), then level by level: by the frontier's range of ids, then (levels 5 and 6) from
#: every position's children. The other rulesets are walked whole in one task.
REACHED_BY_LEVELS, REACH_WALKED = "connect:cols=3,k=3,rows=2", 5
#: The ruleset Spark solves by its levels, rank by rank (spark_alone.POSITIONS lowered to 0);
#: the others are solved by one task. The cyclic graph (`graphs`) is solved by the levels too.
SOLVED_BY_LEVELS = "nim:start=1-2-2,variant=arrow"


def available(name: str) -> EngineKind:
    """The engine `name`, or the test skipped with the one line saying why it cannot run here."""
    kind = engine_kind(name)
    try:
        kind.require()
    except TablebaseError as error:
        pytest.skip(f"the {name} engine cannot run here: {error}")
    return kind


@pytest.fixture(params=ENGINES)
def engine(request) -> EngineKind:
    return available(request.param)


@dataclass
class Built:
    """A data folder of the rulesets one engine builds, and what its builds did."""

    data: DataDir
    #: The rulesets built (rulesets_of).
    rulesets: list[str]
    #: The engine sessions each build opened.
    sessions: dict[str, int] = field(default_factory=dict)
    #: The rulesets whose moves enumerate made part by part, in this process.
    streamed: set[str] = field(default_factory=set)
    #: The names of the engine's SQL statements each build ran (Spark's: pipeline/sql/spark/).
    statements: dict[str, set[str]] = field(default_factory=dict)


def spy(function: Callable, seen: Callable) -> Callable:
    """`function`, showing `seen` its arguments first."""

    def spied(*args, **kwargs):
        seen(*args, **kwargs)
        return function(*args, **kwargs)

    return spied


def searched_here(*_) -> None:
    raise AssertionError("this process searched connect's positions itself")


@pytest.fixture(scope="session")
def builds(tmp_path_factory) -> Callable[[EngineKind], Built]:
    """Each engine's Built, made on first use (a failure once, not at every test)."""
    made: dict[str, Built | Exception] = {}

    def built_by(kind: EngineKind) -> Built:
        name = kind.capabilities.name
        if name not in made:
            made[name] = built = Built(DataDir(tmp_path_factory.mktemp(name)), rulesets_of(kind))
            opened: list[Path] = []
            building = [""]  # the ruleset being built
            try:
                with pytest.MonkeyPatch.context() as patch:
                    patch.setattr(kind, "__init__", spy(kind.__init__, lambda self, scratch: opened.append(scratch)))
                    if not kind.capabilities.local_moves:  # the executors search (Space.search), never this process
                        patch.setattr(ConnectSpace, "_generate", searched_here)
                    patch.setattr(
                        enumerate_stage,
                        "_streamed",
                        spy(enumerate_stage._streamed, lambda rules, *_: built.streamed.add(rules.id)),
                    )
                    if hasattr(kind, "sql"):
                        patch.setattr(
                            kind,
                            "sql",
                            spy(kind.sql, lambda _self, name, *_, **__: built.statements[building[0]].add(name)),
                        )
                    for ruleset in built.rulesets:
                        before = len(opened)
                        building[0] = ruleset
                        built.statements[ruleset] = set()
                        with pytest.MonkeyPatch.context() as walked:
                            if ruleset == REACHED_BY_LEVELS:
                                walked.setattr(spark_reach, "WALKED", REACH_WALKED)
                            if ruleset == SOLVED_BY_LEVELS:
                                walked.setattr(spark_alone, "POSITIONS", 0)
                            build(Ruleset.parse(ruleset), built.data, engine=kind)
                        built.sessions[ruleset] = len(opened) - before
            except Exception as error:
                made[name] = error
                raise
        found = made[name]
        if isinstance(found, Exception):
            pytest.fail(f"the {name} engine's builds failed in an earlier test: {found}")
        return found

    return built_by


@pytest.fixture
def built(engine, builds) -> Built:
    return builds(engine)


def test_a_build_opens_one_engine_session_for_all_its_stages(built):
    assert built.sessions == dict.fromkeys(built.rulesets, 1)


def test_spark_reaches_by_the_walk_by_range_and_by_every_positions_children(builds):
    """Reachability's three ways on Spark (pipeline/engines/spark_reach.py): the small
    rulesets walked whole by one task, REACHED_BY_LEVELS two levels so and then level by
    level, both by the frontier's range and from every position's children. Each gives
    DuckDB's tablebase (test_every_engine_builds_the_first_engines_bytes)."""
    built = builds(available("spark"))
    assert {"reachable_range", "reachable_level"} <= built.statements[REACHED_BY_LEVELS]


def test_spark_solves_a_small_ruleset_by_one_task_and_a_larger_by_its_levels(builds):
    """pipeline/engines/spark_alone.py: the small rulesets solved and verified by one task
    run none of Spark's solve statements nor its verify; SOLVED_BY_LEVELS, its threshold
    lowered, runs them rank by rank, and Spark's verify. Both give DuckDB's tablebase
    (test_every_engine_builds_the_first_engines_bytes)."""
    built = builds(available("spark"))
    levels = {"parents", "solve_setup", "solve_level", "solve_tie_level", "grundy_setup", "grundy_level"}
    levels |= {"rank_level", "rank_solution", "solve_solution", "verify"}
    for ruleset in built.rulesets:
        ran = built.statements[ruleset] & levels
        if ruleset == SOLVED_BY_LEVELS:
            assert {"rank_level", "rank_solution", "verify"} <= ran
        else:
            assert not ran, f"{ruleset} was solved or verified by Spark's own SQL"


@pytest.mark.parametrize("most, read", [(1 << 40, 1 << 40), (REACH_WALKED, 1 << 40), (1 << 40, 10)])
def test_reachabilitys_walk_finds_a_ply_a_level_and_stops_where_it_is_told(builds, most, read):
    """spark_reach.walk, in this process, over DuckDB's moves of connect: breadth first from
    the start, level n is the positions of n stones (connect's rank: the stones still to play), and the levels are every
    position the tablebase says is reachable. Bounded by the positions it may hold (`most`)
    or the moves it may read (`read`), it gives the first levels only and says it stopped."""
    rules = Ruleset.parse(REACHED_BY_LEVELS)
    files = builds(available("duckdb")).data.published(rules)
    columns = read_table(files.positions, columns=["id", "rank"]).to_pydict()
    rank = dict(zip(columns["id"], columns["rank"], strict=True))
    reached = read_table(files.tablebase, columns=["id", "reachable"]).to_pydict()
    reachable = {i for i, seen in zip(reached["id"], reached["reachable"], strict=True) if seen}
    moves = parts.read_metadata(files.transitions).num_rows
    top = max(rank.values())  # the empty board's: the stones still to play
    start = [i for i in rank if rank[i] == top]
    assert len(start) == 1
    levels = spark_reach.walk(files.transitions, np.array(start), most, read)
    found = []
    while True:
        try:
            found.append(next(levels))
        except StopIteration as stop:
            whole = stop.value
            break
    for level, ids in found:
        assert ids.tolist() == sorted(set(ids.tolist())) and {rank[i] for i in ids.tolist()} == {top - level}
    got = [i for _, ids in found for i in ids.tolist()]
    assert len(got) == len(set(got)) and set(got) <= reachable
    if most >= len(reachable) and read >= moves:
        assert whole and set(got) == reachable
    else:
        assert not whole and len(got) < len(reachable) and (len(got) <= most or len(found) == 1)


def test_a_game_listed_part_by_part_is_enumerated_so_where_the_engine_makes_the_moves(engine, built):
    """Engine.capabilities.local_moves: in this process a part at a time (connect on DuckDB),
    else wherever the engine makes them (Spark's executors), from the whole list."""
    streams = {rules.id for rules in map(Ruleset.parse, built.rulesets) if rules.game.space(rules).streams()}
    assert streams, "RULESETS has no game listed part by part"
    assert built.streamed == (streams if engine.capabilities.local_moves else set())


@pytest.mark.parametrize(
    "name, ruleset",
    [(name, ruleset) for name in ENGINES for ruleset in REFERENCED if ruleset in rulesets_of(engine_kind(name))],
)
def test_every_stage_gives_the_reference_solvers_rows(builds, name, ruleset):
    """Enumerate's moves and the solved, verified and exported values, position by position."""
    rules = Ruleset.parse(ruleset)
    files = builds(available(name)).data.published(rules)
    params = params_of(ruleset)
    table = read_table(files.tablebase, columns=["id", "position", "value", "remoteness", "grundy"]).to_pylist()
    ours = {row["position"]: (row["value"], row["remoteness"], row["grundy"]) for row in table}
    assert ours == reference.solve(rules.game_name, params)
    text_of = {row["id"]: row["position"] for row in table}
    graph: dict[str, set[str]] = {text: set() for text in ours}
    for row in read_table(files.transitions, columns=["src", "dst"]).to_pylist():
        graph[text_of[row["src"]]].add(text_of[row["dst"]])
    assert graph == reference.moves(rules.game_name, params)


def test_a_ruleset_built_again_is_the_same_bytes(builds, tmp_path):
    """On the first engine. Every other engine's builds are held to the first engine's bytes
    (test_every_engine_builds_the_first_engines_bytes, every ruleset), so a build of theirs
    that came out different from one run to the next fails there: rebuilding on them too
    would test nothing more (and cost Spark 11 s of the suite)."""
    engine = available(ENGINES[0])
    rules = Ruleset.parse(REBUILT)
    again = DataDir(tmp_path)
    build(rules, again, engine=engine)
    for first, second in zip(builds(engine).data.published(rules).all(), again.published(rules).all(), strict=True):
        assert second.read_bytes() == first.read_bytes(), f"{REBUILT}: {first.name} differs"


@pytest.mark.parametrize("other", ENGINES[1:])
def test_every_engine_builds_the_first_engines_bytes(builds, other):
    """Positions, transitions, solutions, verifications, tablebases and catalog rows (of the
    rulesets both build). A file another engine writes as a folder of parts (Spark's moves,
    solution, tablebase, index and lookup, written by its executors) holds the same rows in the same order, and the catalog names
    it by its glob, with its listing's checksum: Spark's positions too, where the game's
    space searches (connect)."""
    mine_built, theirs_built = builds(available(ENGINES[0])), builds(available(other))
    first, theirs = mine_built.data, theirs_built.data
    both = [ruleset for ruleset in mine_built.rulesets if ruleset in theirs_built.rulesets]
    cut: set[str] = set()
    for ruleset in both:
        rules = Ruleset.parse(ruleset)
        for mine, its in zip(first.published(rules).all(), theirs.published(rules).all(), strict=True):
            if parts.in_parts(its):
                cut.add(its.stem)
                assert read_table(its) == read_table(mine), f"{ruleset}: {other}'s {its.stem} differs"
            elif its.stem in ("summary", "verification") and cut:  # the folders' paths and checksums differ
                names = [f"{kind}_{what}" for kind in cut for what in ("path", "sha256")]
                names += ["verification_sha256"] if "solution" in cut else []  # it records the solution's
                held = [
                    table.drop([name for name in names if name in table.column_names])
                    for table in map(read_table, (its, mine))
                ]
                assert held[0] == held[1], f"{ruleset}: {other}'s summary differs"
            else:
                assert its.read_bytes() == mine.read_bytes(), f"{ruleset}: {other}'s {its.name} differs"
    ids = pa.array(sorted(Ruleset.parse(ruleset).id for ruleset in both))
    rows = [pq.read_table(data.catalog).filter(pc.field("ruleset").isin(ids)) for data in (first, theirs)]
    differ = [name for kind in cut for name in (f"{kind}_path", f"{kind}_sha256") if name in rows[0].column_names]
    differ += ["verification_sha256"] if "solution" in cut else []
    assert rows[1].drop(differ).equals(rows[0].drop(differ))
    assert cut == (
        set()
        if available(other).capabilities.local_moves
        # the positions too, of connect: its space searches (Space.search), on the executors
        else {"positions", "transitions", "solution", "tablebase", "index", "lookup"}
    )
    assert Tablebases(theirs.root).check() == []


@dataclass(frozen=True)
class Graph:
    """A random move graph with cycles, solved and verified by one engine."""

    files: RulesetFiles
    terminal: dict[int, str]
    children: dict[int, list[int]]


@pytest.fixture(scope="session")
def graphs(tmp_path_factory) -> Callable[[EngineKind], Graph]:
    """Each engine's Graph, made on first use: the same graph on every engine."""
    made: dict[str, Graph] = {}

    def solved_by(kind: EngineKind) -> Graph:
        name = kind.capabilities.name
        if name not in made:
            terminal, children = random_graph(5, 40, acyclic=False, most=2)
            folder = tmp_path_factory.mktemp(f"graph-{name}")
            files = RulesetFiles(folder / "graph")
            write_graph(files, terminal, children, ranked=False)
            with pytest.MonkeyPatch.context() as levels:  # Spark's levels and verify, not one task (spark_alone.py)
                levels.setattr(spark_alone, "POSITIONS", 0)
                staged(solve, files, folder / "tmp", impartial=True, engine=name)
                staged(verify, files, folder / "tmp", impartial=True, engine=name)
            made[name] = Graph(files, terminal, children)
        return made[name]

    return solved_by


def test_a_cyclic_graph_gets_the_naive_solvers_wins_losses_ties_and_draws(engine, graphs):
    graph = graphs(engine)
    values = solved_values(graph.files)
    assert values == naive(graph.terminal, graph.children)
    assert {value for value, _ in values.values()} == {"win", "loss", "tie", "draw"}


@pytest.mark.parametrize("other", ENGINES[1:])
def test_every_engine_solves_a_cyclic_graph_to_the_first_engines_bytes(graphs, other):
    """The same bytes, or where the other engine's executors write the solution as a folder
    of parts, the same rows (and checks, but for the solution's checksum they record)."""
    first, theirs = graphs(available(ENGINES[0])).files, graphs(available(other)).files
    if not parts.in_parts(theirs.solution):
        assert theirs.solution.read_bytes() == first.solution.read_bytes()
        assert theirs.verification.read_bytes() == first.verification.read_bytes()
        return
    assert read_table(theirs.solution) == read_table(first.solution)
    checks = [read_table(files.verification).drop(["solution_sha256"]) for files in (theirs, first)]
    assert checks[0] == checks[1]


@pytest.mark.parametrize("ranked", [False, True])
def test_one_tasks_solve_is_the_duckdb_engines_with_its_levels_counted(tmp_path, ranked):
    """spark_alone.solve, run here as Spark's one task runs it, on a random graph (with
    cycles, or ranked): the solution file the DuckDB engine's solve writes, and its counts
    of each level's positions those of the solution (the values' levels its remoteness, the
    Grundy values' their heights; a rank's its positions)."""
    terminal, children = random_graph(7, 60, acyclic=ranked, most=3)
    files = RulesetFiles(tmp_path / "graph")
    write_graph(files, terminal, children, ranked=ranked)
    counts = spark_alone.solve(files.positions, files.transitions, tmp_path / "alone", True, ranked)
    staged(solve, files, tmp_path / "tmp", impartial=True, engine="duckdb")
    solved = tmp_path / "alone" / spark_alone.SOLUTION_FILE
    assert read_table(solved) == read_table(files.solution)
    rows = read_table(files.solution).to_pylist()
    if ranked:
        assert counts == {"ranks": [1] * len(rows)}
        return

    def by_level(column: str, which: Callable[[dict], bool]) -> list[int]:
        levels = [row[column] for row in rows if which(row)]
        return [levels.count(level) for level in range(max(levels) + 1)] if levels else []

    assert counts == {
        "values": by_level("remoteness", lambda row: row["value"] in ("win", "loss")),
        "ties": by_level("remoteness", lambda row: row["value"] == "tie"),
        "grundy": by_level("grundy_height", lambda row: row["grundy"] is not None),
    }


def test_a_files_error_in_spark_s_one_task_is_its_one_line(graphs, tmp_path):
    """A fault the DuckDB engine's solver finds in the files, met on the executor that
    solves a small ruleset (spark_alone.py), reaches the command as its own one line."""
    files = RulesetFiles(tmp_path / "graph")
    shutil.copytree(graphs(available("duckdb")).files.dir, files.dir)
    positions = read_table(files.positions)
    ids = positions["id"].to_pylist()
    pq.write_table(positions.set_column(0, "id", pa.array([-1] + ids[1:], pa.int64())), files.positions)
    with pytest.raises(DataError, match=r"^a position has the negative id -1$"):
        staged(solve, files, tmp_path / "tmp", impartial=True, engine=available("spark").capabilities.name)


def test_the_verifier_refuses_a_wrong_value(engine, graphs, tmp_path):
    """Spark verifies the small graph by one task (spark_alone.checked): its refusal reaches
    the stage as Spark's own would (its SQL refuses each wrong column below)."""
    files = RulesetFiles(tmp_path / "graph")
    shutil.copytree(graphs(engine).files.dir, files.dir)
    table = read_table(files.solution)
    rows = table.to_pylist()
    row = next(r for r in rows if r["value"] == "win" and r["remoteness"] > 0)
    row["remoteness"] += 2
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), files.solution)
    with pytest.raises(VerificationError, match="win"):
        staged(verify, files, tmp_path / "tmp", impartial=True, engine=engine.capabilities.name)


@pytest.mark.parametrize("column", [column.name for column in SOLVER_MADE])
def test_the_verifier_refuses_a_wrong_solver_made_column(engine, graphs, tmp_path, monkeypatch, column):
    """Every solver-made column (SOLVER_MADE) is re-derived by each engine's verifier, not
    trusted: one changed on a won position fails the check of its name. A column declared
    later is tested here without an edit. (Spark's own SQL: not the one task of a small ruleset.)"""
    monkeypatch.setattr(spark_alone, "POSITIONS", 0)
    files = RulesetFiles(tmp_path / "graph")
    shutil.copytree(graphs(engine).files.dir, files.dir)
    table = read_table(files.solution)
    rows = table.to_pylist()
    next(r for r in rows if r["value"] == "win")[column] += 1
    pq.write_table(pa.Table.from_pylist(rows, schema=table.schema), files.solution)
    with pytest.raises(VerificationError, match=column):
        staged(verify, files, tmp_path / "tmp", impartial=True, engine=engine.capabilities.name)


def test_moves_against_the_games_rank_are_refused_in_one_line(engine, tmp_path, monkeypatch):
    """Where the engine makes the moves (Spark: on an executor, from the driver's numbering)."""
    import numpy as np

    from pipeline.games import chopsticks

    monkeypatch.setattr(chopsticks.RankedChopsticksSpace, "rank", lambda self: np.zeros(self.pair.size, np.int64))
    rules = Ruleset.parse("chopsticks")
    with pytest.raises(DataError, match=r"^the game's rank does not fall along the move from position [^\n]*$"):
        staged(
            enumerate_ruleset,
            DataDir(tmp_path).ruleset(rules),
            tmp_path / "tmp",
            rules=rules,
            engine=engine.capabilities.name,
        )


def test_an_engines_own_error_is_one_line(engine, tmp_path):
    """The engine's library raises; the command line words it in one line (pipeline/cli.py's
    describe, asking the engine's `explain` for what is not DuckDB's)."""
    from pipeline.cli import describe

    session = engine(tmp_path)
    try:
        with pytest.raises(Exception) as raised:  # each library raises its own kind
            session.rows("SELECT * FROM no_such_view")
    finally:
        session.close()
    message, status = describe(raised.value)
    assert status == 1 and message is not None and "\n" not in message and "no_such_view" in message


def run(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(ROOT / ".venv" / "bin" / "tablebase"), *args], capture_output=True, text=True, timeout=300
    )


def test_bad_input_is_one_line_on_every_engine(engine, tmp_path):
    result = run("build", "tictactoe:k=9", "--engine", engine.capabilities.name, "--data", str(tmp_path))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "tictactoe" in result.stderr
    assert not (tmp_path / "tictactoe").exists()


def test_an_unknown_engine_is_a_malformed_command_line_naming_the_registrys(tmp_path):
    result = run("build", "sticks", "--engine", "sparkle", "--data", str(tmp_path))
    known = ", ".join(f"'{name}'" for name in ENGINES)
    assert result.returncode == 2 and result.stderr == (
        f"error: invalid value for '--engine': 'sparkle' is not one of {known}: see `tablebase build --help`\n"
    )


def test_a_stage_leaves_the_duckdb_session_as_it_found_it(tmp_path):
    """The solver's tables go when the solve ends: verify and export do not carry them."""
    rules = Ruleset.parse("chopsticks:split=any")
    files = DataDir(tmp_path).ruleset(rules)
    with open_run(files, tmp_path / "tmp", rules, engine_kind("duckdb")) as run:
        enumerate_ruleset(run)
        solve(run)
        left = run.engine.con.execute("SELECT count(*) FROM duckdb_tables() WHERE temporary").fetchone()[0]
        views = run.engine.con.execute(
            "SELECT count(*) FROM duckdb_views() WHERE temporary AND NOT internal"
        ).fetchone()[0]
    assert (left, views) == (0, 0)


def test_no_module_outside_the_engines_asks_which_engine_it_is():
    """Each engine declares what differs (pipeline/engines/base.py's Engine); the rest of the
    pipeline names none of them."""
    names = "|".join(ENGINES)
    named = re.compile(rf"pipeline\.engines\.({names})_engine|engine_name\(|== \"({names})\"")
    found = [
        f"{path.relative_to(PIPELINE)}:{number}"
        for path in sorted(PIPELINE.rglob("*.py"))
        if path.parent.name != "engines"
        for number, line in enumerate(path.read_text().splitlines(), start=1)
        if named.search(line)
    ]
    assert found == []


def test_spark_explains_its_own_errors_and_duckdb_leaves_its_to_the_command_line():
    pytest.importorskip("pyspark")
    import pipeline.engines.spark_engine  # noqa: F401 - an error can only be Spark's once it is loaded

    class Py4JJavaError(Exception):
        pass

    Py4JJavaError.__module__ = "py4j.protocol"
    error = Py4JJavaError("An error occurred\n: java.lang.IllegalStateException: the session was stopped\n\tat x")
    assert explain(error) == ("Spark failed", "the session was stopped")
    assert explain(ValueError("not an engine's")) is None


# --------------------------------------------------------------------------- Spark's own
# What only Spark does with a session of its own (the rest of Spark's own is
# tests/test_spark.py's): here, beside the engine seam, so that under pytest-xdist's
# --dist loadfile they share one worker's JVM, whose first jobs cost 30-40 s of warming up.
# The published files Spark reads are the DuckDB engine's builds above.


def test_spark_reads_the_published_files_as_they_are(builds):
    """The README's Spark reader: one game's tablebases by a glob, the catalog's map column,
    the transitions' dictionary-encoded strings."""
    from pipeline.core.dataset import TABLEBASE, game_fields
    from pipeline.engines.spark_engine import session

    available("spark")
    duck = builds(available("duckdb")).data
    spark = session()
    catalog = {row["ruleset"]: row for row in pq.read_table(duck.catalog).to_pylist()}
    tablebases = spark.read.parquet(str(duck.root / "tictactoe" / "*" / "tablebase.parquet"))
    assert tablebases.count() == sum(row["positions"] for row in catalog.values() if row["game"] == "tictactoe")
    one = duck.root / catalog[Ruleset.parse("tictactoe:cols=3,k=3,rows=1").id]["tablebase_path"]
    assert tablebases.columns == pq.read_schema(one).names
    assert [name for name in tablebases.columns if name not in TABLEBASE.schema().names] == [
        field.name for field in game_fields(pq.read_schema(one), TABLEBASE)
    ]
    nim = Ruleset.parse("nim:start=1-2-2,variant=arrow").id
    row = spark.read.parquet(str(duck.catalog)).where(f"ruleset = '{nim}'").first()
    assert row["params"]["start"] == "1-2-2" and row["positions"] == catalog[nim]["positions"]
    moves = spark.read.parquet(str(duck.root / "nim" / "*" / "transitions.parquet"))
    assert dict(moves.dtypes)["move"] == "string"
    assert moves.count() == catalog[nim]["transitions"]


def test_the_data_cards_spark_line_reads_every_game_at_once(builds):
    from pipeline.engines.spark_engine import session
    from pipeline.products.datacard import ALL_GAMES

    available("spark")
    duck = builds(available("duckdb")).data
    [line] = [line for line in ALL_GAMES if line.startswith("spark.")]
    # the card's glob is a bundle's (files by kind); the data folder's, made absolute (Java's
    # working directory is not Python's), holds the same files
    assert "'tablebase/*/*.parquet'" in line
    frame = eval(line.replace("'tablebase/*/*.parquet'", f"'{duck.root}/*/*/tablebase.parquet'"), {"spark": session()})
    total = sum(pq.read_table(duck.catalog)["positions"].to_pylist())
    assert frame.count() == total and {"board", "mover", "heaps", "discs", "value"} <= set(frame.columns)


def test_spark_decodes_the_packed_scores_as_values_does(tmp_path):
    from pipeline.core.dataset import SOLVER_MADE
    from pipeline.engines.spark_engine import SparkEngine
    from tests.test_values import EDGES, decoded

    available("spark")
    engine = SparkEngine(tmp_path)
    try:
        engine.view(
            "res",
            engine.spark.createDataFrame(
                [(i, s, None, None, *(None for _ in SOLVER_MADE)) for i, s in enumerate(EDGES)],
                "id INT, score INT, grundy INT, height INT" + "".join(f", {c.name} INT" for c in SOLVER_MADE),
            ),
        )
        rows = engine.sql("rank_solution").collect()
    finally:
        engine.release()
    assert [tuple(row)[:3] for row in rows] == decoded()


@pytest.mark.parametrize("keys", [None, (40, 60), (-500, 5)], ids=["found", "too-narrow", "off"])
def test_spark_cuts_parts_by_key_ranges_in_order_whatever_bounds_it_is_told(tmp_path, keys):
    """write_parts: bounds the caller gives (export: the ids, the hashes' range) only size
    the parts; rows outside them go to the first or last buckets, still in order."""
    from pipeline.engines.spark_engine import SparkEngine
    from pipeline.storage.parquet import Encoding

    available("spark")
    engine = SparkEngine(tmp_path)
    schema = pa.schema([("hash", pa.int64()), ("id", pa.int64())])
    rows = [((i * 7919) % 101, i) for i in range(300)]
    frame = engine.spark.createDataFrame(rows, "hash LONG, id LONG")
    written = engine.write_parts(frame, tmp_path / "index.parquet", schema, Encoding(), ("hash", "id"), keys=keys)
    assert written == len(rows) and len(parts.parts(tmp_path / "index.parquet")) > 1
    assert [tuple(row.values()) for row in read_table(tmp_path / "index.parquet").to_pylist()] == sorted(rows)


def test_spark_finds_a_game_whose_moves_return_as_the_game_does(tmp_path, monkeypatch):
    """Space.search where moves return to earlier levels (dobutsu: each level's children
    less every level before), numbered by terminal code then key, without ranks: Spark's
    executors enumerate it into DuckDB's rows (connect, the ranked search, is built above,
    its levels walked by one task). Here one task walks the first 7 levels (1,178
    positions) and Spark finds the other 9, each less the walked levels and its own before."""
    from pipeline.engines import spark_enumerate

    spark = available("spark")
    monkeypatch.setattr(spark_enumerate, "WALKED", 1200)
    rules = Ruleset.parse("dobutsu:pieces=g")
    made = []
    for kind in (engine_kind("duckdb"), spark):
        files = DataDir(tmp_path / kind.capabilities.name).ruleset(rules)
        with open_run(files, tmp_path / "tmp", rules, kind) as run:
            enumerate_ruleset(run)
        made.append(files)
    assert parts.in_parts(made[1].positions)
    for kind in ("positions", "transitions"):
        assert read_table(made[1].path(kind)) == read_table(made[0].path(kind)), f"spark's {kind} differ"


def test_spark_spreads_the_levels_after_the_walk_over_partitions_cut_for_their_positions(tmp_path, monkeypatch):
    """The levels one task walks are one partition; each level Spark finds after them is
    spread over partitions cut for the positions it likely holds (its parents played on,
    each making as many new positions as the level before's did), PARTITION_ROWS a
    partition (8 here), spark.sql.shuffle.partitions (2 here) the fewest; the numbering's
    ranges likewise for every position. (A DISTINCT of one partition needs no shuffle, so the
    levels stayed one: one task on a whole cluster; and one setting for every level would
    leave a board's widest level a few partitions of 10^7 positions each.) The counts are the
    walk's own. (Adaptive execution, off here, would merge a small level's partitions into one.)"""
    from pipeline.engines import spark_enumerate, spark_runs
    from pipeline.engines.spark_engine import SparkEngine

    available("spark")
    rules = Ruleset.parse("connect:cols=3,k=3,rows=2")
    search = rules.game.space(rules).search()
    walked = list(spark_enumerate.walk(search))
    every = [keys.size for _, keys, _ in walked]
    played = [int((codes == 0).sum()) for _, _, codes in walked]
    monkeypatch.setattr(spark_enumerate, "WALKED", sum(every[:3]))
    monkeypatch.setattr(spark_runs, "PARTITION_ROWS", 8)
    engine = SparkEngine(tmp_path)
    held = {key: engine.spark.conf.get(key) for key in ("spark.sql.adaptive.enabled", "spark.sql.shuffle.partitions")}
    engine.spark.conf.set("spark.sql.adaptive.enabled", "false")
    engine.spark.conf.set("spark.sql.shuffle.partitions", "2")
    try:
        enumeration = spark_enumerate.Enumeration(engine, rules.id, search)
        assert enumeration.search_levels() == sum(every)
        likely = [played[level] * every[level] // played[level - 1] for level in range(2, len(every) - 1)]
        cut = [max(2, -(-positions // 8)) for positions in likely]
        assert [frame.rdd.getNumPartitions() for frame in enumeration.levels[1:]] == cut
        assert max(cut) > 2
        assert enumeration.numbered().rdd.getNumPartitions() == -(-sum(every) // 8)
        assert engine.spark.conf.get("spark.sql.shuffle.partitions") == "2"  # as it was
    finally:
        for key, value in held.items():
            engine.spark.conf.set(key, value)
        engine.release()
    assert enumeration.counts == every and enumeration.played == played


def test_spark_cuts_a_rulesets_stages_for_its_positions_and_gives_the_same_rows(builds, tmp_path, monkeypatch):
    """Enumerate's writes are cut for the positions found (PARTITION_ROWS a partition: 16
    here), and a later stage's shuffles for the positions it registers, until the engine
    closes (spark.sql.shuffle.partitions, 2 here, then as it was): the files hold the rows
    they held cut by the setting."""
    from pipeline.engines import spark_runs
    from pipeline.engines.spark_engine import SparkEngine, session

    spark = available("spark")
    done = builds(spark)
    monkeypatch.setattr(spark_runs, "PARTITION_ROWS", 16)
    rules = Ruleset.parse(REACHED_BY_LEVELS)
    files = DataDir(tmp_path).ruleset(rules)
    setting = session().conf.get("spark.sql.shuffle.partitions")
    session().conf.set("spark.sql.shuffle.partitions", "2")
    try:
        with open_run(files, tmp_path / "tmp", rules, spark) as run:
            enumerate_ruleset(run)
        positions = parts.read_metadata(files.positions).num_rows
        # a part a bucket with a move: the setting's 2, or one for each PARTITION_ROWS positions
        assert 2 < len(parts.parts(files.transitions)) <= -(-positions // 16)
        engine = SparkEngine(tmp_path)
        engine.register("positions", files.positions)
        assert engine.spark.conf.get("spark.sql.shuffle.partitions") == str(-(-positions // 16))
        engine.close()
        assert engine.spark.conf.get("spark.sql.shuffle.partitions") == "2"
    finally:
        session().conf.set("spark.sql.shuffle.partitions", setting)
    before = done.data.ruleset(rules)
    for kind in ("positions", "transitions"):
        assert read_table(files.path(kind)) == read_table(before.path(kind)), f"spark's {kind} differ"


def test_spark_runs_keep_what_a_walk_has_seen_in_few_runs(tmp_path, monkeypatch):
    """spark_runs.Runs: every key added is unseen no more, whatever the runs were merged
    into; large runs merge as a binary counter carries, small ones once SMALL_RUNS of
    them are held (here SMALL is 100 keys and SMALL_RUNS 3)."""
    from pipeline.engines.spark_engine import SparkEngine
    from pipeline.engines.spark_runs import Runs, keeping_partitions

    available("spark")
    monkeypatch.setattr(Runs, "SMALL", 100)
    monkeypatch.setattr(Runs, "SMALL_RUNS", 3)
    engine = SparkEngine(tmp_path)
    spark = engine.spark
    try:
        runs = Runs(engine, "id")
        added = 0
        held = []
        for size, partitioned in [(5, False), (7, True), (9, True), (300, False), (120, True), (130, True), (8, True)]:
            with keeping_partitions(spark):
                level = spark.range(added, added + size).repartition(4, "id").sortWithinPartitions("id")
                level = level.localCheckpoint(eager=True)
            runs.add(level, size, partitioned)
            added += size
            held.append([keys for keys, _, _ in runs.runs])
            probe = spark.range(0, added + 50)
            assert sorted(row.id for row in runs.unseen(probe).collect()) == list(range(added, added + 50))
    finally:
        engine.release()
    assert held == [[5], [5, 7], [21], [321], [321, 120], [321, 250], [321, 250, 8]]
