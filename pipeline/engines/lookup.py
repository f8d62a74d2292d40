"""lookup.parquet's rows (pipeline/core/dataset.py LOOKUP), merged from a tablebase and its
moves as both are read: by export in this process (the DuckDB engine), or a part of the
tablebase at a time on Spark's executors."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline.core.dataset import LOOKUP
from pipeline.core.errors import DataError
from pipeline.storage import parts
from pipeline.storage.parquet import ROW_GROUP_ROWS


def lookup_batches(
    tablebase: Path, transitions: Path, within: tuple[int | None, int | None] | None = None
) -> Iterator[pa.RecordBatch]:
    """lookup.parquet's rows: each position's id, position, value and remoteness, and the
    lists of the transitions leaving it, their dst and move. Both files are in id order (the
    tablebase by id, the transitions by src, then dst), so the two are merged as they are
    read, a batch of moves at a time: the positions whose moves are all read are given, so
    what is held is a row group of the tablebase and about a batch of moves, however many
    moves a position has (sticks:rows=10's one row group has 14.5 M). A file out of that
    order is a DataError, not a wrong list. Either may be a folder of parts.

    `within` (lo, hi): only the moves whose source is in lo..hi (None: no bound), found by
    the row groups' statistics, for a `tablebase` that is one part of a tablebase
    (Spark's executors write the lookup a part of the tablebase each)."""
    table = parts.open_file(tablebase, read_dictionary=["value"])
    moves = _moves(transitions, within)
    held = pa.table(
        {"src": pa.array([], pa.int64()), "dst": pa.array([], pa.int64()), "move": pa.array([], pa.string())}
    )
    ended, previous = False, -1
    for group in range(table.num_row_groups):
        rows = table.read_row_group(group, columns=["id", "position", "value", "remoteness"])
        ids = rows["id"].to_numpy()
        if len(ids) == 0:
            continue
        if ids[0] <= previous or np.any(np.diff(ids) <= 0):
            raise DataError(f"{tablebase} is not in ascending order of id: rebuild it")
        previous = int(ids[-1])
        done = 0  # this row group's positions given so far
        while done < ids.size:
            # the positions below the last source held have all their moves held
            last = held["src"][-1].as_py() if held.num_rows else -1
            upto = ids.size if ended or last > previous else int(np.searchsorted(ids, last, side="left"))
            if upto <= done:
                batch = next(moves, None)
                if batch is None:
                    ended = True
                else:
                    held = pa.concat_tables([held, pa.Table.from_batches([batch]).cast(held.schema)])
                continue
            part = ids[done:upto]
            sources = held["src"].to_numpy()
            taken = int(np.searchsorted(sources, part[-1], side="right"))
            sources, mine, held = sources[:taken], held.slice(0, taken), held.slice(taken)
            starts = np.searchsorted(sources, part, side="left")
            if (taken and np.any(np.diff(sources) < 0)) or int(
                (np.searchsorted(sources, part, side="right") - starts).sum()
            ) != taken:
                raise DataError(
                    f"{transitions} has moves out of order of src, or from no position of {tablebase}: rebuild it"
                )
            offsets = pa.array(np.append(starts, taken), pa.int32())
            lists = [pa.ListArray.from_arrays(offsets, mine[name].combine_chunks()) for name in ("dst", "move")]
            given = rows.slice(done, upto - done)
            yield pa.RecordBatch.from_arrays(
                [*(given[name].combine_chunks() for name in ("id", "position", "value", "remoteness")), *lists],
                names=[column.name for column in LOOKUP.columns],
            )
            done = upto
    if held.num_rows or next(moves, None) is not None:
        raise DataError(f"{transitions} has moves from no position of {tablebase}: rebuild it")


def _moves(transitions: Path, within: tuple[int | None, int | None] | None) -> Iterator[pa.RecordBatch]:
    """The moves' (src, dst, move) in order, those from sources within lo..hi."""
    source = parts.open_file(transitions)
    columns = ["src", "dst", "move"]
    if within is None:
        yield from source.iter_batches(ROW_GROUP_ROWS, columns=columns)
        return
    lo, hi = within
    metadata = source.metadata
    column = source.schema_arrow.get_field_index("src")
    for group in range(metadata.num_row_groups):
        statistics = metadata.row_group(group).column(column).statistics
        ranged = statistics is not None and statistics.has_min_max
        if ranged and ((hi is not None and statistics.min > hi) or (lo is not None and statistics.max < lo)):
            continue
        rows = source.read_row_group(group, columns=columns)
        src = rows["src"]
        keep = None
        if lo is not None:
            keep = pc.greater_equal(src, lo)
        if hi is not None:
            below = pc.less_equal(src, hi)
            keep = below if keep is None else pc.and_(keep, below)
        yield from (rows if keep is None else rows.filter(keep)).to_batches()
