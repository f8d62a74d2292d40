"""Views over every built tablebase, so that queries never spell out file paths.

    catalog      one row per built ruleset (data/catalog.parquet)
    tablebase    every position of every ruleset (data/*/tablebase.parquet), with `ruleset`
    transitions  every move of every ruleset (data/*/transitions.parquet), with `ruleset`
"""

from __future__ import annotations

from pathlib import Path

import duckdb

from pipeline.db import quote_path
from pipeline.errors import DataError
from pipeline.layout import DataDir
from pipeline.parquet import require


def define_views(con: duckdb.DuckDBPyConnection, data: Path) -> None:
    """Create the views catalog, tablebase and transitions over `data` in `con`."""
    store = DataDir(data)
    require(store.catalog, "catalog")
    if not list(data.glob("*/tablebase.parquet")):
        raise DataError(f"no tablebase has been built in {data}: run `make all` or `tablebase build`")
    con.execute(f"CREATE OR REPLACE VIEW catalog AS SELECT * FROM read_parquet({quote_path(store.catalog)})")
    for name in ("tablebase", "transitions"):
        pattern = quote_path(data / "*" / f"{name}.parquet")
        con.execute(
            f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet({pattern}, union_by_name = true)"
        )


def write_database(data: Path) -> Path:
    """Write data/tablebases.duckdb: a DuckDB database holding the views (absolute paths),
    for DuckDB's shell, Python, R or a notebook to open and query at once."""
    from pipeline.parquet import atomic_path

    path = DataDir(data).database
    with atomic_path(path) as tmp:
        con = duckdb.connect(str(tmp))
        try:
            define_views(con, data.resolve())
        finally:
            con.close()
    return path


def connect_views(data: Path) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the views defined."""
    con = duckdb.connect()
    define_views(con, data)
    return con
