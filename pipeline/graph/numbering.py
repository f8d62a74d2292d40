"""Positions numbered rank by rank, lowest first (pipeline/stages/enumerate.py writes them so; the
solver then finds each rank in one contiguous range), and the check that every move lowers the rank."""

from __future__ import annotations

import errno
import os
import shutil
import tempfile
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import BinaryIO

import numpy as np
import pyarrow as pa

from pipeline.core.errors import DataError
from pipeline.games._bulk import BATCH_ROWS
from pipeline.games.contract import RANKS, TRANSITION_SCHEMA, Space
from pipeline.storage.progress import log

#: At most this many scratch files (groups of consecutive ranks) while reordering moves.
MAX_GROUPS = 256


def check_rank_falls(rank: np.ndarray, src: np.ndarray, dst: np.ndarray) -> None:
    """DataError unless every move src -> dst (renumbered ids) lowers `rank` (by new id)."""
    falls = rank[dst] < rank[src]
    if not falls.all():
        at = int(np.flatnonzero(~falls)[0])
        raise DataError(
            f"the game's rank does not fall along the move from position {src[at]} to {dst[at]} "
            f"(rank {rank[src[at]]} to {rank[dst[at]]}): the game module is wrong"
        )


def _short_write(error: OSError, path: Path) -> OSError:
    """NumPy reports a short write without errno: on a full disk, say so."""
    if error.errno is None and shutil.disk_usage(path.parent).free < 1 << 20:
        return OSError(errno.ENOSPC, os.strerror(errno.ENOSPC), str(path))
    return error


class RankNumbering:
    """Positions numbered 0..n-1 by rank (lowest first; the game's order within a rank)."""

    def __init__(self, game_ids: np.ndarray, rank: np.ndarray):
        if rank.shape != game_ids.shape:
            raise DataError(f"the game's rank has {rank.size} entries for {game_ids.size} positions")
        if rank.size and not np.issubdtype(rank.dtype, np.integer):
            raise DataError(f"the game's rank is {rank.dtype}, not integers: the game module is wrong")
        if rank.size and not RANKS[0] <= rank.min() <= rank.max() <= RANKS[1]:
            # held in 32 bits below: a larger rank would wrap round and seem not to fall
            raise DataError(
                f"the game's rank goes from {rank.min()} to {rank.max()}, beyond the 32 bits it is "
                f"held in ({RANKS[0]:,} to {RANKS[1]:,}): the game module is wrong"
            )
        # the game's ids already 0..n-1 by rank (the heap games'): nothing to renumber
        self.identity = bool(
            game_ids.size == 0
            or (
                game_ids[0] == 0
                and game_ids[-1] == game_ids.size - 1
                and (np.diff(game_ids) == 1).all()
                and (np.diff(rank) >= 0).all()
            )
        )
        self.order = np.arange(game_ids.size) if self.identity else np.argsort(rank, kind="stable")
        # int32 (positions are capped far below 2^31): half the memory traffic of the gathers
        self.rank = rank[self.order].astype(np.int32)
        self.new_id = np.full(int(game_ids.max()) + 1 if game_ids.size else 0, -1, dtype=np.int32)
        self.new_id[game_ids[self.order]] = np.arange(game_ids.size, dtype=np.int32)
        low = int(self.rank[0]) if self.rank.size else 0
        span = int(self.rank[-1]) - low + 1 if self.rank.size else 1
        # group of rank r: ranks are split into at most MAX_GROUPS runs of consecutive values
        self.low, self.per_group = low, -(-span // MAX_GROUPS)

    def renumber(self, positions: pa.Table) -> pa.Table:
        if self.identity:
            return positions
        order = pa.array(self.order)
        with ThreadPoolExecutor(max_workers=2) as pool:  # a column a thread: take lets go of the GIL
            columns = list(pool.map(lambda column: column.take(order), positions.columns[1:]))
        ids = pa.array(np.arange(positions.num_rows, dtype=np.int64))
        return pa.Table.from_arrays([ids, *columns], schema=positions.schema)

    def by_rank(self, space: Space) -> Iterator[pa.RecordBatch] | None:
        """The game's transitions generated rank by rank (Space.transitions_from), lowest
        first, renumbered and checked to lower the rank: the published order, at once. None
        where the game does not offer them (transitions_from gives None, the contract's
        default, which a game's own may keep for some rulesets)."""
        bounds = np.flatnonzero(np.diff(self.rank)) + 1
        ranks = list(zip(np.concatenate(([0], bounds)), np.concatenate((bounds, [self.rank.size]))))
        lo, hi = ranks[0]
        first = space.transitions_from(self.order[lo:hi])
        return None if first is None else self._by_rank(space, ranks, first)

    def _by_rank(
        self, space: Space, ranks: list[tuple[int, int]], first: Iterator[pa.RecordBatch]
    ) -> Iterator[pa.RecordBatch]:
        for index, (lo, hi) in enumerate(ranks):
            batches = first if index == 0 else space.transitions_from(self.order[lo:hi])
            if batches is None:
                raise DataError(
                    "the game's transitions_from gave moves for some ranks' positions and None for others: "
                    "the game module is wrong"
                )
            for batch in batches:
                src, dst = batch.column(0).to_numpy(), batch.column(1).to_numpy()
                if not self.identity:
                    src, dst = self._new_ids(src), self._new_ids(dst)
                if src.size and (src[0] < lo or src[-1] >= hi or (src[1:] < src[:-1]).any()):
                    raise DataError(
                        "the game's transitions_from gave moves out of positions it was not asked "
                        "for, or out of order: the game module is wrong"
                    )
                if src.size and (dst.min() < 0 or dst.max() >= self.rank.size):
                    raise DataError("the game gave a move to a position it did not list: the game module is wrong")
                # new ids go up with the rank: a move lowers it iff it lands below this rank's first id
                if src.size and dst.max() >= lo:
                    check_rank_falls(self.rank, src, dst)
                yield pa.RecordBatch.from_arrays(
                    [pa.array(src), pa.array(dst), batch.column(2)], schema=TRANSITION_SCHEMA
                )

    def _new_ids(self, game_ids: np.ndarray) -> np.ndarray:
        """The new id of each game id, -1 where it is no listed position's."""
        listed = (game_ids >= 0) & (game_ids < self.new_id.size)
        return np.where(listed, self.new_id[np.where(listed, game_ids, 0)], -1).astype(np.int64)

    def reorder(self, batches: Iterator[pa.RecordBatch], scratch_parent: Path) -> Iterator[pa.RecordBatch]:
        """The game's transitions renumbered, checked to lower the rank, in ascending src."""
        labels: dict[str, int] = {}
        scratch_parent.mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix=".moves-", dir=scratch_parent) as scratch:
            files: dict[int, BinaryIO] = {}
            self.spilled: dict[int, int] = {}  # rows written to each group's file
            try:
                spilled = 0
                for batch in batches:
                    self._spill(batch, labels, Path(scratch), files)
                    spilled += batch.num_rows
                    if spilled // (8 * BATCH_ROWS) != (spilled - batch.num_rows) // (8 * BATCH_ROWS):
                        log.debug("enumerate: %s moves generated, to be written in rank order", f"{spilled:,}")
            finally:
                for handle in files.values():
                    handle.close()
            dictionary = pa.array(list(labels), pa.string())
            for group in sorted(files):
                path = Path(scratch) / f"{group}.bin"
                if path.stat().st_size != 12 * self.spilled[group]:  # never a silently short graph
                    raise DataError(
                        f"scratch file {path} holds {path.stat().st_size:,} bytes, not the "
                        f"{12 * self.spilled[group]:,} written: was the disk full?"
                    )
                rows = np.fromfile(path, dtype=np.int32).reshape(-1, 3)
                if self.per_group > 1:
                    # rows came in the game's source order, which is the new order within a rank
                    within = self.rank[rows[:, 0]] - (self.low + group * self.per_group)
                    rows = rows[
                        np.argsort(within.astype(np.uint16 if self.per_group <= 1 << 16 else np.int64), kind="stable")
                    ]
                if rows.shape[0] > 1 and (rows[1:, 0] < rows[:-1, 0]).any():
                    # a game that lists its positions out of the order it makes their moves in
                    rows = rows[np.argsort(rows[:, 0], kind="stable")]
                for lo in range(0, rows.shape[0], BATCH_ROWS):
                    part = rows[lo : lo + BATCH_ROWS]
                    yield pa.RecordBatch.from_arrays(
                        [
                            pa.array(part[:, 0].astype(np.int64)),
                            pa.array(part[:, 1].astype(np.int64)),
                            pa.DictionaryArray.from_arrays(pa.array(np.ascontiguousarray(part[:, 2])), dictionary),
                        ],
                        schema=TRANSITION_SCHEMA,
                    )

    def _spill(self, batch: pa.RecordBatch, labels: dict[str, int], scratch: Path, files: dict[int, BinaryIO]) -> None:
        src = self.new_id[batch.column("src").to_numpy()]
        dst = self.new_id[batch.column("dst").to_numpy()]
        check_rank_falls(self.rank, src, dst)
        src_rank = self.rank[src]
        move = batch.column("move")
        codes = np.array(
            [labels.setdefault(label, len(labels)) for label in move.dictionary.to_pylist()], dtype=np.int32
        )
        group = ((src_rank - self.low) // self.per_group).astype(np.uint16)
        order = np.argsort(group, kind="stable")
        group = group[order]
        # one (src, dst, move) int32 triple per row, each group's rows appended to its file
        rows = np.stack([src[order], dst[order], codes[move.indices.to_numpy()][order]], axis=1)
        bounds = np.concatenate([[0], np.flatnonzero(np.diff(group)) + 1, [rows.shape[0]]])
        for lo, hi in zip(bounds[:-1], bounds[1:]):
            if hi > lo:
                key = int(group[lo])
                if key not in files:
                    files[key] = open(scratch / f"{key}.bin", "ab")  # noqa: SIM115 - closed with the others, after the last batch
                self.spilled[key] = self.spilled.get(key, 0) + int(hi - lo)
                try:
                    rows[lo:hi].tofile(files[key])
                except OSError as error:
                    raise _short_write(error, scratch / f"{key}.bin") from None
