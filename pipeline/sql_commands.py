"""The `sql` and `query` commands: one statement, or a query of the library, over every
built tablebase, the result printed or written in a format of the user's choosing.

They sit apart from the other commands (pipeline/commands.py) so that an invocation of
either loads Typer, DuckDB and this package's reading path only: no game, no NumPy, and
no pyarrow unless the result needs it (BENCHMARKS.md, "Start-up, round three").
`register` adds them to a command group: pipeline/cli.py's, holding these two alone, for
an invocation of either; pipeline/commands.py's, holding every command, for the rest.
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from pipeline.command_group import DataOption
from pipeline.core.errors import RulesetError, UsageError
from pipeline.core.params import quoted
from pipeline.storage.output import Format, render
from pipeline.tablebases import Tablebases


def register(app: typer.Typer) -> None:
    """Add the two commands to `app`."""
    app.command()(query)
    app.command()(sql)


def _parse_params(pairs: list[str]) -> dict[str, str]:
    params = {}
    for pair in pairs:
        key, eq, value = pair.partition("=")
        if not eq or not key:
            raise UsageError(f"bad --param {quoted(pair)}: expected name=value")
        params[key] = value
    return params


def _check_output(form: Format, output: Path | None, data: Path) -> None:
    """Refuse, before the query runs, an output that cannot be: parquet to no file (a
    malformed command line), or a file inside `data`."""
    if form is Format.parquet and output is None:
        raise UsageError("--format parquet needs --output FILE")
    # through symlinks, so that no link leads into the data folder (realpath, unlike
    # resolve, leaves a symlink loop for write_output to name in one line)
    target = None if output is None else Path(os.path.realpath(output))
    if target is not None and data.resolve() in [target, *target.parents]:
        raise RulesetError(f"--output {output} is inside the data folder {data}: write the result elsewhere")


def _emit(result: Callable[..., Any], form: Format, output: Path | None) -> None:
    """Write a query's result in `form` to `output` (checked by _check_output), or to stdout.
    `result(form=…)` makes it: an Arrow table (form=None) for Parquet, else its text, which
    a result of plain columns gets without pyarrow (Tablebases.sql)."""
    from pipeline.storage.output import with_unique_names, write_output

    if form is Format.parquet and output is not None:
        from pipeline.storage.parquet import table_bytes

        table = result(form=None)
        write_output(table_bytes(with_unique_names(table)), output)
        typer.echo(f"wrote {table.num_rows} rows to {output}", err=True)
        return
    text = result(form=form.value)
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


def query(
    name: Annotated[
        str | None,
        typer.Argument(
            help="A query of the library (or of --queries) by name, an .sql file, or - for standard input.",
            show_default=False,
        ),
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
    """Run a query of the library over every built tablebase.

    The query sees the views catalog, tablebase and transitions; `tablebase query --list`
    lists the library.

    Example: tablebase query compare_rulesets -p ruleset_a=chopsticks -p ruleset_b=chopsticks:split=any
    """
    if list_:
        _check_output(form, output, data)
        listed = Tablebases.queries(queries)
        if form is not Format.table or output is not None:
            import pyarrow as pa

            rows = [{"name": q.name, "description": q.description, "parameters": q.parameters} for q in listed]
            schema = pa.schema(
                [("name", pa.string()), ("description", pa.string()), ("parameters", pa.list_(pa.string()))]
            )
            table = pa.Table.from_pylist(rows, schema=schema)
            _emit(lambda form: table if form is None else render(table, form), form, output)
            return
        for item in listed:
            options = " ".join(f"--param {p}=…" for p in item.parameters)
            typer.echo(f"{item.name}  {options}".rstrip())
            typer.echo(f"    {item.description}")
        return
    if name is None:
        raise UsageError("name a query (see `tablebase query --list`)")
    params = _parse_params(param or [])
    _check_output(form, output, data)
    tables = Tablebases(data)
    if name == "-":
        _emit(
            functools.partial(tables.sql, _standard_input(), params, read_files=read_files, allow_writes=allow_writes),
            form,
            output,
        )
    else:
        _emit(
            functools.partial(
                tables.query, name, params, queries=queries, read_files=read_files, allow_writes=allow_writes
            ),
            form,
            output,
        )


def sql(
    statement: Annotated[
        str, typer.Argument(help="One SQL statement; - reads it from standard input.", show_default=False)
    ],
    param: ParamOption = None,
    form: FormatOption = Format.table,
    output: OutputOption = None,
    data: DataOption = Path("data"),
    read_files: ReadFilesOption = False,
    allow_writes: AllowWritesOption = False,
) -> None:
    """Run one SQL statement over every built tablebase.

    The statement sees the views catalog, tablebase and transitions. Only reading statements
    run, on the data folder's views alone; --read-files lets a SELECT read other files too,
    --allow-writes lets any statement do anything.

    Examples: tablebase sql "SELECT ruleset, start_value FROM catalog"
              echo "SELECT count(*) FROM tablebase" | tablebase sql -
    """
    params = _parse_params(param or [])
    _check_output(form, output, data)
    text = _standard_input() if statement == "-" else statement
    _emit(
        functools.partial(Tablebases(data).sql, text, params, read_files=read_files, allow_writes=allow_writes),
        form,
        output,
    )


def _standard_input() -> str:
    """The SQL of `-`: standard input, read to its end (on a terminal, saying how to end it)."""
    from pipeline.products.query import QueryError

    if sys.stdin is None:  # descriptor 0 closed when Python started
        raise QueryError("`-` reads the SQL from standard input, and it is closed")
    if sys.stdin.isatty():
        typer.echo("reading the SQL from standard input: end it with Ctrl-D", err=True)
    text = sys.stdin.buffer.read() if hasattr(sys.stdin, "buffer") else sys.stdin.read().encode()
    try:
        return text.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise QueryError(f"the SQL on standard input is not UTF-8 text (byte {error.start})") from None
