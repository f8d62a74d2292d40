"""What the stages wrote: each stage's output files by stat and SHA-256, so that the next stage
reads only files a stage wrote and nobody has changed since.

    data/.cache/written.json   {"<game>/<slug>/positions.parquet": [size, mtime_ns, ctime_ns,
                                inode, sha256], …}, a ruleset built aside under its
                                .staging/<pid>/ name until it is published

enumerate notes positions and transitions; solve reads them and notes the solution; verify
reads the three and notes the verification; export reads the four, and its summary records
their digests as noted (nothing is hashed twice). A file whose stat changed is hashed again:
the same bytes (a copy, a `touch`) pass, other bytes are refused in one line naming the file
and the command that writes it again, so a file changed by hand never reaches a tablebase.
Where nothing was noted (a folder built before this record, or .cache removed), the digest
the catalog records for a published ruleset stands in.

`tablebase check` keeps its own cache (check.py's sha256.json) of whatever it hashed, damaged
files included: this record holds only what a stage wrote.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeGuard

from pipeline.core.errors import DataError
from pipeline.datadir.check import read_record, stamp, stamped_sha256, update_record
from pipeline.datadir.layout import DataDir
from pipeline.storage.parquet import read_table

#: The record's name: data/.cache/written.json.
RECORD = "written"


def note_written(store: DataDir, *paths: Path) -> dict[Path, str]:
    """Record `paths`, just written by a stage, under their stat and digest; the digests."""
    found = {path: stamped_sha256(path) for path in paths}
    _update(
        store,
        lambda record: record.update(
            {_key(store, path): [*taken, digest] for path, (taken, digest) in found.items() if taken}
        ),
    )
    return {path: digest for path, (_, digest) in found.items()}


def read_as_written(store: DataDir, rebuild: str, *paths: Path) -> dict[Path, str]:
    """The digests of `paths`, each as a stage wrote it; DataError naming the first that is
    not, and `rebuild`, the command that writes it again."""
    record = _read(store)
    digests = {}
    renewed: dict[str, list] = {}
    published: dict[str, str] | None = None
    for path in paths:
        if not path.is_file():
            raise DataError(f"{path} is missing: {rebuild}")
        entry = record.get(_key(store, path))
        if _valid(entry) and entry[:4] == stamp(path):
            digests[path] = entry[4]
            continue
        now, digest = stamped_sha256(path)
        if published is None:
            published = _published(store, path)
        expected = entry[4] if _valid(entry) else published.get(path.name.removesuffix(".parquet"))
        if digest != expected:
            said = "changed since a stage wrote it" if expected else "was not written by a stage of tablebase"
            raise DataError(f"{path} {said} (its SHA-256 differs), so nothing reads it: {rebuild}")
        if now is not None:  # the same bytes under a new stat: noted, to be read without hashing
            renewed[_key(store, path)] = [*now, digest]
        digests[path] = digest
    if renewed:
        _update(store, lambda record: record.update(renewed))
    return digests


def moved(store: DataDir, before: Path, after: Path) -> None:
    """The folder `before` is now `after` (a build published): its files keep their record,
    and whatever was recorded under `after` before goes."""
    old, new = _key(store, before) + "/", _key(store, after) + "/"

    def move(record: dict) -> None:
        for key in [key for key in record if key.startswith(new)]:
            del record[key]
        for key in [key for key in record if key.startswith(old)]:
            record[new + key.removeprefix(old)] = record.pop(key)

    _update(store, move)


def _published(store: DataDir, path: Path) -> dict[str, str]:
    """The digests the catalog records for the files of the published ruleset whose folder
    holds `path`, by kind (positions, transitions, …); none where it is not published."""
    folder = _key(store, path.parent)
    try:
        rows = read_table(store.catalog).to_pylist()
    except (OSError, DataError, ValueError):
        return {}
    for row in rows:
        if row.get("folder") == folder:
            return {name.removesuffix("_sha256"): value for name, value in row.items() if name.endswith("_sha256")}
    return {}


def _key(store: DataDir, path: Path) -> str:
    return path.relative_to(store.root).as_posix()


def _valid(entry: object) -> TypeGuard[list]:
    return isinstance(entry, list) and len(entry) == 5


def _read(store: DataDir) -> dict:
    return read_record(store, RECORD)


def _update(store: DataDir, change: Callable[[dict], object]) -> None:
    """Change the record (builds of other rulesets write it too). A folder that cannot hold
    it (read-only) keeps none: its files are then checked against the catalog alone; a full
    disk fails the stage."""
    update_record(store, RECORD, change, must=True)
