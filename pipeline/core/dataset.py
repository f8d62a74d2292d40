"""The published dataset's files: each one's columns, types and meaning, defined once.

export writes the tablebase and the catalog with these schemas, `tablebase check` holds
every file to them, and DATASET.md (`tablebase publish`) is written from them. A game's
own columns (`Game.columns`) sit between a file's leading and trailing columns; their
types are the game's and the same in every ruleset of the game, and they may be NULL.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, fields
from typing import Any

import pyarrow as pa


@dataclass(frozen=True)
class Column:
    name: str
    type: pa.DataType
    meaning: str
    nullable: bool = False

    @property
    def field(self) -> pa.Field:
        return pa.field(self.name, self.type, nullable=self.nullable)


@dataclass(frozen=True)
class FileKind:
    """One kind of file of a ruleset's folder (or the catalog)."""

    name: str  # file name without .parquet
    what: str
    head: tuple[Column, ...]
    tail: tuple[Column, ...] = ()
    game_columns: bool = False  # the game's decoded columns sit between head and tail

    def schema(self, game_fields: list[pa.Field] | tuple = ()) -> pa.Schema:
        middle = [field.with_nullable(True) for field in game_fields] if self.game_columns else []
        return pa.schema([c.field for c in self.head] + middle + [c.field for c in self.tail])

    @property
    def columns(self) -> tuple[Column, ...]:
        return self.head + self.tail


RULESET = Column("ruleset", pa.string(), "canonical ruleset id, e.g. `chopsticks:split=any`")

CATALOG = FileKind(
    "catalog",
    "one row per built ruleset (`summary.parquet` is the ruleset's own row)",
    (
        RULESET,
        Column("game", pa.string(), "game name"),
        Column(
            "params",
            pa.map_(pa.string(), pa.string()),
            "every parameter's value as text, defaults included (`element_at(params, 'fingers')[1]`, on any DuckDB)",
        ),
        Column(
            "folder",
            pa.string(),
            "the ruleset's place, `<game>/<slug>`: its folder in a data folder, its files' in a bundle "
            "(`tablebase/<game>/<slug>.parquet`)",
        ),
        Column("tablebase_path", pa.string(), "path of its tablebase file relative to the catalog's folder"),
        Column("transitions_path", pa.string(), "path of its transitions file relative to the catalog's folder"),
        Column("positions", pa.int64(), "number of positions"),
        Column("transitions", pa.int64(), "number of transitions (distinct position pairs)"),
        Column("wins", pa.int64(), "positions won for the player to move"),
        Column("losses", pa.int64(), "positions lost for the player to move"),
        Column("ties", pa.int64(), "positions tied (the game ends with nobody winning under best play)"),
        Column("draws", pa.int64(), "positions drawn (endless play under best play)"),
        Column("reachable", pa.int64(), "positions that can arise in play from a legal start"),
        Column("start", pa.string(), "the start position's text"),
        Column(
            "start_value", pa.string(), "the start's value for the first player: `loss` means the second player wins"
        ),
        Column("start_remoteness", pa.int64(), "the start's remoteness (NULL for a draw)", True),
        Column("start_grundy", pa.int64(), "the start's Grundy value (NULL where a cycle is reachable)", True),
        Column(
            "max_remoteness", pa.int64(), "the longest forced win, loss or tie (NULL if every position is drawn)", True
        ),
        Column("tablebase_sha256", pa.string(), "SHA-256 of tablebase.parquet"),
        Column("transitions_sha256", pa.string(), "SHA-256 of transitions.parquet"),
        Column("positions_sha256", pa.string(), "SHA-256 of positions.parquet"),
        Column("solution_sha256", pa.string(), "SHA-256 of solution.parquet"),
        Column("verification_sha256", pa.string(), "SHA-256 of verification.parquet"),
        Column("index_sha256", pa.string(), "SHA-256 of index.parquet"),
        Column("lookup_sha256", pa.string(), "SHA-256 of lookup.parquet"),
        Column("pipeline_version", pa.string(), "the version of tablebase that built it"),
    ),
)


#: The kinds of file whose path every catalog row records (`<kind>_path`, and `<kind>_sha256`):
#: those the data folder's views, `tablebase sql` and `tablebase query` read (named in
#: pipeline.core.kinds, which loads without pyarrow).
QUERIED = tuple(column.name.removesuffix("_path") for column in CATALOG.head if column.name.endswith("_path"))


@dataclass(frozen=True)
class CatalogRow(Mapping[str, Any]):
    """One row of the catalog, a ruleset's summary: CATALOG's columns, in its order, typed
    (tests/test_catalog_row.py holds the two to each other). It reads as a mapping of its
    columns too (`row["wins"]` is `row.wins`), as rows of the catalog's Parquet file do."""

    ruleset: str
    game: str
    params: list[tuple[str, str]]  # the map's entries, in the game's order
    folder: str
    tablebase_path: str
    transitions_path: str
    positions: int
    transitions: int
    wins: int
    losses: int
    ties: int
    draws: int
    reachable: int
    start: str
    start_value: str
    start_remoteness: int | None
    start_grundy: int | None
    max_remoteness: int | None
    tablebase_sha256: str
    transitions_sha256: str
    positions_sha256: str
    solution_sha256: str
    verification_sha256: str
    index_sha256: str
    lookup_sha256: str
    pipeline_version: str

    @property
    def parameters(self) -> dict[str, str]:
        """`params` as a dict: every parameter's value as text, by name."""
        return dict(self.params)

    def __getitem__(self, column: str) -> Any:
        if column not in _CATALOG_NAMES:
            raise KeyError(column)
        return getattr(self, column)

    def __iter__(self) -> Iterator[str]:
        return iter(_CATALOG_NAMES)

    def __len__(self) -> int:
        return len(_CATALOG_NAMES)

    def as_dict(self) -> dict[str, Any]:
        """The row as a dict of columns, in CATALOG's order."""
        return {name: getattr(self, name) for name in _CATALOG_NAMES}

    def table(self) -> pa.Table:
        """The row as a one-row table with the catalog's schema (summary.parquet)."""
        return pa.Table.from_pylist([self.as_dict()], schema=CATALOG.schema())

    @classmethod
    def of(cls, row: Mapping[str, Any]) -> CatalogRow:
        """The row of a mapping of CATALOG's columns (a row of `to_pylist()`)."""
        return cls(**{name: row[name] for name in _CATALOG_NAMES})

    @classmethod
    def rows(cls, table: pa.Table) -> list[CatalogRow]:
        """Every row of a table with the catalog's columns."""
        return [cls.of(row) for row in table.to_pylist()]


_CATALOG_NAMES = tuple(field.name for field in fields(CatalogRow))


#: The solver-made columns beyond value, remoteness and the Grundy value: each solver computes
#: them in bulk under these names, the verifier re-derives them, and solution.parquet and
#: tablebase.parquet end with them, in this order. The engines' SQL passes them on by name
#: (`{solver_made}`, pipeline/engines/base.py), export copies them: adding one is this
#: declaration, the solvers' computations and a verifier check (CONTRIBUTING.md).
SOLVER_MADE = (
    Column(
        "winning_moves",
        pa.int32(),
        "number of moves to a position lost for the player to move there: the moves that keep a win "
        "(1: only one does, as in a puzzle); 0 on every position that is not a win, and where the game is over",
    ),
)

TABLEBASE = FileKind(
    "tablebase",
    "every position with its value, one row per position, ordered by `id`: the product",
    (
        RULESET,
        Column("id", pa.int64(), "the position's number in this ruleset (joins `transitions.src` and `dst`)"),
        Column("position", pa.string(), "the position's text, as `tablebase probe` takes it"),
    ),
    (
        Column("moves", pa.int32(), "number of distinct positions one move away"),
        Column(
            "value",
            pa.string(),
            "`win`, `loss`, `tie` (the game ends, nobody wins) or `draw` (it never "
            "ends), for the player to move; best first: win, tie, draw, loss",
        ),
        Column(
            "remoteness",
            pa.int32(),
            "plies to the end under best play (the winner hurries, the loser "
            "holds out, a tie is reached the shortest way); 0 where the game is over; NULL for draws",
            True,
        ),
        Column(
            "grundy",
            pa.int32(),
            "Grundy value under normal play: the mex of the children's, 0 without moves; "
            "NULL where a cycle is reachable, and everywhere in a game that is not impartial",
            True,
        ),
        Column("reachable", pa.bool_(), "whether play from a legal start can reach the position"),
        *SOLVER_MADE,
    ),
    game_columns=True,
)

TRANSITIONS = FileKind(
    "transitions",
    "every move: one row per distinct (src, dst) pair, ordered by `src`",
    (
        RULESET,
        Column("src", pa.int64(), "id of the position before the move"),
        Column("dst", pa.int64(), "id of the position after it (from the new mover's side)"),
        Column(
            "move",
            pa.string(),
            "the move, e.g. `3 hits 2`; when several moves lead to the same position, the first in the game's order",
        ),
    ),
)

#: As written: the text columns as dictionaries, which readers see as TRANSITIONS' strings.
PUBLISHED_TRANSITIONS = pa.schema(
    [
        field.with_type(pa.dictionary(pa.int8() if field.name == "ruleset" else pa.int32(), pa.string()))
        if pa.types.is_string(field.type)
        else field
        for field in TRANSITIONS.schema()
    ]
)


POSITIONS = FileKind(
    "positions",
    "every position before solving",
    (
        Column("id", pa.int64(), "the position's number"),
        Column("text", pa.string(), "the position's text"),
        Column("terminal", pa.string(), "`win`, `loss` or `tie` where the game is over, else NULL", True),
        Column("moves", pa.int32(), "number of distinct positions one move away"),
        Column(
            "rank", pa.int32(), "a number every move lowers (NULL where moves can cycle); ids go rank by rank", True
        ),
    ),
    game_columns=True,
)

SOLUTION = FileKind(
    "solution",
    "the solver's values by position id",
    (
        Column("id", pa.int64(), "the position's number"),
        Column("value", pa.string(), "`win`, `loss`, `tie` or `draw`"),
        Column("remoteness", pa.int32(), "plies to the end under best play; NULL for draws", True),
        Column(
            "grundy", pa.int32(), "Grundy value; NULL where a cycle is reachable or the game is not impartial", True
        ),
        Column(
            "grundy_height",
            pa.int32(),
            "the longest line of play, where the Grundy value is known: "
            "the verifier's proof that no cycle is reachable",
            True,
        ),
        *SOLVER_MADE,
    ),
)

VERIFICATION = FileKind(
    "verification",
    "one row per consistency check the verifier ran",
    (
        Column("check", pa.string(), "the check's name"),
        Column("requirement", pa.string(), "what it requires"),
        Column("failures", pa.int64(), "positions that fail it (0 in every published file)"),
        Column("example", pa.string(), "a failing position, if any", True),
        Column("solution_sha256", pa.string(), "SHA-256 of the solution checked"),
    ),
)

#: How `index.parquet` finds a position by its text: the last 4 bytes of the MD5 digest of
#: the text's UTF-8 bytes, read as a little-endian unsigned integer: in DuckDB
#: `md5_number(text) >> 96`, in Python `int.from_bytes(hashlib.md5(text.encode()).digest()[12:], "little")`
#: (pipeline/products/probe.py `text_hash`). 32 bits: a billion positions share a value
#: now and then (a lookup compares the texts), and sorted they take 3 bits a row.
TEXT_HASH = "the last 4 bytes of the MD5 digest of the position's UTF-8 text, as a little-endian unsigned integer"
#: The least and the greatest TEXT_HASH.
TEXT_HASHES = (0, (1 << 32) - 1)

INDEX = FileKind(
    "index",
    "every position's id by a hash of its text, ordered by `hash`, then `id`: where a lookup by "
    "text finds its id without reading every text (`tablebase probe`, `tablebase serve`)",
    (
        Column(
            "hash",
            pa.int64(),
            f"{TEXT_HASH} (DuckDB: `md5_number(position) >> 96`); positions whose texts share one sit side by side",
        ),
        Column("id", pa.int64(), "the position's id (joins `tablebase.id`)"),
    ),
)

LOOKUP = FileKind(
    "lookup",
    "each position's text, value, remoteness and moves by `id`, in row groups of 16,384 rows: "
    "what a lookup of one position reads, one small row group for the position and one for "
    "each position its moves lead to (`tablebase probe`, `tablebase serve`); the same rows as "
    "tablebase.parquet and transitions.parquet",
    (
        Column("id", pa.int64(), "the position's id (joins `tablebase.id`, `index.id`)"),
        Column("position", pa.string(), "the position's text, as `tablebase.position`"),
        Column("value", pa.string(), "`win`, `loss`, `tie` or `draw`, as `tablebase.value`"),
        Column("remoteness", pa.int32(), "as `tablebase.remoteness`", True),
        Column(
            "dst",
            pa.list_(pa.field("element", pa.int64(), nullable=False)),
            "the `dst` of every row of transitions.parquet whose `src` is this `id`, ascending; "
            "empty where the game is over",
        ),
        Column(
            "move",
            pa.list_(pa.field("element", pa.string(), nullable=False)),
            "those rows' `move`, in the same order as `dst`",
        ),
    ),
)

#: The files of a ruleset's folder, in the order `build` writes them; `summary` has the catalog's schema.
RULESET_FILES = (
    POSITIONS,
    TRANSITIONS,
    SOLUTION,
    VERIFICATION,
    TABLEBASE,
    INDEX,
    LOOKUP,
    FileKind("summary", "the ruleset's catalog row", CATALOG.head),
)


#: positions.parquet's second column where the game makes its texts from keys (Space.keyed).
KEY = Column(
    "key",
    pa.int64(),
    "in place of `text` where the game makes its texts from keys (connect: John Tromp's key): "
    "the text is tablebase.parquet's `position`",
)


def documented_schema(kind: FileKind, schema: pa.Schema) -> pa.Schema:
    """The documented schema of a file of `kind` with the game columns of `schema`; a
    positions file holding keys has `key` in place of `text`."""
    documented = kind.schema(game_fields(schema, kind))
    if kind is POSITIONS and schema.names[1:2] == [KEY.name]:
        documented = documented.set(1, KEY.field)
    return documented


def game_fields(schema: pa.Schema, kind: FileKind) -> list[pa.Field]:
    """The fields of `schema` between `kind`'s leading and trailing columns."""
    return list(schema)[len(kind.head) : len(schema) - len(kind.tail)]
