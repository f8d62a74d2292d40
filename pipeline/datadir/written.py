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
from pipeline.storage import parts
from pipeline.storage.parquet import read_table

#: The record's name: data/.cache/written.json.
RECORD = "written"


def note_written(store: DataDir, *paths: Path) -> dict[Path, str]:
    """Record `paths`, just written by a stage, under their stat and digest; the digests.
    A folder of parts (pipeline/storage/parts.py) in a file's place: each part so, and the
    folder under its own name with its checksum (that of its parts' listing), so that a
    part gone or added is found too."""
    found: dict[Path, tuple[list[int] | None, str]] = {}
    digests = {}
    for path in paths:
        if parts.in_parts(path):
            sums = []
            for part in parts.parts(path):
                found[part] = stamped_sha256(part)
                sums.append((part.name, found[part][1]))
            digests[path] = parts.listing_sha256(sums)
            found[parts.located(path)] = ([len(sums), 0, 0, 0], digests[path])
        else:
            found[path] = stamped_sha256(path)
            digests[path] = found[path][1]
    _update(
        store,
        lambda record: record.update(
            {_key(store, path): [*taken, digest] for path, (taken, digest) in found.items() if taken}
        ),
    )
    return digests


def read_as_written(store: DataDir, rebuild: str, *paths: Path) -> dict[Path, str]:
    """The digests of `paths`, each as a stage wrote it; DataError naming the first that is
    not, and `rebuild`, the command that writes it again."""
    record = _read(store)
    digests = {}
    renewed: dict[str, list] = {}
    published: dict[str, str] | None = None
    for path in paths:
        if parts.in_parts(path):
            digests[path] = _read_parts(store, record, renewed, path, rebuild)
            continue
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


def _read_parts(store: DataDir, record: dict, renewed: dict[str, list], path: Path, rebuild: str) -> str:
    """The checksum of the folder of parts in `path`'s place, each part as a stage wrote it
    and the folder's listing as it wrote it (no part gone, added or renamed); DataError
    naming what is not. Parts hashed again under a new stat are noted in `renewed`."""
    folder = parts.located(path)
    try:
        files = parts.parts(path)
    except DataError as error:
        raise DataError(f"{error}: {rebuild}") from None
    sums = []
    for part in files:
        entry = record.get(_key(store, part))
        if _valid(entry) and entry[:4] == stamp(part):
            sums.append((part.name, entry[4]))
            continue
        now, digest = stamped_sha256(part)
        if _valid(entry) and digest != entry[4]:
            raise DataError(
                f"{part} changed since a stage wrote it (its SHA-256 differs), so nothing reads it: {rebuild}"
            )
        if now is not None and _valid(entry):
            renewed[_key(store, part)] = [*now, digest]
        sums.append((part.name, digest))
    digest = parts.listing_sha256(sums)
    entry = record.get(_key(store, folder))
    expected = entry[4] if _valid(entry) else _published(store, folder.parent / path.name).get(folder.name)
    if expected is None:
        raise DataError(f"{folder} was not written by a stage of tablebase, so nothing reads it: {rebuild}")
    if digest != expected:
        raise DataError(
            f"{folder} does not hold the parts a stage wrote there (one is changed, gone, added or renamed): {rebuild}"
        )
    return digest


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
