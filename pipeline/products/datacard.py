"""DATASET.md, the data card of a published dataset, and the data licence.

Written from the catalog and from pipeline/core/dataset.py, so what it says of every file
and column is what the files hold.
"""

from __future__ import annotations

from importlib import metadata
from pathlib import Path

import pyarrow as pa

from pipeline import __released__, __version__
from pipeline.core.dataset import (
    CATALOG,
    KEY,
    POSITIONS,
    RULESET_FILES,
    TABLEBASE,
    CatalogRow,
    Column,
    FileKind,
    game_fields,
)
from pipeline.core.values import in_words
from pipeline.datadir.layout import BY_KIND
from pipeline.games import find_game
from pipeline.products.metadata import DATA_LICENCE, KEYWORDS, SEEDS, TITLE, type_name
from pipeline.storage import parts

LICENCE_FILE = "LICENSE-DATA"
CODE_LICENCE = "MIT"


def data_licence() -> str:
    """The data licence's text (LICENSE-DATA, installed with the package's metadata)."""
    checkout = Path(__file__).resolve().parents[2] / LICENCE_FILE
    if checkout.exists():
        return checkout.read_text()
    text = metadata.distribution("tablebase").read_text(f"licenses/{LICENCE_FILE}")
    if text is None:
        raise FileNotFoundError(f"{LICENCE_FILE} is not installed with the package")
    return text


def _columns(columns: list[tuple[str, pa.DataType | None, bool, str]]) -> list[str]:
    lines = ["| column | type | NULL | meaning |", "|---|---|---|---|"]
    lines += [
        f"| `{name}` | {'' if data_type is None else type_name(data_type)} | {'yes' if nullable else 'no'} | {meaning} |"
        for name, data_type, nullable, meaning in columns
    ]
    return lines


def _fixed(columns: tuple[Column, ...]) -> list[tuple[str, pa.DataType, bool, str]]:
    return [(c.name, c.type, c.nullable, c.meaning) for c in columns]


def _file_section(kind: FileKind) -> list[str]:
    title = "catalog.parquet" if kind is CATALOG else f"{kind.name}/<game>/<slug>.parquet"
    lines = [f"### `{title}`", "", kind.what[0].upper() + kind.what[1:] + ".", ""]
    columns = _fixed(kind.head)
    if kind is POSITIONS:  # a game that makes its texts from keys stores the keys instead
        columns[2:2] = _fixed((KEY,))
    if kind.game_columns:
        columns.append(("(game columns)", None, True, "the position decoded; per game, below"))
    columns += _fixed(kind.tail)
    return lines + _columns(columns) + [""]


def data_card(folder: Path, catalog: pa.Table, url: str | None = None) -> str:
    """DATASET.md for the dataset in `folder`, whose catalog is `catalog`, published at `url`."""
    rows = sorted(CatalogRow.rows(catalog), key=lambda r: (r.game, r.ruleset))
    games = sorted({row.game for row in rows})
    versions = sorted({row.pipeline_version for row in rows})
    schemas = {
        game: parts.read_schema(BY_KIND.files(folder, next(r.folder for r in rows if r.game == game)).tablebase)
        for game in games
    }
    total_positions = sum(r.positions for r in rows)
    total_transitions = sum(r.transitions for r in rows)
    out = [
        card_header(rows) + f"# tablebase dataset {__version__}",
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
        out.append(
            f"| {game} | {len(mine)} | "
            + " | ".join(
                f"{sum(r[key] for r in mine):,}"
                for key in ("positions", "transitions", "wins", "losses", "ties", "draws")
            )
            + " |"
        )
    out += [
        "",
        "## Rulesets",
        "",
        "| ruleset | `folder` | positions | start | from the start |",
        "|---|---|---:|---|---|",
    ]
    for row in rows:
        out.append(
            f"| `{cell(row.ruleset)}` | `{row.folder}` | {row.positions:,} | `{cell(row.start)}` "
            f"| {in_words(row.start_value, row.start_remoteness)} |"
        )
    out += [
        "",
        "## Files",
        "",
        "```",
        "catalog.parquet                     one row per ruleset: counts, start, checksums, paths",
        "tablebase/<game>/<slug>.parquet     every position with its value: the product",
        "transitions/<game>/<slug>.parquet   every move",
        "positions/<game>/<slug>.parquet     every position before solving",
        "solution/<game>/<slug>.parquet      the solver's values",
        "verification/<game>/<slug>.parquet  the verifier's checks, all passed",
        "summary/<game>/<slug>.parquet       the ruleset's catalog row",
        "tablebases.duckdb                   DuckDB views catalog, tablebase, transitions over these files",
        "SHA256SUMS                          every file's SHA-256 (`sha256sum -c SHA256SUMS`)",
        "```",
        "",
        "`<game>/<slug>` is the ruleset's `folder` in the catalog, which also names its tablebase",
        "and transitions files (`tablebase_path`, `transitions_path`).",
        "",
        "The files are laid out by kind, not by ruleset, so that a folder holds one kind of file:",
        "pandas, pyarrow, Polars and DuckDB given a folder read every Parquet file in it, taking the",
        "columns of the first they meet and filling or dropping the rest without a word; a folder",
        "mixing the six kinds would read as one table of nonsense. `tablebase/chopsticks` is every",
        "chopsticks tablebase, one schema; `tablebase/` holds every game's, whose own columns differ:",
        "read it with a reader that merges schemas (below), or the first game's columns are all you get.",
        "",
        f"Of a ruleset's files, {', '.join(f'`{name}`' for name in WITH_RULESET)} have a `ruleset` column",
        "holding its id (as the catalog does); the others hold one ruleset's rows and no such column:",
        "the file's name, `<slug>.parquet` under its game's folder, says which.",
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
    out += [
        "### Game columns",
        "",
        "In the `tablebase` and `positions` files, between the leading and trailing columns:",
        "",
    ]
    for game in games:
        meanings = find_game(game).columns
        fields = game_fields(schemas[game], TABLEBASE)
        if not fields:
            out += [f"**{game}**: none (the position text says it all).", ""]
            continue
        out += [f"**{game}**", ""] + _columns([(f.name, f.type, True, meanings.get(f.name, "")) for f in fields]) + [""]
    out += [
        "## Reading it",
        "",
        "Paths are relative to this folder. One file alone:",
        "",
        "```python",
        "import duckdb",
        "duckdb.sql(\"SELECT * FROM 'tablebase/chopsticks/default.parquet'\")",
        "```",
        "",
        "Every tablebase of one game (they share one schema), and everything through the views:",
        "",
        "```python",
        "duckdb.sql(\"SELECT ruleset, value, count(*) FROM 'tablebase/chopsticks/*.parquet' GROUP BY ALL\")",
        "con = duckdb.connect('tablebases.duckdb', read_only=True)   # from this folder (or SET file_search_path)",
        "con.sql('SELECT ruleset, start_value FROM catalog')",
        "```",
        "",
        "The database holds views over the files beside it, by relative paths; DuckDB 1.1 or newer",
        "opens it. From another working directory, first `SET file_search_path = '<this folder>'`.",
        "",
        "Other readers:",
        "",
        "```python",
        "import glob, pyarrow.dataset as ds, polars as pl, pandas as pd",
        "pd.read_parquet('tablebase/chopsticks')",
        "ds.dataset('tablebase/chopsticks').to_table()",
        "pl.scan_parquet('tablebase/chopsticks/*.parquet').group_by('ruleset', 'value').len().collect()",
        "spark.read.parquet('tablebase/chopsticks')",
        "```",
        "",
        "A game's folder (`tablebase/chopsticks`) holds that game's tablebases alone, one schema:",
        "name it, or a glob of it, whatever the reader.",
        "",
        "Every game at once: each game has its own columns, so the schemas differ and a reader must",
        "merge them by name (columns a game lacks read as NULL); each of these does:",
        "",
        "```python",
        *ALL_GAMES,
        "```",
        "",
        "With Hugging Face `datasets`, one game's tablebases per config: `datasets.load_dataset('<this folder>', 'chopsticks')`.",
        "`croissant.json` (MLCommons Croissant), `datapackage.json` (Frictionless Data) and",
        "`CITATION.cff` describe the same files for tools that read those.",
        "",
        "Check it: `sha256sum -c SHA256SUMS`, or `tablebase check .`, which also compares every",
        "tablebase with its catalog row and every schema with the one documented here.",
        "",
        "## Licence",
        "",
        "The data is dedicated to the public domain under Creative Commons CC0 1.0 Universal",
        "(`LICENSE`): use it for anything, no permission needed. The software that built it is",
        f"under the {CODE_LICENCE} licence. A citation is welcome, not required.",
        "",
        "## Sources",
        "",
        "The games come from these blog posts (Japanese), whose results the dataset checks",
        "(`claims.md` where the bundle has it):",
        "",
        *[
            f"- seed {number}: {title}, {author}" + (f", <{address}>" if address else " (address not recorded)")
            for number, title, author, address in SEEDS
        ],
        "",
        "## How to cite",
        "",
        "`CITATION.cff` says it for citation tools; in BibTeX:",
        "",
        "```",
        "@misc{tablebase,",
        f"  title  = {{{TITLE}}},",
        f"  note   = {{Dataset version {__version__}, {len(rows)} rulesets, built by tablebase {', '.join(versions)}}},",
        f"  year   = {{{__released__[:4]}}},",
        *([f"  url    = {{{url}}},"] if url else []),
        "}",
        "```",
        "",
    ]
    return "\n".join(out)


#: Reading every game's tablebases at once, one line per reader, from the dataset's folder
#: (tests/test_publish.py runs each). Spark needs a session called `spark`.
ALL_GAMES = (
    "duckdb.sql(\"SELECT game, value, count(*) FROM read_parquet('tablebase/*/*.parquet', union_by_name = true) JOIN 'catalog.parquet' USING (ruleset) GROUP BY ALL\")",
    "pyarrow.dataset.dataset(sorted(glob.glob('tablebase/*/*.parquet')), schema=pyarrow.unify_schemas([pyarrow.parquet.read_schema(f) for f in sorted(glob.glob('tablebase/*/*.parquet'))])).to_table()",
    "polars.concat([polars.read_parquet(f) for f in sorted(glob.glob('tablebase/*/*.parquet'))], how='diagonal_relaxed')",
    "spark.read.option('mergeSchema', 'true').parquet('tablebase/*/*.parquet')",
)


def cell(text: str) -> str:
    """Text for a Markdown table cell: `|` would end the cell, even inside backquotes."""
    return text.replace("|", "\\|")


#: The kinds of a ruleset's files that carry the ruleset's id in a `ruleset` column.
WITH_RULESET = tuple(kind.name for kind in RULESET_FILES if any(c.name == "ruleset" for c in kind.columns))


def size_category(rows: int) -> str:
    """The Hugging Face size category of a dataset of `rows` rows (positions)."""
    bounds = ["1K", "10K", "100K", "1M", "10M", "100M", "1B", "10B", "100B", "1T"]
    values = [10 ** (3 + i) for i in range(len(bounds))]
    if rows < values[0]:
        return "n<1K"
    for lower, upper, value in zip(bounds, bounds[1:], values[1:]):
        if rows < value:
            return f"{lower}<n<{upper}"
    return "n>1T"


def card_header(rows: list[CatalogRow]) -> str:
    """The YAML front matter Hugging Face reads from a dataset card: licence, size, tags,
    and one config per game (its tablebases) so that `load_dataset(path, game)` reads it.
    Dumped by PyYAML: huggingface_hub's DatasetCardData writes the same YAML through PyYAML,
    with an HTTP client and a dozen packages more."""
    import yaml

    games = sorted({row.game for row in rows})
    header = {
        "license": DATA_LICENCE.lower(),
        "pretty_name": "tablebase",
        "size_categories": [size_category(sum(r.positions for r in rows))],
        "tags": list(KEYWORDS),
        "configs": [
            {
                "config_name": game,
                "data_files": [{"split": "train", "path": _tablebase_files(game, rows)}],
                **({"default": True} if index == 0 else {}),
            }
            for index, game in enumerate(games)
        ],
    }
    return "---\n" + yaml.safe_dump(header, sort_keys=False, allow_unicode=True) + "---\n\n"


def _tablebase_files(game: str, rows: list[CatalogRow]) -> str | list[str]:
    """The game's tablebase files as globs: its rulesets' files, and their folders' parts
    where some are folders of parts (`tablebase build --part-rows`)."""
    files = BY_KIND.file(f"{game}/*", "tablebase")
    if not any(row.game == game and row.tablebase_path.endswith("/part-*.parquet") for row in rows):
        return files
    return [files, BY_KIND.parts_glob(f"{game}/*", "tablebase")]
