"""The documentation's generated parts, written as MkDocs builds the site (mkdocs.yml's
`hooks`), so that they cannot drift from the code: a line `<!-- generated: NAME -->` of a
page is replaced by NAME's Markdown. `cli`: every command's help, from the Typer app
itself; `schema`: every file's columns, from pipeline/core/dataset.py; `queries`: the
packaged queries, from their header comments; `games`: the built-in games' parameters,
from the games themselves; `contributing` and `changelog`: CONTRIBUTING.md and
CHANGELOG.md, which stay at the repository's root where a contributor looks for them."""

from __future__ import annotations

import html
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

MARKER = re.compile(r"^<!-- generated: (\w+) -->$", flags=re.M)


def on_page_markdown(markdown: str, **_: Any) -> str:
    return MARKER.sub(lambda found: GENERATORS[found[1]](), markdown)


def cell(text: str) -> str:
    """Text for a Markdown table cell: a `|` would end the cell, a line break the row."""
    return " ".join(text.split()).replace("|", "\\|")


def prose(text: str) -> str:
    """Help text as Markdown: `<` and `&` outside code spans escaped (`tablebase <version>`
    is no HTML tag), the code spans as they are (an entity there would show as typed)."""
    pieces = re.split(r"(`[^`]*`)", text)
    return "".join(piece if piece.startswith("`") else html.escape(piece, quote=False) for piece in pieces)


def cli() -> str:
    """Every command of `tablebase`, in the order of `tablebase --help`, under its panel."""
    import typer.main

    from pipeline.command_group import HELP_PANELS
    from pipeline.commands import app

    group = typer.main.get_command(app)
    context = group.context_class  # Typer's own click, which it vendors
    root = context(group, info_name="tablebase", **group.context_settings)  # -h beside --help
    parts = ["## `tablebase` and its global options", "", *described(group, root)]
    listed = set()
    for panel, names in HELP_PANELS.items():
        parts += [f"## {panel}", ""]
        for name in names:
            listed.add(name)
            command = group.get_command(root, name)  # with the global options it takes after its name
            parts += described(command, context(command, info_name=name, parent=root))
    unlisted = sorted(set(group.list_commands(root)) - listed)
    assert not unlisted, f"commands in no help panel (pipeline.command_group.HELP_PANELS): {unlisted}"
    return "\n".join(parts)


def described(command: Any, ctx: Any) -> list[str]:
    """A command's heading, help text, usage, examples and options, as Markdown."""
    name = ctx.command_path
    paragraphs = (command.help or "").split("\n\n")
    examples = [paragraph for paragraph in paragraphs if paragraph.startswith("Example")]
    lines = [f"### `{name}`", ""] if ctx.parent is not None else []
    for paragraph in paragraphs:
        if paragraph not in examples:
            lines += [prose(paragraph), ""]
    usage = " ".join(command.collect_usage_pieces(ctx))
    lines += ["```text", f"{name} {usage}", "```", ""]
    if examples:
        commands = [line.split(":", 1)[1] if "Example" in line else line for e in examples for line in e.splitlines()]
        lines += ["Examples:" if len(commands) > 1 else "Example:", "", "```sh"]
        lines += [text.strip() for text in commands] + ["```", ""]
    records = [(param, param.get_help_record(ctx)) for param in command.get_params(ctx)]
    records = [(param, record) for param, record in records if record is not None]
    if records:
        lines += ["| option | meaning |", "|---|---|"]
        for param, (opts, text) in records:
            kind = " (argument)" if param.param_type_name == "argument" else ""
            lines.append(f"| `{cell(opts)}`{kind} | {cell(prose(text))} |")
        lines.append("")
    return lines


def schema() -> str:
    """Each file's columns, with their types and meanings, as pipeline/core/dataset.py declares them."""
    from pipeline.core.dataset import CATALOG, KEY, RULESET_FILES

    parts = []
    for kind in (CATALOG, *RULESET_FILES):
        if kind.name == "summary":
            parts += ["**`summary.parquet`**: " + kind.what + ", with the catalog's columns.", ""]
            continue
        where = "catalog.parquet" if kind is CATALOG else f"<game>/<slug>/{kind.name}.parquet"
        parts += [f"**`{where}`**: {kind.what}.", "", "| column | type | meaning |", "|---|---|---|"]
        for column in kind.head:
            parts.append(row(column))
        if kind.game_columns:
            parts.append("| game columns | | the position decoded, per game (below); they may be NULL |")
        for column in kind.tail:
            parts.append(row(column))
        if kind.name == "positions":
            parts.append(row(KEY))
        parts.append("")
    return "\n".join(parts)


def row(column: Any) -> str:
    nullable = " (NULL allowed)" if column.nullable else ""
    return f"| `{column.name}` | `{cell(str(column.type))}`{nullable} | {cell(prose(column.meaning))} |"


def queries() -> str:
    """The packaged queries, each with its header comment, parameters and example."""
    from pipeline.products.query import library, list_queries

    assert library().name == "queries"  # the checkout's, not an installed copy
    parts = []
    for query in list_queries():
        parts += [f"### `{query.name}`", ""]
        paragraphs: list[list[str]] = [[]]
        for line in query.header:  # a paragraph from each `Parameters:`, `Answer:`, … line on
            if re.match(r"[A-Z]\w*: ", line) and paragraphs[-1]:
                paragraphs.append([])
            paragraphs[-1].append(line)
        for paragraph in paragraphs:
            if not paragraph[0].startswith("Example:"):
                parts += [prose(" ".join(paragraph)), ""]
        if query.example:
            parts += ["```sh", query.example, "```", ""]
    return "\n".join(parts)


def games() -> str:
    """Each built-in game's summary and parameters, as `tablebase games` lists them."""
    from pipeline.games import all_games

    parts = []
    for game in all_games().values():
        if not type(game).__module__.startswith("pipeline."):
            continue  # a plug-in installed here is no part of tablebase's documentation
        parts += [f"### `{game.name}`", "", prose(game.summary), ""]
        parts += ["| parameter | default | values | meaning |", "|---|---|---|---|"]
        for param in game.params:
            parts.append(
                f"| `{param.name}` | `{cell(param.default)}` | {cell(prose(param.values_help()))} | {cell(prose(param.help))} |"
            )
        parts.append("")
    return "\n".join(parts)


ROOT = Path(__file__).resolve().parent.parent.parent
#: Where a root file's links go on the site: the pages under docs/ and the root files the site
#: shows. A link to any other file of the repository fails the build (mkdocs --strict).
SITE_LINKS = {
    "docs/": "",
    "README.md": "index.md",
    "CONTRIBUTING.md": "contributing.md",
    "CHANGELOG.md": "changelog.md",
}


def root_file(name: str) -> str:
    """A Markdown file of the repository's root, its links turned from the root's to the site's."""
    text = (ROOT / name).read_text()
    for link, page in SITE_LINKS.items():
        text = text.replace(f"]({link}", f"]({page}")
    return text


def contributing() -> str:
    return root_file("CONTRIBUTING.md")


def changelog() -> str:
    return root_file("CHANGELOG.md")


GENERATORS: dict[str, Callable[[], str]] = {
    "cli": cli,
    "schema": schema,
    "queries": queries,
    "games": games,
    "contributing": contributing,
    "changelog": changelog,
}
