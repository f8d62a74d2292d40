"""`tablebase check`: is a data folder, or an unpacked bundle, what its checksums say it is?

Like the checksums published with the Syzygy tables, which caught a corrupted release:
  - SHA256SUMS (the format `sha256sum -c` reads) is there and lists every file with its
    checksum, and every listed file has it. In a bundle that is every file; in a data
    folder, the dataset that build and export write it for: catalog.parquet,
    tablebases.duckdb and every ruleset's files (pages/ and claims.md there are what
    `draw` and `claims` write, rewritten at will; a bundle lists them);
  - nothing is a symbolic link or anything but a file or a folder, and a bundle holds no
    hidden file: every byte read is the folder's own;
  - every catalog row's folder is `<game>/<slug>` inside the folder, its files exist and
    have the checksums the catalog records, and no other file or ruleset folder is there;
  - every file has its documented schema (pipeline/dataset.py), the same for every
    ruleset of a game;
  - each tablebase agrees with its catalog row: positions, values counted, reachable,
    start, start value and remoteness, longest remoteness.
Each problem is one line naming the file, one line a file.
"""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path, PurePosixPath
from typing import Callable, Iterable

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.dataset import CATALOG, RULESET_FILES, TABLEBASE, game_fields
from pipeline.errors import DataError
from pipeline.layout import RESERVED, DataDir, RulesetFiles, misplaced
from pipeline.parquet import atomic_path, read_table, require, sha256
from pipeline.rulesets import Ruleset

SUMS = "SHA256SUMS"
#: One line of SHA256SUMS: the digest, a space, a space or `*` (binary mode), the name.
SUMS_LINE = re.compile(r"([0-9a-fA-F]{64}) [ *](.+)")
#: The files of a ruleset's folder whose checksums the catalog records (`<kind>_sha256`).
CATALOGUED = tuple(kind.name for kind in RULESET_FILES if kind.name != "summary")
#: What a data folder holds beside the dataset: `draw`'s pages, `claims`' report, an old
#: bundle. A bundle's SHA256SUMS lists them; a data folder's does not.
PRODUCTS = (*RESERVED, "claims.md")
#: Hidden folders tablebase itself makes in a folder it reads (a bundle too): the checksum
#: cache and the lock files.
OWN_HIDDEN = (".cache", ".locks")
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


class _Report:
    """Problem lines, at most one per file: what is said of a file (or a folder) is not
    said again of it or of what it holds, so a file missing from both SHA256SUMS and the
    catalog is one line."""

    def __init__(self) -> None:
        self.entries: list[tuple[Path, str]] = []
        self.named: set[Path] = set()

    def add(self, path: Path, message: str, whole: bool = True) -> None:
        """`whole`: the message is about the file as a whole; a line about one of its
        parts (a catalog row, a line of SHA256SUMS) leaves other lines about it possible."""
        if path in self.named or any(parent in self.named for parent in path.parents):
            return
        if whole:
            self.named.add(path)
        self.entries.append((path, f"{path}: {message}"))


class _Digests:
    """Each file hashed once in a run (SHA256SUMS and the catalog name the same files)."""

    def __init__(self) -> None:
        self.found: dict[Path, str] = {}

    def matches(self, path: Path, recorded: str) -> bool:
        if path not in self.found:
            self.found[path] = sha256(path)
        return self.found[path] == recorded.lower()


def check(folder: Path, rulesets: set[str] | None = None) -> list[str]:
    """Every problem found in `folder`, one line each; empty when all is well.
    `rulesets`: only their files and the files beside the catalog (`tablebase verify`)."""
    store = DataDir(folder)
    if not folder.is_dir():
        return [f"{folder}: no such folder"]
    try:
        store.check_layout()
    except DataError as error:
        return [str(error)]
    report, digests = _Report(), _Digests()
    sums = folder / SUMS
    raw = _read_small(sums)
    bundle = is_bundle(folder, raw)
    files = _walk(folder, bundle, report)
    # first the files SHA256SUMS alone covers: the catalog, which all hangs on, and the summaries
    check_sums(folder, raw, bundle, files, digests, report, first=True)
    rows = _catalog_rows(store, files, report)
    if rows is not None:
        for row in rows:
            problem = misplaced(row)
            if problem:
                report.add(store.catalog, problem, whole=False)
        check_folders(store, rows, report)
        check_top_level(store, report)
        rows = [row for row in rows if not misplaced(row)]  # nothing is read where they point
    chosen = {row["folder"] for row in rows or [] if rulesets is None or row["ruleset"] in rulesets}

    def mine(name: str) -> bool:
        return rulesets is None or "/" not in name or name.rsplit("/", 1)[0] in chosen

    if rows is not None:
        if "tablebases.duckdb" in files or not (folder / "tablebases.duckdb").exists():
            check_database(store, report)
        schemas: dict[tuple[str, str], tuple[pa.Schema, Path]] = {}
        for row in rows:
            if row["folder"] in chosen:
                check_ruleset(store, row, schemas, files, digests, report)
    check_sums(folder, raw, bundle, files, digests, report, first=False, mine=mine)
    if rulesets is None:
        return [line for _, line in report.entries]
    return [line for path, line in report.entries
            if path.parent == folder or path.relative_to(folder).as_posix().rsplit("/", 1)[0] in chosen]


def is_bundle(folder: Path, sums: bytes | None = None) -> bool:
    """A bundle (`tablebase publish`), not a data folder: it has a DATASET.md, or its
    SHA256SUMS lists one."""
    listed = rb"^[0-9a-fA-F]{64} [ *]DATASET\.md\r?$"
    return (folder / "DATASET.md").exists() or bool(sums and re.search(listed, sums, re.M))


def _read_small(path: Path) -> bytes | None:
    """A regular file's bytes; None if there is none (a FIFO is never opened)."""
    try:
        if not stat.S_ISREG(os.lstat(path).st_mode):
            return None
        return path.read_bytes()
    except OSError:
        return None


def _walk(folder: Path, bundle: bool, report: _Report) -> set[str]:
    """The regular files of the folder (names relative to it) that belong to the dataset or
    must be listed; symbolic links, FIFOs, devices and (in a bundle) hidden files are
    reported and never followed or opened. A data folder's hidden scratch (.staging,
    .tmp, .trash, a file being written) and its products (pages/, claims.md) are left
    out."""
    files = set()
    pending = [PurePosixPath()]
    while pending:
        relative = pending.pop()
        try:
            entries = sorted(os.scandir(folder / relative), key=lambda entry: entry.name)
        except OSError as error:
            report.add(folder / relative, f"not readable ({error.strerror})")
            continue
        for entry in entries:
            name = relative / entry.name
            path = folder / name
            top = relative == PurePosixPath()
            if entry.name.startswith("."):
                if bundle and not (top and entry.name in OWN_HIDDEN):
                    report.add(path, "a hidden file in a bundle (a bundle holds only its dataset)")
                continue
            if not bundle and top and entry.name in PRODUCTS:
                continue
            if entry.is_symlink():
                report.add(path, "a symbolic link (a dataset holds its own files, not links to others)")
            elif entry.is_dir(follow_symlinks=False):
                pending.append(name)
            elif entry.is_file(follow_symlinks=False):
                files.add(name.as_posix())
            else:
                report.add(path, "not a regular file")
    return files


def _catalog_rows(store: DataDir, files: set[str], report: _Report) -> list[dict] | None:
    """The catalog's rows, each ruleset once; None (and the problem reported) if it is
    missing, unreadable or not of the documented schema."""
    if "catalog.parquet" not in files:
        if not store.catalog.exists():
            report.add(store.catalog, "missing")
        return None
    try:
        catalog = pq.read_table(store.catalog)
    except (OSError, pa.ArrowException) as error:
        report.add(store.catalog, f"not a readable Parquet file ({error})")
        return None
    if catalog.schema != CATALOG.schema():
        report.add(store.catalog, "its schema is not the documented one")
        return None
    rows, seen = [], set()
    for row in catalog.to_pylist():
        if row["ruleset"] in seen:
            report.add(store.catalog, f"{row['ruleset']} has more than one row", whole=False)
        else:
            rows.append(row)
        seen.add(row["ruleset"])
    return rows


def parse_sums(raw: bytes, sums: Path) -> tuple[dict[str, str], list[str]]:
    """SHA256SUMS's names and digests, and a problem line for each line that is not
    `<sha256>  <file>` naming a file inside the folder, once."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError:
        return {}, [f"{sums}: not a text file of '<sha256>  <file>' lines"]
    listed: dict[str, str] = {}
    problems = []
    for number, line in enumerate(text.splitlines(), 1):
        match = SUMS_LINE.fullmatch(line)
        if not match:
            problems.append(f"{sums}: line {number} is not '<sha256>  <file>'")
            continue
        digest, name = match.group(1).lower(), match.group(2)
        if (name.startswith("/") or "\\" in name or "\0" in name or ".." in PurePosixPath(name).parts
                or PurePosixPath(name).as_posix() != name):
            problems.append(f"{sums}: line {number} names {name!r}, outside the folder")
        elif name in listed:
            problems.append(f"{sums}: line {number} lists {name} a second time")
        else:
            listed[name] = digest
    return listed, problems


def listed_sums(folder: Path) -> dict[str, str]:
    """The checksums SHA256SUMS lists in `folder`; empty if it has none or none readable."""
    raw = _read_small(folder / SUMS)
    return parse_sums(raw, folder / SUMS)[0] if raw is not None else {}


def check_sums(folder: Path, raw: bytes | None, bundle: bool, files: set[str], digests: _Digests,
               report: _Report, first: bool, mine: Callable[[str], bool] = lambda name: True) -> None:
    """SHA256SUMS against the files beside it: there, every listed file with its checksum,
    and every file listed. `first`: SHA256SUMS itself and the files no catalog row covers
    (beside the catalog, and the summaries); else the others, and the files not listed.
    Only files `mine` says are hashed."""
    sums = folder / SUMS
    listed, problems = parse_sums(raw, sums) if raw is not None else ({}, [])
    if not first:
        if raw is not None and (listed or not problems):  # not a list at all: one line, not one a file
            for name, digest in listed.items():
                if not _sums_alone(name):
                    _check_listed(folder / name, name, digest, files, digests, report, mine)
            for name in sorted(files - set(listed) - {SUMS}):
                report.add(folder / name, f"not listed in {SUMS}")
        return
    if raw is None:
        if bundle:
            report.add(sums, "missing: every bundle lists its files' checksums there (unpack the archive again)")
        else:
            report.add(sums, f"missing: `tablebase export --data {folder}` writes it "
                             "(data folders written before it was kept have none)")
        return
    for line in problems:
        report.add(sums, line.removeprefix(f"{sums}: "), whole=False)
    for name, digest in listed.items():
        if _sums_alone(name):
            _check_listed(folder / name, name, digest, files, digests, report, mine)


def _sums_alone(name: str) -> bool:
    """A file whose checksum only SHA256SUMS records (no catalog row)."""
    return "/" not in name or name.endswith("/summary.parquet")


def _check_listed(path: Path, name: str, digest: str, files: set[str], digests: _Digests, report: _Report,
                  mine: Callable[[str], bool]) -> None:
    if name not in files:
        report.add(path, f"missing (listed in {SUMS})")
    elif mine(name) and not digests.matches(path, digest):
        report.add(path, f"its SHA-256 differs from {SUMS}")


def check_folders(store: DataDir, rows: list[dict], report: _Report) -> None:
    """Ruleset folders and files that no catalog row accounts for."""
    folders = {row["folder"] for row in rows}
    names = {f"{kind.name}.parquet" for kind in RULESET_FILES}
    for game in sorted(p for p in store.root.iterdir() if _real_dir(p) and not p.name.startswith(".")):
        if game.name in RESERVED:
            continue
        for path in sorted(game.iterdir()):
            relative = f"{game.name}/{path.name}"
            if not _real_dir(path) or relative not in folders:
                report.add(path, "not in the catalog")
                continue
            for extra in sorted(path.iterdir()):
                if extra.name not in names and not extra.name.startswith("."):
                    report.add(extra, "not a file of a ruleset's folder")


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


#: Files a data folder or bundle holds beside the rulesets' folders.
TOP_LEVEL = ("catalog.parquet", "tablebases.duckdb", SUMS, "DATASET.md", "LICENSE", "claims.md")


def check_top_level(store: DataDir, report: _Report) -> None:
    """Files beside the catalog that no part of the dataset accounts for."""
    for path in sorted(store.root.iterdir()):
        if not path.is_dir() and path.name not in TOP_LEVEL and not path.name.startswith("."):
            report.add(path, "not a file of the dataset")


def check_database(store: DataDir, report: _Report) -> None:
    """tablebases.duckdb is there and was written with this catalog."""
    path = store.database
    if not path.exists():
        report.add(path, "missing (tablebase export rewrites it)")
        return
    try:
        con = duckdb.connect(str(path), read_only=True)
        try:
            recorded = con.sql("SELECT ruleset, tablebase_sha256, transitions_sha256 FROM published ORDER BY ALL").fetchall()
        finally:
            con.close()
    except duckdb.Error as error:
        report.add(path, f"not readable ({str(error).splitlines()[0]})")
        return
    catalog = pq.read_table(store.catalog, columns=["ruleset", "tablebase_sha256", "transitions_sha256"]).to_pylist()
    if recorded != sorted(tuple(row.values()) for row in catalog):
        report.add(path, "written with another catalog (tablebase export rewrites it)")


def check_ruleset(store: DataDir, row: dict, schemas: dict, files: set[str], digests: _Digests,
                  report: _Report) -> None:
    """One catalog row against its folder's files."""
    folder = store.root / row["folder"]
    ok = True
    for kind in RULESET_FILES:
        path = folder / f"{kind.name}.parquet"
        if f"{row['folder']}/{path.name}" not in files:
            report.add(path, "missing")
            ok = False
            continue
        recorded = row.get(f"{kind.name}_sha256")
        if recorded is not None and not digests.matches(path, recorded):
            report.add(path, "its SHA-256 differs from the catalog's")
            ok = False
            continue
        try:
            schema = pq.read_schema(path)
        except (OSError, pa.ArrowException) as error:
            report.add(path, f"not a readable Parquet file ({error})")
            ok = False
            continue
        if schema.remove_metadata() != kind.schema(game_fields(schema, kind)):
            report.add(path, f"its schema is not the documented one for {kind.name}.parquet")
            ok = False
            continue
        first = schemas.setdefault((row["game"], kind.name), (schema, path))
        if schema.remove_metadata() != first[0].remove_metadata():
            report.add(path, f"its schema differs from {first[1]} (same game, same kind)")
            ok = False
    if not ok:
        return
    try:
        summary = pq.read_table(folder / "summary.parquet").to_pylist()
    except (OSError, pa.ArrowException) as error:  # no catalog checksum to catch it first
        report.add(folder / "summary.parquet", f"not a readable Parquet file ({error})")
        return
    if summary != [row]:
        report.add(folder / "summary.parquet", "differs from its catalog row")
    tablebase = folder / "tablebase.parquet"
    if pq.read_schema(tablebase).names[: len(TABLEBASE.head)] != [c.name for c in TABLEBASE.head]:
        report.add(tablebase, "its schema is not the documented one")
        return
    con = duckdb.connect()
    try:
        counted = con.sql(COUNTS, params={"path": str(tablebase), "start": row["start"]}).to_arrow_table().to_pylist()[0]
        others = con.execute("SELECT count(*) FROM read_parquet(?) WHERE ruleset <> ?", [str(tablebase), row["ruleset"]]).fetchall()[0][0]
    except duckdb.Error as error:  # its bytes match the catalog's: written so by a faulty export
        report.add(tablebase, f"not readable ({str(error).splitlines()[0]})")
        return
    finally:
        con.close()
    if not counted.pop("start_found"):
        report.add(tablebase, f"has no start position {row['start']!r}", whole=False)
    differ = [f"{name} {counted[name]} (catalog: {row[name]})" for name in counted if counted[name] != row[name]]
    if differ:
        report.add(tablebase, f"disagrees with its catalog row: {', '.join(differ)}", whole=False)
    if others:
        report.add(tablebase, f"{others} rows name another ruleset than {row['ruleset']}", whole=False)


# -- the data folder's SHA256SUMS ---------------------------------------------------------


def write_sums(store: DataDir, fresh: Iterable[str] = ()) -> None:
    """Rewrite the data folder's SHA256SUMS, under the publish lock, after the catalog or
    the database: every file of the dataset with its SHA-256.

    The files the catalog covers get its checksums, taken when export wrote them.
    catalog.parquet, tablebases.duckdb and each summary.parquet are hashed where `fresh`
    (names relative to the folder) says this process has just written them, or where the
    old SHA256SUMS does not list them; otherwise they keep the checksum listed, so damage
    done since is not taken in."""
    old = listed_sums(store.root)
    fresh = set(fresh)

    def digest(name: str) -> str | None:
        if name in old and name not in fresh:
            return old[name]
        path = store.root / name
        return sha256(path) if path.is_file() else None

    listed = {name: digest(name) for name in ("catalog.parquet", "tablebases.duckdb")}
    if store.catalog.is_file():
        for row in read_table(store.catalog).to_pylist():
            if misplaced(row):
                continue  # never written so; `check` says what is wrong with it
            listed.update({f"{row['folder']}/{kind}.parquet": row[f"{kind}_sha256"] for kind in CATALOGUED})
            listed[f"{row['folder']}/summary.parquet"] = digest(f"{row['folder']}/summary.parquet")
    with atomic_path(store.root / SUMS) as tmp:
        tmp.write_text("".join(f"{digest}  {name}\n" for name, digest in sorted(listed.items()) if digest))


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
