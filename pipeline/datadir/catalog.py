"""The catalog of a data folder: every ruleset's summary row gathered into catalog.parquet,
rewritten with SHA256SUMS and the DuckDB database of views under the publish lock.

The data folder's other parts sit beside it: its layout (layout.py), checksums and checks
(check.py), views (views.py). The rows' columns are the declaration's (pipeline/core/dataset.py:
CATALOG, CatalogRow); export (pipeline/stages/export.py) makes a ruleset's row.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.dataset import CATALOG, CatalogRow
from pipeline.core.errors import DataError, TablebaseError, UnfinishedError, full_disk
from pipeline.datadir.check import LOOKED_UP, forget, listed_sums, remember, write_sums
from pipeline.datadir.layout import DataDir
from pipeline.datadir.views import write_database
from pipeline.storage import parts
from pipeline.storage.parquet import read_table, require, sha256, write_table
from pipeline.storage.progress import log

SUMMARY_SCHEMA = CATALOG.schema()


def read_summary_row(summary: Path) -> pa.Table:
    """A ruleset's catalog row with the catalog's schema. A row written before version 0.3
    (no `ties` column) is brought up to date in place: no game could end in a tie then."""
    row = read_table(summary)
    if "ties" not in row.column_names and "losses" in row.column_names:
        row = row.add_column(row.column_names.index("losses") + 1, "ties", pa.array([0] * row.num_rows, pa.int64()))
        row = row.select(SUMMARY_SCHEMA.names).cast(SUMMARY_SCHEMA)
        write_table(row, summary)
    return row.select(SUMMARY_SCHEMA.names).cast(SUMMARY_SCHEMA)


def read_catalog(data: DataDir) -> list[CatalogRow]:
    """data/catalog.parquet's rows; a catalog written before version 0.3 (no `ties`) is
    rewritten from the rulesets' summaries first, which brings them up to date."""
    if "ties" not in pq.read_schema(require(data.catalog, "catalog")).names:
        write_catalog(data, database=False)
    return CatalogRow.rows(read_table(data.catalog))


def write_catalog(
    data: DataDir, database: bool = True, changed: str | None = None, exported: tuple[str, ...] = ()
) -> int:
    """Rewrite data/catalog.parquet from every ruleset's summary, and (with `database`) the
    DuckDB database of views over everything built, then data/SHA256SUMS; return the
    number of rulesets. Under the data directory's publish lock, so that concurrent builds
    each find the other's row.
    `changed`: the one folder (<game>/<slug>) published since the catalog was written; the
    other rows are kept from the catalog when it lists exactly the other folders there.
    `exported`: other folders whose summaries are new (written in place by `tablebase
    export`, or put in place by a publish that was killed): they are hashed for
    SHA256SUMS, where every other summary keeps the checksum listed."""
    with data.lock("publish"):
        paths = data.summaries()
        kept = _kept_rows(data, paths, changed) if changed is not None else None
        tables = [kept] if kept is not None else []
        fresh = {"catalog.parquet", *(f"{folder}/summary.parquet" for folder in (changed, *exported) if folder)}
        for path in paths:
            folder = path.parent.relative_to(data.root).as_posix()
            if kept is not None and folder != changed:
                continue
            require(path, "catalog row")
            try:
                if "ties" not in pq.read_schema(path).names:
                    fresh.add(f"{folder}/summary.parquet")  # brought up to date in place below
                row = read_summary_row(path)
            except (OSError, pa.ArrowException, KeyError) as error:  # KeyError: a column missing
                raise DataError(
                    f"{path} is not a catalog row of this version ({str(error).splitlines()[0]}): "
                    f"delete its folder or rebuild that ruleset"
                ) from None
            # a copy of a folder under another name (x.bak) is not that ruleset; the id is
            # not parsed, so rows of a game whose plug-in is gone stay
            if row.num_rows == 1 and row["folder"][0].as_py() == folder:
                tables.append(row)
            else:
                log.warning("%s is not the folder of the ruleset it names: left out of the catalog", path.parent)
        catalog = pa.concat_tables(tables) if tables else SUMMARY_SCHEMA.empty_table()
        catalog = catalog.sort_by("ruleset")
        # the old catalog comes back if SHA256SUMS cannot follow it (a full disk): a
        # catalog and its checksums change together, and `publishing` puts the old folder back
        aside = data.root / f".{data.catalog.name}.old.{os.getpid()}.tmp"
        aside.unlink(missing_ok=True)
        existed = data.catalog.exists()
        if existed:
            try:
                os.link(data.catalog, aside)
            except OSError:  # a file system without hard links
                shutil.copyfile(data.catalog, aside)
        try:
            write_catalog_table(catalog, data.catalog)
            write_sums(data, fresh)
        except BaseException:
            if existed:
                os.replace(aside, data.catalog)
            else:
                data.catalog.unlink(missing_ok=True)
            raise
        finally:
            aside.unlink(missing_ok=True)
        if changed is not None:
            _remember(data, catalog, changed)
        if database and catalog.num_rows:
            write_database(data.root)
            write_sums(data, {"tablebases.duckdb"})
        elif database and data.database.exists():  # views over rulesets no longer built
            data.database.unlink()
            write_sums(data, {"tablebases.duckdb"})
        return catalog.num_rows


def write_catalog_table(catalog: pa.Table, path: Path) -> None:
    """Write catalog rows to `path` in the catalog's one form: rows read back from Parquet
    name the map's entries after the column (`params`), rows made here `entries`, and the
    name is in the file's bytes, so every catalog is cast to the schema and made one chunk
    first. The same rows give the same bytes however they were gathered."""
    write_table(catalog.combine_chunks().cast(SUMMARY_SCHEMA), path)


def _remember(data: DataDir, catalog: pa.Table, folder: str) -> None:
    """Tell the checksum cache what export hashed of the folder just published: the
    replaced folder's entries go, and no file a query or a lookup reads (LOOKED_UP) is
    hashed again on its first read: a server's first lookups on connect:cols=5,rows=6 hashed
    6 GB of index and lookup, 10 s, and were answered 503."""
    forget(data, folder)
    for row in catalog.select(["folder", *(f"{kind}_sha256" for kind in LOOKED_UP)]).to_pylist():
        if row["folder"] == folder:
            remember(  # a folder of parts is hashed part by part as SHA256SUMS is written
                data,
                {
                    path: row[f"{kind}_sha256"]
                    for kind in LOOKED_UP
                    if not parts.in_parts(path := data.root / folder / f"{kind}.parquet")
                },
            )


def _kept_rows(data: DataDir, paths: list[Path], changed: str) -> pa.Table | None:
    """The catalog's rows but `changed`'s, if the catalog is of this version, the one
    SHA256SUMS records, and lists every other published folder and no more, each row
    written after its summary; else None."""
    try:
        catalog = read_table(data.catalog)
        if catalog.schema != SUMMARY_SCHEMA:
            return None
    except (OSError, pa.ArrowException):
        return None
    listed = listed_sums(data.root).get("catalog.parquet")
    if listed is not None and sha256(data.catalog) != listed:
        return None  # not the catalog SHA256SUMS records: rebuilt from the summaries
    folders = {path.parent.relative_to(data.root).as_posix(): path for path in paths}
    listed = catalog["folder"].to_pylist()
    others = [folder for folder in folders if folder != changed]
    if sorted(folder for folder in listed if folder != changed) != sorted(others):
        return None
    written = data.catalog.stat().st_mtime_ns
    if any(folders[folder].stat().st_mtime_ns > written for folder in others):
        return None  # a summary rewritten since (by hand, or an older version's build)
    return catalog.filter(pa.array([folder != changed for folder in listed]))


def rewrite_database(data: DataDir, published: str = "") -> None:
    """Rewrite data/tablebases.duckdb over everything published (under the publish lock).
    UnfinishedError if it cannot be written: what is published stays published (the catalog
    lists it), and the old database's views refuse to read until it is rewritten. `published`:
    the ruleset just published, named in the error (else: every ruleset built)."""
    try:
        with data.lock("publish"):
            write_database(data.root)
            write_sums(data, {"tablebases.duckdb"})
    except (TablebaseError, OSError, duckdb.Error) as error:
        what = f"{published} is" if published else "every ruleset built is"
        then = "free some space, then run" if full_disk(error) else "mend that, then run"
        raise UnfinishedError(
            f"{what} published and in the catalog, but {data.database} could not be rewritten (its views "
            f"refuse to read until it is): {then} `tablebase export --data {shlex.quote(str(data.root))}`"
        ) from error
