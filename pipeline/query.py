"""Running SQL over the built tablebases: the query files in queries/ and one-off statements.

Parameters are bound by DuckDB (`$name` in the SQL), never pasted into the text. Two
kinds of parameter are understood before the query runs, by name:
  ruleset, ruleset_a, ruleset_b, … (any name starting with `ruleset`): a ruleset id; it
      is parsed, put in canonical form and must be built;
  position: a position text of the query's `ruleset`, put in canonical form.
Every other parameter is passed through as a string.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.errors import PositionError, TablebaseError
from pipeline.layout import DataDir
from pipeline.parquet import require
from pipeline.rulesets import Ruleset
from pipeline.views import connect_views

QUERIES = Path("queries")


class QueryError(TablebaseError):
    """A query that cannot run: unknown name, missing parameter, bad SQL."""


@dataclass(frozen=True)
class QueryFile:
    """A query file with what its header comment says about it."""

    path: Path
    description: str  # the header's first sentence
    header: list[str]  # every line of the leading comment
    parameters: list[str]  # `$name`s used, in order of first use

    @property
    def name(self) -> str:
        return self.path.stem

    @property
    def example(self) -> str | None:
        return next((line.removeprefix("Example:").strip() for line in self.header
                     if line.startswith("Example:")), None)

    @staticmethod
    def read(path: Path) -> "QueryFile":
        sql = path.read_text()
        header = []
        for line in sql.splitlines():
            if not line.startswith("--"):
                break
            header.append(line[2:].strip())
        first = re.split(r"\.\s+(?=[A-Z(])", " ".join(header))[0].rstrip(".")
        return QueryFile(path, first, header, parameters(sql))


def find_query(name: str, queries: Path = QUERIES) -> Path:
    """The query file called `name` (or the path `name` itself)."""
    path = Path(name)
    if path.suffix == ".sql":
        if path.exists():
            return path
        raise QueryError(f"query file {name} does not exist")
    candidate = queries / f"{name}.sql"
    if candidate.exists():
        return candidate
    known = ", ".join(sorted(p.stem for p in queries.glob("*.sql")))
    raise QueryError(f"no query named {name!r} in {queries}/ (known: {known or 'none'})")


def list_queries(queries: Path = QUERIES) -> list[QueryFile]:
    """Every query file of the folder, by name."""
    return [QueryFile.read(path) for path in sorted(queries.glob("*.sql"))]


def parameters(sql: str) -> list[str]:
    """The `$name` parameters an SQL text uses, in order of first use."""
    code = re.sub(r"--[^\n]*|'(?:[^']|'')*'", " ", sql)
    return list(dict.fromkeys(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", code)))


def checked_params(data: Path, needed: list[str], params: dict[str, str]) -> dict[str, str]:
    """`params` checked against what the SQL uses, ruleset ids and positions canonicalised."""
    missing = [name for name in needed if name not in params]
    if missing:
        raise QueryError(f"missing parameter(s): {', '.join(missing)} (give them as --param name=value)")
    unused = [name for name in params if name not in needed]
    if unused:
        raise QueryError(f"the query takes no parameter(s) {', '.join(unused)}")
    result = dict(params)
    built = None
    for name, value in params.items():
        if name.startswith("ruleset"):
            rules = Ruleset.parse(value)
            if built is None:
                catalog = require(DataDir(data).catalog, "catalog")
                built = set(pq.read_table(catalog, columns=["ruleset"])["ruleset"].to_pylist())
            if rules.id not in built:
                raise QueryError(f"ruleset {rules.id} is not built in {data} (build it with `tablebase build {rules.id}`)")
            result[name] = rules.id
    if "position" in params and "ruleset" in params:
        rules = Ruleset.parse(result["ruleset"])
        result["position"] = text = rules.game.canonical_position(rules, params["position"])
        tablebase = require(DataDir(data).published(rules).tablebase, f"tablebase of {rules.id}")
        found = duckdb.execute(
            "SELECT count(*) FROM read_parquet(?) WHERE position = ?", [str(tablebase), text]
        ).fetchall()[0][0]
        if not found:
            raise PositionError(f"{text!r} is not a position of {rules.id}")
    return result


def run_sql(data: Path, sql: str, params: dict[str, str] | None = None) -> pa.Table:
    """Run one statement over the views of `data` with `params` bound; the result as Arrow."""
    params = checked_params(data, parameters(sql), dict(params or {}))
    con = connect_views(data)
    try:
        return con.sql(sql, params=params or None).to_arrow_table()
    except duckdb.Error as error:
        raise QueryError(str(error).splitlines()[0]) from None
    finally:
        con.close()
