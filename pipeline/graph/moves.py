"""Moves generated in this process (the DuckDB engine's way; Spark's executors run the same
generators), and the latch that tells the positions' writer how far the moves are counted."""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline.core.errors import DataError
from pipeline.games.contract import Space
from pipeline.graph.numbering import RankNumbering


class Counted:
    """How far enumerate has counted the moves, for the positions file's writer: every
    position with an id below `upto` has all its moves counted. Where positions are
    numbered by rank (`by_rank`), moves come by ascending source and `upto` follows them;
    otherwise it jumps to the end once the last move is counted (`finish`)."""

    def __init__(self, by_rank: bool) -> None:
        self._changed = threading.Condition()
        self.by_rank = by_rank
        self.upto = 0
        self.stopped = False

    def source(self, src: np.ndarray) -> None:
        """A batch of moves out of the sources `src` was counted (its last source's moves
        may go on in the next batch)."""
        if not self.by_rank or not src.size:
            return
        if src[0] < self.upto or (src[1:] < src[:-1]).any():
            # rows of the positions file may be written already, with too few moves
            raise DataError("the moves came out of order by source: the positions file cannot be written")
        self._advance(int(src[-1]))

    def finish(self) -> None:
        self._advance(sys.maxsize)

    def stop(self) -> None:
        """The moves failed (or all are counted): waiting ends."""
        with self._changed:
            self.stopped = True
            self._changed.notify_all()

    def wait(self, upto: int) -> None:
        """Until positions below `upto` have their moves counted; an error if the moves
        stopped before that."""
        with self._changed:
            while self.upto < upto and not self.stopped:
                self._changed.wait()
            if self.upto < upto:
                raise DataError("the moves were not all made: the positions file is not written")

    def _advance(self, upto: int) -> None:
        with self._changed:
            self.upto = upto
            self._changed.notify_all()


def in_process(
    space: Space, numbering: RankNumbering | None, scratch: Path, generated: Callable[[int], None] | None = None
) -> Iterator[pa.RecordBatch]:
    """The game's transitions generated here, renumbered rank by rank where it has a rank:
    batches of (src, dst, move) in the published order. Where they are reordered (all
    moves are generated before the first is written), `generated(moves so far)` follows
    the generation."""
    if numbering is None:
        return space.transitions()
    by_rank = numbering.by_rank(space)  # None unless the game offers transitions_from
    if by_rank is not None:
        return by_rank
    return numbering.reorder(_counted(space.transitions(), generated), scratch)


def _counted(batches: Iterator[pa.RecordBatch], generated: Callable[[int], None] | None) -> Iterator[pa.RecordBatch]:
    count = 0
    for batch in batches:
        count += batch.num_rows
        if generated is not None:
            generated(count)
        yield batch
