"""DATASET.md, the data card of a published dataset, and the data licence.

Written from the catalog and from pipeline/core/dataset.py, so what it says of every file
and column is what the files hold.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import __version__
from pipeline.core.dataset import CATALOG, RULESET_FILES, TABLEBASE, CatalogRow, Column, FileKind, game_fields
from pipeline.core.values import in_words
from pipeline.games import find_game

LICENCE_FILE = "LICENSE-DATA"
CODE_LICENCE = "MIT"
DATA_LICENCE = "CC0-1.0"


def data_licence() -> str:
    """The data licence's text (LICENSE-DATA, installed with the package's metadata)."""
    checkout = Path(__file__).resolve().parents[2] / LICENCE_FILE
    if checkout.exists():
        return checkout.read_text()
    text = metadata.distribution("tablebase").read_text(f"licenses/{LICENCE_FILE}")
    if text is None:
        raise FileNotFoundError(f"{LICENCE_FILE} is not installed with the package")
    return text


def type_name(data_type: pa.DataType) -> str:
    """A column type as a reader sees it: `list<int8>`, `string` (dictionary-encoded)."""
    if pa.types.is_dictionary(data_type):
        return f"{type_name(data_type.value_type)} (dictionary-encoded)"
    if pa.types.is_list(data_type):
        return f"list<{type_name(data_type.value_type)}>"
    if pa.types.is_map(data_type):
        return f"map<{type_name(data_type.key_type)}, {type_name(data_type.item_type)}>"
    return {"bool": "boolean"}.get(str(data_type), str(data_type))


def _columns(columns: list[tuple[str, pa.DataType | None, bool, str]]) -> list[str]:
    lines = ["| column | type | NULL | meaning |", "|---|---|---|---|"]
    lines += [f"| `{name}` | {'' if data_type is None else type_name(data_type)} | {'yes' if nullable else 'no'} | {meaning} |"
              for name, data_type, nullable, meaning in columns]
    return lines


def _fixed(columns: tuple[Column, ...]) -> list[tuple[str, pa.DataType, bool, str]]:
    return [(c.name, c.type, c.nullable, c.meaning) for c in columns]


def _file_section(kind: FileKind) -> list[str]:
    lines = [f"### `{kind.name}.parquet`", "", kind.what[0].upper() + kind.what[1:] + ".", ""]
    columns = _fixed(kind.head)
    if kind.game_columns:
        columns.append(("(game columns)", None, True, "the position decoded; per game, below"))
    columns += _fixed(kind.tail)
    return lines + _columns(columns) + [""]


def data_card(folder: Path, catalog: pa.Table) -> str:
    """DATASET.md for the dataset in `folder`, whose catalog is `catalog`."""
    rows = sorted(CatalogRow.rows(catalog), key=lambda r: (r.game, r.ruleset))
    games = sorted({row.game for row in rows})
    versions = sorted({row.pipeline_version for row in rows})
    schemas = {game: pq.read_schema(folder / next(r.tablebase_path for r in rows if r.game == game))
               for game in games}
    total_positions = sum(r.positions for r in rows)
    total_transitions = sum(r.transitions for r in rows)
    out = [
        f"# tablebase dataset {__version__}",
        "",
        "Two-player games solved completely: for every rule variant (*ruleset*) listed below, every",
        "position, every move, and the value of every position under perfect play, as Parquet files.",
        f"{len(rows)} rulesets of {len(games)} games: {total_positions:,} positions, {total_transitions:,} moves.",
        "",
        "Values are always for the player to move: `win`, `loss`, `tie` (nobody can force a win,",
        "but the mover can force the game to end with nobody winning) or `draw` (nobody can force",
        "the game to end: play goes on forever); the mover prefers win > tie > draw > loss.",
        "`remoteness` is the number of plies to the end under best play (the winner hurries, the",
        "loser holds out, a tie is reached the shortest way): 0 where the game is over, NULL for",
        "draws. `grundy` is the normal-play Grundy value (the mex of the children's), NULL where a",
        "cycle can be reached and in games that are not impartial (tic-tac-toe). A ruleset's id is",
        "`game` or `game:key=value,…` with keys in alphabetical",
        "order and parameters left at their default omitted.",
        "",
        "## How it was built",
        "",
        f"By tablebase version {', '.join(versions)} (`make all`): each ruleset's positions",
        "and moves are enumerated from the game's rules, solved by iterated SQL in DuckDB (rank by",
        "rank where no move can return to a position, retrograde analysis otherwise), and verified",
        "by an independent computation before anything is published: every value is re-derived",
        "from the children's values, finished positions are checked against the rules, Grundy",
        "values against the mex of the children's. Every file's SHA-256 is in `SHA256SUMS`.",
        "",
        "## Counts per game",
        "",
        "| game | rulesets | positions | moves | wins | losses | ties | draws |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for game in games:
        mine = [r for r in rows if r.game == game]
        out.append(f"| {game} | {len(mine)} | " + " | ".join(
            f"{sum(r[key] for r in mine):,}" for key in ("positions", "transitions", "wins", "losses", "ties", "draws")) + " |")
    out += ["", "## Rulesets", "",
            "| ruleset | folder | positions | start | from the start |", "|---|---|---:|---|---|"]
    for row in rows:
        out.append(f"| `{cell(row.ruleset)}` | `{row.folder}/` | {row.positions:,} | `{cell(row.start)}` "
                   f"| {in_words(row.start_value, row.start_remoteness)} |")
    out += [
        "", "## Files", "",
        "```",
        "catalog.parquet            one row per ruleset: counts, start, checksums, paths",
        "<game>/<slug>/             one folder per ruleset (`folder` in the catalog)",
        "  tablebase.parquet        every position with its value: the product",
        "  transitions.parquet      every move",
        "  positions.parquet        every position before solving",
        "  solution.parquet         the solver's values",
        "  verification.parquet     the verifier's checks, all passed",
        "  summary.parquet          the ruleset's catalog row",
        "tablebases.duckdb          DuckDB views catalog, tablebase, transitions over these files",
        "SHA256SUMS                 every file's SHA-256 (`sha256sum -c SHA256SUMS`)",
        "```",
        "",
        "Every name is made of `a-z 0-9 . _ -`: folders are not hive partitions, so no reader adds",
        "a column. All files of one kind and one game share one schema, NULLs included; the game's",
        "own columns sit where the tables say. Parquet, zstd-compressed.",
        "",
    ]
    out += _file_section(CATALOG)
    for kind in RULESET_FILES:
        if kind.name != "summary":
            out += _file_section(kind)
    out += ["### Game columns", "",
            "In `tablebase.parquet` and `positions.parquet`, between the leading and trailing columns:", ""]
    for game in games:
        meanings = find_game(game).columns
        fields = game_fields(schemas[game], TABLEBASE)
        if not fields:
            out += [f"**{game}**: none (the position text says it all).", ""]
            continue
        out += [f"**{game}**", ""] + _columns(
            [(f.name, f.type, True, meanings.get(f.name, "")) for f in fields]) + [""]
    out += [
        "## Reading it", "",
        "Paths are relative to this folder. One file alone:", "",
        "```python",
        "import duckdb",
        "duckdb.sql(\"SELECT * FROM 'chopsticks/default/tablebase.parquet'\")",
        "```", "",
        "Every tablebase of one game (they share one schema), and everything through the views:", "",
        "```python",
        "duckdb.sql(\"SELECT ruleset, value, count(*) FROM 'chopsticks/*/tablebase.parquet' GROUP BY ALL\")",
        "con = duckdb.connect('tablebases.duckdb', read_only=True)   # from this folder (or SET file_search_path)",
        "con.sql('SELECT ruleset, start_value FROM catalog')",
        "```", "",
        "The database holds views over the files beside it, by relative paths; DuckDB 1.1 or newer",
        "opens it. From another working directory, first `SET file_search_path = '<this folder>'`.",
        "", "Other readers:", "",
        "```python",
        "import glob, pyarrow.dataset as ds, polars as pl, pandas as pd",
        "ds.dataset(sorted(glob.glob('chopsticks/*/tablebase.parquet'))).to_table()",
        "pl.scan_parquet('chopsticks/*/tablebase.parquet').group_by('ruleset', 'value').len().collect()",
        "pd.read_parquet('chopsticks/default/tablebase.parquet')",
        "spark.read.parquet('chopsticks/*/tablebase.parquet')",
        "```", "",
        "Check it: `sha256sum -c SHA256SUMS`, or `tablebase check .`, which also compares every",
        "tablebase with its catalog row and every schema with the one documented here.",
        "", "## Licence", "",
        "The data is dedicated to the public domain under Creative Commons CC0 1.0 Universal",
        "(`LICENSE`): use it for anything, no permission needed. The software that built it is",
        f"under the {CODE_LICENCE} licence. A citation is welcome, not required.",
        "", "## How to cite", "",
        "```",
        "@misc{tablebase,",
        "  title  = {tablebase: two-player games solved completely},",
        f"  note   = {{Dataset version {__version__}, {len(rows)} rulesets, built by tablebase {', '.join(versions)}}},",
        "  year   = {2026},",
        "}",
        "```", "",
    ]
    return "\n".join(out)


def cell(text: str) -> str:
    """Text for a Markdown table cell: `|` would end the cell, even inside backquotes."""
    return text.replace("|", "\\|")
