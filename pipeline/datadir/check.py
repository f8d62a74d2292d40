"""`tablebase check`: is a data folder, or an unpacked bundle, what its checksums say it is?

Like the checksums published with the Syzygy tables, which caught a corrupted release:
  - SHA256SUMS (the format `sha256sum -c` reads) is there and lists every file with its
    checksum, and every listed file has it. In a bundle that is every file; in a data
    folder, the dataset that build and export write it for: catalog.parquet,
    tablebases.duckdb and every ruleset's files (pages/ and claims.md there are what
    `draw` and `claims` write, rewritten at will; a bundle lists them);
  - nothing is a symbolic link or anything but a file or a folder, and a bundle holds no
    hidden file: every byte read is the folder's own;
  - every catalog row's folder is `<game>/<slug>`, its files exist where the folder's
    layout puts them (a data folder: <game>/<slug>/<kind>.parquet; a bundle:
    <kind>/<game>/<slug>.parquet) and have the checksums the catalog records, and no other
    file or ruleset folder is there;
  - every file has its documented schema (pipeline/core/dataset.py), the same for every
    ruleset of a game;
  - each tablebase agrees with its catalog row: positions, values counted, reachable,
    start, start value and remoteness, longest remoteness.
Each problem is one line naming the file, one line a file. A file found to differ from
its checksum is remembered as damaged (`cached_sha256`): no command reads it until it is
written again (its ruleset rebuilt).
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import shlex
import stat
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import ExitStack, contextmanager, suppress
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypeGuard

import duckdb

from pipeline import __version__
from pipeline.core.errors import DataError, NotBuiltError
from pipeline.core.kinds import QUERIED, RULESET_KINDS
from pipeline.core.values import WORDS
from pipeline.datadir.layout import RESERVED, DataDir, Layout, RulesetPaths, is_bundle
from pipeline.storage import parts
from pipeline.storage.files import atomic_path
from pipeline.storage.parts import regular

# pyarrow, the dataset's schemas and the games are imported where a check needs them: the
# reading commands trust the catalog (trusted_catalog, through DuckDB) without them
if TYPE_CHECKING:
    import pyarrow as pa

    from pipeline.core.dataset import CatalogRow
    from pipeline.games.rulesets import Ruleset

SUMS = "SHA256SUMS"
#: One line of SHA256SUMS: the digest, a space, a space or `*` (binary mode), the name.
SUMS_LINE = re.compile(r"([0-9a-fA-F]{64}) [ *](.+)")
#: The files of a ruleset's folder whose checksums the catalog records (`<kind>_sha256`).
CATALOGUED = tuple(kind for kind in RULESET_KINDS if kind != "summary")
#: What a data folder holds beside the dataset: `draw`'s pages, `claims`' report, an old
#: bundle. A bundle's SHA256SUMS lists them; a data folder's does not.
PRODUCTS = (*RESERVED, "claims.md")
#: Hidden folders tablebase itself makes in a folder it reads (a bundle too): the checksum
#: cache and the lock files.
OWN_HIDDEN = (".cache", ".locks")
#: What the tablebase's rows must add up to, against the catalog row; the value words are
#: parameters (pipeline/core/values.py's, `$win` ...).
COUNTS = """
    SELECT count(*) AS positions,
           count(*) FILTER (WHERE value = $win) AS wins,
           count(*) FILTER (WHERE value = $loss) AS losses,
           count(*) FILTER (WHERE value = $tie) AS ties,
           count(*) FILTER (WHERE value = $draw) AS draws,
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
    """Each file hashed once in a run (SHA256SUMS and the catalog name the same files),
    with its stat as it was read; the files that differed from SHA256SUMS and from the
    catalog."""

    def __init__(self) -> None:
        self.found: dict[Path, tuple[list[int] | None, str]] = {}
        self.differed: set[Path] = set()

    def matches(self, path: Path, recorded: str) -> bool:
        """Whether `path` (a file, or a folder of parts in its place: its listing's
        checksum, pipeline/storage/parts.py) has the checksum `recorded`."""
        files = parts.parts(path)
        for file in files:
            if file not in self.found:
                self.found[file] = stamped_sha256(file)
        digest = (
            self.found[path][1]
            if files == [path]
            else parts.listing_sha256([(f.name, self.found[f][1]) for f in files])
        )
        if digest != recorded.lower():
            self.differed.update(files)
            return False
        return True


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
    layout = store.layout
    files = _walk(folder, bundle, report)
    # first the files SHA256SUMS alone covers: the catalog, which all hangs on, and the summaries
    check_sums(folder, raw, bundle, files, digests, report, first=True, layout=layout)
    rows = _catalog_rows(store, files, report)
    if rows is not None:
        for row in rows:
            problem = layout.misplaced(row)
            if problem:
                report.add(store.catalog, problem, whole=False)
        check_folders(store, rows, report)
        check_top_level(store, report)
        rows = [row for row in rows if not layout.misplaced(row)]  # nothing is read where they point
    chosen = {row["folder"] for row in rows or [] if rulesets is None or row["ruleset"] in rulesets}

    def ruleset_of(name: str) -> str | None:
        owner = layout.owner(name)
        return owner[0] if owner else None

    def mine(name: str) -> bool:
        return rulesets is None or "/" not in name or ruleset_of(name) in chosen

    if rows is not None:
        # a catalog of no ruleset (every build so far interrupted) has nothing to view
        if "tablebases.duckdb" in files or (rows and not (folder / "tablebases.duckdb").exists()):
            check_database(store, report)
        schemas: dict[tuple[str, str], tuple[pa.Schema, Path]] = {}
        for row in rows:
            if row["folder"] in chosen:
                check_ruleset(store, row, schemas, files, digests, report)
    check_sums(folder, raw, bundle, files, digests, report, first=False, mine=mine, layout=layout)
    _tell_cache(store, digests, report)
    if rulesets is None:
        return [line for _, line in report.entries]
    return [
        line
        for path, line in report.entries
        if path.parent == folder or ruleset_of(path.relative_to(folder).as_posix()) in chosen
    ]


def published_solutions(store: DataDir, rules: Ruleset) -> set[str] | None:
    """The digests of the solutions the catalog publishes `rules` from (none: not exported);
    None where the catalog cannot be read (check says what is wrong with it)."""
    import pyarrow as pa

    from pipeline.storage.parquet import read_table

    try:
        regular = stat.S_ISREG(os.lstat(store.catalog).st_mode)
        rows = read_table(store.catalog, columns=["ruleset", "solution_sha256"]).to_pylist() if regular else None
    except FileNotFoundError:
        return set()
    except (OSError, pa.ArrowException):
        return None
    return None if rows is None else {row["solution_sha256"] for row in rows if row["ruleset"] == rules.id}


def check_published(store: DataDir, rules: Ruleset, solution_sha256: str) -> list[str] | None:
    """`check`'s problems with a ruleset's published files and the files beside the
    catalog, where the catalog publishes the ruleset with this solution (`tablebase
    verify`); None where it does not: not exported yet, or exported from another solution."""
    published = published_solutions(store, rules)
    if published is not None and solution_sha256 not in published:
        return None
    return check(store.root, {rules.id})


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


def _catalog_rows(store: DataDir, files: set[str], report: _Report) -> list[CatalogRow] | None:
    """The catalog's rows, each ruleset once; None (and the problem reported) if it is
    missing, unreadable or not of the documented schema."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.core.dataset import CATALOG, CatalogRow

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
    for row in CatalogRow.rows(catalog):
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
        if _outside(name):
            problems.append(f"{sums}: line {number} names {name!r}, outside the folder")
        elif name in listed:
            problems.append(f"{sums}: line {number} lists {name} a second time")
        else:
            listed[name] = digest
    return listed, problems


def _outside(name: str) -> bool:
    """Whether a name SHA256SUMS lists is no file inside the folder: absolute, with a
    backslash, a NUL or a `..`, or not in the form it names (`a//b`, `a/./b`, `a/`)."""
    if name.startswith("/") or "\\" in name or "\0" in name:
        return True
    if "//" not in name and not name.endswith("/") and "/." not in f"/{name}":
        return False  # no part empty or starting with a dot: as PurePosixPath writes it (a line each, 1,300 a catalog)
    return ".." in PurePosixPath(name).parts or PurePosixPath(name).as_posix() != name


def listed_sums(folder: Path) -> dict[str, str]:
    """The checksums SHA256SUMS lists in `folder`; empty if it has none or none readable."""
    raw = _read_small(folder / SUMS)
    return parse_sums(raw, folder / SUMS)[0] if raw is not None else {}


def check_sums(
    folder: Path,
    raw: bytes | None,
    bundle: bool,
    files: set[str],
    digests: _Digests,
    report: _Report,
    first: bool,
    mine: Callable[[str], bool] = lambda name: True,
    layout: Layout | None = None,
) -> None:
    """SHA256SUMS against the files beside it: there, every listed file with its checksum,
    and every file listed. `first`: SHA256SUMS itself and the files no catalog row covers
    (beside the catalog, and the summaries); else the others, and the files not listed.
    Only files `mine` says are hashed. `layout`: where the folder keeps the summaries."""
    layout = layout or DataDir(folder).layout
    sums = folder / SUMS
    listed, problems = parse_sums(raw, sums) if raw is not None else ({}, [])
    if not first:
        if raw is not None and (listed or not problems):  # not a list at all: one line, not one a file
            for name, digest in listed.items():
                if not _sums_alone(name, layout):
                    _check_listed(folder / name, name, digest, files, digests, report, mine)
            for name in sorted(files - set(listed) - {SUMS}):
                report.add(folder / name, f"not listed in {SUMS}")
        return
    if raw is None:
        if bundle:
            report.add(sums, "missing: every bundle lists its files' checksums there (unpack the archive again)")
        else:
            report.add(
                sums,
                f"missing: `tablebase export --data {folder}` writes it "
                "(data folders written before it was kept have none)",
            )
        return
    for line in problems:
        report.add(sums, line.removeprefix(f"{sums}: "), whole=False)
    for name, digest in listed.items():
        if _sums_alone(name, layout):
            _check_listed(folder / name, name, digest, files, digests, report, mine)


def _sums_alone(name: str, layout: Layout) -> bool:
    """A file whose checksum only SHA256SUMS records (no catalog row)."""
    owner = layout.owner(name)
    return "/" not in name or (owner is not None and owner[1] == "summary")


def _check_listed(
    path: Path, name: str, digest: str, files: set[str], digests: _Digests, report: _Report, mine: Callable[[str], bool]
) -> None:
    if name not in files:
        report.add(path, f"missing (listed in {SUMS})")
    elif mine(name) and not digests.matches(path, digest):
        report.add(path, f"its SHA-256 differs from {SUMS}")


def check_folders(store: DataDir, rows: list[CatalogRow], report: _Report) -> None:
    """Ruleset folders and files that no catalog row accounts for."""
    for path, message in store.layout.strays(store.root, {row["folder"] for row in rows}):
        report.add(path, message)


#: Files a data folder or bundle holds beside the rulesets' folders.
TOP_LEVEL = (
    "catalog.parquet",
    "tablebases.duckdb",
    SUMS,
    "DATASET.md",
    "LICENSE",
    "claims.md",
    "README.md",
    "croissant.json",
    "datapackage.json",
    "CITATION.cff",
    "index.html",  # the explorer a bundle published with --explorer opens at its address
)


def check_top_level(store: DataDir, report: _Report) -> None:
    """Files beside the catalog that no part of the dataset accounts for, and folders a
    killed publish left aside."""
    for path in sorted(store.root.iterdir()):
        if not path.is_dir() and path.name not in TOP_LEVEL and not path.name.startswith("."):
            report.add(path, "not a file of the dataset")
    for folder, old in store.waiting().items():
        report.add(old, waiting_remedy(store, folder, old))


def waiting_remedy(store: DataDir, folder: str, old: Path) -> str:
    """What to say of a ruleset's folder that waits in data/.trash (DataDir.waiting)."""
    return (
        f"the folder of {folder}, which a build killed while publishing left aside: "
        f"`tablebase export --data {shlex.quote(str(store.root))}` puts it back in place"
    )


def _absent(store: DataDir, path: Path, what: str, fix: str) -> DataError:
    """The error for a published file that is missing: where its folder waits in data/.trash,
    the command that puts it back."""
    owner = store.layout.owner(path.relative_to(store.root).as_posix())
    folder = owner[0] if owner else ""
    old = store.waiting().get(folder)
    if old is not None:
        return DataError(f"{what} {path} is missing: {waiting_remedy(store, folder, old)} (from {old})")
    return DataError(f"{what} {path} is missing: {fix}")


def check_database(store: DataDir, report: _Report) -> None:
    """tablebases.duckdb is there and was written with this catalog."""
    import pyarrow.parquet as pq

    path = store.database
    if not path.exists():
        report.add(path, "missing (tablebase export rewrites it)")
        return
    try:
        con = duckdb.connect(str(path), read_only=True)
        try:
            recorded = con.sql(
                "SELECT ruleset, tablebase_sha256, transitions_sha256 FROM published ORDER BY ALL"
            ).fetchall()
        finally:
            con.close()
    except duckdb.Error as error:
        report.add(path, f"not readable ({str(error).splitlines()[0]})")
        return
    catalog = pq.read_table(store.catalog, columns=["ruleset", *(f"{kind}_sha256" for kind in QUERIED)]).to_pylist()
    if recorded != sorted(tuple(row.values()) for row in catalog):
        report.add(path, "written with another catalog (tablebase export rewrites it)")


def check_ruleset(
    store: DataDir, row: CatalogRow, schemas: dict, files: set[str], digests: _Digests, report: _Report
) -> None:
    """One catalog row against its files."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    from pipeline.core.dataset import RULESET_FILES, TABLEBASE, documented_schema

    mine = store.layout.files(store.root, row["folder"])
    ok = True
    for kind in RULESET_FILES:
        path = mine.path(kind.name)
        try:
            held = parts.parts(path)  # the file, or the parts of a folder in its place
        except DataError as error:
            report.add(parts.located(path), str(error).removeprefix(f"{parts.located(path)} "))
            ok = False
            continue
        if any(_rel(store, file) not in files for file in held):
            report.add(path, "missing")
            ok = False
            continue
        recorded = row.get(f"{kind.name}_sha256")
        if recorded is not None and not digests.matches(path, recorded):
            report.add(parts.located(path), "its SHA-256 differs from the catalog's")
            ok = False
            continue
        try:
            schema, *others = [pq.read_schema(file) for file in held]
        except (OSError, pa.ArrowException) as error:
            report.add(path, f"not a readable Parquet file ({error})")
            ok = False
            continue
        unlike = next((file for file, other in zip(held[1:], others) if other != schema), None)
        if unlike is not None:
            report.add(unlike, f"its schema differs from {held[0].name}'s (parts of one file)")
            ok = False
            continue
        if schema.remove_metadata() != documented_schema(kind, schema):
            # a ruleset built by another version (0.14.0 added winning_moves): say how to mend it
            built_by = row["pipeline_version"]
            by = f" (written by tablebase {built_by}; this is {__version__})" if built_by != __version__ else ""
            report.add(
                path,
                f"its schema is not the documented one for {kind.name}.parquet{by}: "
                f"rebuild it with `tablebase build {row['ruleset']}`",
            )
            ok = False
            continue
        first = schemas.setdefault((row["game"], kind.name), (schema, path))
        if schema.remove_metadata() != first[0].remove_metadata():
            report.add(path, f"its schema differs from {first[1]} (same game, same kind)")
            ok = False
    if not ok:
        return
    try:
        summary = pq.read_table(mine.summary).to_pylist()
    except (OSError, pa.ArrowException) as error:  # no catalog checksum to catch it first
        report.add(mine.summary, f"not a readable Parquet file ({error})")
        return
    if summary != [row.as_dict()]:
        report.add(mine.summary, "differs from its catalog row")
    tablebase = mine.tablebase
    if parts.read_schema(tablebase).names[: len(TABLEBASE.head)] != [c.name for c in TABLEBASE.head]:
        report.add(tablebase, "its schema is not the documented one")
        return
    con = duckdb.connect()
    try:
        counted = (
            con.sql(
                COUNTS,
                params={"path": parts.sql_source(tablebase), "start": row["start"], **{word: word for word in WORDS}},
            )
            .to_arrow_table()
            .to_pylist()[0]
        )
        others = con.execute(
            "SELECT count(*) FROM read_parquet(?) WHERE ruleset <> ?", [parts.sql_source(tablebase), row["ruleset"]]
        ).fetchall()[0][0]
    except duckdb.Error as error:  # its bytes match the catalog's: written so by a faulty export
        report.add(tablebase, f"not readable ({str(error).splitlines()[0]})")
        return
    finally:
        con.close()
    for made in (mine.index, mine.lookup):  # their bytes are the catalog's: their count is what export wrote
        rows = parts.read_metadata(made).num_rows
        if rows != row["positions"]:
            report.add(made, f"holds {rows:,} positions, the catalog {row['positions']:,}")
    if not counted.pop("start_found"):
        report.add(tablebase, f"has no start position {row['start']!r}", whole=False)
    differ = [f"{name} {counted[name]} (catalog: {row[name]})" for name in counted if counted[name] != row[name]]
    if differ:
        report.add(tablebase, f"disagrees with its catalog row: {', '.join(differ)}", whole=False)
    if others:
        report.add(tablebase, f"{others} rows name another ruleset than {row['ruleset']}", whole=False)


def _tell_cache(store: DataDir, digests: _Digests, report: _Report) -> None:
    """Tell the checksum cache what this check found of each file that differs from its
    checksum, or that the cache knows under the same stat with another digest (its bytes
    changed under it: marked damaged); report the files marked damaged, now or before."""
    cache = _read_cache(store)
    found = {}
    for path, (taken, digest) in digests.found.items():
        entry = cache.get(_rel(store, path), [])  # [] as none: not _valid
        known = taken is not None and _valid(entry) and entry[:4] == taken
        if taken is not None and (path in digests.differed or (known and entry[4] != digest)):
            found[path] = (taken, digest)
        elif known and entry[5:] == ["damaged"]:
            report.add(path, _damage(store, path))
    for path in note_hashes(store, found) if found else []:
        report.add(path, _damage(store, path))


def _damage(store: DataDir, path: Path) -> str:
    """What is said of a file whose bytes changed while its stat did not."""
    again = "`tablebase build` of its ruleset" if path.parent != store.root else "`tablebase export` writes it again"
    return (
        "its bytes changed while its size, times and inode stayed the same (damage below the file "
        f"system?): no command reads it until it is written again ({again})"
    )


def _rel(store: DataDir, path: Path) -> str:
    return path.relative_to(store.root).as_posix()


# -- the data folder's SHA256SUMS ---------------------------------------------------------


def write_sums(store: DataDir, fresh: Iterable[str] = ()) -> None:
    """Rewrite the data folder's SHA256SUMS, under the publish lock, after the catalog or
    the database: every file of the dataset with its SHA-256.

    The files the catalog covers get its checksums, taken when export wrote them.
    catalog.parquet, tablebases.duckdb and each summary.parquet are hashed where `fresh`
    (names relative to the folder) says this process has just written them, or where the
    old SHA256SUMS does not list them; otherwise they keep the checksum listed, so damage
    done since is not taken in."""
    from pipeline.storage.parquet import read_table, sha256

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
            if store.layout.misplaced(row):
                continue  # never written so; `check` says what is wrong with it
            for kind in CATALOGUED:
                path = store.layout.files(store.root, row["folder"]).path(kind)
                if parts.in_parts(path):  # each part listed, as hashed (and cached) now
                    listed.update(_parts_sums(store, path, row[f"{kind}_sha256"]))
                else:
                    listed[store.layout.file(row["folder"], kind)] = row[f"{kind}_sha256"]
            summary = store.layout.file(row["folder"], "summary")
            listed[summary] = digest(summary)
    with atomic_path(store.root / SUMS) as tmp:
        tmp.write_text("".join(f"{digest}  {name}\n" for name, digest in sorted(listed.items()) if digest))


def _parts_sums(store: DataDir, path: Path, recorded: str) -> dict[str, str]:
    """The SHA256SUMS lines of the folder of parts in `path`'s place, by name: none where the
    parts are not what the catalog records (`check` says so)."""
    try:
        sums = {_rel(store, part): cached_sha256(store, part) for part in parts.parts(path)}
    except (OSError, DataError):
        return {}
    if parts.listing_sha256([(name.rpartition("/")[2], digest) for name, digest in sums.items()]) != recorded:
        return {}
    return sums


# -- reading a file the folder records a checksum for --------------------------------------


def require_built(store: DataDir, ruleset: str | None = None) -> None:
    """DataError saying what builds it and where --data may point instead, where `store`
    has no catalog (nothing is built there), for the commands that read a built tablebase."""
    if store.catalog.exists():
        return
    if store.root.is_file() and store.root.name == store.database.name:  # the views' file, named for its folder
        raise DataError(
            f"{store.root} is the database of views over a data folder, not the folder: "
            f"name the folder it is in with --data {store.root.parent}"
        )
    if ruleset is not None:
        raise NotBuiltError(
            f"{ruleset} is not built: {store.catalog} is missing; build it with "
            f"`tablebase build {ruleset}`, or name the folder it was built in with --data"
        )
    raise NotBuiltError(
        f"nothing is built in {store.root}: {store.catalog} is missing; build a ruleset with "
        "`tablebase build chopsticks` (`tablebase games` lists the games), or name the folder "
        "the tablebases were built in with --data"
    )


#: The files a lookup reads (probe, play, draw, serve): the queried ones, the index and the lookup.
LOOKED_UP = (*QUERIED, "index", "lookup")


def trusted(store: DataDir, rules: Ruleset) -> RulesetPaths:
    """The ruleset's files, once those a lookup reads (LOOKED_UP) match the catalog's
    checksums, and the catalog SHA256SUMS's (probe, play and draw read nothing else);
    DataError naming the file if not."""
    key = (os.fspath(store.root), rules.id)
    known = _trusted.get(key)
    if known is not None and known[0] == _trusted_stamps(store, known[1]):
        return known[1]
    require_built(store, rules.id)
    files = store.published(rules)
    before = _trusted_stamps(store, files)  # taken first: a file changed while it is checked is checked again
    fix = f"rebuild it with `tablebase build {rules.id}`, or see `tablebase check`"

    def files_of(catalog: list[dict]) -> list[tuple[Path, str, str]]:
        row = next((r for r in catalog if r["ruleset"] == rules.id), None)
        if row is None:
            raise NotBuiltError(
                f"{rules.id} is not built in {store.root}: build it with `tablebase build {rules.id}`, "
                "or name the folder it was built in with --data"
            )
        for kind in LOOKED_UP:
            if not files.path(kind).exists() and not parts.in_parts(files.path(kind)):
                raise _absent(store, files.path(kind), f"{kind} of {rules.id}", fix)
        # their bytes are then hashed (or their stat found in the cache of hashes): a footer
        # read would add nothing, and the index's of a billion positions takes 50 ms
        return [(regular(files.path(kind), f"{kind} of {rules.id}"), row[f"{kind}_sha256"], fix) for kind in LOOKED_UP]

    _verified(store, files_of)
    _trusted[key] = (before, files)
    return files


#: trusted()'s answers in this process by folder and ruleset, with the stats of the files that
#: gave them: the catalog, SHA256SUMS, the checksum cache and the looked-up files. While those
#: stay the same, the answer does (the cache's own trust: a file whose stat is unchanged holds
#: the bytes it held), so a server's lookup stats seven files instead of reading the catalog,
#: SHA256SUMS and the cache again, 3 ms of each lookup on connect:cols=5,rows=6. A file marked
#: damaged by `check` changes the cache, and so the stats.
_trusted: dict[tuple[str, str], tuple[list[tuple[int, ...] | None], RulesetPaths]] = {}


def _trusted_stamps(store: DataDir, files: RulesetPaths) -> list[tuple[int, ...] | None]:
    found: list[tuple[int, ...] | None] = []
    for path in (store.catalog, store.root / SUMS, record_file(store, "sha256"), *map(files.path, LOOKED_UP)):
        try:
            found.extend(tuple(stamp(file)) for file in parts.parts(path))
        except (OSError, DataError):
            found.append(None)
    return found


def trusted_summary(store: DataDir, rules: Ruleset) -> Path:
    """The ruleset's summary.parquet, once it is the file SHA256SUMS records (where there
    is one), and the catalog too (draw reads it); DataError naming the file if not."""
    from pipeline.storage.parquet import require

    require_built(store, rules.id)
    path = require(
        store.published(rules).summary, f"summary of {rules.id} (build it with `tablebase build {rules.id}`)"
    )
    _verified(store, lambda catalog: [], listed=[(path, f"rebuild it with `tablebase build {rules.id}`")])
    return path


def trusted_catalog(store: DataDir, con: duckdb.DuckDBPyConnection | None = None) -> list[dict]:
    """The catalog's rows, once catalog.parquet, and every tablebase and transitions file
    it names, have their recorded checksums (sql and query read nothing else); DataError
    naming the file if not, or if a row's paths lead out of the folder.

    `con`: the catalog is read through this DuckDB connection, not pyarrow (the reading
    commands load no pyarrow); its rows then hold `params` as a dict, not a list of pairs."""
    require_built(store)

    def files_of(catalog: list[dict]) -> list[tuple[Path, str, str]]:
        checked = []
        for row in catalog:
            problem = store.layout.misplaced(row)
            if problem:
                raise DataError(f"{store.catalog}: {problem}: see `tablebase check`")
            fix = f"rebuild it with `tablebase build {row['ruleset']}`, or see `tablebase check`"
            for kind in QUERIED:
                named = row[f"{kind}_path"]
                if named == store.layout.parts_glob(row["folder"], kind):  # a folder of parts
                    path = store.layout.files(store.root, row["folder"]).path(kind)
                    store.inside(parts.folder_of(path).relative_to(store.root).as_posix())
                    if not parts.in_parts(path):
                        raise _absent(store, parts.folder_of(path), f"{kind} of {row['ruleset']}", fix)
                else:
                    path = regular(store.inside(named), f"{kind} of {row['ruleset']}")
                    if not path.is_file():  # its bytes are then hashed: a footer read would add nothing
                        raise _absent(store, path, f"{kind} of {row['ruleset']}", fix)
                checked.append((path, row[f"{kind}_sha256"], fix))
        return checked

    return _verified(store, files_of, con=con)


class _Differs(Exception):
    """A file's bytes differ from its recorded checksum (perhaps a build is publishing)."""


def _verified(
    store: DataDir,
    files_of: Callable[[list[dict]], list[tuple[Path, str, str]]],
    listed: Sequence[tuple[Path, str]] = (),
    con: duckdb.DuckDBPyConnection | None = None,
) -> list[dict]:
    """The catalog's rows, once catalog.parquet and the files `listed` (with what to do if
    not) match SHA256SUMS (where there is one: a data folder of an earlier version has
    none) and each (file, checksum, what to do) that `files_of(rows)` names has its
    checksum. A difference is looked at once more under the publish lock, where no build
    is between writing its files and their checksums, before it is refused. `con`: the
    catalog read through DuckDB (trusted_catalog)."""
    try:
        return _verify(store, files_of, listed, con)
    except _Differs:
        pass
    with _settled(store):
        try:
            return _verify(store, files_of, listed, con)
        except _Differs as differs:
            raise DataError(str(differs)) from None


def _verify(
    store: DataDir,
    files_of: Callable[[list[dict]], list[tuple[Path, str, str]]],
    listed: Sequence[tuple[Path, str]],
    con: duckdb.DuckDBPyConnection | None,
) -> list[dict]:
    if con is None:
        from pipeline.storage.parquet import require

        require(store.catalog, "catalog")
    elif not regular(store.catalog, "catalog").exists():  # its Parquet is read below, by DuckDB
        raise DataError(f"catalog {store.catalog} is missing")
    sums = store.root / SUMS
    raw = _read_small(sums)
    cache = _read_cache(store)  # once: a catalog of hundreds of rulesets names twice as many files
    if raw is not None:
        recorded, problems = parse_sums(raw, sums)
        if problems:
            raise DataError(f"{problems[0]}: see `tablebase check`")
        fix = "`tablebase export` writes it again from the rulesets' summaries, or see `tablebase check`"
        for path, remedy in [(store.catalog, fix), *listed]:
            if _rel(store, path) not in recorded:
                raise DataError(f"{sums} does not list {_rel(store, path)}: see `tablebase check`")
            _require_recorded(store, path, recorded[_rel(store, path)], SUMS, remedy, cache)
    catalog = _read_catalog(store.catalog) if con is None else _catalog_through(con, store.catalog)
    for path, digest, remedy in files_of(catalog):
        _require_recorded(store, path, digest, "the catalog", remedy, cache)
    return catalog


def _read_catalog(path: Path) -> list[dict]:
    from pipeline.storage.parquet import read_table

    return read_table(path).to_pylist()


def _catalog_through(con: duckdb.DuckDBPyConnection, path: Path) -> list[dict]:
    """The catalog's rows as DuckDB reads them (a map as a dict); DataError if it cannot."""
    try:
        result = con.execute("SELECT * FROM read_parquet(?)", [str(path)])
        names = [column[0] for column in result.description]
        return [dict(zip(names, row)) for row in result.fetchall()]
    except duckdb.Error as error:
        raise DataError(f"catalog {path} is not a readable Parquet file ({str(error).splitlines()[0]})") from None


def _require_recorded(store: DataDir, path: Path, recorded: str, where: str, fix: str, cache: dict) -> None:
    """DataError if `path` was marked damaged; _Differs unless it hashes to `recorded`
    (`cache`: the checksum cache as read)."""
    if _damaged(store, path, cache):
        raise DataError(
            f"{path} changed while its size, times and inode stayed the same, and has not been written since: {fix}"
        )
    if cached_sha256(store, path, cache) != recorded:
        shown, what = (parts.folder_of(path), "folder of parts") if parts.in_parts(path) else (path, "file")
        raise _Differs(f"{shown} is not the {what} {where} records (its SHA-256 differs): {fix}")


@contextmanager
def _settled(store: DataDir) -> Iterator[None]:
    """Hold the publish lock where it can be taken (not in a read-only folder)."""
    with ExitStack() as stack:
        with suppress(OSError):
            stack.enter_context(store.lock("publish"))
        yield


# -- the checksum cache --------------------------------------------------------------------
#
# data/.cache/sha256.json: for each file hashed, by its name relative to the folder,
# [size, mtime_ns, ctime_ns, inode, sha256], and "damaged" after them where the file was
# found to hold other bytes than the ones hashed under that same stat.


def cached_sha256(store: DataDir, path: Path, cache: dict | None = None) -> str:
    """`path`'s SHA-256, remembered while the file's size, times and inode stay the same.

    What that trusts: a file whose stat is unchanged holds the bytes it held when hashed.
    Any write through the file system changes its ctime, which no user can set back;
    damage below the file system (a failing disk) changes no stat. `tablebase check`
    hashes every file every time and tells the cache what it found: a file whose bytes
    changed under the same stat is marked damaged, and `_damaged` says so until the file
    is written again. `cache`: the cache as already read, if it was. A folder of parts in
    `path`'s place: the checksum of its listing, each part's taken so."""
    if parts.in_parts(path):
        cache = _read_cache(store) if cache is None else cache
        return parts.listing_sha256([(part.name, cached_sha256(store, part, cache)) for part in parts.parts(path)])
    key = _rel(store, path)
    entry = (_read_cache(store) if cache is None else cache).get(key)
    if _valid(entry) and entry[:4] == stamp(path):
        return entry[4]
    now, digest = stamped_sha256(path)
    if now is not None:
        note_hashes(store, {path: (now, digest)})
    return digest


def stamped_sha256(path: Path) -> tuple[list[int] | None, str]:
    """`path`'s stat and SHA-256, read through one open file; the stat None if the file
    changed while it was read (then the digest goes in no cache)."""
    with open(regular(path), "rb") as handle:
        before = _stamp_of(os.fstat(handle.fileno()))
        digest = hashlib.file_digest(handle, "sha256")
        after = _stamp_of(os.fstat(handle.fileno()))
    return (before if before == after else None), digest.hexdigest()


def note_hashes(store: DataDir, found: dict[Path, tuple[list[int], str]]) -> list[Path]:
    """Tell the cache what hashing found: each file's stat and digest. A file already in
    it under the same stat with another digest is marked damaged (its bytes changed under
    it), and stays so until written again; the files marked now."""
    marked: list[Path] = []

    def change(cache: dict) -> None:
        for path, (taken, digest) in found.items():
            key = _rel(store, path)
            old = cache.get(key)
            if _valid(old) and old[:4] == taken:
                if old[4] != digest:
                    cache[key] = [*taken, digest, "damaged"]
                    marked.append(path)
            else:
                cache[key] = [*taken, digest]

    _update_cache(store, change)
    return marked


def remember(store: DataDir, digests: dict[Path, str]) -> None:
    """Note in the cache the checksums export took of files it has just written, under
    their stat now, so that the first read does not hash them again."""
    note_hashes(store, {path: (stamp(path), digest) for path, digest in digests.items()})


def forget(store: DataDir, folder: str) -> None:
    """Drop what the cache holds of a ruleset's folder (`<game>/<slug>`), now replaced."""
    _update_cache(store, lambda cache: [cache.pop(key) for key in list(cache) if key.startswith(f"{folder}/")])


def _damaged(store: DataDir, path: Path, cache: dict | None = None) -> bool:
    """Whether `path` (or a part of the folder of parts in its place), as it is now, was
    marked damaged."""
    if parts.in_parts(path):
        return any(_damaged(store, part, cache) for part in parts.parts(path))
    entry = (_read_cache(store) if cache is None else cache).get(_rel(store, path))
    try:
        return _valid(entry) and entry[5:] == ["damaged"] and entry[:4] == stamp(path)
    except OSError:
        return False


def _valid(entry: object) -> TypeGuard[list]:
    return isinstance(entry, list) and len(entry) >= 5


def stamp(path: Path) -> list[int]:
    """`path`'s size, times and inode: what changes when anything writes it."""
    return _stamp_of(path.stat())


def _stamp_of(info: os.stat_result) -> list[int]:
    return [info.st_size, info.st_mtime_ns, info.st_ctime_ns, info.st_ino]


def record_file(store: DataDir, name: str) -> Path:
    """A record tablebase keeps of the folder's files: data/.cache/<name>.json (the checksum
    cache `sha256`, what the stages wrote `written`)."""
    return store.root / ".cache" / f"{name}.json"


def read_record(store: DataDir, name: str) -> dict:
    """The record `name` as it is on the disk; empty where there is none or it is unreadable."""
    try:
        record = json.loads(record_file(store, name).read_text())
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def update_record(store: DataDir, name: str, change: Callable[[dict], object], must: bool = False) -> None:
    """Read, change and write the record `name` under its own lock, so that no other
    process's entry is lost. Where it cannot be written: nothing if the folder is read-only;
    otherwise nothing, or the OSError (a full disk) where the record `must` be kept."""
    from filelock import FileLock  # 40 ms to import: not for a reading command that writes no record

    path = record_file(store, name)
    try:
        path.parent.mkdir(exist_ok=True)
        with FileLock(path.with_name(f"{name}.lock"), thread_local=False):
            record = read_record(store, name)
            change(record)
            with atomic_path(path) as tmp:
                tmp.write_text(json.dumps(record, sort_keys=True))
    except OSError:
        if must and os.access(path.parent, os.W_OK):
            raise


def _read_cache(store: DataDir) -> dict:
    return read_record(store, "sha256")


def _update_cache(store: DataDir, change: Callable[[dict], object]) -> None:
    """Change the checksum cache (nothing where the folder is read-only: every read hashes)."""
    update_record(store, "sha256", change)
