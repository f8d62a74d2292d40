"""Build logs: one line per stage off a terminal, per-rank lines only with -v, nothing with
-q, and on a terminal one bar per stage. Nothing here is timed."""

from __future__ import annotations

import io
import re
from pathlib import Path

import pytest

from pipeline.stages.verify import CHECKS
from pipeline.storage import progress
from tests.command import tablebase
from tests.staged import staged

ROOT = Path(__file__).resolve().parent.parent
RULESET = "sticks:rows=4"  # ranked: its solve has a line per rank with -v
STAMP = r"\d\d:\d\d:\d\d"


@pytest.fixture(scope="module", autouse=True)
def rank_by_rank():
    """RULESET solved rank by rank, small as it is (the DuckDB engine's LEVELS_UP_TO)."""
    from pipeline.engines import duckdb_engine

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(duckdb_engine, "LEVELS_UP_TO", -1)
        yield


@pytest.fixture(scope="module")
def build_log(tmp_path_factory) -> tuple[Path, list[str]]:
    data = tmp_path_factory.mktemp("data")
    result = tablebase("build", RULESET, data=data)
    assert result.returncode == 0, result.stderr
    return data, result.stderr.splitlines()


def test_a_build_off_a_terminal_logs_one_line_per_stage(build_log):
    _, lines = build_log
    stages = ["enumerate", "solve", "verify", "export", "publish"]
    assert len(lines) == len(stages) + 1, lines
    for line, stage in zip(lines, stages):
        assert re.fullmatch(rf"{STAMP} {stage} {re.escape(RULESET)}: .+ in \d+\.\d\d s", line), line
    assert re.fullmatch(
        rf"{STAMP} built {re.escape(RULESET)}: 54 positions, start 1-2-3-4: the first player wins in 6 plies", lines[-1]
    )


def test_each_stage_line_says_what_it_did(build_log):
    _, lines = build_log
    assert ": 54 positions, 286 transitions in " in lines[0]
    assert ": 54 positions, 11 ranks, 54 Grundy values in " in lines[1]
    assert (
        f": {len(CHECKS)} checks on 54 positions, all passed in " in lines[2]
    )  # every check, as an impartial game has
    assert ": 54 positions, 54 reachable in " in lines[3]


def test_verbose_adds_a_line_as_a_stage_begins_and_one_per_rank(build_log):
    data, _ = build_log
    result = tablebase("solve", RULESET, "-v", data=data)
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].endswith(f" solve {RULESET} …")
    ranks = [line for line in lines if re.search(rf" solve {re.escape(RULESET)}: rank \d+: ", line)]
    phases = [line for line in lines if re.search(rf" solve {re.escape(RULESET)}: [a-z ]+: done in [0-9.]+ s$", line)]
    # a ranked solve writes each rank's rows as it solves them: no writing phase after
    assert len(ranks) == 11 and [line.split(": ")[1] for line in phases] == ["by rank"], lines
    assert len(lines) == 1 + len(ranks) + len(phases) + 1, lines


def test_the_levels_of_a_solve_by_retrograde_analysis_are_debug_lines(built, tmp_path, caplog):
    import logging
    import shutil

    from pipeline.datadir.layout import DataDir, RulesetFiles
    from pipeline.games.rulesets import Ruleset
    from pipeline.stages.solve import solve

    published = DataDir(built).ruleset(Ruleset.parse("chopsticks:split=any"))
    for name in ("positions.parquet", "transitions.parquet"):
        shutil.copy(published.dir / name, tmp_path / name)
    with caplog.at_level(logging.DEBUG, logger="tablebase"):
        staged(solve, RulesetFiles(tmp_path), tmp_path / "tmp", "split=any", impartial=True)
    levels = [r for r in caplog.records if re.search(r": (depth|Grundy height) \d+: ", r.getMessage())]
    assert levels and all(r.levelno == logging.DEBUG for r in levels)
    infos = [r.getMessage() for r in caplog.records if r.levelno >= logging.INFO]
    assert len(infos) == 1 and re.fullmatch(
        r"solve split=any: 224 positions, \d+ levels, \d+ Grundy values in .+ s", infos[0]
    ), infos


def test_quiet_prints_nothing(build_log):
    data, _ = build_log
    result = tablebase("export", RULESET, "-q", data=data)
    assert result.returncode == 0 and result.stderr == "" and result.stdout == "", result.stderr


def test_on_a_terminal_a_stage_is_a_bar_left_with_its_counts(monkeypatch):
    from rich.console import Console

    screen = io.StringIO()
    monkeypatch.setattr(progress, "_console", Console(file=screen, force_terminal=True, width=120))
    monkeypatch.setattr(progress.log, "level", 20)  # INFO: the bar is drawn
    with progress.Stage("solve nim") as stage:
        stage.phase("by rank", 0.9)
        stage.count(3, 12)
        stage.summary = "12 positions, 4 ranks"
    text = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", screen.getvalue())
    last = [line for line in text.splitlines() if line.strip()][-1]
    assert re.fullmatch(r"solve nim +━+ 12 positions, 4 ranks in 0:00\s*", last), last


def test_a_failing_stage_names_itself_for_the_error_line():
    with pytest.raises(ValueError), progress.Stage("verify nim"):
        raise ValueError("boom")
    assert progress.failed_in == ["verify nim"]


def drawn(stage_steps, width: int) -> list[str]:
    """The lines a stage draws on a terminal `width` columns wide, escape codes removed."""
    from rich.console import Console

    screen = io.StringIO()
    console = Console(file=screen, force_terminal=True, width=width)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(progress, "_console", console)
        patch.setattr(progress.log, "level", 20)
        with progress.Stage("solve chopsticks:fingers=15,hands=4") as stage:
            stage_steps(stage)
            stage._bar.refresh()
            running = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", screen.getvalue()).replace("\r", "\n")
            stage.summary = "9,400,000 positions, 57 ranks, 9,400,000 Grundy values"
    finished = re.sub(r"\x1b\[[0-9;?]*[a-zA-Z]", "", screen.getvalue()).replace("\r", "\n")[len(running) :]
    return [line.rstrip() for line in running.splitlines() if line.strip()][-1:] + [
        line.rstrip() for line in finished.splitlines() if line.strip()
    ]


def by_rank(stage) -> None:
    stage.phase("by rank", 0.9)
    stage.count(3_000_000, 9_400_000)


def test_at_80_columns_a_bar_shows_its_counts_and_time_left():
    """The counts and the time left were cut off at 80 columns: the name kept 40 of them."""
    running, *_ = drawn(by_rank, 80)
    assert len(running) < 80
    assert re.fullmatch(
        r"solve chopsticks:\S*…: by rank ━{10} 3\.0 M of 9\.4 M positions \d:\d\d, \d:\d\d left", running
    ), running


def test_a_wide_terminal_shows_the_whole_name_and_the_exact_counts():
    running, *_ = drawn(by_rank, 160)
    assert re.fullmatch(
        r"solve chopsticks:fingers=15,hands=4: by rank +━{30} 3,000,000 of 9,400,000 positions "
        r"\d:\d\d, \d:\d\d left",
        running,
    ), running


def test_a_finished_stage_at_80_columns_wraps_rather_than_cut_its_summary():
    _, *finished = drawn(by_rank, 80)
    assert all(len(line) < 80 for line in finished)
    assert " ".join(finished) == (
        "solve chopsticks:fingers=15,hands=4 9,400,000 positions, 57 ranks, 9,400,000 Grundy values in 0:00"
    )


def test_off_a_terminal_a_running_stage_says_where_it_is(caplog):
    import logging

    with caplog.at_level(logging.INFO, logger="tablebase"), progress.Stage("solve nim") as stage:
        stage.phase("by rank", 0.5)
        stage.count(3, 12)
        stage.beat()
        stage.phase("writing", 0.5)
        with stage.expecting(60, "the moves"):
            stage.beat()
        stage.summary = "12 positions"
    beats = [record.getMessage() for record in caplog.records][:2]
    assert re.fullmatch(r"solve nim: by rank: 3 of 12 positions, 0:00 so far, about \d+:\d\d left", beats[0]), beats
    assert re.fullmatch(r"solve nim: writing: the moves, 0:00 so far, about \d+:\d\d left", beats[1]), beats


def test_off_a_terminal_the_heartbeat_runs_while_a_stage_does(caplog, monkeypatch):
    """Every HEARTBEAT seconds (30): here a hundredth of a second, waited for, not timed."""
    import logging
    import threading

    monkeypatch.setattr(progress, "_heartbeat", 0.01)
    beaten = threading.Event()
    monkeypatch.setattr(progress.Stage, "beat", lambda stage: beaten.set())
    with caplog.at_level(logging.INFO, logger="tablebase"), progress.Stage("solve nim"):
        assert beaten.wait(60)
    beaten.clear()
    assert not beaten.wait(0.1)  # the stage over, its heartbeat stops


@pytest.mark.parametrize("quiet, beats", [(False, True), (True, False)])
def test_configure_off_a_terminal_starts_the_heartbeat_unless_quiet(monkeypatch, quiet, beats):
    import logging

    monkeypatch.setattr(logging, "basicConfig", lambda **kwargs: None)  # the test's logging left alone
    monkeypatch.setattr(progress, "_heartbeat", "unset")
    progress.configure(quiet)  # stderr is pytest's capture here: not a terminal
    assert progress._heartbeat == (30 if beats else None)
