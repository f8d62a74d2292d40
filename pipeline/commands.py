"""The `tablebase` commands: a thin layer over the stages and the probe.

Errors are not handled here: pipeline/cli.py turns each into one line. `sql` and `query`
live in pipeline/sql_commands.py and the command group in pipeline/command_group.py; this
module registers every command on `app`, the whole command line.
"""

from __future__ import annotations

import dataclasses
import sys
from collections.abc import Callable
from enum import Enum
from pathlib import Path
from typing import Annotated, Any, TypeVar

import typer

from pipeline import __version__, sql_commands
from pipeline.command_group import DataOption, given_options, new_app
from pipeline.core.errors import RulesetError, UsageError
from pipeline.core.values import in_plies, in_words
from pipeline.games import all_games
from pipeline.games.rulesets import PACKAGED_RULESETS, Ruleset, default_ruleset_file, load_ruleset_file, not_installed
from pipeline.sql_commands import QueriesOption
from pipeline.storage.output import ItemFormat, ListFormat, render_item, render_rows
from pipeline.storage.progress import log
from pipeline.tablebases import Tablebases

T = TypeVar("T")

#: The whole command line: every command.
app = new_app()
sql_commands.register(app)


RulesetsArg = Annotated[list[str], typer.Argument(help="Ruleset ids, e.g. chopsticks:split=any.", show_default=False)]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="Show no progress.")]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Show a line as each stage begins and every rank or level it solves.")
]


class EngineName(str, Enum):
    """The engines --engine names (pipeline.engines.ENGINES): a choice, so that a name
    misspelt there is a malformed command line (exit 2)."""

    duckdb = "duckdb"
    spark = "spark"


EngineOption = Annotated[
    EngineName | None,
    typer.Option(
        "--engine",
        help="Where the SQL runs: duckdb (one machine) or spark (local or a cluster: see "
        "docs/how-to/spark.md). Default: $TABLEBASE_ENGINE, else duckdb.",
        show_default=False,
        case_sensitive=False,
    ),
]


def _tables(data: Path, engine: EngineName | None = None) -> Tablebases:
    """The library's face over the data folder --data names, with the engine --engine names
    (else $TABLEBASE_ENGINE's, else DuckDB)."""
    return Tablebases(data, None if engine is None else engine.value)


ListFormatOption = Annotated[
    ListFormat,
    typer.Option(
        "--format",
        "-f",
        help="text (for people), csv, json (one array of objects, one per line of the text) "
        "or jsonl (JSON Lines: one object per line).",
    ),
]
ItemFormatOption = Annotated[
    ItemFormat, typer.Option("--format", "-f", help="text (for people) or json (one object, on one line).")
]


def _show(rows: list[dict[str, Any]], form: ListFormat, text: Callable[[], None]) -> None:
    """A listing: `text` prints it for people, else the rows in `form` on stdout."""
    if form is ListFormat.text:
        text()
    else:
        typer.echo(render_rows(rows, form), nl=False)


def _setup(quiet: bool, verbose: bool = False) -> None:
    from pipeline.storage.progress import configure

    configure(quiet or "quiet" in given_options, verbose or "verbose" in given_options)


RulesetFileOption = Annotated[
    Path | None,
    typer.Option(
        "--rulesets",
        help="The ruleset file (default: rulesets.toml of the current folder where there is one, "
        "else the one installed with tablebase).",
        show_default=False,
    ),
]


def _listed(named: Path | None) -> tuple[list[tuple[Ruleset, str]], str | None]:
    """The rulesets of the ruleset file named, else of the default one; and, where that is
    the packaged file, a line saying so (a user outside the repository reads rulesets they
    did not write) and which of its rulesets are left out, their game not being installed."""
    path = named if named is not None else default_ruleset_file()
    if path != PACKAGED_RULESETS or named is not None:
        return load_ruleset_file(path), None
    missing = not_installed(path)
    left_out = f"; left out, their game not installed here: {', '.join(missing)}" if missing else ""
    return load_ruleset_file(path, installed_only=True), (
        f"reading the ruleset file installed with tablebase, {path} (no rulesets.toml in this folder; "
        f"--rulesets FILE names another){left_out}"
    )


def _names_none(named: Path | None, what: str) -> str:
    """The line for a ruleset file that names no ruleset (its tables were all comments)."""
    path = named if named is not None else default_ruleset_file()
    return f'{what} the rulesets of {path}, and it names none: add a [[ruleset]] table with id = "game:key=value,…"'


@app.command("enumerate")
def enumerate_command(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
) -> None:
    """Write each ruleset's positions and transitions to Parquet.

    Every position reachable from the start, and every move between them.

    Example: tablebase enumerate chopsticks chopsticks:split=any
    """
    _setup(quiet, verbose)
    _tables(data, engine).enumerate(*rulesets)


@app.command()
def solve(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
) -> None:
    """Label every enumerated position with its value and remoteness.

    The value is win, loss, tie or draw, for the player to move.

    Example: tablebase solve chopsticks
    """
    _setup(quiet, verbose)
    _tables(data, engine).solve(*rulesets)


@app.command()
def verify(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
    form: ListFormatOption = ListFormat.text,
) -> None:
    """Check every solved value against its children and the rules.

    Where the catalog publishes that solution, also check the ruleset's published files as
    `tablebase check` does. Exit 1 on any failure.

    Example: tablebase verify chopsticks
    """
    _setup(quiet, verbose)
    problems: list[str] = []
    said = []
    rows = _tables(data, engine).verify(*rulesets)  # a value that does not check ends it, in one line
    for row in rows:
        ruleset = row["ruleset"]
        if not row["published_files_checked"]:
            said.append(
                f"{ruleset}: every value checks (solution.parquet against its moves and the rules); "
                f"the catalog does not publish this solution, so no published file was checked "
                f"(`tablebase export {ruleset}` publishes it)"
            )
        else:
            problems += row["problems"]
            said.append(
                f"{ruleset}: every value checks, and its published files (tablebase, moves, summary) "
                f"and the catalog and database match the catalog's checksums and SHA256SUMS"
            )
    _report(problems, "\n".join(said), None if form is ListFormat.text else render_rows(rows, form))


@app.command()
def export(
    rulesets: Annotated[
        list[str] | None,
        typer.Argument(help="Ruleset ids (none: only the catalog, the database and SHA256SUMS).", show_default=False),
    ] = None,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
) -> None:
    """Publish verified rulesets; rewrite the catalog and database.

    Write the tablebase of each verified ruleset, then the catalog, the database of views
    and SHA256SUMS again. With no ruleset, rewrite only those three, from what is published.

    Examples: tablebase export chopsticks
              tablebase export
    """
    _setup(quiet, verbose)
    _tables(data, engine).export(*(rulesets or []))


@app.command()
def build(
    rulesets: Annotated[list[str] | None, typer.Argument(help="Ruleset ids.", show_default=False)] = None,
    all_: Annotated[bool, typer.Option("--all", help="Build every ruleset of the ruleset file.")] = False,
    ruleset_file: RulesetFileOption = None,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
    size_check: Annotated[
        bool,
        typer.Option(
            "--size-check/--no-size-check",
            help="Refuse, before any work, a ruleset whose estimate does not fit this machine "
            "(see `tablebase estimate`); --no-size-check tries anyway.",
        ),
    ] = True,
    part_rows: Annotated[
        int | None,
        typer.Option(
            "--part-rows",
            min=1,
            metavar="<rows>",
            help="Write the positions, transitions, solution, tablebase, index and lookup of each "
            "ruleset as a folder of parts (tablebase/part-00000.parquet, ...) of about this many "
            "rows, in whole row groups (1,048,576 rows; the index's 16,384, the lookup's 8,192), "
            "where a host limits a file's size; every reader takes either form. Default: one file each.",
            show_default=False,
        ),
    ] = None,
) -> None:
    """Enumerate, solve, verify and export; publish what verifies.

    A ruleset is published whole or not at all: one that fails to verify leaves what was
    built before as it was.

    Examples: tablebase build chopsticks:overflow=rollover
              tablebase build --all
    """
    _setup(quiet, verbose)
    tables = _tables(data, engine)
    ids = list(rulesets or [])
    if all_:
        listed, note = _listed(ruleset_file)
        if note is not None:
            log.info("%s", note)
        if not listed:  # "use --all" would be no help to one who did
            raise RulesetError(_names_none(ruleset_file, "--all builds"))
        ids += [rules.id for rules, _ in listed]
    if not ids:
        raise UsageError("nothing to build: name rulesets or use --all (see `tablebase build --help`)")
    tables.build(*ids, size_check=size_check, part_rows=part_rows)


@app.command()
def estimate(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
    form: ListFormatOption = ListFormat.text,
) -> None:
    """Say what building a ruleset needs, without building it.

    Count each ruleset's positions and transitions and the memory and disk a build takes.
    Exit 1 if one would not fit this machine's memory or the disk under --data.

    Example: tablebase estimate sticks:rows=12 chopsticks:fingers=40,hands=3
    """
    tables = _tables(data)
    lines, rows = [], []
    for rules in [Ruleset.parse(text) for text in rulesets]:
        found = tables.estimate(rules)
        row: dict[str, Any] = {"ruleset": rules.id, "counted": found is not None}
        rows.append(row)
        if found is None:
            lines.append(f"{rules.id}: its game cannot count itself before building")
            continue
        lines.append(found.describe())
        size = found.size
        row.update(
            positions=size.positions,
            positions_exact=size.exact,
            likely_positions=size.likely_positions,
            transitions_at_most=size.transitions,
            likely_transitions=size.likely_transitions,
            memory_bytes=found.memory,
            disk_bytes=found.disk,
            fits=True,
            does_not_fit=None,
        )
        try:
            tables.require_fit(rules)
        except RulesetError as error:
            lines.append(f"  does not fit: {error}")
            row.update(fits=False, does_not_fit=str(error))
    _show(rows, form, lambda: typer.echo("\n".join(lines)))
    if any(row.get("fits") is False for row in rows):
        sys.exit(1)


# a position such as `-1` is a position to look up, not an unknown option
@app.command(context_settings={"ignore_unknown_options": True})
def probe(
    ruleset: Annotated[str, typer.Argument(help="Ruleset id.", show_default=False)],
    position: Annotated[
        str,
        typer.Argument(help="Position text, quoted where it holds a | (e.g. '1-1|1-1'), or start.", show_default=False),
    ],
    data: DataOption = Path("data"),
    form: Annotated[
        ItemFormat,
        typer.Option(
            "--format",
            "-f",
            help="text (for people) or json: one object on one line, the Probe of the Python API "
            "(value and remoteness for the player to move; each move's for the player to move after it).",
        ),
    ] = ItemFormat.text,
) -> None:
    """Show a position's value and every move, best first.

    The value is the player to move's, and said in words after it. `start` names the
    ruleset's start position.

    Examples: tablebase probe chopsticks start
              tablebase probe chopsticks '0-1|1-1'
    """
    from pipeline.games import legal_starts

    result = _tables(data).probe(ruleset, position)
    if result.note:
        typer.echo(f"note: {result.note}", err=True)
    if form is ItemFormat.json:
        typer.echo(render_item(dataclasses.asdict(result)), nl=False)
        return
    rules = Ruleset.parse(ruleset)
    if result.position in legal_starts(rules):
        words = in_words(result.value, result.remoteness)
    else:
        words = in_words(result.value, result.remoteness, "the player to move", "the other player")
    short = in_plies(result.value, result.remoteness)
    # a tie or a draw says the same for both players: once
    typer.echo(f"{result.ruleset}  {result.position}  {words if words.startswith(short) else f'{short}: {words}'}")
    width = max((len(m.move) for m in result.moves), default=0)
    for move in result.moves:
        remoteness = None if move.remoteness is None else move.remoteness + 1
        typer.echo(
            f"  {move.move:<{width}}  -> {move.position:<12} "
            f"{in_words(move.outcome, remoteness, 'the mover', 'the opponent')}"
        )


def _report(problems: list[str], all_well: str, result: str | None = None) -> None:
    """Each problem on a line of stderr and exit 1; else `all_well`. Where the result was
    asked for as JSON, `result` (which holds the problems) instead, and exit 1 if any."""
    if result is not None:
        typer.echo(result, nl=False)
    for line in problems if result is None else []:
        typer.echo(line, err=True)
    if problems:
        sys.exit(1)
    if result is None:
        typer.echo(all_well)


@app.command()
def claims(
    data: DataOption = Path("data"),
    queries: QueriesOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Report file (default DATA/claims.md), written as --output of sql is.")
    ] = None,
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Check the seeds' claims and write a Markdown report.

    The claims are the queries of the library named claim_*.sql and seed*.sql.

    Example: tablebase claims --out data/claims.md
    """
    _setup(quiet, verbose)
    typer.echo(f"wrote {_tables(data).claims(out, queries)}")


@app.command()
def check(
    folder: Annotated[
        Path | None, typer.Argument(help="A data folder or an unpacked bundle (default: --data).", show_default=False)
    ] = None,
    data: DataOption = Path("data"),
    form: ItemFormatOption = ItemFormat.text,
) -> None:
    """Check a data folder or a bundle: checksums, schemas, counts.

    Every file against SHA256SUMS and the catalog's checksums, every schema, and every
    tablebase against its catalog row. Exit 1 on any problem, one line a problem.

    Example: tablebase check dist/tablebase-0.19.0
    """
    target = folder or data
    problems = _tables(target).check()
    result = render_item({"folder": str(target), "problems": problems})
    _report(problems, f"{target}: every file checks", result if form is ItemFormat.json else None)


@app.command()
def publish(
    out: Annotated[Path, typer.Option("--out", help="Folder for the bundle.")] = Path("dist"),
    url: Annotated[
        str | None,
        typer.Option(
            "--url",
            help="Where the bundle is published, the address its metadata gives (default: the project's Homepage).",
            show_default=False,
        ),
    ] = None,
    explorer: Annotated[
        bool,
        typer.Option(
            "--explorer",
            help="Put the explorer in the dataset folder: its index.html reads the Parquet in the browser "
            "(DuckDB-WASM, from `make duckdb-wasm`), so any static host serves it.",
        ),
    ] = False,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Write the download bundle: dataset folder, zips, SHA256SUMS.

    The dataset folder, a zip archive of all of it and one per game, and their checksums.

    Example: tablebase publish --out dist --explorer
    """
    _setup(quiet, verbose)
    for path in _tables(data).publish(out, url, explorer):
        typer.echo(f"wrote {path}")


@app.command("check-game")
def check_game(
    name: Annotated[str, typer.Argument(help="A game's name.", show_default=False)],
    ruleset: Annotated[
        str | None, typer.Argument(help="A small ruleset of it (default: its defaults).", show_default=False)
    ] = None,
    form: ItemFormatOption = ItemFormat.text,
) -> None:
    """Check a game against the contract the pipeline relies on.

    Exit 1 on any problem, one line a problem.

    Example: tablebase check-game octal octal:code=0.07,start=9
    """
    from pipeline.products.gamecheck import check_game as run_checks

    problems = run_checks(name, ruleset)
    result = render_item({"game": name, "ruleset": ruleset, "problems": problems})
    _report(problems, f"{name}: keeps the game contract", result if form is ItemFormat.json else None)


@app.command()
def games(form: ListFormatOption = ListFormat.text) -> None:
    """List every game and its rule parameters.

    Each parameter with its values and default (each game's rules:
    docs/reference/games.md). Exit 1, naming it, if a plug-in is broken.

    Example: tablebase games
    """
    from pipeline.games import broken_plugins

    def text() -> None:
        for game in all_games().values():
            typer.echo(f"{game.name}: {game.summary}")
            settings = [f"{param.name}={param.default}" for param in game.params]
            width = max(map(len, settings), default=0)
            kinds = max((len(param.values_help()) for param in game.params), default=0)
            for setting, param in zip(settings, game.params):
                typer.echo(f"  {setting:<{width}}  {param.values_help():<{kinds}}  {param.help}")

    rows = [
        {
            "game": game.name,
            "summary": game.summary,
            "parameters": [
                {"name": param.name, "default": param.default, "values": param.values_help(), "help": param.help}
                for param in game.params
            ],
        }
        for game in all_games().values()
    ]
    _show(rows, form, text)
    broken = broken_plugins()
    if broken:  # the games above work; the installation still has something to mend
        raise RulesetError("; ".join(broken))


@app.command()
def rulesets(ruleset_file: RulesetFileOption = None, form: ListFormatOption = ListFormat.text) -> None:
    """List the named rulesets of the ruleset file.

    Example: tablebase rulesets
    """
    listed, note = _listed(ruleset_file)
    if note is not None:
        typer.echo(note, err=True)
    if not listed and form is ListFormat.text:  # not silence, which looks like a file read wrongly
        typer.echo(f"note: {_names_none(ruleset_file, 'tablebase rulesets lists')}", err=True)
    rows = [{"ruleset": rules.id, "comment": comment} for rules, comment in listed]
    _show(rows, form, lambda: typer.echo("".join(f"{rules.id:<45} {comment}\n" for rules, comment in listed), nl=False))


@app.command()
def version() -> None:
    """Print the version number.

    The number alone, for scripts; `tablebase --version` prints `tablebase <version>`.

    Example: tablebase version
    """
    typer.echo(__version__)


class Side(str, Enum):
    """Who the user plays in `tablebase play` (pipeline.products.play.SIDES)."""

    first = "first"
    second = "second"


@app.command()
def play(
    ruleset: Annotated[str, typer.Argument(help="Ruleset id.", show_default=False)],
    side: Annotated[
        Side, typer.Option("--as", help="Play first or second (from --from: move there or not).")
    ] = Side.first,
    start: Annotated[
        str, typer.Option("--from", help="The position to play from: start, or a position text such as '1-2|0-1'.")
    ] = "start",
    hide_values: Annotated[
        bool, typer.Option("--hide-values", help="Show no value until the game ends; 'hint' still shows the best move.")
    ] = False,
    max_plies: Annotated[
        int, typer.Option("--max-plies", help="Stop a game (a draw, say) after this many plies.")
    ] = 200,
    data: DataOption = Path("data"),
) -> None:
    """Play a ruleset against the perfect opponent.

    Type a move's number, name or resulting position; hint shows the best move; quit stops.

    Examples: tablebase play chopsticks --as second
              tablebase play chopsticks --from '1-2|0-1' --hide-values
    """
    from pipeline.products.play import parse_side
    from pipeline.products.play import play as play_game

    play_game(
        ruleset, data, human_first=parse_side(side.value), start=start, show_values=not hide_values, max_plies=max_plies
    )


@app.command()
def draw(
    rulesets: Annotated[list[str] | None, typer.Argument(help="Ruleset ids.", show_default=False)] = None,
    all_: Annotated[
        bool, typer.Option("--all", help="Every built ruleset small enough (large ones get a page alone, or nothing).")
    ] = False,
    page_only: Annotated[bool, typer.Option("--page-only", help="Write the HTML page without the graphs.")] = False,
    out: Annotated[Path | None, typer.Option("--out", help="Folder of the pages (default DATA/pages).")] = None,
    ruleset_file: Annotated[
        Path | None,
        typer.Option(
            "--rulesets",
            help="The ruleset file whose comments the index shows (default: rulesets.toml where there is one, else the packaged one).",
            show_default=False,
        ),
    ] = None,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Draw each ruleset's page, state graph and winning strategy.

    The page walks the game from the start; the graphs are DOT files, and SVG too if
    Graphviz is installed. The index of every page is drawn again.

    Example: tablebase draw chopsticks chopsticks:split=any
    """
    _setup(quiet, verbose)
    written = _tables(data).draw(
        *(rulesets or []), out=out, graphs=not page_only, every=all_, ruleset_file=ruleset_file
    )
    typer.echo(f"wrote {written[-1]}")


@app.command()
def serve(
    data: DataOption = Path("data"),
    host: Annotated[
        str, typer.Option("--host", help="The address to listen on (0.0.0.0: every interface).")
    ] = "127.0.0.1",
    port: Annotated[int, typer.Option("--port", help="The port to listen on (0: a free one, printed).")] = 8000,
    timeout: Annotated[
        float, typer.Option("--timeout", help="Seconds a lookup may take before it is answered 503.")
    ] = 10.0,
    processes: Annotated[
        int,
        typer.Option(
            "--processes",
            help="Processes answering on the port, forked once every built ruleset's footers are read (they share them).",
        ),
    ] = 1,
) -> None:
    """Serve the tablebases over HTTP: a JSON API and an explorer page.

    GET /api/rulesets lists the built rulesets; /api/rulesets/RULESET?position=TEXT gives a
    position's value, remoteness and every move best first; /api/rulesets/RULESET/mainline
    the best line to the end; /api/openapi.json describes it. / is a page that walks any
    built ruleset through it, in a browser. Needs the serve extra:
    pip install 'tablebase[serve]'.

    Example: tablebase serve --port 8000
    """
    from pipeline.server import require_libraries
    from pipeline.server import serve as run_server

    require_libraries()
    if not 0 <= port <= 65535:
        raise UsageError(f"--port {port} is not a port: give 0 to 65535 (0: a free one)")
    if not timeout > 0:
        raise UsageError(f"--timeout {timeout:g} must be more than 0 seconds")
    if not 1 <= processes <= 64:
        raise UsageError(f"--processes {processes} is not 1 to 64")
    run_server(data, host, port, timeout=timeout, ready=lambda line: typer.echo(line, err=True), processes=processes)
