"""Running SQL over the built tablebases: the query library (queries/, installed as
pipeline.queries), a user's own query files, and one-off statements.

Parameters are bound by DuckDB (`$name` in the SQL), never pasted into the text. Two
kinds of parameter are understood before the query runs, by name:
  ruleset, ruleset_a, ruleset_b, … (any name starting with `ruleset`): a ruleset id; it
      is parsed, put in canonical form and must be built;
  position: a position text of the query's `ruleset`, put in canonical form.
Every other parameter is passed through as a string.
"""

from __future__ import annotations

import json
import re
import signal
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import TYPE_CHECKING, TypeVar

import duckdb

from pipeline.core import signals
from pipeline.core.errors import DataError, PositionError, TablebaseError
from pipeline.core.params import quoted
from pipeline.datadir.check import require_built, trusted
from pipeline.datadir.layout import DataDir
from pipeline.datadir.views import VIEWS, connect_views
from pipeline.storage.parts import regular

# pyarrow, the games and the lookups are imported where a statement needs them: a statement
# over the views with no ruleset or position to check, its result plain, loads none of them
if TYPE_CHECKING:
    import pyarrow as pa

T = TypeVar("T")

#: A source checkout, recognised by the pyproject.toml beside the package.
_CHECKOUT = Path(__file__).resolve().parents[2]


class QueryError(TablebaseError):
    """A query that cannot run: unknown name, missing parameter, bad SQL."""


@dataclass(frozen=True)
class QueryFile:
    """A query file with what its header comment says about it."""

    path: Traversable  # a Path, or a file of the installed package
    description: str  # the header's first sentence
    header: list[str]  # every line of the leading comment
    parameters: list[str]  # `$name`s used, in order of first use

    @property
    def name(self) -> str:
        return self.path.name.removesuffix(".sql")

    @property
    def example(self) -> str | None:
        return next(
            (line.removeprefix("Example:").strip() for line in self.header if line.startswith("Example:")), None
        )

    @staticmethod
    def read(path: Traversable) -> QueryFile:
        sql = read_sql(path)
        header = []
        for line in sql.splitlines():
            if not line.startswith("--"):
                break
            header.append(line[2:].strip())
        first = re.split(r"\.\s+(?=[A-Z(])", " ".join(header))[0].rstrip(".")
        return QueryFile(path, first, header, parameters(sql))


def read_sql(path: Traversable) -> str:
    """A query file's SQL, without a byte order mark; QueryError where it is not UTF-8 text."""
    data = path.read_bytes()
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as error:
        raise QueryError(
            f"query file {path} is not UTF-8 text (byte {error.start}: "
            f"{data[error.start : error.start + 1]!r}): save it as UTF-8"
        ) from None


def library() -> Traversable:
    """The query library that ships with the package: the repository's queries/ folder.

    pyproject.toml installs that folder as the package pipeline.queries, read here with
    importlib.resources. From a source checkout (installed editable, or on PYTHONPATH) it
    is the checkout's own folder, so that the code and the queries always come from the
    same tree, even if another checkout is installed.
    """
    if (_CHECKOUT / "pyproject.toml").is_file() and (_CHECKOUT / "queries").is_dir():
        return _CHECKOUT / "queries"
    return resources.files("pipeline.queries")


def query_files(extra: Path | None = None) -> dict[str, Traversable]:
    """Every query file by name: the packaged library's, then those of the folder `extra`,
    which win over packaged files of the same name."""
    files = {
        item.name.removesuffix(".sql"): item
        for item in library().iterdir()
        if item.name.endswith(".sql") and item.is_file()
    }
    if extra is not None:
        if not extra.is_dir():
            raise QueryError(f"query folder {extra} does not exist")
        files.update((path.stem, path) for path in extra.glob("*.sql") if path.is_file())
    return dict(sorted(files.items()))


def find_query(name: str, extra: Path | None = None) -> Traversable:
    """The query file called `name` (in the folder `extra`, else packaged), or the path `name` itself."""
    path = Path(name)
    if path.suffix == ".sql":
        if path.exists():
            return path
        raise QueryError(f"query file {name} does not exist")
    files = query_files(extra)
    if name in files:
        return files[name]
    where = "the query library" + (f" or {extra}/" if extra is not None else "")
    raise QueryError(f"no query named {quoted(name)} in {where} (known: {', '.join(files) or 'none'})")


def list_queries(extra: Path | None = None) -> list[QueryFile]:
    """Every query file (packaged, and in the folder `extra`), by name."""
    return [QueryFile.read(path) for path in query_files(extra).values()]


def parameters(sql: str) -> list[str]:
    """The `$name` parameters an SQL text uses, in order of first use."""
    code = re.sub(r"--[^\n]*|'(?:[^']|'')*'", " ", sql)
    return list(dict.fromkeys(re.findall(r"\$([A-Za-z_][A-Za-z0-9_]*)", code)))


def checked_params(
    data: Path, needed: list[str], params: dict[str, str], con: duckdb.DuckDBPyConnection
) -> dict[str, str]:
    """`params` checked against what the SQL uses, ruleset ids and positions canonicalised
    (the catalog read through `con`, where it can be)."""
    missing = [name for name in needed if name not in params]
    if missing:
        raise QueryError(f"missing parameter(s): {', '.join(missing)} (give them as --param name=value)")
    unused = [name for name in params if name not in needed]
    if unused:
        raise QueryError(f"the query takes no parameter(s) {', '.join(unused)}")
    result = dict(params)
    built = _built(data, con) if any(name.startswith("ruleset") for name in params) else None
    for name, value in params.items():
        if not name.startswith("ruleset") or (built is not None and value in built):
            continue  # a catalog's id is canonical already: no game is loaded to parse it
        from pipeline.games.rulesets import Ruleset
        from pipeline.storage.parquet import read_table, require

        rules = Ruleset.parse(value)
        require_built(DataDir(data), rules.id)
        if built is None:
            catalog = require(DataDir(data).catalog, "catalog")
            built = set(read_table(catalog, columns=["ruleset"])["ruleset"].to_pylist())
        if rules.id not in built:
            raise QueryError(
                f"ruleset {rules.id} is not built in {data}: build it with `tablebase build {rules.id}`, "
                "or name the folder it was built in with --data"
            )
        result[name] = rules.id
    if "position" in params and "ruleset" in params:
        from pipeline.games import read_position
        from pipeline.games.rulesets import Ruleset
        from pipeline.products.probe import find

        rules = Ruleset.parse(result["ruleset"])
        result["position"] = text = read_position(rules, params["position"])
        files = trusted(DataDir(data), rules)  # as probe reads it, by the index
        if find(str(files.index), str(files.lookup), text) is None:
            raise PositionError(f"{quoted(text)} is not a position of {rules.id}")
    return result


def _built(data: Path, con: duckdb.DuckDBPyConnection) -> set[str] | None:
    """The ruleset ids of the catalog, read through `con`; None where it cannot be read so
    (what is wrong with it is said where it is read with pyarrow, as before)."""
    catalog = DataDir(data).catalog
    try:
        if not regular(catalog).is_file():
            return None
        return {ruleset for (ruleset,) in con.execute("SELECT ruleset FROM read_parquet(?)", [str(catalog)]).fetchall()}
    except (DataError, duckdb.Error):
        return None


#: What runs without --allow-writes: statements that only read (PIVOT is several SELECTs).
READ_ONLY = {"SELECT", "EXPLAIN", "CALL", "MULTI"}

#: The table functions a SELECT may call under --read-files: they read files or make rows,
#: and none writes or runs SQL of its own (as query() and json_execute_serialized_sql() do,
#: out of the inspection's sight), attaches a database (read_duckdb) or changes a setting.
READING_FUNCTIONS = frozenset(
    {
        "read_parquet",
        "parquet_scan",
        "parquet_metadata",
        "parquet_schema",
        "parquet_file_metadata",
        "parquet_kv_metadata",
        "read_csv",
        "read_csv_auto",
        "sniff_csv",
        "read_json",
        "read_json_auto",
        "read_ndjson",
        "read_ndjson_auto",
        "read_json_objects",
        "read_json_objects_auto",
        "read_ndjson_objects",
        "read_text",
        "read_blob",
        "glob",
        "range",
        "generate_series",
        "unnest",
        "json_each",
        "json_tree",
        "repeat",
        "repeat_row",
    }
)

#: The query nodes of a statement that only reads: a CTE's body may be a COPY, INSERT,
#: UPDATE or DELETE (COPY_QUERY_NODE, …) in a statement DuckDB still classes as a SELECT.
READING_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "RECURSIVE_CTE_NODE", "CTE_NODE"})

#: The remote file systems an extension could bring (none is loaded, and none can be).
REMOTE_FILESYSTEMS = (
    "HTTPFileSystem",
    "S3FileSystem",
    "HuggingFaceFileSystem",
    "GCSFileSystem",
    "R2FileSystem",
    "AzureBlobStorageFileSystem",
    "AzureDfsStorageFileSystem",
)

#: A path naming a remote file (http://, s3://, hf://, …); file:// is a local one.
_URL = re.compile(r"(?!file://)[A-Za-z][A-Za-z0-9+.-]*://")

#: What --allow-writes would add, said in each refusal under --read-files.
_WRITES = "add --allow-writes to run it with DuckDB's full power (it lets DuckDB write files too)"
_NETWORK = "add --allow-writes to let DuckDB reach the network (it lets DuckDB write files too)"


def reads_files_only(sql: str, con: duckdb.DuckDBPyConnection | None = None) -> dict:
    """Refuse (QueryError) a SELECT that could do more than read files: it holds another
    statement (a CTE's COPY), calls a table function outside READING_FUNCTIONS, names a
    remote file or a database file (which DuckDB reads by read_duckdb()).

    DuckDB cannot let a statement read files and not write them (enable_external_access,
    allowed_directories and allowed_paths grant both), so --read-files reads the statement
    itself, as DuckDB's parser gives it (json_serialize_sql: SELECTs only); the parse tree.
    `con`: a connection of the caller's to parse it with."""
    tree = _parsed(sql, con)
    if tree["error"]:
        raise QueryError(f"--read-files reads the statement to run it: {tree['error_message']}; {_WRITES}")
    for node, inside_function in _nodes(tree["statements"], False):
        kind = node.get("type")
        what = _writing_node(node)
        if what:
            raise QueryError(
                f"--read-files runs a SELECT that only reads, and this one holds another statement ({what}); {_WRITES}"
            )
        if kind == "TABLE_FUNCTION":
            name = node["function"]["function_name"].lower()
            if name not in READING_FUNCTIONS:
                raise QueryError(
                    f"--read-files runs no table function {name}(): only those that read files "
                    f"or make rows (read_parquet, read_csv, read_json, glob, …); {_WRITES}"
                )
        texts = [node["table_name"]] if kind in ("BASE_TABLE", "SHOW_REF") else []
        database = _database_file(node) if kind in ("BASE_TABLE", "SHOW_REF") else None
        if database:
            raise QueryError(
                f"--read-files reads no database file, and DuckDB reads {database} as one "
                f"(read_duckdb(), as every name ending .db, .ddb or .duckdb); {_WRITES}"
            )
        if inside_function and node.get("class") == "CONSTANT":
            texts.append(_text(node))
        for text in filter(None, texts):
            if _URL.match(text.strip().strip('"')):
                raise QueryError(f"--read-files reads local files only, not {text}: {_NETWORK}")
    return tree


def writes_nothing(sql: str, kind: str, con: duckdb.DuckDBPyConnection | None = None) -> dict | None:
    """Refuse (QueryError) a reading statement that holds one that writes: a CTE's COPY,
    INSERT, UPDATE or DELETE, or EXPLAIN ANALYZE of anything but a SELECT. The SELECT's
    parse tree (the one an EXPLAIN explains), None for other statements.

    The views read the published files by name through DuckDB's allowed_paths, which would
    let a COPY (USE_TMP_FILE false) write over them: no such statement may reach that
    connection. `con`: a connection of the caller's to parse it with."""
    if kind == "EXPLAIN":
        sql = explained(sql)
        inner = duckdb.extract_statements(sql) if con is None else con.extract_statements(sql)
        kind = inner[0].type.name if len(inner) == 1 else "MULTI"
        if kind != "SELECT":
            raise QueryError(
                f"EXPLAIN runs over a SELECT here, not a {kind} statement, which can change things; "
                "add --allow-writes to run it"
            )
    if kind != "SELECT":
        return None
    tree = _parsed(sql, con)
    if tree["error"]:
        raise QueryError(f"the statement could not be read to see that it only reads: {tree['error_message']}")
    for node, _ in _nodes(tree["statements"], False):
        what = _writing_node(node)
        if what:
            raise QueryError(
                f"this SELECT holds another statement ({what}), which can change things: only reading "
                "statements run unless you add --allow-writes"
            )
    return tree


def views_named(tree: dict | None) -> set[str] | None:
    """The views (catalog, tablebase, transitions) a SELECT's parse tree names, as a table or
    as a table function's text (query_table('tablebase')); None, all of them, without a tree.
    Binding a view reads the footer of every file it names: a query of the catalog binds none."""
    if tree is None:
        return None
    names, ctes = set(), set()
    for node, inside_function in _nodes(tree["statements"], False):
        if node.get("type") in ("BASE_TABLE", "SHOW_REF"):
            names.add(str(node.get("table_name", "")).lower())
        elif inside_function and node.get("class") == "CONSTANT":
            names.add(str(_text(node)).lower())
        for entry in (node.get("cte_map") or {}).get("map", []):
            ctes.add(str(entry.get("key", "")).lower())
    if names - VIEWS - ctes:  # a typo DuckDB would answer with 'Did you mean "tablebase"?'
        return None
    return names & VIEWS


def explained(sql: str) -> str:
    """The statement an EXPLAIN statement explains: its text after EXPLAIN, ANALYZE and the
    options in brackets (DuckDB's tokenizer tells keywords from comments and strings)."""
    tokens = duckdb.tokenize(sql)
    starts = [start for start, _ in tokens] + [len(sql)]
    words = [sql[start:end].strip() for start, end in zip(starts, starts[1:], strict=False)]
    index = next(i for i, (_, kind) in enumerate(tokens) if kind != duckdb.token_type.comment) + 1  # EXPLAIN
    if index < len(tokens) and words[index].upper() in ("ANALYZE", "ANALYSE"):
        index += 1
    if index < len(tokens) and words[index] == "(":
        depth = 0
        while index < len(tokens):
            depth += words[index].count("(") - words[index].count(")")
            index += 1
            if depth <= 0:
                break
    return sql[starts[index] :]


def _parsed(sql: str, con: duckdb.DuckDBPyConnection | None = None) -> dict:
    """A SELECT's parse tree as DuckDB gives it (json_serialize_sql), through `con` or a connection of its own."""
    parser = duckdb.connect() if con is None else con
    try:
        text = parser.execute("SELECT json_serialize_sql(?::VARCHAR)", [sql]).fetchall()[0][0]
    finally:
        if parser is not con:
            parser.close()
    try:
        return json.loads(text)
    except RecursionError:  # nested deeper than Python's stack: DuckDB's parser takes a thousand levels
        return _deep_json(text)


#: The tokens of JSON text, after the separators between them: an opening or closing
#: bracket, a string (its escapes included), or a number, true, false or null.
_JSON_TOKEN = re.compile(r'[\s,:]*(?:([\[{])|([\]}])|("[^"\\]*(?:\\.[^"\\]*)*")|([^\s,:\]}]+))')


def _deep_json(text: str) -> dict:
    """json.loads of valid JSON at any depth: json.loads recurses a level a bracket, and a
    statement DuckDB parses may be nested three thousand brackets deep."""
    containers: list[list | dict] = [[]]
    keys: list[str | None] = [None]  # each open object's key awaiting its value
    position = 0
    while match := _JSON_TOKEN.match(text, position):
        position = match.end()
        opening, closing, quote, scalar = match.groups()
        if opening:
            containers.append({} if opening == "{" else [])
            keys.append(None)
            continue
        if closing:
            value = containers.pop()
            keys.pop()
        elif quote:
            value = json.loads(quote)
            if isinstance(containers[-1], dict) and keys[-1] is None:
                keys[-1] = value
                continue
        else:
            value = json.loads(scalar)
        parent = containers[-1]
        if isinstance(parent, dict):
            parent[keys[-1]] = value
            keys[-1] = None
        else:
            parent.append(value)
    return containers[0][0]


#: What DuckDB's replacement scan reads as a database file by read_duckdb() (its
#: ReadDuckDBTableFunction::ReplacementScan): a name ending so, in any case, or holding it before a `?`.
_DATABASE_SUFFIXES = (".db", ".ddb", ".duckdb")


def _database_file(node: dict) -> str | None:
    """The name a table reference (BASE_TABLE, SHOW_REF) gives when DuckDB would read it as
    a database file: its catalog, schema and table joined by dots, as DuckDB joins them
    (`FROM "x".duckdb` reads x.duckdb)."""
    parts = [node.get("catalog_name"), node.get("schema_name"), node.get("table_name")]
    name = ".".join(part for part in parts if isinstance(part, str) and part)
    lower = name.lower()
    if any(lower.endswith(suffix) or f"{suffix}?" in lower for suffix in _DATABASE_SUFFIXES):
        return name
    return None


def _writing_node(node: dict) -> str | None:
    """The kind of statement a query node holds when it is not one that only reads (COPY, …)."""
    kind = node.get("type")
    if isinstance(kind, str) and kind.endswith("_NODE") and kind not in READING_NODES:
        return kind.removesuffix("_NODE").removesuffix("_QUERY").replace("_", " ")
    return None


def _text(constant: dict) -> str | None:
    """A constant's text if it is one: DuckDB 2.0 writes it as a literal, 1.1 as a value."""
    if "literal" in constant:
        return constant["literal"]["text"] if constant["literal"].get("kind") == "VARCHAR" else None
    value = constant.get("value") or {}
    return value.get("value") if (value.get("type") or {}).get("id") == "VARCHAR" else None


def _nodes(tree: object, inside_function: bool) -> Iterator[tuple[dict, bool]]:
    """Every object of a parse tree, parents first, and whether it is inside a table
    function's call. Walked with a stack of its own, not by recursion: a statement nested
    a thousand levels deep (as DuckDB's parser allows) is three thousand objects deep."""
    stack = [(tree, inside_function)]
    while stack:
        item, inside = stack.pop()
        if isinstance(item, dict):
            yield item, inside
            inside = inside or item.get("type") == "TABLE_FUNCTION"
            item = list(item.values())
        if isinstance(item, list):
            stack.extend((child, inside) for child in reversed(item))


@contextmanager
def interruptible(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """SIGINT and SIGTERM interrupt the connection's query, from the signals' watcher
    (pipeline.core.signals). The handlers only note the signal meanwhile: an exception
    raised while DuckDB's client looks for signals could leave the query running (a
    SIGTERM was ignored for good 3 times in 20)."""
    if threading.current_thread() is not threading.main_thread():
        with signals.interrupting(con):
            yield
        return
    previous = {number: signal.signal(number, note) for number in (signal.SIGINT, signal.SIGTERM)}
    try:
        with signals.interrupting(con):
            yield
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def note(number: int, _: object) -> None:
    signals.note(number)


def run_sql(
    data: Path, sql: str, params: dict[str, str] | None = None, allow_writes: bool = False, read_files: bool = False
) -> pa.Table:
    """Run one statement over the views of `data` with `params` bound; the result as Arrow.

    Unless `allow_writes`, the statement must only read (`writes_nothing`), and runs on a
    connection that can open the files the views read and no other, attach nothing and
    change no setting (`connect_views`).
    `read_files`: a SELECT may also read files anywhere the user can, and nothing more
    (`reads_files_only`, on a connection that can load no extension and change no setting)."""
    return run_statement(data, sql, _as_arrow, params, allow_writes, read_files)


def _as_arrow(relation: duckdb.DuckDBPyRelation) -> pa.Table:
    return relation.to_arrow_table()


def run_statement(
    data: Path,
    sql: str,
    fetch: Callable[[duckdb.DuckDBPyRelation], T],
    params: dict[str, str] | None = None,
    allow_writes: bool = False,
    read_files: bool = False,
) -> T:
    """`run_sql`, the result being what `fetch` makes of the statement's relation (Arrow,
    or the command line's text: pipeline.storage.output.rendered). One DuckDB connection
    reads the statement, the catalog and the views: each costs tens of milliseconds."""
    con = duckdb.connect()
    try:
        try:
            statements = con.extract_statements(sql)
        except duckdb.Error as error:
            raise QueryError(one_line(str(error))) from None
        if len(statements) != 1:
            raise QueryError(f"one SQL statement at a time, not {len(statements)}")
        kind = statements[0].type.name
        if not allow_writes and kind not in READ_ONLY:
            raise QueryError(
                f"{kind} statements can change things: only reading statements run "
                "(SELECT, EXPLAIN, …) unless you add --allow-writes"
            )
        reading = read_files and not allow_writes and kind == "SELECT"
        tree = None
        if reading:
            tree = reads_files_only(sql, con)
        elif not allow_writes:
            tree = writes_nothing(sql, kind, con)
        params = checked_params(data, parameters(sql), dict(params or {}), con)
        connect_views(data, read_only=not allow_writes and not reading, views=views_named(tree), con=con)
        return _fetched(con, sql, params, fetch, kind, allow_writes, read_files, reading)
    finally:
        con.close()


def _fetched(
    con: duckdb.DuckDBPyConnection,
    sql: str,
    params: dict[str, str],
    fetch: Callable[[duckdb.DuckDBPyRelation], T],
    kind: str,
    allow_writes: bool,
    read_files: bool,
    reading: bool,
) -> T:
    """The statement run over the views of `con`; DuckDB's refusals in the sandbox's words."""
    try:
        if reading:
            _read_files_only(con)
        with interruptible(con):
            return fetch(con.sql(sql, params=params or None))
    except duckdb.InterruptException:
        raise  # Ctrl-C: the command line's one line and status 130
    except duckdb.PermissionException as error:
        if allow_writes:
            raise QueryError(one_line(str(error))) from None
        if read_files:  # a statement other than a SELECT (EXPLAIN, CALL, PIVOT): no file opens
            raise QueryError(
                f"{one_line(str(error))}: --read-files lets a SELECT read files, a {kind} "
                "statement reads the views only; add --allow-writes to run it with DuckDB's "
                "full power (it lets DuckDB write files too)"
            ) from None
        raise QueryError(
            f"{one_line(str(error))}: without --read-files a statement reads the views catalog, "
            "tablebase and transitions only, and DuckDB opens no other file (read_parquet and its kind "
            "included); add --read-files to read other files (it writes none)"
        ) from None
    except duckdb.Error as error:
        remote = re.search(r"File (\S+) requires the extension", str(error))
        if reading and remote:  # a remote file named by a parameter or an expression
            raise QueryError(f"--read-files reads local files only, not {remote[1]}: {_NETWORK}") from None
        raise QueryError(one_line(str(error))) from None


def _read_files_only(con: duckdb.DuckDBPyConnection) -> None:
    """Lock `con` to reading: no extension installed or loaded (none reaches the network),
    no remote file system, no spill file, no Python variable read as a table, no setting changed."""
    for setting, value in (
        ("temp_directory", ""),
        ("autoinstall_known_extensions", False),
        ("autoload_known_extensions", False),
        ("allow_community_extensions", False),
        ("python_enable_replacements", False),
        ("disabled_filesystems", ",".join(REMOTE_FILESYSTEMS)),
    ):
        con.execute(f"SET {setting} = ?", [value])
    con.execute("SET lock_configuration = true")


def one_line(message: str) -> str:
    """DuckDB's message on one line (the project's rule), its hints kept ('Did you mean
    "tablebase"?', candidate columns): its lines joined, and the carets under a quoted
    line of SQL given as the text they mark."""
    lines = message.splitlines()
    out: list[str] = []
    for index, line in enumerate(lines):
        if not line.strip():
            continue
        if re.fullmatch(r"\s*\^+\s*", line) and index > 0 and out:
            marked = lines[index - 1][line.index("^") : line.rindex("^") + 1].strip()
            if marked:
                out[-1] += f" (at {marked})"
            continue
        out.append(line.strip())
    return " ".join(out)
