"""The `tablebase` commands: a thin layer over the stages and the probe.

Errors are not handled here: pipeline/cli.py turns each into one line.
"""

from __future__ import annotations

import copy
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, TypeVar

import typer
from typer.core import TyperGroup

from pipeline import __version__
from pipeline.core.errors import DataError, OutputError, RulesetError, UnfinishedError
from pipeline.core.values import in_plies, in_words
from pipeline.datadir.layout import DataDir
from pipeline.engines import engine_kind
from pipeline.games import all_games
from pipeline.games.rulesets import PACKAGED_RULESETS, Ruleset, default_ruleset_file, load_ruleset_file, not_installed
from pipeline.storage.output import Format
from pipeline.storage.progress import log

if TYPE_CHECKING:
    from pipeline.engines import EngineKind
    from pipeline.stages.run import Run

T = TypeVar("T")


#: The global options given in this invocation (quiet, verbose, debug), before the
#: command's name or after it.
_given: set[str] = set()

#: The options every command takes wherever they stand, as git's do.
GLOBAL_OPTIONS = ("quiet", "verbose", "debug")


def _remember(param: typer.CallbackParam, value: bool) -> None:
    if value:
        _given.add(param.name)
        if param.name == "debug":
            os.environ["TABLEBASE_DEBUG"] = "1"


class _Commands(TyperGroup):
    """The command group: each command also takes the global options after its name
    (`tablebase build x -q` as `tablebase -q build x`), parsed with the command's own
    options, so that an option's value or what follows `--` is never taken for one."""

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        _given.clear()  # a new invocation (tests run several in one process)
        return super().make_context(*args, **kwargs)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            return None
        taken = {opt for param in command.params for opt in param.opts}
        for option in self.params:
            if option.name in GLOBAL_OPTIONS and not taken.intersection(option.opts):
                shared = copy.copy(option)
                shared.expose_value = False  # read from _given: the command's function does not take it
                command.params.append(shared)
        return command


app = typer.Typer(
    name="tablebase",
    cls=_Commands,
    help="Solve small two-player games completely and publish the tablebases as Parquet.\n\n"
    "--quiet, --verbose and --debug go before the command's name or after it.",
    add_completion=False,
    no_args_is_help=True,
    pretty_exceptions_enable=False,
)

DataOption = Annotated[Path, typer.Option("--data", help="Data directory to read and write.")]
RulesetsArg = Annotated[list[str], typer.Argument(help="Ruleset ids, e.g. chopsticks:split=any.", show_default=False)]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="Show no progress.")]
VerboseOption = Annotated[
    bool, typer.Option("--verbose", "-v", help="Show a line as each stage begins and every rank or level it solves.")
]
EngineOption = Annotated[
    str | None,
    typer.Option(
        "--engine",
        help="Where the SQL runs: duckdb (one machine) or spark (local or a cluster: see the README's "
        '"Running on Spark"). Default: $TABLEBASE_ENGINE, else duckdb.',
        show_default=False,
    ),
]


def _setup(quiet: bool, verbose: bool = False) -> None:
    from pipeline.storage.progress import configure

    configure(quiet or "quiet" in _given, verbose or "verbose" in _given)


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


def _each(rulesets: list[str], action: Callable[[Ruleset], object]) -> None:
    parsed = [Ruleset.parse(text) for text in rulesets]  # every id checked before any work
    for rules in parsed:
        action(rules)


def _staged(stage: Callable[[Run], T], store: DataDir, rules: Ruleset, kind: EngineKind) -> T:
    """One stage of `rules` in the data folder, on a session of its own."""
    from pipeline.stages.run import open_run

    with open_run(store.ruleset(rules), store.temp, rules, kind) as run:
        return stage(run)


@app.command("enumerate")
def enumerate_command(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
) -> None:
    """Write every position and transition of each ruleset to Parquet.

    Example: tablebase enumerate chopsticks chopsticks:split=any
    """
    from pipeline.stages.enumerate import enumerate_ruleset

    _setup(quiet, verbose)
    kind = engine_kind(engine, available=True)
    store = DataDir(data)
    _each(rulesets, lambda rules: _staged(enumerate_ruleset, store, rules, kind))


@app.command()
def solve(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
) -> None:
    """Label every enumerated position win / loss / tie / draw with its remoteness.

    Example: tablebase solve chopsticks
    """
    from pipeline.stages.solve import solve as solve_stage

    _setup(quiet, verbose)
    kind = engine_kind(engine, available=True)
    store = DataDir(data)
    _each(rulesets, lambda rules: _staged(solve_stage, store, rules, kind))


@app.command()
def verify(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
    engine: EngineOption = None,
) -> None:
    """Check every solved value against its children and the rules, and, where the catalog
    publishes that solution, the ruleset's published files as `tablebase check` does; exit 1
    on any failure.

    Example: tablebase verify chopsticks
    """
    from pipeline.datadir.check import check_published
    from pipeline.stages.verify import verify as verify_stage

    _setup(quiet, verbose)
    kind = engine_kind(engine, available=True)
    store = DataDir(data)
    problems, said = [], []
    for rules in [Ruleset.parse(text) for text in rulesets]:
        result = _staged(verify_stage, store, rules, kind)
        found = check_published(store, rules, result["solution_sha256"][0].as_py())
        if found is None:
            said.append(
                f"{rules.id}: every value checks (solution.parquet against its moves and the rules); "
                f"the catalog does not publish this solution, so no published file was checked "
                f"(`tablebase export {rules.id}` publishes it)"
            )
        else:
            problems += found
            said.append(
                f"{rules.id}: every value checks, and its published files (tablebase, moves, summary) "
                f"and the catalog and database match the catalog's checksums and SHA256SUMS"
            )
    _report(problems, "\n".join(said))


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
    """Write the tablebase of each verified ruleset, then the catalog, the database of views
    and SHA256SUMS again (alone: only those three, from the rulesets' summaries).

    With no ruleset, rewrite only the catalog and tablebases.duckdb, from what is published.

    Examples: tablebase export chopsticks
              tablebase export
    """
    from pipeline.stages.export import export as export_stage
    from pipeline.stages.export import write_catalog

    _setup(quiet, verbose)
    kind = engine_kind(engine, available=True)
    store = DataDir(data)
    parsed = [Ruleset.parse(text) for text in rulesets or []]  # every id checked before any work
    if not parsed and not data.is_dir():
        raise DataError(f"{data} is not a data folder: build a ruleset into it first")
    for rules in parsed:
        _staged(export_stage, store, rules, kind)
    recovered = store.sweep()  # a folder a killed build left aside is put back before the catalog is written
    write_catalog(store, exported=tuple(rules.folder for rules in parsed) + tuple(recovered))


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
) -> None:
    """Enumerate, solve, verify and export each ruleset; publish only what verifies.

    Examples: tablebase build chopsticks:overflow=rollover
              tablebase build --all
    """
    from pipeline.stages.build import build as build_stage
    from pipeline.stages.build import rewrite_database

    _setup(quiet, verbose)
    kind = engine_kind(engine, available=True)
    ids = list(rulesets or [])
    if all_:
        listed, note = _listed(ruleset_file)
        if note is not None:
            log.info("%s", note)
        ids += [rules.id for rules, _ in listed]
    if not ids:
        raise RulesetError("nothing to build: name rulesets or use --all")
    store = DataDir(data)
    parsed = [Ruleset.parse(text) for text in ids]
    built = 0
    try:
        for rules in parsed:
            # the database of views is rewritten once, after the last (or a failed) build
            summary = build_stage(rules, store, size_check, kind, database=len(parsed) == 1)
            built += 1
            log.info(
                "built %s: %s positions, start %s: %s",
                rules.id,
                f"{summary.positions:,}",
                summary.start,
                in_words(summary.start_value, summary.start_remoteness),
            )
    except BaseException:
        if built and len(parsed) > 1:
            try:
                rewrite_database(store)
            except UnfinishedError as error:  # the build's own error is the one line
                log.warning("%s", error)
        raise
    if built and len(parsed) > 1:
        rewrite_database(store)


@app.command()
def estimate(
    rulesets: RulesetsArg,
    data: DataOption = Path("data"),
) -> None:
    """Count each ruleset's positions and transitions without building it, and say what a build needs.

    Exits 1 if one would not fit this machine's memory or the disk under --data.

    Example: tablebase estimate sticks:rows=12 chopsticks:fingers=40,hands=3
    """
    from pipeline.stages.estimate import estimate as estimate_of
    from pipeline.stages.estimate import require_fit

    refused = 0
    for rules in [Ruleset.parse(text) for text in rulesets]:
        found = estimate_of(rules)
        if found is None:
            typer.echo(f"{rules.id}: its game cannot count itself before building")
            continue
        typer.echo(found.describe())
        try:
            require_fit(rules, data)
        except RulesetError as error:
            typer.echo(f"  does not fit: {error}")
            refused += 1
    if refused:
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
) -> None:
    """Show a position's value and remoteness and every move, best first.

    The value is the player to move's, and said in words after it. `start` names the
    ruleset's start position.

    Examples: tablebase probe chopsticks start
              tablebase probe chopsticks '0-1|1-1'
    """
    from pipeline.games import legal_starts
    from pipeline.products.probe import probe as probe_position

    result = probe_position(ruleset, position, data)
    if result.note:
        typer.echo(f"note: {result.note}", err=True)
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


def _report(problems: list[str], all_well: str) -> None:
    """Each problem on a line of stderr and exit 1; else `all_well`."""
    for line in problems:
        typer.echo(line, err=True)
    if problems:
        sys.exit(1)
    typer.echo(all_well)


def _folder(out: Path | None) -> None:
    """An --out folder must be one, or be made: a file, device or FIFO there is not replaced."""
    if out is not None and out.exists() and not out.is_dir():
        raise OutputError(f"--out {out} is not a folder: name a folder (it is made if missing)")


def _parse_params(pairs: list[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise RulesetError(f"bad --param {pair!r}: expected name=value")
        params[key] = value
    return params


def _emit(table, form: Format, output: Path | None, data: Path) -> None:
    """Write a query's result in `form` to `output` (never inside `data`), or to stdout."""
    from pipeline.storage.output import render, write_output
    from pipeline.storage.parquet import table_bytes

    # through symlinks, so that no link leads into the data folder (realpath, unlike
    # resolve, leaves a symlink loop for write_output to name in one line)
    target = None if output is None else Path(os.path.realpath(output))
    if target is not None and data.resolve() in [target, *target.parents]:
        raise RulesetError(f"--output {output} is inside the data folder {data}: write the result elsewhere")
    if form is Format.parquet:
        if output is None:
            raise RulesetError("--format parquet needs --output FILE")
        write_output(table_bytes(table), output)
        typer.echo(f"wrote {table.num_rows} rows to {output}", err=True)
        return
    text = render(table, form)
    if output is None:
        typer.echo(text, nl=False)
    else:
        write_output(text.encode(), output)


AllowWritesOption = Annotated[
    bool,
    typer.Option(
        "--allow-writes",
        help="Run any statement with DuckDB's full power (COPY, ATTACH, INSTALL, SET, files "
        "and the network, read and written); without it only reading statements run.",
    ),
]
ReadFilesOption = Annotated[
    bool,
    typer.Option(
        "--read-files",
        help="A SELECT may also read files anywhere you can (read_parquet, read_csv, read_json, "
        "'file.parquet' in FROM, globs), and nothing more: no writing, attaching, extensions, settings or "
        "network. Without it a statement reads the data folder's views only.",
    ),
]
ParamOption = Annotated[
    list[str] | None,
    typer.Option("--param", "-p", help="A query parameter as name=value (repeatable)."),
]
FormatOption = Annotated[
    Format,
    typer.Option(
        "--format",
        "-f",
        help="table (aligned columns), csv, json (one array of objects), "
        "jsonl (JSON Lines: one object per line) or parquet (needs --output). "
        "JSON writes NaN and infinities as null, BLOBs, INTERVALs, DECIMALs "
        "and times as text.",
    ),
]
OutputOption = Annotated[
    Path | None,
    typer.Option(
        "--output",
        "-o",
        help="Write the result to this file, as > would: a file is replaced whole (through a "
        "symlink, the file it points to); a device, FIFO or terminal is written to, not replaced.",
    ),
]
QueriesOption = Annotated[
    Path | None,
    typer.Option(
        "--queries",
        exists=True,
        file_okay=False,
        show_default=False,
        help="A folder of your own query files (*.sql), added to the packaged library; "
        "a file of yours named like a packaged query is used instead of it.",
    ),
]


@app.command()
def query(
    name: Annotated[
        str | None,
        typer.Argument(help="A query of the library (or of --queries) by name, or an .sql file.", show_default=False),
    ] = None,
    param: ParamOption = None,
    form: FormatOption = Format.table,
    output: OutputOption = None,
    list_: Annotated[
        bool, typer.Option("--list", help="List every query with its description and parameters.")
    ] = False,
    data: DataOption = Path("data"),
    queries: QueriesOption = None,
    read_files: ReadFilesOption = False,
    allow_writes: AllowWritesOption = False,
) -> None:
    """Run a query file over every built tablebase (views: catalog, tablebase, transitions).

    Example: tablebase query compare_rulesets -p ruleset_a=chopsticks -p ruleset_b=chopsticks:split=any
    """
    from pipeline.products.query import find_query, list_queries, run_sql

    if list_:
        for item in list_queries(queries):
            params = " ".join(f"--param {p}=…" for p in item.parameters)
            typer.echo(f"{item.name}  {params}".rstrip())
            typer.echo(f"    {item.description}")
        return
    if name is None:
        raise RulesetError("name a query (see tablebase query --list)")
    path = find_query(name, queries)
    _emit(run_sql(data, path.read_text(), _parse_params(param or []), allow_writes, read_files), form, output, data)


@app.command()
def sql(
    statement: Annotated[str, typer.Argument(help="One SQL statement.", show_default=False)],
    param: ParamOption = None,
    form: FormatOption = Format.table,
    output: OutputOption = None,
    data: DataOption = Path("data"),
    read_files: ReadFilesOption = False,
    allow_writes: AllowWritesOption = False,
) -> None:
    """Run one SQL statement over every built tablebase (views: catalog, tablebase, transitions).

    Only reading statements run, on the data folder's views alone; --read-files lets a SELECT
    read other files too, --allow-writes lets any statement do anything.

    Example: tablebase sql "SELECT ruleset, start_value FROM catalog"
    """
    from pipeline.products.query import run_sql

    _emit(run_sql(data, statement, _parse_params(param or []), allow_writes, read_files), form, output, data)


@app.command()
def claims(
    data: DataOption = Path("data"),
    queries: QueriesOption = None,
    out: Annotated[
        Path | None, typer.Option("--out", help="Report file (default DATA/claims.md), written as --output of sql is.")
    ] = None,
) -> None:
    """Check the seeds' claims (the library's claim_*.sql and seed*.sql) and write a Markdown report.

    Example: tablebase claims --out data/claims.md
    """
    from pipeline.products.claims import write_report

    target = out or data / "claims.md"
    write_report(data, queries, target)
    typer.echo(f"wrote {target}")


@app.command()
def check(
    folder: Annotated[
        Path | None, typer.Argument(help="A data folder or an unpacked bundle (default: --data).", show_default=False)
    ] = None,
    data: DataOption = Path("data"),
) -> None:
    """Check checksums, schemas and every tablebase against its catalog row; exit 1 on any problem.

    Example: tablebase check dist/tablebase-0.3.0
    """
    from pipeline.datadir.check import check as check_folder

    target = folder or data
    _report(check_folder(target), f"{target}: every file checks")


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
    data: DataOption = Path("data"),
    quiet: QuietOption = False,
    verbose: VerboseOption = False,
) -> None:
    """Write the download bundle: the dataset folder, zip archives (all, and one per game), SHA256SUMS.

    Example: tablebase publish --out dist
    """
    from pipeline.products.publish import publish as publish_bundle

    _setup(quiet, verbose)
    _folder(out)
    for path in publish_bundle(data, out, url):
        typer.echo(f"wrote {path}")


@app.command("check-game")
def check_game(
    name: Annotated[str, typer.Argument(help="A game's name.", show_default=False)],
    ruleset: Annotated[
        str | None, typer.Argument(help="A small ruleset of it (default: its defaults).", show_default=False)
    ] = None,
) -> None:
    """Check a game against the contract the pipeline relies on; exit 1 on any problem.

    Example: tablebase check-game octal octal:code=0.07,start=9
    """
    from pipeline.products.gamecheck import check_game as run_checks

    _report(run_checks(name, ruleset), f"{name}: keeps the game contract")


@app.command()
def games() -> None:
    """List every game and its rule parameters with their values and defaults (each game's
    rules: the README's "Games and their rules"); exit 1, naming it, if a plug-in is broken.

    Example: tablebase games
    """
    from pipeline.games import broken_plugins

    for game in all_games().values():
        typer.echo(f"{game.name}: {game.summary}")
        settings = [f"{param.name}={param.default}" for param in game.params]
        width = max(map(len, settings), default=0)
        kinds = max((len(param.values_help()) for param in game.params), default=0)
        for setting, param in zip(settings, game.params):
            typer.echo(f"  {setting:<{width}}  {param.values_help():<{kinds}}  {param.help}")
    broken = broken_plugins()
    if broken:  # the games above work; the installation still has something to mend
        raise RulesetError("; ".join(broken))


@app.command()
def rulesets(ruleset_file: RulesetFileOption = None) -> None:
    """List the named rulesets of the ruleset file with their comments.

    Example: tablebase rulesets
    """
    listed, note = _listed(ruleset_file)
    if note is not None:
        typer.echo(note, err=True)
    for rules, comment in listed:
        typer.echo(f"{rules.id:<45} {comment}")


@app.command()
def version() -> None:
    """Print the pipeline's version.

    Example: tablebase version
    """
    typer.echo(__version__)


@app.command()
def play(
    ruleset: Annotated[str, typer.Argument(help="Ruleset id.", show_default=False)],
    side: Annotated[str, typer.Option("--as", help="Play first or second (from --from: move there or not).")] = "first",
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
    """Play a ruleset against the perfect opponent: type a move's number, name or resulting position;
    hint shows the best move; quit stops.

    Examples: tablebase play chopsticks --as second
              tablebase play chopsticks --from '1-2|0-1' --hide-values
    """
    from pipeline.products.play import parse_side
    from pipeline.products.play import play as play_game

    play_game(
        ruleset, data, human_first=parse_side(side), start=start, show_values=not hide_values, max_plies=max_plies
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
    """Draw each ruleset's page (the game walked from the start), state graph and winning strategy (DOT; SVG if Graphviz is installed), and the index.

    Example: tablebase draw chopsticks chopsticks:split=any
    """
    from pipeline.products.draw import draw as draw_pages

    _setup(quiet, verbose)
    _folder(out)
    if ruleset_file is not None and not ruleset_file.is_file():
        raise RulesetError(f"ruleset file {ruleset_file} does not exist")
    written = draw_pages(
        list(rulesets or []),
        data,
        out,
        graphs=not page_only,
        every=all_,
        ruleset_file=ruleset_file or default_ruleset_file(),
    )
    typer.echo(f"wrote {written[-1]}")


def _print_version(value: bool) -> None:
    if value:
        typer.echo(__version__)
        raise typer.Exit()


@app.callback()
def _options(
    quiet: Annotated[bool, typer.Option("--quiet", "-q", callback=_remember, help="Show no progress.")] = False,
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose",
            "-v",
            callback=_remember,
            help=("Show a line as each stage begins and every rank or level it solves."),
        ),
    ] = False,
    debug: Annotated[
        bool, typer.Option("--debug", callback=_remember, help="Show the full traceback of an error.")
    ] = False,
    version: Annotated[
        bool, typer.Option("--version", callback=_print_version, is_eager=True, help="Print the version and exit.")
    ] = False,
) -> None:
    """The global options, before the command's name (after it: _Commands)."""
