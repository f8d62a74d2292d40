"""Hostile input to the command line: rulesets far too big for any machine, runaway
parameter texts, ruleset files of the wrong shape, a low address-space limit. Each ends in
one `error:` line and exit status 1, refused before work in bounded memory; nothing is built.

Every ruleset runs in a process of its own (forked with the libraries loaded:
tests/zygote.py) under a limit on its address space: a parser that allocates by the size
of a number (nim's heaps) then runs out of memory, where it would otherwise swap a machine
for minutes. The timeout is generous; times are not asserted.
"""

from __future__ import annotations

import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.core.errors import RulesetError
from pipeline.games.rulesets import load_ruleset_file, read_comments
from tests.command import forked

ROOT = Path(__file__).resolve().parent.parent
#: Address space each command below may have: Python with NumPy, pyarrow and DuckDB loaded
#: takes about 0.4 GiB of it, a nim parser that counted by the largest heap took 2.4 GB.
LIMIT = 1536 << 20


def tablebase(
    *args: str, limit: int | None = LIMIT, timeout: float = 120, env: dict | None = None, started: bool = False
) -> subprocess.CompletedProcess:
    """The command in a process of its own under `limit`: forked with the libraries loaded,
    or `started` as a new Python, for a limit the libraries' loading must meet."""
    if limit is not None and sys.platform != "linux":
        pytest.skip("the address-space limits here were measured on Linux")
    environment = {**os.environ, **(env or {})}
    if not started:
        return forked(*args, cwd=ROOT, env=environment, timeout=timeout, limit=limit)

    def restrict() -> None:
        if limit is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))

    return subprocess.run(
        [sys.executable, "-m", "pipeline", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=timeout,
        preexec_fn=restrict,
        env=environment,
    )


def one_error(result: subprocess.CompletedProcess) -> str:
    """The one `error:` line the command ended with, exit status 1, no traceback."""
    assert "Traceback" not in result.stderr, result.stderr
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert len(lines[0]) < 600, "an error line is short enough to read"
    return lines[0]


def hackenbush_path(edges: int) -> str:
    return "hackenbush:tree=" + ";".join(f"{n}:{n + 1}" for n in range(1, edges + 1))


#: (ruleset, what the line says): each game's parameters at sizes no machine builds.
TOO_BIG = [
    ("nim:start=999999999", "at least 1,000,000,000 positions"),
    ("nim:start=100000000", "more than this pipeline builds"),
    ("nim:start=99999999-99999999-99999999,variant=arrow", "more than this pipeline builds"),
    ("nim:start=" + "-".join(["99999"] * 10_000), "more than this pipeline builds"),
    ("nim:start=" + "-".join(["7"] * 10_000) + ",variant=distinct", "needs distinct heap sizes"),
    ("octal:start=999999999", "is too big for any machine"),
    ("octal:start=" + "-".join(["10000"] * 10_000), "is too big for any machine"),
    ("octal:code=0." + "7" * 33, "1 to 32 octal digits"),
    ("hackenbush:fib=999999999", "far more positions"),
    ("hackenbush:tree=1:" + "/".join(map(str, range(2, 15_000))), "more than 2,147,483,647 positions"),
    ("chopsticks:fingers=999999999", "must be ≤ 100"),
    ("chopsticks:fingers=100,hands=10", "more than the 2,147,483,647"),
    ("chopsticks:hands=999999999", "must be ≤ 10"),
    ("sticks:rows=999999999", "is too big for any machine"),
    ("sticks:max_take=9999999999", "expected an integer"),
    ("tictactoe:rows=999999999,cols=999999999", "more than this pipeline builds"),
    ("tictactoe:k=999999999", "no line of 999999999 fits"),
    ("connect:cols=999999999,rows=999999999", "63-bit keys"),
    ("connect:k=999999999", "no line of 999999999 fits"),
    ("chopsticks:fingers=" + "9" * 100_000, "expected an integer"),
]


@pytest.mark.parametrize("ruleset, message", TOO_BIG, ids=[ruleset[:40] for ruleset, _ in TOO_BIG])
def test_a_ruleset_too_big_for_any_machine_is_refused_in_bounded_memory(ruleset, message):
    line = one_error(tablebase("estimate", ruleset))
    assert message in line and "out of memory" not in line


@pytest.mark.parametrize("edges", [9_000, 60_000])
def test_a_long_hackenbush_path_is_parsed_in_one_pass(tmp_path, edges):
    """A path of 9,000 edges took minutes to parse, walking to the root from every node;
    60,000 edges are about as many as the moves' limit allows. Given in a ruleset file: the
    text is longer than a command-line argument may be."""
    rulesets = tmp_path / "rulesets.toml"
    rulesets.write_text(f'[[ruleset]]\nid = "{hackenbush_path(edges)}"\n')
    result = tablebase("rulesets", "--rulesets", str(rulesets))
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("hackenbush:tree=1:2;2:3;")


def test_a_hackenbush_path_too_long_to_build_is_refused_by_the_estimate_of_its_lists(tmp_path):
    """70,001 positions listing 2.45 billion edges in all, which enumerate holds: the
    estimate counts them, and says so in one short line."""
    rulesets = tmp_path / "rulesets.toml"
    rulesets.write_text(f'[[ruleset]]\nid = "{hackenbush_path(70_000)}"\n')
    line = one_error(
        tablebase(
            "build",
            "--all",
            "--rulesets",
            str(rulesets),
            "--data",
            str(tmp_path / "data"),
            limit=None,
            env={"TABLEBASE_MAX_MEMORY": "8GB"},
        )
    )  # refused however it is counted
    assert "(817,807 characters) is too big for this machine: it needs up to 92.1 GiB of memory" in line
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").rglob("*.parquet"))


@pytest.mark.parametrize(
    "ruleset",
    [
        "sticks:play=" + "x" * 1_000_100,
        "nim:start=" + "1-" * 600_000 + "1",
        "octal:start=" + "-".join(["1"] * 20_000),
        "hackenbush:tree=1:2/" + "x" * 200_000,
    ],
)
def test_a_runaway_parameter_text_is_refused_in_one_short_line(tmp_path, ruleset):
    rulesets = tmp_path / "rulesets.toml"
    rulesets.write_text(f'[[ruleset]]\nid = "{ruleset}"\n')
    line = one_error(tablebase("build", "--all", "--rulesets", str(rulesets), "--data", str(tmp_path / "data")))
    assert "characters)" in line, "the text is cut short, and its length said"
    assert not (tmp_path / "data").exists() or not list((tmp_path / "data").rglob("*.parquet"))


def test_many_small_heaps_are_counted_in_one_pass_per_size(tmp_path):
    """octal:start=1-1-…-1 of 9,999 heaps: 9,999 positions, counted in tens of seconds by a
    sum over every count of every heap size; a running sum does it in one pass."""
    result = tablebase("estimate", "octal:start=" + "-".join(["1"] * 9_999), env={"TABLEBASE_MAX_MEMORY": "64GB"})
    assert "at most 10,000 positions, at most 9,999 transitions" in result.stdout, result.stderr


RULESET_FILES = {
    "an integer id": b"[[ruleset]]\nid = 5\n",
    "an array id": b'[[ruleset]]\nid = ["chopsticks"]\n',
    "a comment that is no string": b'[[ruleset]]\nid = "chopsticks"\ncomment = 7\n',
    "one [ruleset] table": b'[ruleset]\nid = "chopsticks"\n',
    "ruleset a number": b"ruleset = 5\n",
    "rulesets that are numbers": b"ruleset = [1, 2]\n",
    "bytes that are not UTF-8": b'[[ruleset]]\nid = "chopsticks"\ncomment = "\xff\xfe"\n',
}
WHY = {
    "an integer id": "the id of ruleset 1 is an integer, not a string",
    "an array id": "the id of ruleset 1 is an array, not a string",
    "a comment that is no string": "the comment of ruleset 1 is an integer, not a string",
    "one [ruleset] table": "`ruleset` is a table, not a list of tables",
    "ruleset a number": "`ruleset` is an integer, not a list of tables",
    "rulesets that are numbers": "ruleset 1 is an integer, not a table",
    "bytes that are not UTF-8": "is not UTF-8 text (byte 41",
}


@pytest.mark.parametrize("shape", RULESET_FILES)
def test_a_ruleset_file_of_the_wrong_shape_is_refused_with_a_reason(tmp_path, shape):
    rulesets = tmp_path / "rulesets.toml"
    rulesets.write_bytes(RULESET_FILES[shape])
    for read in (load_ruleset_file, read_comments):
        with pytest.raises(RulesetError) as error:
            read(rulesets)
        assert str(error.value).startswith(f"ruleset file {rulesets}") and WHY[shape] in str(error.value)


@pytest.mark.parametrize("command", [["rulesets"], ["build", "--all"], ["draw", "--all"]])
@pytest.mark.parametrize("shape", ["an integer id", "one [ruleset] table", "bytes that are not UTF-8"])
def test_a_ruleset_file_of_the_wrong_shape_is_one_line(tmp_path, command, shape):
    rulesets = tmp_path / "rulesets.toml"
    rulesets.write_bytes(RULESET_FILES[shape])
    data = ["--data", str(tmp_path / "data")] if command[0] != "rulesets" else []
    line = one_error(tablebase(*command, "--rulesets", str(rulesets), *data, limit=None))
    assert line.startswith(f"error: ruleset file {rulesets}") and WHY[shape] in line
    assert not list(tmp_path.rglob("*.parquet"))


@pytest.mark.parametrize("kib", [100_000, 400_000])
@pytest.mark.parametrize("command", [["build", "chopsticks"], ["version"]])
def test_an_address_space_too_small_for_the_libraries_is_one_line(tmp_path, command, kib):
    """ulimit -v 400000: memory ran out while the libraries loaded, and again while the
    error was described (a MemoryError traceback from the error handler); at 100000
    OpenBLAS ended the process in its own words."""
    result = tablebase(*command, limit=kib << 10, started=True)
    line = one_error(result)
    assert line.startswith("error: tablebase needs at least 512 MiB of address space to load its libraries")
    assert f"this process may have {kib // 1024} MiB (ulimit -v)" in line


def test_memory_running_out_while_an_error_is_described_is_still_one_line():
    """The line for memory running out is made when the command starts: describing an error
    that then fails for want of memory still ends in one line, and exit status 1."""
    script = (
        "import sys\n"
        "import pipeline.cli as cli\n"
        "def describe(error):\n"
        "    raise MemoryError\n"
        "cli.describe = describe\n"
        "sys.argv = ['tablebase', 'probe', 'no-such-game', 'start']\n"
        "cli.main()\n"
    )
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert one_error(result).startswith("error: out of memory: build a smaller ruleset")


@pytest.mark.parametrize("command", ["build", "estimate"])
def test_an_address_space_limit_below_the_estimate_is_refused_up_front(tmp_path, command):
    """ulimit -v 1000000: DuckDB's threads reserve more address space than that, and the
    build crashed inside DuckDB (a segmentation fault) or could not start a thread."""
    result = tablebase(command, "chopsticks", "--data", str(tmp_path / "data"), limit=1_000_000 << 10)
    if command == "build":
        line = one_error(result)
    else:
        assert result.returncode == 1 and "Traceback" not in result.stderr, result.stderr
        line = result.stdout.strip().splitlines()[-1]
    assert "chopsticks needs up to" in line and "of address space and this process may have 977 MiB (ulimit -v)" in line
    assert not list(tmp_path.rglob("*.parquet"))


def test_an_address_space_limit_above_the_estimate_builds(tmp_path):
    from pipeline.games.rulesets import Ruleset
    from pipeline.stages.estimate import estimate, reserved

    needs = estimate(Ruleset.parse("sticks:rows=3")).memory + reserved()
    result = tablebase("build", "-q", "sticks:rows=3", "--data", str(tmp_path / "data"), limit=needs + (64 << 20))
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "data" / "sticks" / "default" / "tablebase.parquet").exists()


@pytest.mark.parametrize("kib", [700_000, 1_000_000])
@pytest.mark.parametrize("command", [["sql", "SELECT 1"], ["check"], ["query", "who_wins"]])
def test_a_command_under_an_address_space_too_small_for_duckdb_is_one_line(tmp_path, command, kib):
    """Below what DuckDB's and Arrow's threads reserve, `sql` crashed (a segmentation
    fault) or said a data file was not as this version writes it."""
    result = tablebase(*command, "--data", str(tmp_path), limit=kib << 10)
    assert "of address space and this process may have" in one_error(result)
