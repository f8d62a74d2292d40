"""The `tablebase` command group: its global options, the panels of its help, and the
options every command names alike.

pipeline/cli.py builds, for each invocation, the app it needs (`new_app` and the commands
registered on it): `sql` and `query` an app of those two alone (pipeline/sql_commands.py),
which loads neither the games nor pyarrow, so that a statement starts about as fast as
DuckDB's own Python does; every other command the whole app (pipeline/commands.py).
"""

from __future__ import annotations

import copy
import inspect
import os
from pathlib import Path
from typing import Annotated, Any

import typer
from typer.core import TyperCommand, TyperGroup

from pipeline import __version__

#: The global options given in this invocation (quiet, verbose, debug), before the
#: command's name or after it.
given_options: set[str] = set()

#: The options every command takes wherever they stand, as git's do.
GLOBAL_OPTIONS = ("quiet", "verbose", "debug")


def _remember(param: typer.CallbackParam, value: bool) -> None:
    if value and param.name:
        given_options.add(param.name)
        if param.name == "debug":
            os.environ["TABLEBASE_DEBUG"] = "1"


#: The groups of `tablebase --help`, everyday commands first, each command in the order
#: help lists it (Typer would list them as they are defined, the stages first).
HELP_PANELS = {
    "Everyday": ("build", "probe", "query", "sql", "play", "draw", "serve", "check", "publish"),
    "Games, rulesets and more": ("games", "rulesets", "estimate", "claims", "check-game", "version"),
    "Stages one at a time (build runs them all)": ("enumerate", "solve", "verify", "export"),
}


def unwrapped(text: str | None) -> str | None:
    """Help text with each paragraph on one line, for Rich to wrap at the terminal's width:
    Typer's Rich help keeps a docstring's line breaks, which cut sentences in two. An
    `Example` paragraph keeps its lines (one command a line)."""
    if text is None:
        return None
    paragraphs = inspect.cleandoc(text).split("\n\n")
    return "\n\n".join(
        paragraph if paragraph.startswith("Example") else " ".join(paragraph.split()) for paragraph in paragraphs
    )


class _Commands(TyperGroup):
    """The command group: each command also takes the global options after its name
    (`tablebase build x -q` as `tablebase -q build x`), parsed with the command's own
    options, so that an option's value or what follows `--` is never taken for one."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.help = unwrapped(self.help)
        for command in self.commands.values():
            command.help = unwrapped(command.help)
        for panel, names in HELP_PANELS.items():
            for name in names:
                held = self.commands.get(name)  # sql's app holds two commands (pipeline/cli.py)
                if isinstance(held, TyperCommand | TyperGroup):  # each is; click's mapping says Command
                    held.rich_help_panel = panel

    def list_commands(self, ctx: Any) -> list[str]:
        order = {name: i for i, name in enumerate(name for names in HELP_PANELS.values() for name in names)}
        return sorted(super().list_commands(ctx), key=lambda name: order.get(name, len(order)))

    def make_context(self, *args: Any, **kwargs: Any) -> Any:
        given_options.clear()  # a new invocation (tests run several in one process)
        return super().make_context(*args, **kwargs)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        command = super().get_command(ctx, cmd_name)
        if command is None:
            return None
        taken = {opt for param in command.params for opt in param.opts}
        for option in self.params:
            if option.name in GLOBAL_OPTIONS and not taken.intersection(option.opts):
                shared = copy.copy(option)
                shared.expose_value = False  # read from given_options: the command's function does not take it
                command.params.append(shared)
        return command


def _print_version(value: bool) -> None:
    if value:
        typer.echo(f"tablebase {__version__}")
        raise typer.Exit()


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
        bool,
        typer.Option(
            "--version", "-V", callback=_print_version, is_eager=True, help="Print `tablebase <version>` and exit."
        ),
    ] = False,
) -> None:
    """The global options, before the command's name (after it: _Commands)."""


def new_app() -> typer.Typer:
    """The command group with its global options and no command yet."""
    app = typer.Typer(
        name="tablebase",
        cls=_Commands,
        help="Solve small two-player games completely and publish the tablebases as Parquet.\n\n"
        "--quiet, --verbose and --debug go before the command's name or after it. "
        "Every command takes -h (--help); those that print a result take --format json.",
        context_settings={"help_option_names": ["-h", "--help"]},
        no_args_is_help=True,
        pretty_exceptions_enable=False,
    )
    app.callback()(_options)
    return app


DataOption = Annotated[Path, typer.Option("--data", help="Data directory to read and write.")]
