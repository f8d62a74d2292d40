"""Running SQL over the built tablebases: the query files in queries/ and one-off statements.

Parameters are bound by DuckDB (`$name` in the SQL), never pasted into the text.
"""

from __future__ import annotations

import re
from pathlib import Path

import pyarrow as pa
import duckdb

from pipeline.errors import TablebaseError
from pipeline.views import connect_views

QUERIES = Path("queries")


class QueryError(TablebaseError):
    """A query that cannot run: unknown name, missing parameter, bad SQL."""


def find_query(name: str, queries: Path = QUERIES) -> Path:
    """The query file called `name` (or the path `name` itself)."""
    path = Path(name)
    if path.suffix == ".sql" and path.exists():
        return path
    candidate = queries / f"{name}.sql"
    if candidate.exists():
        return candidate
    known = ", ".join(sorted(p.stem for p in queries.glob("*.sql")))
    raise QueryError(f"no query named {name!r} in {queries}/ (known: {known or 'none'})")


def parameters(sql: str) -> list[str]:
    """The `$name` parameters an SQL text uses, in order of first use."""
    code = re.sub(r"--[^\n]*|'(?:[^']|'')*'", " ", sql)
    return list(dict.fromkeys(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", code)))


def run_sql(data: Path, sql: str, params: dict[str, str] | None = None) -> pa.Table:
    """Run `sql` over the views of `data` with `params` bound; the result as an Arrow table."""
    params = dict(params or {})
    needed = parameters(sql)
    missing = [name for name in needed if name not in params]
    if missing:
        raise QueryError(f"missing parameter(s): {', '.join(missing)} (give them as --param name=value)")
    unused = [name for name in params if name not in needed]
    if unused:
        raise QueryError(f"the query takes no parameter(s) {', '.join(unused)}")
    con = connect_views(data)
    try:
        return con.sql(sql, params=params or None).to_arrow_table()
    except duckdb.Error as error:
        raise QueryError(str(error).splitlines()[0]) from None
    finally:
        con.close()
