"""Views over every built tablebase, so that queries never spell out file paths.

    catalog      one row per built ruleset (data/catalog.parquet)
    tablebase    every position of every ruleset (each catalog row's tablebase_path)
    transitions  every move of every ruleset (each catalog row's transitions_path)

`connect_views` defines them in memory for the command line. `write_database` writes
data/tablebases.duckdb, which holds the same views by paths relative to its own folder,
so the folder can be moved, copied or unpacked anywhere (see `DATABASE_HELP`).
"""

from __future__ import annotations

import atexit
import glob
import shutil
import tempfile
from pathlib import Path

import duckdb

from pipeline.core import signals
from pipeline.core.errors import DataError
from pipeline.core.kinds import QUERIED
from pipeline.datadir.check import trusted_catalog
from pipeline.datadir.layout import DataDir
from pipeline.storage import parts
from pipeline.storage.db import DEFAULT_MEMORY_LIMIT, quote_path
from pipeline.storage.files import atomic_path

#: The views every connection of ours and data/tablebases.duckdb define.
VIEWS = frozenset({"catalog", "tablebase", "transitions"})
#: The oldest DuckDB release that can open data/tablebases.duckdb.
STORAGE_VERSION = "v1.1.0"
#: What the database's views say when they meet another data folder than their own.
FOREIGN = (
    "tablebases.duckdb: catalog.parquet in this folder is not the one the database was written "
    "with, or some files were found in another folder; open the database from its own folder "
    "(cd into it, or from a folder holding none of its files SET file_search_path to it)"
)


#: Each view of data/tablebases.duckdb, as its comment says it.
VIEW_COMMENTS = {
    "catalog": "one row per built ruleset (catalog.parquet)",
    "tablebase": "every position of every built ruleset (each catalog row's tablebase_path)",
    "transitions": "every move of every built ruleset (each catalog row's transitions_path)",
}
#: How to open the database, said in each view's comment.
WHERE_FROM = (
    ". It reads the files beside tablebases.duckdb by paths relative to its folder: open it from "
    "that folder (cd into it), or SET file_search_path to it first; from anywhere else DuckDB "
    'answers No files found that match the pattern "catalog.parquet" (or a ruleset\'s file)'
)


def published_paths(data: Path, trusted: list[dict] | None = None) -> dict[str, list[str]]:
    """Each view's files, relative to `data`, from the catalog (DataError if none is built,
    or if a row names a file anywhere but where the folder's layout puts it), or from
    the `trusted` rows `trusted_catalog` returned, whose paths it has checked so."""
    store = DataDir(data)
    rows = trusted
    if rows is None:
        from pipeline.storage.parquet import read_table, require

        require(store.catalog, "catalog")
        rows = read_table(
            store.catalog, columns=["ruleset", "game", "folder", *(f"{kind}_path" for kind in QUERIED)]
        ).to_pylist()
    if not rows:
        raise DataError(f"no tablebase has been built in {data}: run `make all` or `tablebase build`")
    for row in rows if trusted is None else ():
        problem = store.layout.misplaced(row)
        if problem:
            raise DataError(f"{store.catalog}: {problem}: see `tablebase check`")
        for kind in QUERIED:
            store.inside(row[f"{kind}_path"])
    return {kind: [row[f"{kind}_path"] for row in rows] for kind in QUERIED}


def define_views(
    con: duckdb.DuckDBPyConnection,
    data: Path,
    relative: bool = False,
    guard: str = "",
    trusted: list[dict] | None = None,
    views: set[str] | None = None,
    each_part: bool = False,
) -> dict[str, list[str]]:
    """Create the views catalog, tablebase and transitions over `data` in `con` (those in
    `views` only, if given); each view's files, relative to `data` (`published_paths`).

    `relative`: name the files relative to `data`. `guard`: an SQL condition every view
    also requires. `trusted`: the catalog's rows as `trusted_catalog` returned them.
    `each_part`: a folder of parts (its glob in the catalog) named part by part, as they are
    now: a connection that may open named files only (connect_views) lists no folder."""
    paths = published_paths(data, trusted)
    if each_part:
        paths = {kind: [name for file in files for name in _each_part(data, file)] for kind, files in paths.items()}
    where = f" WHERE {guard}" if guard else ""

    def literal(file: str) -> str:
        return quote_path(file if relative else data / file)

    if views is None or "catalog" in views:
        con.execute(
            f"CREATE OR REPLACE VIEW catalog AS SELECT * FROM read_parquet({literal('catalog.parquet')}){where}"
        )
    for name, files in paths.items():
        if views is not None and name not in views:
            continue  # binding it would read the footer of every file it names
        listed = ", ".join(literal(file) for file in files)
        con.execute(
            f"CREATE OR REPLACE VIEW {name} AS SELECT * FROM read_parquet([{listed}], union_by_name = true){where}"
        )
    return paths


def _each_part(data: Path, file: str) -> list[str]:
    """The catalog's `file` (relative to `data`), or its parts where it names a folder's glob."""
    if not file.endswith("/part-*.parquet"):
        return [file]
    return [
        part.relative_to(data).as_posix()
        for part in parts.parts(data / f"{file.removesuffix('/part-*.parquet')}.parquet")
    ]


def write_database(data: Path) -> Path:
    """Write data/tablebases.duckdb: the views over the files beside it, by relative paths.

    DuckDB resolves a relative path from the working directory or `file_search_path`, so
    the views work wherever the folder goes once either points into it. A view that meets
    the files of another data folder fails (their catalog differs from the one recorded
    here) instead of reading them. Written in the storage format of DuckDB 1.1.
    """
    store = DataDir(data)
    path = store.database
    with atomic_path(path) as tmp:
        con = duckdb.connect()
        try:
            con.execute(f"ATTACH {quote_path(tmp)} AS tablebases (STORAGE_VERSION '{STORAGE_VERSION}')")
            con.execute("USE tablebases")
            set_search_path(con, data)
            con.execute(f"""CREATE TABLE published AS
                SELECT ruleset, tablebase_sha256, transitions_sha256
                FROM read_parquet({quote_path(store.catalog)})""")
            files = ["catalog.parquet", *(file for listed in published_paths(data).values() for file in listed)]
            listed = ", ".join(quote_path(file) for file in files)
            # a folder of parts' glob (tablebase/part-*.parquet) finds each of its parts
            found = sum(len(glob.glob(glob.escape(str(data)) + "/" + file)) if "*" in file else 1 for file in files)
            # DuckDB looks for a relative path in the working directory first, then in
            # file_search_path: every file must be found, all in one folder (glob names
            # each as found: relative, or under the search path), holding this catalog. A
            # ruleset's file is three names below that folder in either layout (a data
            # folder's <game>/<slug>/<kind>.parquet, a bundle's <kind>/<game>/<slug>.parquet),
            # and a part of a folder of parts four (<game>/<slug>/<kind>/part-00000.parquet,
            # <kind>/<game>/<slug>/part-00000.parquet)
            con.execute(f"""CREATE MACRO same_folder() AS (
                SELECT CASE WHEN (SELECT count(*) = {found} AND count(DISTINCT
                                    CASE WHEN file LIKE '%catalog.parquet' THEN parse_dirpath(file)
                                         WHEN regexp_matches(replace(file, chr(92), '/'), '(/(tablebase|transitions)|(^|/)(tablebase|transitions)/[^/]+/[^/]+)/part-[0-9]+[.]parquet$')
                                         THEN parse_dirpath(parse_dirpath(parse_dirpath(parse_dirpath(file))))
                                         ELSE parse_dirpath(parse_dirpath(parse_dirpath(file))) END) = 1
                                  FROM glob([{listed}]))
                             AND count(*) = 0
                            THEN true ELSE error({quote_path(FOREIGN)}) END
                FROM ((SELECT ruleset, tablebase_sha256, transitions_sha256 FROM read_parquet('catalog.parquet')
                       EXCEPT SELECT * FROM published)
                      UNION ALL
                      (SELECT * FROM published
                       EXCEPT SELECT ruleset, tablebase_sha256, transitions_sha256 FROM read_parquet('catalog.parquet'))))""")
            define_views(con, data, relative=True, guard="same_folder()")
            con.execute(
                "COMMENT ON MACRO same_folder IS 'true when every file is found in one folder, whose "
                "catalog.parquet is the one this database was written with'"
            )
            # what a user who opened the database elsewhere finds in duckdb_views(): DuckDB's
            # own error (No files found that match the pattern "catalog.parquet") names no setting
            for view, what in VIEW_COMMENTS.items():
                con.execute(f"COMMENT ON VIEW {view} IS {quote_path(what + WHERE_FROM)}")
            con.execute("USE memory")
            con.execute("CHECKPOINT tablebases")
            con.execute("DETACH tablebases")
        finally:
            con.close()
        _check_database(tmp, data, files)
    return path


def set_search_path(con: duckdb.DuckDBPyConnection, data: Path) -> None:
    """Relative paths resolve in `data`. DuckDB splits file_search_path on commas, so a
    folder with one in its path is named by a link without (in its own scratch space)."""
    folder = data.resolve()
    if "," in str(folder):
        link = Path(tempfile.mkdtemp(prefix="tablebase-")) / "data"
        link.symlink_to(folder, target_is_directory=True)
        folder = link
    con.execute("SET file_search_path = ?", [str(folder)])


def _check_database(path: Path, data: Path, files: list[str]) -> None:
    """Open the database just written and count every view's rows before it replaces the old
    one: a full disk must not leave a database without its views.

    DuckDB looks for the views' relative `files` in the working directory before
    file_search_path: where one is found there (another data folder's catalog.parquet), the
    count runs in a child process working in `data` (the views would rightly refuse a mix)."""
    here = Path.cwd().resolve()
    if here != data.resolve() and any((here / file).exists() for file in files):
        _check_database_in(path, data)
        return
    try:
        con = duckdb.connect(str(path), read_only=True)
        try:
            set_search_path(con, data)
            for view in ("catalog", "tablebase", "transitions"):
                con.sql(f"SELECT count(*) FROM {view}").fetchall()
        finally:
            con.close()
    except duckdb.Error as error:
        raise DataError(f"{path.name} could not be written whole ({str(error).splitlines()[0]})") from None
    wal = path.with_name(path.name + ".wal")
    if wal.exists():
        raise DataError(f"{path.name} could not be written whole (its log {wal.name} was left behind)")


def _check_database_in(path: Path, data: Path) -> None:
    """`_check_database` in a child process whose working directory is `data`."""
    import subprocess
    import sys

    count = (
        "import sys, duckdb\n"
        "con = duckdb.connect(sys.argv[1], read_only=True)\n"
        "for view in ('catalog', 'tablebase', 'transitions'):\n"
        "    con.sql(f'SELECT count(*) FROM {view}').fetchall()\n"
    )
    done = subprocess.run([sys.executable, "-c", count, str(path.resolve())], cwd=data, capture_output=True, text=True)
    if done.returncode:
        last = (done.stderr.strip().splitlines() or ["no message"])[-1]
        raise DataError(f"{path.name} could not be written whole ({last})")
    wal = path.with_name(path.name + ".wal")
    if wal.exists():
        raise DataError(f"{path.name} could not be written whole (its log {wal.name} was left behind)")


def connect_views(
    data: Path,
    read_only: bool = False,
    views: set[str] | None = None,
    con: duckdb.DuckDBPyConnection | None = None,
) -> duckdb.DuckDBPyConnection:
    """An in-memory connection with the views defined (those in `views`, if given), once the
    catalog and every file it names have their recorded checksums (`trusted_catalog`, read
    through the connection); `con`, the caller's in-memory connection, or a new one.

    `read_only`: the connection may open the files the views read and no other (DuckDB's
    allowed_paths, with enable_external_access off: no other file read or written, no
    extension, no Python variable read as a table), and its settings are locked. DuckDB
    reads the files itself, as it does from data/tablebases.duckdb, so a filter on
    `ruleset` skips the other rulesets' row groups by their statistics. allowed_paths would
    let a COPY write those files too: the caller lets no statement that writes reach the
    connection (`pipeline.products.query.writes_nothing`). DuckDB spills beyond
    TABLEBASE_MEMORY_LIMIT into a folder of its own in the temp folder, removed when the
    command ends (a GROUP BY of dobutsu's 493 million positions took 19 GB and was killed
    with no folder to spill to)."""
    store = DataDir(data)
    store.check_layout()
    made = con is None
    con = duckdb.connect() if con is None else con  # a connection costs tens of milliseconds: one
    try:
        rows = trusted_catalog(store, con)  # what the views read has its recorded checksums
        # the views' query reads the footers of every file again, as binding them did
        con.execute("SET parquet_metadata_cache = true")
        paths = define_views(con, data, trusted=rows, views=views, each_part=read_only)
    except BaseException:
        if made:
            con.close()
        raise
    if not read_only:
        return con
    files = [store.catalog, *(data / file for listed in paths.values() for file in listed)]
    con.execute("SET allowed_paths = ?", [[str(file) for file in files]])
    spill = Path(tempfile.mkdtemp(prefix="tablebase-spill-"))
    atexit.register(shutil.rmtree, spill, True)
    signals.scratch(spill, spill.parent)  # a signal ends the process past atexit (os._exit): removed then too
    con.execute(f"SET temp_directory = {quote_path(spill)}")
    con.execute(f"SET memory_limit = '{DEFAULT_MEMORY_LIMIT}'")
    con.execute("SET enable_external_access = false")
    con.execute("SET lock_configuration = true")
    return con
