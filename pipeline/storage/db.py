"""DuckDB connections and the pipeline's own SQL files (pipeline/sql/<engine>/*.sql)."""

from __future__ import annotations

import os
import re
from importlib import resources
from pathlib import Path
from typing import Any

import duckdb

from pipeline.core.errors import RulesetError

#: Default cap on DuckDB's memory; beyond it DuckDB spills to the temp directory.
DEFAULT_MEMORY_LIMIT = os.environ.get("TABLEBASE_MEMORY_LIMIT", "4GB")


def parse_size(text: str, what: str) -> int:
    """'4GB', '3.5GiB', '500MB' (DuckDB's way of writing sizes) in bytes."""
    match = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(I?)B?\s*", text, flags=re.I)
    if not match:
        raise RulesetError(f"{what}={text!r}: expected a size such as 4GB or 3.5GiB")
    power = " KMGT".index(match.group(2).upper() or " ")
    return int(float(match.group(1)) * ((1024 if match.group(3) else 1000) ** power))


_databases: dict[tuple[str, str | None], duckdb.DuckDBPyConnection] = {}


def connect(temp_dir: Path | None = None, memory_limit: str = DEFAULT_MEMORY_LIMIT) -> duckdb.DuckDBPyConnection:
    """A connection to this process's in-memory DuckDB database for `temp_dir` set up for
    the pipeline's work. The database is made once (20-60 ms, four times a build
    otherwise); each connection has its own temporary tables and variables, gone when it
    is closed. The spill folder is the database's, set when it is made: DuckDB refuses to
    change it once something has spilled there (a big ruleset's solve, then its verify)."""
    key = (memory_limit, None if temp_dir is None else str(temp_dir))
    if temp_dir is not None:
        temp_dir.mkdir(parents=True, exist_ok=True)  # again: a build removes it when done
    if key not in _databases:
        config: dict[str, str | bool | int | float | list[str]] = {"memory_limit": memory_limit}
        if temp_dir is not None:
            config["temp_directory"] = str(temp_dir)
        _databases[key] = duckdb.connect(config=config)
    return _databases[key].cursor()


def forget(temp_dir: Path) -> None:
    """Close this process's databases for `temp_dir` (connect's): where a process lives on
    past the folder (a Spark executor's Python), what they hold goes with it."""
    for key in [key for key in _databases if key[1] == str(temp_dir)]:
        _databases.pop(key).close()


def sql_text(name: str, folder: str) -> str:
    """The text of pipeline/sql/<folder>/<name>.sql (each engine's folder: Engine.sql_folder)."""
    return resources.files("pipeline").joinpath("sql", folder, f"{name}.sql").read_text()


def set_variables(con: duckdb.DuckDBPyConnection, **variables: Any) -> None:
    for key, value in variables.items():
        con.execute(f"SET VARIABLE {key} = ?", [str(value) if isinstance(value, Path) else value])


def quote_path(path: Path | str) -> str:
    """A file path (or any text) as an SQL string literal, for statements that take no parameters."""
    return "'" + str(path).replace("'", "''") + "'"
