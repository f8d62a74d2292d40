"""Where every file lives under the data directory (default `data/`).

    data/catalog.parquet                        one row per built ruleset (export)
    data/tablebases.duckdb                      views catalog, tablebase, transitions for DuckDB (export)
    data/<game>/<slug>/positions.parquet        every position: id, text, terminal, moves, rank, decoded columns (enumerate)
    data/<game>/<slug>/transitions.parquet      every move: ruleset, src, dst, move (enumerate)
    data/<game>/<slug>/solution.parquet         id, value, remoteness, grundy, grundy_height (solve)
    data/<game>/<slug>/verification.parquet     one row per consistency check (verify)
    data/<game>/<slug>/tablebase.parquet        the published tablebase (export)
    data/<game>/<slug>/index.parquet            hash of each position's text, id: lookups by text (export)
    data/<game>/<slug>/lookup.parquet           id, text, value, remoteness, moves: lookups by id (export)
    data/<game>/<slug>/summary.parquet          the ruleset's catalog row (export)
    data/pages/                                 pictures and HTML pages (`tablebase draw`)
    data/.staging/<pid>/, data/.tmp/<pid>/      a build's work in progress and scratch space, per process
    data/.trash/<pid>/                          folders being replaced; data/.locks/: lock files
    data/.locks/process.<pid>.lock              held by each process with scratch here while it runs

<slug> is `Ruleset.slug`: `default`, or the changed parameters (`fingers-10.split-any`).
Every name is made of [a-z0-9._-], so the folders travel to any file system and reader.

A bundle (`tablebase publish`) lays the same files out by kind instead (`BY_KIND`):
tablebase/<game>/<slug>.parquet, transitions/<game>/<slug>.parquet and so on, so that a
reader given a folder (tablebase/chopsticks) reads one kind of file. The data folder keeps
one folder a ruleset (`BY_RULESET`): build publishes a ruleset by one rename of it. `Layout`
is the one place that knows either; `DataDir.layout` says which a folder has.
"""

from __future__ import annotations

import functools
import os
import re
import shlex
import shutil
import stat
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pipeline.core import signals
from pipeline.core.errors import DataError
from pipeline.core.kinds import QUERIED, RULESET_KINDS
from pipeline.storage.files import sync
from pipeline.storage.parts import PART

# filelock (40 ms to import) and the games are loaded where a lock is taken or a ruleset
# parsed: `tablebase sql` takes neither
if TYPE_CHECKING:
    from filelock import FileLock

    from pipeline.games.rulesets import Ruleset

#: The files of a ruleset's folder, in the order `build` writes them (the catalog row last).
KINDS = RULESET_KINDS
#: The kinds that may be a folder of parts in the file's place (pipeline/storage/parts.py):
#: `build --part-rows` writes these so, Spark's executors all but the positions. The rest
#: are a few rows.
IN_PARTS = ("positions", "transitions", "solution", "tablebase", "index", "lookup")
#: Folder names of the data directory that are not games (explorer/: a bundle's explorer's
#: scripts, pipeline/products/explorer.py).
RESERVED = ("pages", "dist", "explorer")
#: A ruleset's folder as the catalog names it (`Ruleset.folder`): `<game>/<slug>`, a game's
#: name and a slug, nothing that could lead out of the data directory.
FOLDER = re.compile(r"[a-z][a-z0-9_]*/[a-z0-9][a-z0-9._-]*")


class Layout:
    """Where a folder keeps each ruleset's files: here one folder a ruleset,
    `<game>/<slug>/<kind>.parquet` (a data folder's); `ByKind` overrides what differs."""

    name = "one folder a ruleset"

    def file(self, folder: str, kind: str) -> str:
        """The file of `kind` of the ruleset whose folder (`Ruleset.folder`) is `folder`,
        relative to the dataset's root, with /. Its rows may be a folder of parts in its
        place (pipeline/storage/parts.py): `parts_glob` names them."""
        return f"{folder}/{kind}.parquet"

    def parts_glob(self, folder: str, kind: str) -> str:
        """The glob of the parts of `kind` where they are a folder of parts in the file's place."""
        return f"{self.file(folder, kind).removesuffix('.parquet')}/part-*.parquet"

    def owner(self, name: str) -> tuple[str, str] | None:
        """The ruleset's folder and the kind of the file `name` (relative, with /) where it
        is laid out as one, or is a part of a folder of parts in its place; None where it is
        no ruleset's file."""
        parts = name.split("/")
        if len(parts) == 4 and PART.fullmatch(parts[3]) and parts[2] in IN_PARTS:
            return f"{parts[0]}/{parts[1]}", parts[2]
        if len(parts) != 3 or parts[2].removesuffix(".parquet") not in KINDS or not parts[2].endswith(".parquet"):
            return None
        game, slug, file = parts
        return f"{game}/{slug}", file.removesuffix(".parquet")

    def files(self, root: Path, folder: str) -> RulesetPaths:
        """The files of the ruleset whose folder is `folder`, in the dataset at `root`."""
        return RulesetFiles(root / folder)

    def misplaced(self, row: Mapping[str, Any]) -> str | None:
        """What is wrong with a catalog row's folder and paths, if they name anything but the
        ruleset's own files inside the dataset (its folder `<game>/<slug>`, its tablebase and
        transitions where this layout puts them); None if nothing."""
        folder = row.get("folder")
        if not isinstance(folder, str) or not FOLDER.fullmatch(folder) or folder.split("/")[0] != row.get("game"):
            return f"{row.get('ruleset')}'s folder {folder!r} is not <game>/<slug> inside the data folder"
        for kind in QUERIED:
            path, expected = row.get(f"{kind}_path"), self.file(folder, kind)
            if path not in (expected, self.parts_glob(folder, kind)):
                return f"{row.get('ruleset')}'s {kind}_path {path!r} is not {expected} (nor {self.parts_glob(folder, kind)})"
        return None

    def strays(self, root: Path, folders: set[str]) -> Iterator[tuple[Path, str]]:
        """What in the rulesets' part of the dataset at `root` no folder of `folders` (the
        catalog's) accounts for, with what to say of it: a folder not in the catalog, a file
        that is no kind. The top folders named in RESERVED and hidden ones are left alone."""
        for game in _folders(root):
            for path in sorted(game.iterdir()):
                if not _real_dir(path) or f"{game.name}/{path.name}" not in folders:
                    yield path, "not in the catalog"
                    continue
                for extra in sorted(path.iterdir()):
                    if extra.name.startswith("."):
                        continue
                    if extra.name in IN_PARTS and _real_dir(extra):  # a folder of parts
                        for part in sorted(extra.iterdir()):
                            if not part.name.startswith(".") and not (PART.fullmatch(part.name) and part.is_file()):
                                yield part, "not a part of a folder of parts (part-NNNNN.parquet)"
                    elif self.owner(extra.relative_to(root).as_posix()) is None:
                        yield extra, "not a file of a ruleset's folder"


class ByKind(Layout):
    """A bundle's: one folder a kind, `<kind>/<game>/<slug>.parquet`. pandas and pyarrow
    read every file of a folder given to them with the first file's columns, without a
    word: here a folder (tablebase/, tablebase/chopsticks) holds one kind of file."""

    name = "one folder a kind"

    def file(self, folder: str, kind: str) -> str:
        return f"{kind}/{folder}.parquet"

    def owner(self, name: str) -> tuple[str, str] | None:
        parts = name.split("/")
        if len(parts) == 4 and PART.fullmatch(parts[3]) and parts[0] in IN_PARTS:
            return f"{parts[1]}/{parts[2]}", parts[0]
        if len(parts) != 3 or parts[0] not in KINDS or not parts[2].endswith(".parquet"):
            return None
        kind, game, file = parts
        return f"{game}/{file.removesuffix('.parquet')}", kind

    def files(self, root: Path, folder: str) -> RulesetPaths:
        return KindFiles(root, folder)

    def strays(self, root: Path, folders: set[str]) -> Iterator[tuple[Path, str]]:
        for top in _folders(root):
            if top.name not in KINDS:
                yield top, f"not a folder of the dataset (a bundle holds {', '.join(KINDS)} and {', '.join(RESERVED)})"
                continue
            for game in sorted(top.iterdir()):
                if not _real_dir(game):
                    yield game, "not a folder of a game"
                    continue
                for path in sorted(game.iterdir()):
                    owner = self.owner(path.relative_to(root).as_posix())
                    if path.name.startswith("."):
                        continue
                    if top.name in IN_PARTS and _real_dir(path) and f"{game.name}/{path.name}" in folders:  # parts
                        for part in sorted(path.iterdir()):
                            if not part.name.startswith(".") and not (PART.fullmatch(part.name) and part.is_file()):
                                yield part, "not a part of a folder of parts (part-NNNNN.parquet)"
                    elif owner is None or not path.is_file() or path.is_symlink():
                        yield path, f"not a file of the dataset (a {top.name} file is <slug>.parquet)"
                    elif owner[0] not in folders:
                        yield path, "not in the catalog"


BY_RULESET = Layout()
BY_KIND = ByKind()


def _folders(root: Path) -> list[Path]:
    """The top folders of the dataset at `root` that hold rulesets' files."""
    return sorted(
        path
        for path in root.iterdir()
        if _real_dir(path) and not path.name.startswith(".") and path.name not in RESERVED
    )


def _real_dir(path: Path) -> bool:
    return path.is_dir() and not path.is_symlink()


def is_bundle(folder: Path, sums: bytes | None = None) -> bool:
    """A bundle (`tablebase publish`), not a data folder: it has a DATASET.md, or its
    SHA256SUMS (`sums`, its bytes where already read) lists one."""
    if (folder / "DATASET.md").exists():
        return True
    if sums is None:
        try:
            path = folder / "SHA256SUMS"
            sums = path.read_bytes() if stat.S_ISREG(os.lstat(path).st_mode) else None  # never a FIFO
        except OSError:
            sums = None
    return bool(sums and re.search(rb"^[0-9a-fA-F]{64} [ *]DATASET\.md\r?$", sums, re.M))


class RulesetPaths:
    """The files of one ruleset, by kind, wherever its dataset's layout puts them."""

    def path(self, kind: str) -> Path:
        raise NotImplementedError

    @property
    def positions(self) -> Path:
        return self.path("positions")

    @property
    def transitions(self) -> Path:
        return self.path("transitions")

    @property
    def solution(self) -> Path:
        return self.path("solution")

    @property
    def verification(self) -> Path:
        return self.path("verification")

    @property
    def tablebase(self) -> Path:
        return self.path("tablebase")

    @property
    def index(self) -> Path:
        return self.path("index")

    @property
    def lookup(self) -> Path:
        return self.path("lookup")

    @property
    def summary(self) -> Path:
        return self.path("summary")

    def all(self) -> list[Path]:
        """Every file, in the order `build` writes them (the catalog row last)."""
        return [self.path(kind) for kind in KINDS]


@dataclass(frozen=True)
class RulesetFiles(RulesetPaths):
    """The files of one ruleset's own folder, where build writes them and a data folder
    keeps them."""

    dir: Path

    def path(self, kind: str) -> Path:
        return self.dir / f"{kind}.parquet"  # BY_RULESET's file, the folder being its own


@dataclass(frozen=True)
class KindFiles(RulesetPaths):
    """The files of one ruleset in a bundle, each in its kind's folder."""

    root: Path
    folder: str  # <game>/<slug>

    def path(self, kind: str) -> Path:
        return self.root / BY_KIND.file(self.folder, kind)


@dataclass(frozen=True)
class DataDir:
    root: Path

    def ruleset(self, rules: Ruleset) -> RulesetFiles:
        """The ruleset's own folder in a data folder, where build publishes it."""
        return RulesetFiles(self.root / rules.folder)

    @functools.cached_property
    def layout(self) -> Layout:
        """How the folder keeps its rulesets' files: by kind in a bundle, one folder a
        ruleset in a data folder."""
        return BY_KIND if is_bundle(self.root) else BY_RULESET

    def files(self, folder: str) -> RulesetPaths:
        """The files of the ruleset whose folder (`Ruleset.folder`) is `folder`, where this
        folder's layout puts them."""
        return self.layout.files(self.root, folder)

    def published(self, rules: Ruleset) -> RulesetPaths:
        """The ruleset's files, to read, where the folder's layout puts them: DataError if
        the data directory has the earlier layout."""
        self.check_layout()
        return self.files(rules.folder)

    @functools.cached_property
    def resolved_root(self) -> Path:
        """The folder's own path, links resolved (once: `inside` asks for every file)."""
        return self.root.resolve()

    def inside(self, relative: str) -> Path:
        """`relative` under the data directory; DataError if it leads out of it (`..`, an
        absolute path, a symbolic link to elsewhere)."""
        path = self.root / relative
        # in strings, each folder resolved once for all its files: pathlib's resolve of the
        # catalog's 320 files was 30 ms of every query's start
        text, absolute = os.fspath(path), os.path.isabs(relative)
        if absolute or ".." in re.split(r"[/\\]", relative) or os.path.islink(text):
            resolved = os.path.realpath(text)
        else:
            folder, name = os.path.split(text)
            resolved = os.path.join(self._resolved_folder(folder), name)
        if absolute or not resolved.startswith(os.path.join(os.fspath(self.resolved_root), "")):
            raise DataError(f"{path} is outside the data folder {self.root}: see `tablebase check`")
        return path

    def _resolved_folder(self, folder: str) -> str:
        """`folder` with its links resolved, remembered for this object's life (a command's)."""
        known = self.__dict__.setdefault("_folders", {})
        if folder not in known:
            known[folder] = os.path.realpath(folder)
        return known[folder]

    def staging(self, rules: Ruleset) -> RulesetFiles:
        """Where this process builds `rules` (made if missing)."""
        self.claim()
        files = RulesetFiles(self.root / ".staging" / str(os.getpid()) / rules.folder)
        self._make(files.dir)
        return files

    @property
    def temp(self) -> Path:
        """This process's scratch space (DuckDB's spill files, enumerate's move spill), made
        if missing."""
        self.claim()
        path = self.root / ".tmp" / str(os.getpid())
        self._make(path)
        return path

    def _make(self, folder: Path) -> None:
        """Make this process's scratch `folder`, under the publish lock where the shared
        folder above it (.staging, .tmp) is made too: another build removes that one, once
        empty, under the same lock (`drop`), never between its making and this process's."""
        if not folder.is_dir():
            with self.lock("publish"):
                folder.mkdir(parents=True, exist_ok=True)
        signals.scratch(folder, self.root)  # removed if a signal must end the process before `drop` can

    def drop(self, folder: Path) -> None:
        """Remove this process's scratch `folder`, and the folders above it left empty
        (.staging, .tmp among them, under the publish lock: see `_make`)."""
        shutil.rmtree(folder, ignore_errors=True)
        signals.scratch_gone(folder)
        with self.lock("publish"):
            prune(folder.parent, self.root)

    @property
    def trash(self) -> Path:
        return self.root / ".trash"

    @property
    def pages(self) -> Path:
        return self.root / "pages"

    @property
    def catalog(self) -> Path:
        return self.root / "catalog.parquet"

    @property
    def database(self) -> Path:
        return self.root / "tablebases.duckdb"

    def summaries(self) -> list[Path]:
        """Every published ruleset's catalog row."""
        return sorted(path for path in self.root.glob("*/*/summary.parquet") if not path.parts[-3].startswith("."))

    # -- an earlier layout -----------------------------------------------------------

    def old_layout(self) -> list[Path]:
        """Folders written by an earlier version: data/<ruleset id>/summary.parquet and the
        other kinds, the folder named by the ruleset's id ('/' written %2F)."""
        if not self.root.is_dir():
            return []
        return sorted(
            folder
            for folder in self.root.iterdir()
            if folder.is_dir() and (folder / "summary.parquet").is_file() and _names_a_ruleset(folder.name)
        )

    def check_layout(self) -> None:
        """DataError if the data directory holds tablebases of the earlier layout. Looked at
        again only when the folder's entries change (its stat): a server's every lookup asks."""
        try:
            found = os.stat(self.root)
        except OSError:
            entries = None
        else:
            entries = (found.st_ino, found.st_mtime_ns, found.st_ctime_ns)
        if entries is not None and self.__dict__.get("_layout_checked") == entries:
            return
        old = self.old_layout()
        if old:
            raise DataError(
                f"{self.root} holds {len(old)} ruleset folder(s) of an earlier version's layout "
                f"(e.g. {old[0].name}/), which nothing reads: {self.old_layout_remedy()}"
            )
        self.__dict__["_layout_checked"] = entries

    def old_layout_remedy(self) -> str:
        """What rebuilds the folders of the earlier layout, naming their rulesets."""
        ids = " ".join(shlex.quote(old_layout_id(folder)) for folder in self.old_layout())
        return (
            f"`tablebase build {ids}` rebuilds them in this layout (each old folder goes once rebuilt), or remove them"
        )

    def remove_old_layout(self, ruleset: str) -> Path | None:
        """Delete the earlier layout's folder of `ruleset` (just built in this layout): its
        files of the kinds that version wrote, and the folder once empty; the folder."""
        from pipeline.games.rulesets import Ruleset

        for folder in self.old_layout():
            if Ruleset.parse(old_layout_id(folder)).id == ruleset:
                for kind in KINDS:  # what that version wrote there, and nothing else
                    (folder / f"{kind}.parquet").unlink(missing_ok=True)
                if not any(folder.iterdir()):
                    folder.rmdir()
                return folder
        return None

    # -- publishing a ruleset's folder at once ---------------------------------------

    @contextmanager
    def publishing(self, built: RulesetFiles, rules: Ruleset) -> Iterator[RulesetFiles]:
        """Move the folder `built` to the ruleset's place, replacing the folder there; if
        the block (writing the catalog) fails, put the old folder back. Under the publish lock.

        A reader sees the old folder, then (for an instant) none, then the new one: never
        a mix of old and new files. A kill between the renames leaves the old folder in
        data/.trash, and `recover` puts it back.
        """
        final = self.ruleset(rules)
        aside = self.trash / str(os.getpid())
        old = aside / rules.folder
        with self.lock("publish"):
            final.dir.parent.mkdir(parents=True, exist_ok=True)
            if final.dir.exists():
                old.parent.mkdir(parents=True, exist_ok=True)
                os.rename(final.dir, old)
            moved = False
            try:
                os.rename(built.dir, final.dir)
                moved = True
                sync(final.dir.parent)  # the new folder is on the disk before the catalog names it
                yield final
            except BaseException:
                if moved:
                    os.rename(final.dir, built.dir)
                if old.exists():
                    os.rename(old, final.dir)
                    sync(final.dir.parent)
                raise
            finally:
                if final.dir.exists():  # else the old folder could not be put back: `recover` will
                    shutil.rmtree(aside, ignore_errors=True)
                prune(built.dir.parent, self.root)
                prune(final.dir.parent, self.root)
                prune(self.trash, self.root)

    # -- several processes, kills -----------------------------------------------------

    @contextmanager
    def lock(self, name: str, wait: bool = True, busy: str = "") -> Iterator[None]:
        """Hold the lock `name` of this data directory (re-entrant within a process).

        Without `wait`, DataError(`busy`) at once if another process holds it."""
        key = (self.root.resolve(), name)
        if _held.get(key):
            _held[key] += 1
            try:
                yield
            finally:
                _held[key] -= 1
            return
        path = self.root / ".locks" / f"{name}.lock"
        path.parent.mkdir(parents=True, exist_ok=True)
        from filelock import FileLock, Timeout

        # the process's lock, whichever thread takes it, as `_held` counts it
        lock = FileLock(path, thread_local=False)
        try:
            lock.acquire(timeout=-1 if wait else 0)
        except Timeout:
            raise DataError(busy or f"{self.root} is busy ({name})") from None
        _held[key] = 1
        try:
            yield
        finally:
            _held[key] = 0
            lock.release()

    def require_writable_here(self) -> None:
        """DataError unless the folder may be written as a data folder: not a published
        bundle (its SHA256SUMS, metadata and catalog are the publisher's, which a build would
        rewrite as a data folder's), not the system's own folders (`--data /` as root wrote a
        catalog into /), not the home folder itself."""
        if is_bundle(self.root):
            raise DataError(
                f"{self.root} is a published bundle (it holds DATASET.md, or its SHA256SUMS lists one), which builds never write: "
                "build into a data folder (--data data), then `tablebase publish` it"
            )
        where = self.root.resolve()
        system = (
            where == Path(where.anchor)
            or (where.parent == Path(where.anchor) and where.name in SYSTEM_FOLDERS)
            or any(where.is_relative_to(Path(where.anchor) / name) for name in ("proc", "sys", "dev"))
        )
        if system or where == Path.home().resolve():
            raise DataError(
                f"{self.root} is {'your home folder' if not system else 'a folder of the system'}, "
                "not one to fill with a data folder's files: name a folder of its own with --data (e.g. data)"
            )

    def claim(self) -> None:
        """Hold this process's lock in the data directory (data/.locks/process.<pid>.lock)
        until the process ends: `sweep` leaves the scratch named by its PID alone while the
        lock is held, and takes it once the process is gone, whoever has its PID by then."""
        from filelock import FileLock, Timeout

        path = self._process_lock(os.getpid())
        key = (os.getpid(), self.root.resolve())
        held = _claimed.pop(key, None)
        if held is not None:
            lock, file = held
            if _same_file(file, path):
                _claimed[key] = held
                return
            lock.release()  # the data directory was deleted or replaced under this process
        with self.lock("publish"):  # `sweep` removes the lock files of ended processes under it
            lock = FileLock(path, thread_local=False)
            try:
                lock.acquire(timeout=0)  # free: no other process has this PID
            except Timeout:  # but a child forked by a process that had it may hold it
                raise DataError(f"{path} is held by another process: end it, or delete the file") from None
            _claimed[key] = (lock, os.stat(path))  # held until the process ends

    def _process_lock(self, pid: int) -> Path:
        return self.root / ".locks" / f"process.{pid}.lock"

    def _runs(self, owner: str) -> bool:
        """Whether the process that named its scratch `owner` (its PID) runs: it holds its
        process lock. Never this process: `sweep` runs before this process makes its scratch."""
        if not owner.isdigit() or int(owner) == os.getpid():
            return False
        path = self._process_lock(int(owner))
        if not path.exists():
            return False  # a PID alone proves nothing: it may be another process's by now
        from filelock import FileLock, Timeout

        lock = FileLock(path, thread_local=False)
        try:
            lock.acquire(timeout=0)
        except Timeout:
            return True
        lock.release()
        return False

    def sweep(self) -> list[str]:
        """Remove what ended processes left: their staging and scratch folders and their
        half-written files beside the catalog; put back folders a publish left aside. The
        folders a killed publish had put in place (`recover`)."""
        with self.lock("publish"):
            published = self.recover()
            for area in (self.root / ".staging", self.root / ".tmp"):
                if area.is_dir():
                    for owner in area.iterdir():
                        if not self._runs(owner.name):
                            shutil.rmtree(owner, ignore_errors=True)
                    prune(area, self.root)
            if not self.root.is_dir():
                return published
            # files beside the catalog are written aside under the publish lock (the catalog,
            # the database, the claims report): any found now is a killed writer's
            for path in self.root.glob(".*.tmp*"):
                if re.fullmatch(r"\..+\.\d+\.tmp(\.wal)?", path.name) and path.is_file():
                    path.unlink(missing_ok=True)
            for path in (self.root / ".locks").glob("process.*.lock"):
                pid = path.name.split(".")[1]
                if pid != str(os.getpid()) and not self._runs(pid):
                    path.unlink(missing_ok=True)
        return published

    def waiting(self) -> dict[str, Path]:
        """The folders (`<game>/<slug>`) a publish killed between its two renames left in
        data/.trash, where `recover` (`tablebase export`) finds them, by the folder they
        go back to, where none is in their place."""
        if not self.trash.is_dir():
            return {}
        found = {}
        for old in sorted(self.trash.glob("*/*/*")):
            folder = f"{old.parts[-2]}/{old.parts[-1]}"
            if old.is_dir() and not (self.root / folder).exists():
                found[folder] = old
        return found

    def recover(self) -> list[str]:
        """Put back folders a killed `publish` left in data/.trash; drop the rest. The
        folders (`<game>/<slug>`) that such a publish had already put in place: their files
        are new, perhaps not yet in the catalog and SHA256SUMS.

        Every publish runs under the publish lock, held here too: whatever is in data/.trash
        is a killed process's, whoever has its PID now. Never called while publishing."""
        with self.lock("publish"):
            if not self.trash.is_dir():
                return []
            published = []
            for owner in self.trash.iterdir():
                for old in sorted(owner.glob("*/*")):
                    final = self.root / old.parts[-2] / old.parts[-1]
                    if old.is_dir() and not final.exists():  # else a newer folder was published
                        final.parent.mkdir(exist_ok=True)  # a game folder left empty may be gone
                        os.rename(old, final)
                        sync(final.parent)
                    elif old.is_dir():
                        published.append(f"{old.parts[-2]}/{old.parts[-1]}")
                shutil.rmtree(owner, ignore_errors=True)
            prune(self.trash, self.root)
            return published


def prune(folder: Path, root: Path) -> None:
    """Remove `folder` and its parents up to `root` while they are empty."""
    while folder != root and root in folder.parents:
        try:
            folder.rmdir()
        except OSError:
            return
        folder = folder.parent


def old_layout_id(folder: Path) -> str:
    """The ruleset id an earlier layout's folder is named by ('/' written %2F)."""
    return folder.name.replace("%2F", "/").replace("%25", "%")


def _names_a_ruleset(name: str) -> bool:
    from pipeline.games.rulesets import Ruleset

    try:
        Ruleset.parse(name.replace("%2F", "/").replace("%25", "%"))
    except Exception:  # noqa: BLE001 - any refusal means: not a ruleset's folder
        return False
    return True


#: The system's folders at the top of the file system, never made a data folder.
SYSTEM_FOLDERS = frozenset(
    {
        "bin",
        "boot",
        "dev",
        "etc",
        "lib",
        "lib32",
        "lib64",
        "libx32",
        "proc",
        "run",
        "sbin",
        "sys",
        "usr",
        "var",
        "System",
        "Windows",
        "Program Files",
    }
)

#: Locks this process holds, by (data directory, name): how many times over.
_held: dict[tuple[Path, str], int] = {}
#: Each data directory's process lock this process holds, by (PID, data directory): the
#: lock, never released, and its file as it was when taken (a forked child has a PID and
#: lock of its own).
_claimed: dict[tuple[int, Path], tuple[FileLock, os.stat_result]] = {}


def _same_file(file: os.stat_result, path: Path) -> bool:
    """Whether the file `file` describes is still the one at `path` (not deleted or replaced)."""
    try:
        return os.path.samestat(file, os.stat(path))
    except OSError:
        return False
