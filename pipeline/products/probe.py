"""Looking positions up in a built tablebase, from the CLI or a notebook.

    >>> from pipeline.products.probe import probe
    >>> result = probe("chopsticks", "1-1|1-1")
    >>> result.value, result.remoteness          # from the side to move
    ('loss', ...)
    >>> result.moves[0]                          # the best move first

Values are the mover's: 'win', 'loss', 'tie' or 'draw' (pipeline/core/values.py); remoteness is
the number of plies to the end under best play (None for draws). Moves are ordered best
first for the mover: wins fastest first, then ties fastest first, then draws, then losses
slowest first.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from pipeline.core.errors import DataError, PositionError
from pipeline.core.params import quoted
from pipeline.core.values import Value, best_move_first
from pipeline.datadir.check import trusted
from pipeline.datadir.layout import DataDir
from pipeline.games import position_note, read_position
from pipeline.games.rulesets import Ruleset
from pipeline.storage import parts


@dataclass(frozen=True)
class Move:
    """One move of a probed position: its label, the position it leads to, and that
    position's value and remoteness for the player to move there (`outcome` is the mover's)."""

    move: str
    position: str  # the position after the move, from the new mover's side
    value: str  # the new mover's value
    remoteness: int | None

    @property
    def outcome(self) -> str:
        """The move's result for the player making it."""
        return Value(self.value).opposite.value


@dataclass(frozen=True)
class Probe:
    """A position's value and remoteness for the player to move, and every move, best first."""

    ruleset: str
    position: str
    value: str
    remoteness: int | None
    moves: list[Move] = field(default_factory=list)
    #: What the game says of the text given, where it read it as another (Game.note: a
    #: dobutsu position with the second player to move, turned to the mover), else None.
    note: str | None = None


#: The one in-memory DuckDB database the probes of this process run on (opened when first
#: needed), and the lock that opens it once.
_database: duckdb.DuckDBPyConnection | None = None
_opening = threading.Lock()


def connection() -> duckdb.DuckDBPyConnection:
    """A connection of its own (close it) to the process's one in-memory database: opening
    a database costs 25-40 ms, four times a probe's two queries on a small file, and was
    paid by every probe (`tablebase play`'s every move, each request of `tablebase serve`).
    It holds nothing: each query reads the files it names again."""
    global _database
    with _opening:
        if _database is None:
            _database = duckdb.connect()
        return _database.cursor()


def best_first(move: Move) -> tuple:
    """Sort key: winning fastest, then tying fastest, then drawing, then losing slowest."""
    return (*best_move_first(move.value, move.remoteness), move.move)


def text_hash(text: str) -> int:
    """index.parquet's `hash` of a position's text (pipeline/core/dataset.py TEXT_HASH)."""
    return int.from_bytes(hashlib.md5(text.encode()).digest()[12:], "little")


class _Sorted:
    """A Parquet file in order of its first column (index.parquet by hash, lookup.parquet
    by id), or the folder of parts in its place (pipeline/storage/parts.py: the parts in
    order are the file): its footers and its row groups' least values of that column, read
    once a version of the file (a rebuild renames another file or folder into place: another
    inode and times), so that a lookup reads the one row group that holds a key and nothing
    else. Row groups are numbered across the parts."""

    def __init__(self, path: str):
        self.path, self.stamp = path, _stamp(path)
        self.files = [str(file) for file in parts.parts(Path(path))]
        self.stamps = [_stamp(file) for file in self.files]
        footers = [pq.read_metadata(file) for file in self.files]
        self.footers = footers
        # (part, its row group) of each row group of the whole
        self.groups = [(part, group) for part, footer in enumerate(footers) for group in range(footer.num_row_groups)]
        self.least = np.array(
            [footers[part].row_group(group).column(0).statistics.min for part, group in self.groups], dtype=np.int64
        )
        # values and move names read as the dictionaries they are stored as: 16,384 values
        # decoded in 0.2 ms so, 0.85 ms as strings
        schema = footers[0].schema
        paths = {schema.column(c).path for c in range(footers[0].num_columns)}
        self.dictionaries = [path for path in ("value", "move.list.element") if path in paths]
        self.opened = threading.local()

    def file(self, part: int) -> pq.ParquetFile:
        """The file (or part), open for this thread (opening it with the footer kept costs
        0.3 ms, a tenth of a lookup): held while this version of the file is looked up, so
        it reads the bytes whose footer is kept even once a rebuild renames another into place."""
        held = getattr(self.opened, "files", None)
        if held is None:
            held = self.opened.files = {}
        file = held.get(part)
        if file is None:
            # the footer kept is handed over, not read again. The path is read by Arrow's
            # own file (a Python file object in its place made the process abort at exit
            # now and then: "terminate called without an active exception"). Without Arrow's
            # pre-buffering (pre_buffer, on by default), which hands each read of a row group
            # to its I/O threads and waits: a lookup on one thread took 5.2 ms of CPU, not 5.8,
            # and 191 lookups a second, not 141 (connect:cols=5,rows=6, files in the page cache)
            file = held[part] = pq.ParquetFile(
                self.files[part], metadata=self.footers[part], read_dictionary=self.dictionaries, pre_buffer=False
            )
        return file

    def read(self, group: int, columns: list[str]) -> pa.Table:
        part, inside = self.groups[group]
        try:
            # on this thread alone: Arrow's pool spent a fifth more CPU handing a small
            # group's columns about than it saved, and a server's lookups run side by side
            rows = self.file(part).read_row_group(inside, columns=columns, use_threads=False)
        except (OSError, pa.ArrowException):
            rows = None
        # the path holds the file read still, or a rebuild has published another since: the
        # answer is then of the old tablebase, and the caller's other reads perhaps of the new
        try:
            same = rows is not None and _stamp(self.files[part]) == self.stamps[part]
            same = same and (self.files[part] == self.path or _stamp(self.path) == self.stamp)
        except OSError:  # for an instant while a rebuild publishes, there is no file there
            same = False
        if not same:
            raise DataError(f"{self.path} was replaced or damaged while it was read: ask again")
        return rows

    def ids(self, hash_: int) -> list[int]:
        """index.parquet: the ids of the rows whose hash is `hash_`, from the row groups
        whose range holds it (one, or its neighbours where equal hashes straddle two)."""
        found: list[int] = []
        # the last group whose least hash is below it: its last rows may hold it too
        group = max(int(np.searchsorted(self.least, hash_, side="left")) - 1, 0)
        while group < len(self.least) and self.least[group] <= hash_:
            rows = self.read(group, ["hash", "id"])
            hashes = rows["hash"].to_numpy()
            low, high = np.searchsorted(hashes, hash_), np.searchsorted(hashes, hash_, side="right")
            found += rows["id"].to_numpy()[low:high].tolist()
            if high < len(hashes):
                break
            group += 1
        return found

    def rows(self, ids: list[int], columns: list[str]) -> dict[int, dict]:
        """lookup.parquet: the rows of `ids` (unique in the file) that it holds, by id, each
        row group read once however many of them it holds."""
        wanted = np.array(sorted(set(ids)), dtype=np.int64)
        groups = np.searchsorted(self.least, wanted, side="right") - 1
        found: dict[int, dict] = {}
        for group in np.unique(groups[groups >= 0]).tolist():
            rows = self.read(group, ["id", *columns])
            held = rows["id"].to_numpy()
            mine = wanted[groups == group]
            at = np.minimum(np.searchsorted(held, mine), len(held) - 1)
            for where in at[held[at] == mine].tolist():
                found[int(held[where])] = rows.slice(where, 1).to_pylist()[0]
        return found


def _stamp(path: str) -> tuple[int, ...]:
    """The file at `path`, or the folder of parts in its place, as it is now."""
    found = os.stat(parts.located(Path(path)))
    return (found.st_ino, found.st_size, found.st_mtime_ns, found.st_ctime_ns)


#: index.parquet and lookup.parquet files read lately, by path, the latest last: OPENED at
#: most, so that a process looking up every ruleset of a folder (a server) neither keeps
#: every footer nor holds a file open for each ruleset and thread.
_sorted: OrderedDict[str, _Sorted] = OrderedDict()
OPENED = 64


def _opened(path: str) -> _Sorted:
    with _opening:
        known = _sorted.get(path)
        if known is None or known.stamp != _stamp(path):
            known = _sorted[path] = _Sorted(path)
        _sorted.move_to_end(path)
        while len(_sorted) > OPENED:
            _sorted.popitem(last=False)
    return known


def preload(index: str, lookup: str) -> None:
    """Read the footers of a ruleset's index and lookup now (a server does, before it forks
    the processes that answer: they share the pages that hold them)."""
    _opened(index)
    _opened(lookup)


def index_ids(index: str, hash_: int) -> list[int]:
    """The ids index.parquet at `index` holds under `hash_`. Its row groups' least hashes are
    kept in memory (8 bytes a row group: 0.5 MB for a billion positions), so a lookup reads
    one row group (pipeline/stages/export.py INDEX_GROUP_ROWS) and nothing else: DuckDB's scan
    looks at every row group's statistics, 0.17-0.28 s over the 16,000 of connect:cols=5,rows=6
    when they were four times larger."""
    return _opened(index).ids(hash_)


def lookup_rows(
    lookup: str, ids: list[int], columns: tuple[str, ...] = ("position", "value", "remoteness")
) -> dict[int, dict]:
    """The rows of lookup.parquet at `lookup` whose ids are `ids`, by id: one row group
    (pipeline/stages/export.py LOOKUP_GROUP_ROWS) read for each group they fall in. DuckDB's `WHERE id = ?` on the tablebase
    read its footer and a row group of a million rows each time: 63 ms on connect:cols=5,rows=6."""
    return _opened(lookup).rows(ids, list(columns))


def find(index: str, lookup: str, text: str) -> dict | None:
    """The lookup.parquet row (id, position, value, remoteness, dst, move) of the position whose
    text is `text`, or None: its id from the index (one small row group), then its row by
    id. Texts sharing a hash are told apart by their texts: no other text is read."""
    for candidate in sorted(index_ids(index, text_hash(text))):
        row = lookup_rows(lookup, [candidate], ("position", "value", "remoteness", "dst", "move")).get(candidate)
        if row is not None and row["position"] == text:
            return row
    return None


def probe(ruleset: str | Ruleset, position: str, data: Path | str = "data") -> Probe:
    """The value, remoteness and every move of `position`; PositionError if there is no such position."""
    rules = ruleset if isinstance(ruleset, Ruleset) else Ruleset.parse(ruleset)
    text = read_position(rules, position)
    files = trusted(DataDir(Path(data)), rules)  # each file there, regular, and the bytes recorded
    lookup = str(files.lookup)
    row = find(str(files.index), lookup, text)
    if row is None:
        raise PositionError(f"{quoted(text)} is not a position of {rules.id}")
    children = lookup_rows(lookup, row["dst"])
    if len(children) != len(set(row["dst"])):
        raise DataError(f"{lookup} has a move of {quoted(text)} to a position it does not hold: rebuild {rules.id}")
    moves = [
        Move(move, *(children[dst][name] for name in ("position", "value", "remoteness")))
        for dst, move in zip(row["dst"], row["move"])
    ]
    moves.sort(key=best_first)
    return Probe(rules.id, text, row["value"], row["remoteness"], moves, position_note(rules, position))


def get(ruleset: str | Ruleset, position: str, data: Path | str = "data", default: Probe | None = None) -> Probe | None:
    """Like `probe`, but `default` instead of an error when the position does not exist."""
    try:
        return probe(ruleset, position, data)
    except PositionError:
        return default
