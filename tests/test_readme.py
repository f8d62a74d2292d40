"""The README's and the documentation site's examples run as printed: their SQL, their
Python one-liners, and every shell command of their code blocks and example tables (a skip
list says which not, and why). The pages are read in the site's order after the README and
CONTRIBUTING.md (tests/documentation.py), each command and SQL block once."""

from __future__ import annotations

import io
import re

import pytest

from pipeline.products.query import run_sql
from tests.documentation import ROOT, TEXTS, holding, sql_blocks

EXAMPLES = sql_blocks()


def test_readme_has_sql_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("sql", EXAMPLES.values(), ids=EXAMPLES.keys())
def test_readme_sql_runs(built, sql):
    files = "'data/" in sql  # examples that read the files, as `tablebase sql --read-files` does
    sql = sql.replace("'data/", f"'{built}/")
    table = run_sql(built, sql.strip().rstrip(";"), read_files=files)
    assert table.num_rows > 0


def test_readme_probe_example_is_current(built):
    from pipeline.core.values import in_plies
    from pipeline.products.probe import probe

    result = probe("chopsticks", "1-3|0-2", built)
    shown = "$ tablebase probe chopsticks '1-3|0-2'"
    page = holding(shown)
    block = page[page.index(shown) :]
    assert f"{result.position}  {in_plies(result.value, result.remoteness)}: " in block
    for move in result.moves:
        assert move.move in block


#: The readers' block: a line of imports, then one reader a line.
IMPORTS, *READERS = (
    re.search(r"```python\n(import .*?)```", holding("```python\nimport "), flags=re.S).group(1).splitlines()
)


@pytest.mark.parametrize("line", READERS, ids=[line.split("#")[-1].strip() for line in READERS])
def test_readme_reader_one_liners_run(built, tmp_path, monkeypatch, line):
    import duckdb

    (tmp_path / "data").symlink_to(built)
    monkeypatch.chdir(tmp_path)
    names: dict = {}
    exec(IMPORTS, names)
    result = eval(line, names)
    rows = result.fetchall() if isinstance(result, duckdb.DuckDBPyRelation) else result
    assert len(rows) > 0


def test_the_readers_come_with_tablebase_or_the_extra_the_readme_names():
    """Every module the readers' block imports is Python's own, or installed with tablebase,
    or with the extra its import line names: pandas and Polars came with the tests alone, so
    the examples failed in the environment `make install` makes."""
    import ast
    import importlib.metadata
    import sys
    import tomllib

    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extra = re.search(r"pip install 'tablebase\[(\w+)\]'", IMPORTS)
    assert extra, f"the readers' import line names no extra to install: {IMPORTS}"
    requirements = project["dependencies"] + project["optional-dependencies"][extra[1]]
    installed = {re.match(r"[\w.-]+", requirement)[0].lower().replace("_", "-") for requirement in requirements}
    distributions = importlib.metadata.packages_distributions()
    modules = {alias.name.split(".")[0] for node in ast.parse(IMPORTS).body for alias in node.names}
    assert {"duckdb", "pandas", "polars", "pyarrow"} <= modules
    for module in sorted(modules - set(sys.stdlib_module_names)):
        names = {name.lower().replace("_", "-") for name in distributions.get(module, [module])}
        assert names & installed, f"{module} is neither a dependency of tablebase nor in its {extra[1]} extra"


# Every shell command of the README, run as printed. ---------------------------------

#: Commands of the README and the pages not run here, each with the reason: minutes of work,
#: or what a test machine may lack (Spark and Java, a cluster, the network). Every entry must
#: still be shown (test_the_readme_has_commands_and_skips_only_what_it_holds).
SKIPPED = {
    "make install": "makes .venv/: the tests run in one already",
    ". .venv/bin/activate": "a shell's own command: the tests call the entry point itself",
    "make all": "builds every ruleset of rulesets.toml and their pages: minutes",
    "make test": "the whole test suite",
    "make dev": "makes .venv/ with the tests' packages: the tests run in one already",
    "make lint": "ruff, mypy and import-linter: CI runs it before the tests",
    "make docs": "the site's build: tests/test_docs.py builds it",
    ".venv/bin/python -m pytest -q tests/test_games.py -k takeaway": "the tests' own runner: they run inside it",
    "tablebase --install-completion": "writes to the user's shell start-up file",
    "tablebase build --all": "every ruleset of rulesets.toml: minutes",
    "pip install 'tablebase[spark]'": "installs from the network",
    "tablebase build sticks:rows=8 --engine spark": "Spark: Java, and a session that takes long to start",
    "TABLEBASE_ENGINE=spark make all": "Spark, and every ruleset",
    "SPARK_HOME=$(.venv/bin/python -c 'import os, pyspark; print(os.path.dirname(pyspark.__file__))')": "starts a Spark cluster",
    "$SPARK_HOME/bin/spark-class org.apache.spark.deploy.master.Master --host 127.0.0.1 --port 7077 &": "starts a Spark cluster",
    "$SPARK_HOME/bin/spark-class org.apache.spark.deploy.worker.Worker spark://127.0.0.1:7077 --cores 1 "
    "--memory 4g &": "starts a Spark cluster",
    "TABLEBASE_SPARK_MASTER=spark://127.0.0.1:7077 tablebase build sticks:rows=8 --engine spark": "needs the Spark cluster above",
    "tablebase serve --data data": "a server runs until stopped: tests/test_serve.py starts it on a free port and stops it",
    "curl -s http://127.0.0.1:8000/api/rulesets": "asks the server above: tests/test_serve.py asks its own",
    "curl -s 'http://127.0.0.1:8000/api/rulesets/chopsticks?position=1-2%7C1-1&columns=true'": "asks the server above: tests/test_serve.py asks its own",
    "curl -s http://127.0.0.1:8000/api/rulesets/chopsticks/mainline": "asks the server above: tests/test_serve.py asks its own",
    "curl -s 'http://127.0.0.1:8000/api/rulesets/chopsticks/picture?position=1-2%7C1-1'": "asks the server above: tests/test_serve.py asks its own",
    "make duckdb-wasm": "vendors DuckDB-WASM with npm: make test runs it",
    "tablebase publish --data data --out dist --explorer": "needs make duckdb-wasm's files: "
    "tests/test_static_explorer.py publishes a bundle so and opens it in Chromium",
}


def readme_commands(text: str) -> list[str]:
    """Every command of a page's shell blocks (`sh`, and `$ ` lines of plain blocks)
    and of the example column of its tables, in the page's order, comments left out,
    exactly as a reader would copy them from the raw file."""
    commands = []
    blocks = iter(re.split(r"^```(\w*)\n(.*?)^```", text, flags=re.S | re.M))
    for text in blocks:
        lang, body = next(blocks, None), next(blocks, None)
        header = ""
        for line in text.splitlines():  # tables between the blocks
            if line.startswith("|") and not header:
                header = line
            elif not line.startswith("|"):
                header = ""
            elif "| example |" in header and not line.startswith("|---"):
                commands += re.findall(r"`(tablebase [^`]*)`", line)
        if body is not None and lang in ("sh", ""):
            for line in body.splitlines():
                if lang == "sh" or line.startswith("$ "):
                    commands.append(re.sub(r"\s+#.*$", "", line.removeprefix("$ ")).strip())
    return [command for command in commands if command]


#: The README's commands, then the pages' not shown before, in the site's order.
COMMANDS = list(dict.fromkeys(command for text in TEXTS.values() for command in readme_commands(text)))
#: What a command reads on its standard input.
STDIN = {"play": "quit\n", "sql": "SELECT count(*) FROM catalog\n"}


def shell_words(command: str) -> list[str]:
    """The words bash would pass, quotes removed; an AssertionError where bash would see
    a pipe, a redirection or another operator (an unquoted `1-1|1-1`, say)."""
    import shlex

    lexer = shlex.shlex(command, posix=True, punctuation_chars=True)
    lexer.whitespace_split = True
    words = list(lexer)
    operators = [word for word in words if set(word) <= set("();<>|&")]
    assert not operators, f"{command!r}: the shell reads {operators[0]!r} as an operator: quote it"
    return words


def test_the_readme_has_commands_and_skips_only_what_it_holds():
    assert len(COMMANDS) >= 25
    assert set(SKIPPED) <= set(COMMANDS), set(SKIPPED) - set(COMMANDS)


def test_every_readme_command_runs_as_printed(tmp_path, monkeypatch, capsys):
    """In the README's order, then the pages', from a folder set up like the repository root
    (rulesets.toml, an empty data/ that the README's first build fills), each `tablebase` command through
    the same entry point as the installed script, in this process (a new Python per
    command would take most of a minute)."""
    import logging
    import signal
    import sys

    from pipeline import cli
    from pipeline.storage import progress

    (tmp_path / "rulesets.toml").symlink_to(ROOT / "rulesets.toml")
    monkeypatch.chdir(tmp_path)
    root = logging.getLogger()
    saved = root.handlers[:], root.level, progress.log.level, signal.getsignal(signal.SIGTERM)
    ran = []
    try:
        for command in COMMANDS:
            if command in SKIPPED:
                continue
            words = shell_words(command)
            assert words[0] == "tablebase", f"{command!r}: not a tablebase command: run it here or add it to SKIPPED"
            monkeypatch.setattr(sys, "argv", words)
            monkeypatch.setattr(sys, "stdin", io.StringIO(STDIN.get(words[1], "")))
            with pytest.raises(SystemExit) as leaving:
                cli.main()
            _out, err = capsys.readouterr()
            assert leaving.value.code in (0, None), f"{command!r} exited {leaving.value.code}: {err}"
            ran.append(command)
    finally:
        root.handlers[:], _ = saved[0], root.setLevel(saved[1])
        progress.log.setLevel(saved[2])
        signal.signal(signal.SIGTERM, saved[3])
    assert len(ran) == len(COMMANDS) - len(SKIPPED)


def test_help_examples_are_quoted_for_the_shell():
    """Every command's `Example:` lines and every position shown in an option's help can
    be copied into bash: `1-1|1-1` unquoted would run `1-1` as a command."""
    import typer.main

    from pipeline.commands import app

    group = typer.main.get_command(app)
    examples = 0
    for name, command in group.commands.items():
        lines = (command.help or "").splitlines()
        for line in lines[next((i for i, text in enumerate(lines) if "Example" in text), len(lines)) :]:
            text = line.split(":", 1)[1] if "Example" in line else line
            if text.strip().startswith("tablebase "):
                shell_words(text.strip())
                examples += 1
        for param in command.params:
            for position in re.findall(r"(\S*\w\|\w\S*)", getattr(param, "help", None) or ""):
                assert position[0] in "'\"", f"{name} {param.name}: quote {position} in its help"
    assert examples >= len(group.commands)
