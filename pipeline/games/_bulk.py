"""Bulk building blocks shared by the games whose positions are multisets or sets of numbers.

Not a game: nothing here is registered. Every helper works on whole NumPy arrays.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

import numpy as np
import pyarrow as pa

from pipeline.core.keys import distinct
from pipeline.core.params import MAX_DIGITS, is_number  # noqa: F401 - the games take them from here
from pipeline.games.contract import TRANSITION_SCHEMA

#: Rows per transitions batch (bounds the memory of move generation).
BATCH_ROWS = 1 << 20
#: Pending children of one level are deduplicated once they exceed this many.
COMPACT_ROWS = 1 << 23


def number_lists(counts: np.ndarray, values: np.ndarray, value_type: pa.DataType) -> pa.ListArray:
    """A list per row: row i holds the next counts[i] entries of `values`."""
    offsets = np.zeros(len(counts) + 1, dtype=np.int32)
    np.cumsum(counts, out=offsets[1:])
    if pa.types.is_integer(value_type):  # NumPy's cast, not pyarrow's checked one (3x quicker)
        values = np.asarray(values).astype(value_type.to_pandas_dtype(), copy=False)
    return pa.ListArray.from_arrays(pa.array(offsets), pa.array(values, value_type))


def joined_text(lists: pa.ListArray) -> pa.Array:
    """Each list's numbers (integers >= 0) joined by '-', or '0' for an empty list. The
    bytes are laid out with NumPy (10x quicker than casting to strings and joining them in
    pyarrow): a row of cells per number, its digits then '-' then padding; the '-' ending
    each list padded too; then every padding cell dropped."""
    offsets = lists.offsets.to_numpy()
    values = lists.flatten().to_numpy(zero_copy_only=False)
    counts = np.diff(offsets)
    if values.size and values.min() < 0:
        raise ValueError("joined_text takes numbers >= 0")
    empty = np.flatnonzero(counts == 0)
    if empty.size:  # an empty list reads "0": one number 0
        values = np.insert(values, offsets[:-1][empty] - offsets[0], 0)
        counts = np.maximum(counts, 1)
    top = int(values.max()) if values.size else 0
    width = len(str(top))
    if top < 1 << 16 and width < 8:  # the numbers' cells looked up in a table of all of them
        table, digits = _digit_cells(np.arange(top + 1), 3 if width < 4 else 7)
        row = np.uint32 if width < 4 else np.uint64  # a row of cells as one word: a quick gather
        cells = table.view(row).reshape(-1)[values].view(np.uint8).reshape(values.size, table.shape[1])
        digits = digits[values]
    else:
        cells, digits = _digit_cells(values.astype(np.int64), width)
    ends = np.cumsum(counts) - 1
    cells[ends, digits[ends]] = _PAD
    used = digits + 1
    used[ends] -= 1
    text_offsets = np.zeros(counts.size + 1, dtype=np.int64)
    if values.size:
        text_offsets[1:] = np.cumsum(used)[ends]
    flat = cells.reshape(-1)
    data = flat[flat != _PAD]
    wide = text_offsets[-1] >= 2**31
    return pa.Array.from_buffers(
        pa.large_string() if wide else pa.string(),
        counts.size,
        [None, pa.py_buffer(text_offsets.astype(np.int64 if wide else np.int32)), pa.py_buffer(data)],
    )


_PAD = 0  # a byte no text holds


def _digit_cells(values: np.ndarray, width: int) -> tuple[np.ndarray, np.ndarray]:
    """(rows of width + 1 bytes: each number's digits, '-', then padding; digits each);
    `width` at least the digits of the largest."""
    digits = np.ones(values.size, dtype=np.int64)
    for power in range(1, width):
        digits += values >= 10**power
    cells = np.full((values.size, width + 1), _PAD, dtype=np.uint8)
    rows = np.arange(values.size)
    for j in range(width):
        has = digits > j
        place = 10 ** (digits[has] - 1 - j)
        cells[rows[has], j] = ord("0") + (values[has] // place) % 10
    cells[rows, digits] = ord("-")
    return cells, digits


def terminal_column(finished: np.ndarray, value: str) -> pa.Array:
    """`value` where the game is over, NULL elsewhere."""
    import pyarrow.compute as pc  # when used: its import is a tenth of every command's start

    return pc.if_else(pa.array(finished, pa.bool_()), pa.scalar(value), pa.scalar(None, pa.string()))


def parse_numbers(text: str) -> list[int] | None:
    """The non-negative integers of `text` joined by '-', or None if it is not that shape."""
    parts = [p.strip() for p in text.strip().split("-")]
    if len(parts) > 10_000 or not all(is_number(p) for p in parts):
        return None
    return [int(p) for p in parts]


def reachable_by_level(
    starts: dict[int, np.ndarray],
    expand: Callable[[np.ndarray, int], Iterable[tuple[int | np.ndarray, np.ndarray]]],
    runs: bool = False,
) -> list[np.ndarray]:
    """Every key reachable from `starts` (level -> keys), as one sorted array per level.
    Keys are int64, or fixed-width bytes that sort as the keys do (see `distinct`).

    `expand(keys, level)` yields (child levels, child keys), the levels one for all keys
    or one per key, always below `level`. So a level is complete once every higher level
    has been expanded: the search runs level by level downwards, each level's frontier
    deduplicated once. `runs`: the children come in long ascending runs (those of one
    move from every key, say), see `distinct`.
    """
    pending: dict[int, list[np.ndarray]] = {level: [_keys(keys)] for level, keys in starts.items()}
    sizes = {level: len(parts[0]) for level, parts in pending.items()}
    found = []
    while pending:
        level = max(pending)
        frontier = distinct(np.concatenate(pending.pop(level)), runs)
        sizes.pop(level)
        found.append(frontier)
        for child_levels, keys in expand(frontier, level):
            for child_level, part in _by_level(child_levels, keys):
                if child_level >= level:
                    raise AssertionError("a move must lower the level")
                pending.setdefault(child_level, []).append(part)
                sizes[child_level] = sizes.get(child_level, 0) + part.size
                if sizes[child_level] > COMPACT_ROWS:
                    merged = distinct(np.concatenate(pending[child_level]), runs)
                    pending[child_level], sizes[child_level] = [merged], merged.size
    return found


def _keys(keys: np.ndarray) -> np.ndarray:
    keys = np.asarray(keys)
    return keys if keys.dtype.kind == "S" else keys.astype(np.int64, copy=False)


def _by_level(levels: int | np.ndarray, keys: np.ndarray) -> Iterator[tuple[int, np.ndarray]]:
    if not keys.size:
        return
    if np.ndim(levels) == 0:
        yield int(levels), keys
        return
    levels = np.asarray(levels)  # an array: one level a key
    order = np.argsort(levels, kind="stable")
    levels, keys = levels[order], keys[order]
    bounds = np.flatnonzero(np.diff(levels)) + 1
    for part_levels, part in zip(np.split(levels, bounds), np.split(keys, bounds)):
        yield int(part_levels[0]), part


def first_per_pair(src: np.ndarray, dst: np.ndarray, move: np.ndarray, n: int) -> tuple[np.ndarray, ...]:
    """Rows sorted by (src, dst), keeping the first row (in the given order) of each pair."""
    key = src * n + dst
    order = np.argsort(key, kind="stable")
    key = key[order]
    first = np.ones(key.size, dtype=bool)
    first[1:] = key[1:] != key[:-1]
    chosen = order[first]
    return src[chosen], dst[chosen], move[chosen]


class Batcher:
    """Collects (src, dst, move code) arrays, already in order, into batches of ~BATCH_ROWS.

    `labels` names move codes: a fixed list indexed by code, or a function from an array
    of the distinct codes of one batch to their names (each batch then carries its own
    dictionary of just those).
    """

    def __init__(self, labels: list[str] | Callable[[np.ndarray], list[str]]):
        self._labels = labels
        self._fixed = pa.array(labels, pa.string()) if isinstance(labels, list) else None
        self._parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self._rows = 0

    def add(self, src: np.ndarray, dst: np.ndarray, move: np.ndarray) -> Iterator[pa.RecordBatch]:
        if src.size:
            self._parts.append((src, dst, move))
            self._rows += src.size
        if self._rows >= BATCH_ROWS:
            yield self._flush()

    def finish(self) -> Iterator[pa.RecordBatch]:
        if self._rows:
            yield self._flush()

    def _flush(self) -> pa.RecordBatch:
        if len(self._parts) == 1:  # one part already a batch's worth: no copy
            src, dst, move = self._parts[0]
        else:
            src, dst, move = (np.concatenate(column) for column in zip(*self._parts))
        self._parts, self._rows = [], 0
        if callable(self._labels):
            codes, inverse = np.unique(move, return_inverse=True)
            indices = inverse.astype(np.int32).reshape(-1)
            dictionary = pa.array(self._labels(codes), pa.string())
        else:  # a fixed list (self._fixed)
            indices, dictionary = move.astype(np.int32, copy=False), self._fixed
        return pa.RecordBatch.from_arrays(
            [
                pa.array(src.astype(np.int64, copy=False)),
                pa.array(dst.astype(np.int64, copy=False)),
                pa.DictionaryArray.from_arrays(pa.array(indices), dictionary),
            ],
            schema=TRANSITION_SCHEMA,
        )
