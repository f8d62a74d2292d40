"""The command line: help with examples, one-line errors, nothing lost on bad input."""

from __future__ import annotations

import errno
import hashlib
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.commands import app
from tests.command import tablebase

ROOT = Path(__file__).resolve().parent.parent


def process(*args: str, **kwargs) -> subprocess.CompletedProcess:
    """`tablebase ARGS` in a Python of its own, where the process is what a test is about."""
    return subprocess.run([sys.executable, "-m", "pipeline", *args], capture_output=True, text=True, cwd=ROOT, **kwargs)


def digests(data: Path) -> dict[str, str]:
    return {
        str(p.relative_to(data)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(data.rglob("*.parquet"))
        if not p.relative_to(data).parts[0].startswith(".")
    }


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("built")
    result = tablebase("build", "-q", "chopsticks", "chopsticks:hands=1", data=folder)
    assert result.returncode == 0, result.stderr
    return folder


@pytest.fixture
def data(built, tmp_path) -> Path:
    """A data folder of its own for each test (built once, copied): tests change it."""
    shutil.copytree(built, tmp_path, dirs_exist_ok=True)
    return tmp_path


def test_every_command_has_help_with_an_example():
    from typer.testing import CliRunner

    runner = CliRunner()
    for command in app.registered_commands:
        name = command.name or command.callback.__name__
        for option in ("--help", "-h"):
            result = runner.invoke(app, [name, option])
            assert result.exit_code == 0, name
            assert "Example" in result.output, f"{name} {option} shows no example"
    assert runner.invoke(app, ["-h"]).output == runner.invoke(app, ["--help"]).output


def test_help_lists_everyday_commands_first_each_on_one_line_at_80_columns():
    import os

    import typer.main

    from pipeline.command_group import HELP_PANELS

    group = typer.main.get_command(app)
    assert sorted(name for names in HELP_PANELS.values() for name in names) == sorted(group.commands)
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "--help"],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env={**os.environ, "COLUMNS": "80"},
    )
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert max(map(len, lines)) <= 80
    listed = [line.split()[1] for line in lines if line.startswith("│ ") and line.split()[1] in group.commands]
    assert listed == [name for names in HELP_PANELS.values() for name in names]
    assert listed[:2] == ["build", "probe"]
    for name, command in group.commands.items():
        summary = command.help.split("\n\n")[0]
        assert any(f"│ {name} " in line and summary in line for line in lines), f"{name}: {summary!r} wraps"


def test_help_paragraphs_have_no_line_breaks_but_the_examples():
    """Typer's Rich help keeps a docstring's line breaks, which cut sentences in two at
    80 columns: each paragraph is one line, for Rich to wrap at the terminal's width."""
    import typer.main

    group = typer.main.get_command(app)
    for name, command in [("tablebase", group), *group.commands.items()]:
        for paragraph in command.help.split("\n\n"):
            assert paragraph.startswith("Example") or "\n" not in paragraph, (name, paragraph)


def test_shell_completion_completes_commands_and_options():
    import os

    def complete(words: str) -> list[str]:
        env = {**os.environ, "_TABLEBASE_COMPLETE": "complete_bash", "COMP_WORDS": words}
        env["COMP_CWORD"] = str(len(words.split()) - 1)
        done = subprocess.run([sys.executable, "-m", "pipeline"], capture_output=True, text=True, cwd=ROOT, env=env)
        assert done.returncode == 0 and done.stderr == "", done.stderr
        return done.stdout.split()

    assert complete("tablebase pro") == ["probe"]
    assert "--format" in complete("tablebase sql --f")
    assert {"publish", "play", "probe"} <= set(complete("tablebase p"))


def test_completion_installs_for_the_shell_it_is_run_from(tmp_path):
    """Typer finds the shell among the command's parent processes (shellingham) and takes
    no shell name: `--show-completion bash` ignores the word, and with no shell above the
    process (a suite started by nohup from a shell since gone) it said "Shell  not
    supported.". So the commands run from bash, as a user runs them; `; true` keeps bash
    from replacing itself with the command."""
    import os
    import shlex

    env = {**os.environ, "HOME": str(tmp_path), "SHELL": "/bin/bash"}
    command = shlex.join([sys.executable, "-m", "pipeline"])

    def from_bash(option: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            ["bash", "-c", f"{command} {option}; status=$?; true; exit $status"],
            capture_output=True,
            text=True,
            cwd=ROOT,
            env=env,
        )

    shown = from_bash("--show-completion")
    assert shown.returncode == 0 and "_TABLEBASE_COMPLETE=complete_bash" in shown.stdout, shown.stderr
    installed = from_bash("--install-completion")
    assert installed.returncode == 0, installed.stderr
    assert "_TABLEBASE_COMPLETE" in (tmp_path / ".bash_completions" / "tablebase.sh").read_text()


@pytest.fixture
def entry(monkeypatch, capsys):
    """Run the installed script's entry point in this process (a new Python for each of
    dozens of command lines would take most of a minute): (exit status, stdout, stderr)."""
    from pipeline import cli

    saved = signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM), sys.unraisablehook

    def run(*args: str) -> tuple[int, str, str]:
        monkeypatch.setattr(sys, "argv", ["tablebase", *args])
        with pytest.raises(SystemExit) as leaving:
            cli.main()
        out, err = capsys.readouterr()
        return leaving.value.code or 0, out, err

    yield run
    signal.signal(signal.SIGINT, saved[0])
    signal.signal(signal.SIGTERM, saved[1])
    sys.unraisablehook = saved[2]


def malformed_lines() -> list[list[str]]:
    """A malformed command line for every command (an unknown option; no argument where
    one is required), and those the commands find themselves."""
    import typer.main

    lines = [["--no-such-option"], ["no-such-command"]]
    for name, command in typer.main.get_command(app).commands.items():
        lines.append([name, "--no-such-option"])
        if any(param.required for param in command.params if param.param_type_name == "argument"):
            lines.append([name])
    return lines + [
        ["build"],  # no ruleset and no --all
        ["build", "chopsticks", "--engine", "sparkle"],
        ["query"],  # no query named, no --list
        ["sql", "SELECT 1", "-p", "no-equals-sign"],
        ["sql", "SELECT 1", "--format", "parquet"],  # parquet needs --output
        ["sql", "SELECT 1", "--format", "xml"],
        ["probe", "chopsticks", "start", "extra"],
        ["play", "chopsticks", "--as", "third"],
        ["play", "chopsticks", "--max-plies", "many"],
        ["check", "a", "b"],
    ]


@pytest.mark.parametrize("args", malformed_lines(), ids=" ".join)
def test_every_malformed_command_line_exits_2_with_one_line(entry, tmp_path, args):
    status, out, err = entry(*args, "--data", str(tmp_path / "data"))
    assert status == 2, err
    [line] = err.splitlines()
    assert line.startswith("error: ") and out == "", err
    assert not (tmp_path / "data").exists()


def test_a_malformed_line_names_the_commands_help(entry):
    assert entry("probe", "chopsticks") == (
        2,
        "",
        "error: missing argument 'position': see `tablebase probe --help`\n",
    )


@pytest.mark.parametrize(
    "args, message",
    [
        (["build", "chopstix"], "unknown game 'chopstix'"),
        (["build", "chopsticks:fingers=1"], "fingers"),
        (["build", "chopsticks:hands=0"], "hands"),
        (["build", "chopsticks:overflow=sideways"], "sideways"),
        (["build", "chopsticks:colour=red"], "unknown parameter"),
        (["probe", "chopsticks", "1-1"], "malformed chopsticks position"),
        (["probe", "chopsticks", "1-1|x-1"], "malformed chopsticks position"),
        (["probe", "chopsticks", "1-7|1-1"], "impossible chopsticks position"),
        (["probe", "chopsticks", "0-0|0-0"], "impossible chopsticks position"),
        (["probe", "chopsticks:split=any", "1-1|1-1"], "is not built"),
        (["solve", "chopsticks:fingers=3"], "missing"),
        (["export", "chopsticks:fingers=3"], "missing"),
        (["query", "no_such_query"], "no query named"),
        (["sql", "SELEC 1"], "syntax error"),
    ],
)
def test_bad_input_gives_one_line_and_keeps_data(data, args, message):
    before = digests(data)
    result = tablebase(*args, data=data)
    assert result.returncode != 0
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert lines[0].startswith("error: ") and message in lines[0]
    assert digests(data) == before


@pytest.mark.parametrize(
    "args, build",
    [
        (["probe", "chopsticks", "start"], "`tablebase build chopsticks`"),
        (["play", "chopsticks:split=any"], "`tablebase build chopsticks:split=any`"),
        (
            ["query", "principal_variation", "-p", "ruleset=chopsticks", "-p", "position=start"],
            "`tablebase build chopsticks`",
        ),
        (["query", "who_wins"], "`tablebase build chopsticks`"),
        (["sql", "SELECT 1"], "`tablebase build chopsticks`"),
        (["claims"], "`tablebase build chopsticks`"),
    ],
)
def test_reading_before_anything_is_built_says_what_builds_it_and_names_data(tmp_path, args, build):
    result = tablebase(*args, data=tmp_path / "empty")
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and build in line and "--data" in line, line
    assert not (tmp_path / "empty").exists()


def test_a_ruleset_not_built_names_the_build_and_data(data):
    result = tablebase("probe", "chopsticks:split=any", "start", data=data)
    assert result.stderr.strip() == (
        f"error: chopsticks:split=any is not built in {data}: build it with "
        "`tablebase build chopsticks:split=any`, or name the folder it was built in with --data"
    )


def test_sql_keeps_duckdbs_hints_on_one_line(data):
    result = tablebase("sql", "SELECT * FROM tablebas", data=data)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert line.startswith("error: ") and 'Did you mean "tablebase"?' in line, line


def test_sql_says_how_to_read_a_file_in_read_only_mode(data):
    # a file of the data folder that no view reads (those the views read DuckDB may open)
    other = data / "chopsticks" / "default" / "positions.parquet"
    assert other.exists()
    result = tablebase("sql", f"SELECT count(*) FROM read_parquet('{other}')", data=data)
    assert result.returncode == 1
    [line] = result.stderr.strip().splitlines()
    assert "reads the views catalog, tablebase and transitions only" in line and "--read-files" in line, line


def test_duckdbs_quoted_sql_and_carets_become_the_text_they_mark():
    from pipeline.products.query import one_line

    message = 'Parser Error: syntax error at or near "SELEC"\n\nLINE 1: SELEC 1\n        ^^^^^'
    assert one_line(message) == 'Parser Error: syntax error at or near "SELEC" LINE 1: SELEC 1 (at SELEC)'


def test_corrupt_parquet_is_reported(data):
    files = data / "chopsticks" / "default"
    (files / "transitions.parquet").write_bytes(b"not parquet at all")
    result = tablebase("probe", "chopsticks", "1-1|1-1", data=data)
    assert result.returncode == 1
    # its bytes are not those the catalog records: said before anything reads the file
    assert "transitions.parquet is not the file the catalog records (its SHA-256 differs)" in result.stderr
    assert "tablebase build chopsticks" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1


def test_probe_shows_value_and_best_move_first(data):
    result = tablebase("probe", "chopsticks", "3-1|0-2", data=data)
    assert result.returncode == 0, result.stderr
    first, best = result.stdout.splitlines()[:2]
    assert first.split()[:3] == ["chopsticks", "1-3|0-2", "wins"]
    assert "3 hits 2" in best and "the mover wins in" in best


def test_start_names_the_start_and_values_are_said_in_words(data):
    """`start` wherever a position is taken; who wins, in the words people use."""
    start = tablebase("probe", "chopsticks", "Start", data=data)
    assert start.returncode == 0, start.stderr
    assert start.stdout.splitlines()[0] == "chopsticks  1-1|1-1  loses in 8 plies: the second player wins in 8 plies"
    other = tablebase("probe", "chopsticks", "3-1|0-2", data=data)
    assert other.stdout.splitlines()[0].endswith(": the player to move wins in 1 ply")
    line = tablebase("query", "principal_variation", "-p", "ruleset=chopsticks", "-p", "position=start", data=data)
    assert line.returncode == 0, line.stderr
    assert line.stdout.splitlines()[1].split()[:3] == ["0", "NULL", "1-1|1-1"]


def test_rebuild_gives_identical_bytes(data):
    before = digests(data)
    assert tablebase("build", "-q", "chopsticks", "chopsticks:hands=1", data=data).returncode == 0
    assert digests(data) == before


def test_interrupted_build_keeps_the_previous_tablebase(tmp_path):
    data = tmp_path
    assert tablebase("build", "-q", "chopsticks:fingers=12,hands=3", data=data).returncode == 0
    before = digests(data)
    process = subprocess.Popen(
        [sys.executable, "-m", "pipeline", "build", "-v", "chopsticks:fingers=12,hands=3", "--data", str(data)],
        cwd=ROOT,
        stderr=subprocess.PIPE,
        text=True,
    )
    for line in process.stderr:  # kill it once the solver is under way (-v: a line per rank)
        if "solve" in line and ("depth 3" in line or "rank 3:" in line):
            break
    process.send_signal(signal.SIGKILL)
    process.wait()
    assert process.returncode == -signal.SIGKILL
    assert digests(data) == before
    probe = tablebase("probe", "chopsticks:fingers=12,hands=3", "1-1-1|1-1-1", data=data)
    assert probe.returncode == 0, probe.stderr


def test_a_command_does_not_import_pandas_nor_rich_off_a_terminal(tmp_path):
    """pyarrow would import pandas on its first conversion (0.3 s of every command):
    the command line hides it (pipeline/storage/imports.py), and a build works without it.
    Rich draws the progress bars, on a terminal only: elsewhere its import was 40 ms of
    every command's start for nothing."""
    script = (
        "import atexit, sys\n"
        "atexit.register(lambda: print('pandas' in sys.modules, 'rich' in sys.modules))\n"
        "from pipeline.cli import main\n"
        f"sys.argv = ['tablebase', 'build', 'sticks:rows=4', '--data', {str(tmp_path)!r}]\n"
        "main()\n"
    )
    env = {key: value for key, value in os.environ.items() if key not in ("FORCE_COLOR", "TTY_COMPATIBLE")}
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=300, env=env
    )
    assert done.returncode == 0, done.stderr
    assert "built sticks:rows=4" in done.stderr  # the progress lines, without bars
    assert done.stdout.strip().splitlines()[-1] == "False False"
    assert (tmp_path / "sticks" / "rows-4" / "tablebase.parquet").exists()


#: What `tablebase sql` and `query` do without, where the result is plain: NumPy and pyarrow
#: (0.18 s), the games, filelock (40 ms) and the other commands' module.
NOT_FOR_READING = ("numpy", "pyarrow", "pipeline.games", "filelock", "pipeline.commands")


@pytest.mark.parametrize(
    "args",
    [
        ["sql", "SELECT ruleset, positions, start_value FROM catalog ORDER BY ruleset"],
        [
            "sql",
            "-f",
            "json",
            "SELECT value, count(*) AS n FROM tablebase WHERE ruleset = $r GROUP BY 1 ORDER BY 1",
            "-p",
            "r=chopsticks",
        ],
        ["query", "remoteness_distribution", "-p", "ruleset=chopsticks:hands=1", "-f", "jsonl"],
        ["query", "compare_rulesets", "-p", "ruleset_a=chopsticks", "-p", "ruleset_b=chopsticks:hands=1", "-f", "json"],
    ],
)
def test_a_reading_statement_loads_neither_the_games_nor_numpy_nor_pyarrow(built, args):
    """A sub-second statement is mostly the command's start (issue 32: 1.7-3.2x DuckDB's own
    Python when it loaded them): its result, printed from DuckDB's rows, is what the library's
    Arrow table renders, and the process never imported what it does without."""
    from pipeline import Tablebases
    from pipeline.storage.output import render

    params = dict(args[i + 1].split("=", 1) for i, arg in enumerate(args) if arg == "-p")
    form = args[args.index("-f") + 1] if "-f" in args else "table"
    tables = Tablebases(built)  # read first: the first reader after a build hashes every file (loading filelock)
    if args[0] == "sql":
        table = tables.sql(next(arg for arg in args[1:] if arg.startswith("SELECT")), params)
    else:
        table = tables.query(args[1], params)
    script = (
        "import atexit, sys\n"
        f"atexit.register(lambda: sys.stderr.write('loaded: ' + repr([m for m in {NOT_FOR_READING!r} if m in sys.modules])))\n"
        "from pipeline.cli import main\n"
        f"sys.argv = ['tablebase', *{args!r}, '--data', {str(built)!r}]\n"
        "main()\n"
    )
    done = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stderr.strip().splitlines()[-1] == "loaded: []", done.stderr
    assert done.stdout == render(table, form)


@pytest.mark.parametrize("before", [["-h"], ["--help"], ["-q", "-h"]])
@pytest.mark.parametrize("command", ["sql", "query"])
def test_the_help_before_a_reading_command_is_the_whole_help(before, command):
    """`tablebase -h sql` shows the top level's help, whose every panel the reading commands'
    own command line (pipeline/cli.py's command_line) would leave out."""
    whole = process("--help")
    shown = process(*before, command)
    assert (shown.returncode, shown.stdout) == (0, whole.stdout)
    assert "build" in shown.stdout and "export" in shown.stdout


def test_a_full_disk_in_a_copy_names_the_stage_and_the_file_being_written(monkeypatch):
    from pipeline.cli import describe

    monkeypatch.setattr("pipeline.storage.progress.failed_in", ["publish chopsticks"])
    error = OSError(
        errno.ENOSPC,
        "No space left on device",
        "data/chopsticks/default/positions.parquet",
        None,
        "dist/.tablebase-0.3.0.tmp/chopsticks/default/positions.parquet",
    )
    message, status = describe(error)
    assert status == 1 and message.startswith(
        "no space left on the disk during publish chopsticks "
        "(writing dist/.tablebase-0.3.0.tmp/chopsticks/default/positions.parquet)"
    )


@pytest.mark.parametrize("option", ["--version", "-V"])
def test_version_option_prints_the_name_and_version_and_exits_0(option):
    from pipeline import __version__

    result = tablebase(option)
    assert (result.returncode, result.stdout, result.stderr) == (0, f"tablebase {__version__}\n", "")


@pytest.mark.parametrize("where", ["before", "after"])
def test_quiet_goes_before_or_after_the_command(tmp_path, where):
    args = ["-q", "build", "chopsticks:hands=1"] if where == "before" else ["build", "chopsticks:hands=1", "-q"]
    loud = tablebase("build", "chopsticks:hands=1", data=tmp_path / "loud")
    quiet = tablebase(*args, data=tmp_path / "quiet")
    assert loud.returncode == quiet.returncode == 0, quiet.stderr
    assert "built chopsticks:hands=1" in loud.stderr and quiet.stderr == ""


@pytest.mark.parametrize(
    "args",
    [
        ["--debug", "probe", "chopsticks", "start"],
        ["probe", "--debug", "chopsticks", "start"],
        ["probe", "chopsticks", "start", "--debug"],
    ],
)
def test_debug_goes_before_or_after_the_command(tmp_path, args):
    result = tablebase(*args, data=tmp_path)
    assert result.returncode == 1
    assert "Traceback" in result.stderr and result.stderr.rstrip().splitlines()[-1].startswith("error: ")


def test_verbose_after_a_command_without_progress_is_taken(data):
    """Every command takes the global options, those that show no progress as well."""
    assert (
        tablebase("probe", "chopsticks", "start", "-v", data=data).stdout
        == tablebase("-v", "probe", "chopsticks", "start", data=data).stdout
        != ""
    )


def test_a_global_option_after_double_dash_or_as_a_value_is_not_taken(data):
    result = tablebase("sql", "--data", str(data), "--", "-q")
    assert result.returncode == 1 and 'syntax error at or near "-"' in result.stderr
    result = tablebase("sql", "SELECT 1", "-p", "-q", data=data)
    assert result.returncode == 2 and "bad --param '-q'" in result.stderr


def test_rulesets_outside_the_repository_reads_the_packaged_file_and_says_so(tmp_path):
    from pipeline.games.rulesets import PACKAGED_RULESETS

    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "rulesets"], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.split()[0] == "chopsticks" and len(result.stdout.splitlines()) > 50
    assert result.stderr == (
        f"reading the ruleset file installed with tablebase, {PACKAGED_RULESETS} "
        "(no rulesets.toml in this folder; --rulesets FILE names another)\n"
    )


def test_a_ruleset_file_in_the_current_folder_or_named_is_read_instead_of_the_packaged_one(tmp_path):
    (tmp_path / "rulesets.toml").write_text('[[ruleset]]\nid = "nim"\ncomment = "mine"\n')
    (tmp_path / "other.toml").write_text('[[ruleset]]\nid = "sticks"\ncomment = "other"\n')
    for args, first in [([], "nim"), (["--rulesets", "other.toml"], "sticks")]:
        result = subprocess.run(
            [sys.executable, "-m", "pipeline", "rulesets", *args], capture_output=True, text=True, cwd=tmp_path
        )
        assert (result.returncode, result.stdout.split(), result.stderr) == (0, [first, result.stdout.split()[1]], "")


def test_build_all_outside_the_repository_builds_the_packaged_rulesets(tmp_path, monkeypatch):
    """Without building them all (minutes): the list build --all takes is the packaged file's."""
    import pipeline.commands as commands
    from pipeline.games.rulesets import PACKAGED_RULESETS, load_ruleset_file

    class Stop(Exception):
        pass

    def first_build(rules, *args, **kwargs):
        asked.append(rules.id)
        raise Stop

    asked = []
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("pipeline.stages.build.build", first_build)
    monkeypatch.setattr(commands, "_setup", lambda *args: None)
    with pytest.raises(Stop):
        commands.app(["build", "--all", "--data", str(tmp_path / "data")], standalone_mode=False)
    assert asked == [load_ruleset_file(PACKAGED_RULESETS)[0][0].id]


def test_the_packaged_file_leaves_out_rulesets_of_games_not_installed_and_says_which(tmp_path, monkeypatch, capsys):
    """The packaged file names the example plug-in's rulesets, which a user's installation lacks:
    `tablebase rulesets` said `unknown game 'takeaway'` and listed nothing."""
    import pipeline.commands as commands
    import pipeline.games.rulesets as rulesets

    packaged = tmp_path / "packaged.toml"
    packaged.write_text(
        '[[ruleset]]\nid = "nim"\ncomment = "built in"\n\n'
        '[[ruleset]]\nid = "nosuchgame:size=3"\ncomment = "a plug-in\'s"\n'
    )
    monkeypatch.setattr(commands, "PACKAGED_RULESETS", packaged)
    monkeypatch.setattr(rulesets, "PACKAGED_RULESETS", packaged)
    monkeypatch.chdir(tmp_path)
    assert commands.app(["rulesets"], standalone_mode=False) is None
    out, err = capsys.readouterr()
    assert out.split() == ["nim", "built", "in"]
    assert err.endswith("; left out, their game not installed here: nosuchgame:size=3\n"), err
    with pytest.raises(Exception, match="unknown game 'nosuchgame'"):  # a file named: every ruleset or an error
        commands.app(["rulesets", "--rulesets", str(packaged)], standalone_mode=False)


def test_publish_shows_its_progress_as_the_build_stages_do(data, tmp_path_factory):
    """Minutes on a large data folder: a bar on a terminal, a line every 30 s and one at
    the end elsewhere, its phases with -v, nothing with -q (pipeline/storage/progress.py)."""
    import re

    dist = tmp_path_factory.mktemp("dist")  # outside the data folder, which is tmp_path
    ended = tablebase("publish", "--out", str(dist), data=data)
    assert ended.returncode == 0, ended.stderr
    [line] = ended.stderr.splitlines()
    assert re.fullmatch(rf"\d\d:\d\d:\d\d publish {re.escape(str(dist))}: 2 rulesets, 2 archives in \d+\.\d\d s", line)
    phases = tablebase("publish", "-v", "--out", str(dist), data=data)
    said = [line.split(": ", 1)[1] for line in phases.stderr.splitlines() if "done in" in line]
    assert [phase.rsplit(": done", 1)[0] for phase in said] == [
        "checking the data folder",
        "the dataset folder",
        "tablebase-" + __import__("pipeline").__version__ + ".zip",
        "an archive a game",
    ], phases.stderr
    quiet = tablebase("publish", "-q", "--out", str(dist), data=data)
    assert (quiet.returncode, quiet.stderr) == (0, "")


@pytest.mark.parametrize("args", [["sql", "-"], ["query", "-"]])
def test_a_dash_reads_the_sql_from_standard_input(data, args):
    import json

    result = tablebase(*args, "--format", "json", data=data, input="SELECT count(*) AS rulesets FROM catalog\n")
    assert result.returncode == 0, result.stderr
    assert json.loads(result.stdout) == [{"rulesets": 2}]


def test_sql_from_standard_input_that_is_not_utf8_is_one_line(data):
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "sql", "-", "--data", str(data)],
        input=b"SELECT '\xff'",
        capture_output=True,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert result.stderr.decode() == "error: the SQL on standard input is not UTF-8 text (byte 8)\n"


def test_probe_as_json_is_the_probe_of_the_python_api(data):
    import dataclasses
    import json

    from pipeline.products.probe import probe

    result = tablebase("probe", "chopsticks", "start", "-f", "json", data=data)
    assert result.returncode == 0, result.stderr
    assert len(result.stdout.splitlines()) == 1
    assert json.loads(result.stdout) == dataclasses.asdict(probe("chopsticks", "start", data))


def test_check_as_json_holds_its_problems_and_exits_as_text_does(data):
    import json

    good = tablebase("check", "-f", "json", data=data)
    assert (good.returncode, json.loads(good.stdout)) == (0, {"folder": str(data), "problems": []})
    (data / "chopsticks" / "default" / "tablebase.parquet").write_bytes(b"changed")
    bad = tablebase("check", "--format", "json", data=data)
    assert bad.returncode == 1 and bad.stderr == ""
    problems = json.loads(bad.stdout)["problems"]
    assert problems and any("tablebase.parquet" in problem for problem in problems)


@pytest.mark.parametrize("form", ["json", "jsonl", "csv"])
def test_listings_print_as_json_jsonl_or_csv(form):
    import csv
    import io
    import json

    from pipeline.games import all_games

    def rows(args: list[str]) -> list[dict]:
        result = tablebase(*args, "--format", form)
        assert result.returncode == 0, result.stderr
        if form == "json":
            return json.loads(result.stdout)
        if form == "jsonl":
            return [json.loads(line) for line in result.stdout.splitlines()]
        return list(csv.DictReader(io.StringIO(result.stdout)))

    games = rows(["games"])
    assert [row["game"] for row in games] == list(all_games())
    if form != "csv":  # a list of objects: CSV writes it as JSON text
        assert games[0]["parameters"][0] == {
            "name": "fingers",
            "default": "5",
            "values": "integer 2..100",
            "help": "a hand reaching this many fingers overflows",
        }
    listed = rows(["rulesets"])
    assert listed[0]["ruleset"] == "chopsticks" and "second player wins" in listed[0]["comment"]
    [estimate] = rows(["estimate", "chopsticks"])
    assert str(estimate["positions"]) == "224" and str(estimate["fits"]).lower() == "true"
    assert {row["name"] for row in rows(["query", "--list"])} >= {"who_wins", "compare_rulesets"}


def test_estimate_as_json_says_what_does_not_fit_and_exits_1(tmp_path, monkeypatch):
    import json

    monkeypatch.setenv("TABLEBASE_MAX_MEMORY", "1MB")
    result = tablebase("estimate", "chopsticks", "-f", "json", data=tmp_path)
    assert result.returncode == 1, result.stderr
    [row] = json.loads(result.stdout)
    assert row["fits"] is False and "too big for this machine" in row["does_not_fit"]


def test_verify_and_check_game_as_json(data):
    import json

    verified = tablebase("verify", "-q", "chopsticks", "-f", "json", data=data)
    assert verified.returncode == 0, verified.stderr
    assert json.loads(verified.stdout) == [{"ruleset": "chopsticks", "published_files_checked": True, "problems": []}]
    game = tablebase("check-game", "sticks", "sticks:rows=2", "-f", "json")
    assert game.returncode == 0, game.stderr
    assert json.loads(game.stdout) == {"game": "sticks", "ruleset": "sticks:rows=2", "problems": []}


@pytest.mark.parametrize("given", [[], ["missing"]])
def test_check_on_a_folder_not_there_says_error_and_what_to_do(tmp_path, monkeypatch, given):
    monkeypatch.chdir(tmp_path)
    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "check", *given], capture_output=True, text=True, cwd=tmp_path
    )
    folder = given[0] if given else "data"
    build = "`tablebase build chopsticks --data missing`" if given else "`tablebase build chopsticks`"
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr == (
        f"error: {folder} does not exist: name a data folder or an unpacked bundle (`tablebase check DIR`), "
        f"or build a ruleset into it first ({build})\n"
    )
