"""`tablebase check`: is a data folder, or an unpacked bundle, what its catalog says it is?

Like the checksums published with the Syzygy tables, which caught a corrupted release:
  - every file listed in SHA256SUMS (where there is one) has its checksum, and no file
    is there that SHA256SUMS does not list;
  - every catalog row's files exist, have the checksums the catalog records, and no other
    file or ruleset folder is there;
  - every file has its documented schema (pipeline/dataset.py), the same for every
    ruleset of a game;
  - each tablebase agrees with its catalog row: positions, values counted, reachable,
    start, start value and remoteness, longest remoteness.
Each problem is one line naming the file.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset import CATALOG, RULESET_FILES, TABLEBASE, game_fields
from pipeline.errors import DataError
from pipeline.layout import RESERVED, DataDir, RulesetFiles
from pipeline.parquet import atomic_path, require, sha256
from pipeline.rulesets import Ruleset

SUMS = "SHA256SUMS"
#: What the tablebase's rows must add up to, against the catalog row.
COUNTS = """
    SELECT count(*) AS positions,
           count(*) FILTER (WHERE value = 'win') AS wins,
           count(*) FILTER (WHERE value = 'loss') AS losses,
           count(*) FILTER (WHERE value = 'tie') AS ties,
           count(*) FILTER (WHERE value = 'draw') AS draws,
           count(*) FILTER (WHERE reachable) AS reachable,
           max(remoteness) AS max_remoteness,
           any_value(value) FILTER (WHERE position = $start) AS start_value,
           any_value(remoteness) FILTER (WHERE position = $start) AS start_remoteness,
           count(*) FILTER (WHERE position = $start) AS start_found
    FROM read_parquet($path)"""


def check(folder: Path) -> list[str]:
    """Every problem found in `folder`, one line each; empty when all is well."""
    store = DataDir(folder)
    if not folder.is_dir():
        return [f"{folder}: no such folder"]
    try:
        store.check_layout()
    except DataError as error:
        return [str(error)]
    problems = []
    sums = folder / SUMS
    if sums.exists():
        problems += check_sums(folder, sums)
    if not store.catalog.exists():
        return problems + [f"{store.catalog}: missing"]
    try:
        catalog = pq.read_table(store.catalog)
    except (OSError, pa.ArrowException) as error:
        return problems + [f"{store.catalog}: not a readable Parquet file ({error})"]
    if catalog.schema != CATALOG.schema():
        return problems + [f"{store.catalog}: its schema is not the documented one"]
    rows = catalog.to_pylist()
    seen: set[str] = set()
    for row in rows:
        if row["ruleset"] in seen:
            problems.append(f"{store.catalog}: {row['ruleset']} has more than one row")
        seen.add(row["ruleset"])
    problems += check_folders(store, rows)
    problems += check_top_level(store)
    problems += check_database(store)
    schemas: dict[tuple[str, str], tuple[pa.Schema, Path]] = {}
    for row in rows:
        problems += check_ruleset(store, row, schemas)
    return problems


def check_sums(folder: Path, sums: Path) -> list[str]:
    """SHA256SUMS (the format `sha256sum -c` reads) against the files beside it."""
    problems, listed = [], set()
    for number, line in enumerate(sums.read_text().splitlines(), 1):
        digest, _, name = line.partition("  ")
        name = name.removeprefix("*")
        if len(digest) != 64 or not name:
            problems.append(f"{sums}: line {number} is not '<sha256>  <file>'")
            continue
        if name.startswith("/") or ".." in Path(name).parts:
            problems.append(f"{sums}: line {number} names {name!r}, outside the folder")
            continue
        listed.add(name)
        path = folder / name
        if not path.is_file():
            problems.append(f"{path}: missing (listed in {SUMS})")
        elif sha256(path) != digest:
            problems.append(f"{path}: its SHA-256 differs from {SUMS}")
    for path in sorted(p for p in folder.rglob("*") if p.is_file()):
        name = path.relative_to(folder).as_posix()
        if name != SUMS and name not in listed and not _scratch(path.relative_to(folder)):
            problems.append(f"{path}: not listed in {SUMS}")
    return problems


def check_folders(store: DataDir, rows: list[dict]) -> list[str]:
    """Ruleset folders and files that no catalog row accounts for."""
    problems = []
    folders = {row["folder"] for row in rows}
    names = {f"{kind.name}.parquet" for kind in RULESET_FILES}
    for game in sorted(p for p in store.root.iterdir() if p.is_dir() and not _scratch(Path(p.name))):
        if game.name in RESERVED:
            continue
        for path in sorted(game.iterdir()):
            relative = f"{game.name}/{path.name}"
            if not path.is_dir() or relative not in folders:
                problems.append(f"{path}: not in the catalog")
                continue
            problems += [f"{extra}: not a file of a ruleset's folder"
                         for extra in sorted(path.iterdir()) if extra.name not in names and not extra.name.startswith(".")]
    return problems


#: Files a data folder or bundle holds beside the rulesets' folders.
TOP_LEVEL = ("catalog.parquet", "tablebases.duckdb", SUMS, "DATASET.md", "LICENSE", "claims.md")


def check_top_level(store: DataDir) -> list[str]:
    """Files beside the catalog that no part of the dataset accounts for."""
    return [f"{path}: not a file of the dataset" for path in sorted(store.root.iterdir())
            if path.is_file() and path.name not in TOP_LEVEL and not path.name.startswith(".")]


def check_database(store: DataDir) -> list[str]:
    """tablebases.duckdb is there and was written with this catalog."""
    path = store.database
    if not path.exists():
        return [f"{path}: missing (tablebase export rewrites it)"]
    try:
        con = duckdb.connect(str(path), read_only=True)
        try:
            recorded = con.sql("SELECT ruleset, tablebase_sha256, transitions_sha256 FROM published ORDER BY ALL").fetchall()
        finally:
            con.close()
    except duckdb.Error as error:
        return [f"{path}: not readable ({str(error).splitlines()[0]})"]
    catalog = pq.read_table(store.catalog, columns=["ruleset", "tablebase_sha256", "transitions_sha256"]).to_pylist()
    if recorded != sorted(tuple(row.values()) for row in catalog):
        return [f"{path}: written with another catalog (tablebase export rewrites it)"]
    return []


def check_ruleset(store: DataDir, row: dict, schemas: dict) -> list[str]:
    """One catalog row against its folder's files."""
    folder = store.root / row["folder"]
    problems = []
    for kind in RULESET_FILES:
        path = folder / f"{kind.name}.parquet"
        if not path.is_file():
            problems.append(f"{path}: missing")
            continue
        recorded = row.get(f"{kind.name}_sha256")
        if recorded is not None and sha256(path) != recorded:
            problems.append(f"{path}: its SHA-256 differs from the catalog's")
            continue
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as error:
            problems.append(f"{path}: not a readable Parquet file ({error})")
            continue
        if schema.remove_metadata() != kind.schema(game_fields(schema, kind)):
            problems.append(f"{path}: its schema is not the documented one for {kind.name}.parquet")
            continue
        first = schemas.setdefault((row["game"], kind.name), (schema, path))
        if schema.remove_metadata() != first[0].remove_metadata():
            problems.append(f"{path}: its schema differs from {first[1]} (same game, same kind)")
    if problems:
        return problems
    summary = pq.read_table(folder / "summary.parquet").to_pylist()
    if summary != [row]:
        problems.append(f"{folder / 'summary.parquet'}: differs from its catalog row")
    tablebase = folder / "tablebase.parquet"
    if pq.read_schema(tablebase).names[: len(TABLEBASE.head)] != [c.name for c in TABLEBASE.head]:
        return problems + [f"{tablebase}: its schema is not the documented one"]
    con = duckdb.connect()
    counted = con.sql(COUNTS, params={"path": str(tablebase), "start": row["start"]}).to_arrow_table().to_pylist()[0]
    others = con.execute("SELECT count(*) FROM read_parquet(?) WHERE ruleset <> ?", [str(tablebase), row["ruleset"]]).fetchall()[0][0]
    con.close()
    if not counted.pop("start_found"):
        problems.append(f"{tablebase}: has no start position {row['start']!r}")
    differ = [f"{name} {counted[name]} (catalog: {row[name]})" for name in counted if counted[name] != row[name]]
    if differ:
        problems.append(f"{tablebase}: disagrees with its catalog row: {', '.join(differ)}")
    if others:
        problems.append(f"{tablebase}: {others} rows name another ruleset than {row['ruleset']}")
    return problems


def _scratch(relative: Path) -> bool:
    """Work in progress and hidden files (data/.staging, .tmp, .trash, .x.tmp)."""
    return any(part.startswith(".") for part in relative.parts)


def trusted(store: DataDir, rules: Ruleset) -> RulesetFiles:
    """The ruleset's folder, once its tablebase and transitions match the catalog's
    checksums (probe, play and draw read nothing else); DataError naming the file if not."""
    files = store.published(rules)
    catalog = pq.read_table(require(store.catalog, "catalog"),
                            columns=["ruleset", "tablebase_sha256", "transitions_sha256"]).to_pylist()
    row = next((r for r in catalog if r["ruleset"] == rules.id), None)
    if row is None:
        raise DataError(f"{rules.id} is not built in {store.root} (build it with `tablebase build {rules.id}`)")
    for kind in ("tablebase", "transitions"):
        path = require(files.dir / f"{kind}.parquet", f"{kind} of {rules.id}")
        if cached_sha256(store, path) != row[f"{kind}_sha256"]:
            raise DataError(f"{path} is not the file the catalog records (its SHA-256 differs): "
                            f"rebuild it with `tablebase build {rules.id}`, or see `tablebase check`")
    return files


def cached_sha256(store: DataDir, path: Path) -> str:
    """`path`'s SHA-256, remembered in data/.cache/sha256.json while the file's size, times
    and inode stay the same (any write changes its ctime, which no user can set back)."""
    cache_file = store.root / ".cache" / "sha256.json"
    try:
        cache = json.loads(cache_file.read_text())
    except (OSError, ValueError):
        cache = {}
    info = path.stat()
    stamp = [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]
    key = path.relative_to(store.root).as_posix()
    entry = cache.get(key)
    if isinstance(entry, list) and entry[:4] == stamp:
        return entry[4]
    digest = sha256(path)
    cache[key] = [*stamp, digest]
    try:
        with atomic_path(cache_file) as tmp:
            tmp.write_text(json.dumps(cache))
    except OSError:
        pass  # a read-only data folder: no cache, just slower
    return digest
