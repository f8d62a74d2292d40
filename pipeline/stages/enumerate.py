"""Stage 1: every position and every transition of a ruleset, from its game, to Parquet.

positions.parquet: id, text, terminal, moves (the number of distinct children), rank
(NULL when moves can cycle), then the game's decoded columns. transitions.parquet:
ruleset, src, dst, move, sorted by src.

When the game gives a rank (a number every move lowers, `Space.rank`), positions are
numbered rank by rank, lowest first, and the transitions are written in that order, so
the solver finds each rank's positions and moves in one contiguous range. A game that
offers `Space.transitions_from` (sticks, octal, chopsticks without splits or rollover) is
asked for each rank's moves in turn; the others generate moves in their own order, which
are spilled to one scratch file per group of ranks and read back group by group (memory
stays bounded by one group). Numbered by rank, the positions file is written beside the
transitions: a row group as soon as the moves of its positions are counted.
"""

from __future__ import annotations

import errno
import os
import queue
import shutil
import sys
import tempfile
import threading
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterator

import numpy as np
import pyarrow as pa

from pipeline.dataset import POSITIONS, TRANSITIONS, game_fields
from pipeline.errors import DataError
from pipeline.games import RANKS, TRANSITION_SCHEMA, Space
from pipeline.games._bulk import BATCH_ROWS
from pipeline.layout import RulesetFiles
from pipeline.engines import engine_name, open_engine
from pipeline.parquet import ROW_GROUP_ROWS, write_batches
from pipeline.progress import Stage, log
from pipeline.rulesets import Ruleset
from pipeline.threads import in_order

#: As written: the text columns as dictionaries, which readers see as TRANSITIONS' strings.
PUBLISHED_TRANSITIONS = pa.schema([
    field.with_type(pa.dictionary(pa.int8() if field.name == "ruleset" else pa.int32(), pa.string()))
    if pa.types.is_string(field.type) else field for field in TRANSITIONS.schema()])
#: At most this many scratch files (groups of consecutive ranks) while reordering moves.
MAX_GROUPS = 256


@dataclass(frozen=True)
class Enumerated:
    positions: int
    transitions: int


def enumerate_ruleset(rules: Ruleset, out: RulesetFiles, temp_dir: Path | None = None,
                      engine: str | None = None) -> Enumerated:
    """Write out.transitions and out.positions for `rules` (scratch files under `temp_dir`,
    by default out.dir, removed when done). The positions are found in this process; the
    moves are generated where `engine` runs (pipeline.engines: the Spark engine on its
    executors, part by part)."""
    with Stage(f"enumerate {rules.id}", unit="transitions") as stage:
        space = rules.game.space(rules)
        if space.streams() and engine_name(engine) == "duckdb":
            (temp_dir or out.dir).mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=".space-", dir=temp_dir or out.dir) as folder:
                space.scratch = Path(folder)
                return _streamed(rules, space, out, stage)
        positions = space.positions()
        log.debug("enumerate %s: %s positions", rules.id, f"{positions.num_rows:,}")
        game_ids = positions["id"].to_numpy()
        rank = space.rank()
        numbering = None if rank is None else RankNumbering(game_ids, np.asarray(rank))
        # each published file names its ruleset, so files can be globbed together
        ruleset = pa.array([rules.id])
        # indexed by src: the game's ids, or the new ones (0..n-1, below the game's bound too)
        moves = np.zeros(int(game_ids.max()) + 1 if len(game_ids) else 0, dtype=np.int64)
        scratch = temp_dir or out.dir

        counted_upto = Counted(by_rank=numbering is not None)

        def counted(batches: Iterator[pa.RecordBatch]) -> Iterator[pa.RecordBatch]:
            logged = written = 0
            for batch in batches:
                src = batch.column(0).to_numpy()
                if src.size:  # a batch's sources are a narrow range where moves come by rank
                    low = src.min()
                    moves[low : src.max() + 1] += np.bincount(src - low)
                    counted_upto.source(src)
                name = pa.DictionaryArray.from_arrays(np.zeros(batch.num_rows, np.int8), ruleset)
                yield pa.RecordBatch.from_arrays([name, *batch.columns[:3]], schema=PUBLISHED_TRANSITIONS)
                written += batch.num_rows
                stage.count(written)
                if written >= logged + BATCH_ROWS:  # about once a million
                    logged = written
                    log.debug("enumerate %s: %s transitions", rules.id, f"{written:,}")
                if positions_written.done() and positions_written.exception() is not None:
                    raise positions_written.exception()  # a full disk: no use making the rest

        def write_positions() -> None:
            """positions.parquet, a row group as soon as its positions' moves are all counted:
            the moves come by ascending new id where positions are numbered by rank, so the
            file is written beside the transitions, not after them."""
            if numbering is None:
                table, ids, rank_column = positions, game_ids, pa.nulls(positions.num_rows, pa.int32())
            else:
                table, ids, rank_column = numbering.renumber(positions), None, pa.array(numbering.rank, pa.int32())
            # one schema for every ruleset of a game, whichever columns happen to hold no NULL
            empty = _with_counts(table.slice(0, 0), np.zeros(0), rank_column[:0])
            schema = POSITIONS.schema(game_fields(empty.schema, POSITIONS))

            def parts() -> Iterator[pa.RecordBatch]:
                for lo in range(0, table.num_rows, ROW_GROUP_ROWS):
                    hi = min(lo + ROW_GROUP_ROWS, table.num_rows)
                    counted_upto.wait(hi)
                    count = moves[lo:hi] if ids is None else moves[ids[lo:hi]]
                    yield from _with_counts(table.slice(lo, hi - lo), count, rank_column[lo:hi]).cast(schema).to_batches()

            write_batches(parts(), out.positions, schema, delta=text_delta(rules))

        engine_session = open_engine(engine, scratch)
        aside = ThreadPoolExecutor(max_workers=1)  # positions put in rank order and written while moves are made
        positions_written = aside.submit(write_positions)
        generated = None
        try:
            generated = engine_session.transitions(rules, space, numbering, moves.size, scratch,
                                                   lambda count: stage.count(count, unit="moves generated"))
            # src ascending and dst near it: delta encoding beats dictionaries, in time and size
            transitions = write_batches(counted(generated), out.transitions, PUBLISHED_TRANSITIONS,
                                        delta=("src", "dst"))
            counted_upto.finish()
            positions_written.result()
        finally:
            counted_upto.stop()
            if hasattr(generated, "close"):  # a generator left half way removes its scratch files now
                generated.close()
            engine_session.close()
            aside.shutdown(wait=True, cancel_futures=True)
        stage.summary = f"{positions.num_rows:,} positions, {transitions:,} transitions"
    return Enumerated(positions.num_rows, transitions)


def _streamed(rules: Ruleset, space: Space, out: RulesetFiles, stage: Stage) -> Enumerated:
    """Enumerate a space that lists its positions part by part, numbered rank by rank
    (Space.positions_part): two threads make the parts, in order, each part's positions
    and moves; the moves are counted per position and checked to leave the part's
    positions for a lower rank; the positions and the moves go to their files, each
    written by a thread of its own. One part at a time is held, never every position."""
    ruleset = pa.array([rules.id])
    positions_out: queue.Queue = queue.Queue(maxsize=2)
    writer = ThreadPoolExecutor(max_workers=1)
    written: Future | None = None
    counts = {"positions": 0, "transitions": 0}

    def make(part: int) -> tuple[pa.Table, int, list[pa.RecordBatch]]:
        return space.positions_part(part), space.part_rank(part), list(space.transitions_part(part))

    def moves() -> Iterator[pa.RecordBatch]:
        nonlocal written
        next_id, rank, rank_first, schema = 0, None, 0, None
        for positions, part_rank, batches in in_order(make, range(space.parts())):
            n = positions.num_rows
            ids = positions["id"].to_numpy()
            if n and (ids[0] != next_id or (n > 1 and not (np.diff(ids) == 1).all())):
                raise DataError("the game's positions_part gave ids that do not follow on from the part before: "
                                "the game module is wrong")
            if not RANKS[0] <= part_rank <= RANKS[1]:
                raise DataError(f"the game's rank {part_rank:,} is beyond the 32 bits the positions file holds "
                                f"({RANKS[0]:,} to {RANKS[1]:,}): the game module is wrong")
            if rank is None or part_rank > rank:
                rank, rank_first = part_rank, next_id
            elif part_rank < rank:
                raise DataError("the game's part_rank fell from one part to the next: the game module is wrong")
            made = np.zeros(n, dtype=np.int32)
            for batch in batches:
                src, dst = batch.column(0).to_numpy(), batch.column(1).to_numpy()
                if not src.size:
                    continue
                if src[0] < next_id or src[-1] >= next_id + n or (src[1:] < src[:-1]).any():
                    raise DataError("the game's transitions_part gave moves out of positions of another part, or "
                                    "out of order: the game module is wrong")
                if dst.min() < 0 or dst.max() >= rank_first:  # ids go rank by rank: below this rank's first
                    at = int(np.flatnonzero((dst < 0) | (dst >= rank_first))[0])
                    raise DataError(f"the game's rank does not fall along the move from position {src[at]} to "
                                    f"{dst[at]}, or it leads to no position: the game module is wrong")
                made += np.bincount(src - next_id, minlength=n).astype(np.int32)
                name = pa.DictionaryArray.from_arrays(np.zeros(batch.num_rows, np.int8), ruleset)
                yield pa.RecordBatch.from_arrays([name, *batch.columns[:3]], schema=PUBLISHED_TRANSITIONS)
                counts["transitions"] += batch.num_rows
                stage.count(counts["transitions"])
            table = _with_counts(positions, made, pa.array(np.full(n, part_rank, dtype=np.int32)))
            if schema is None:
                schema = POSITIONS.schema(game_fields(table.schema, POSITIONS))
                written = writer.submit(write_batches, _until_done(positions_out), out.positions, schema,
                                        text_delta(rules))
            _hand(positions_out, table.cast(schema), written)
            next_id += n
        if not next_id:
            raise DataError("the game listed no position, not even the start: the game module is wrong")
        counts["positions"] = next_id

    try:
        write_batches(moves(), out.transitions, PUBLISHED_TRANSITIONS, delta=("src", "dst"))
        assert written is not None
        _hand(positions_out, _DONE, written)
        written.result()
    except BaseException:
        if written is not None and not written.done():
            _hand(positions_out, _FAILED, written)
        raise
    finally:
        writer.shutdown(wait=True)
    stage.summary = f"{counts['positions']:,} positions, {counts['transitions']:,} transitions"
    return Enumerated(counts["positions"], counts["transitions"])


_DONE, _FAILED = object(), object()


def _hand(items: queue.Queue, item: object, written: Future) -> None:
    """Put `item` for the positions' writer; its error (a full disk) if it stopped, rather
    than waiting for ever on a queue nobody empties."""
    while True:
        if written.done():
            written.result()
            if item is _FAILED or item is _DONE:
                return
            raise DataError("the positions file's writer stopped before its last rows")
        try:
            items.put(item, timeout=0.5)
            return
        except queue.Full:
            continue


def _until_done(items: queue.Queue) -> Iterator[pa.Table]:
    """The tables put into `items` until _DONE; an error at _FAILED, so that the file
    being written is dropped."""
    while (item := items.get()) is not _DONE:
        if item is _FAILED:
            raise DataError("enumerate stopped: the positions file is not written")
        yield from item.to_batches()


def text_delta(rules: Ruleset) -> tuple[str, ...]:
    """The positions file's delta-encoded columns: the ids, and the texts unless the game's
    are all of one length (Game.fixed_texts)."""
    return ("id",) if rules.game.fixed_texts else ("id", "text")


def _with_counts(positions: pa.Table, moves: np.ndarray, rank: pa.Array) -> pa.Table:
    """Positions with the solver's starting counters, and a fact users ask for ("how many
    moves here?"), and their rank, as the third and fourth columns."""
    positions = positions.add_column(3, "moves", pa.array(moves.astype(np.int32)))
    return positions.add_column(4, "rank", rank)


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


def in_process(space: Space, numbering: "RankNumbering | None", scratch: Path,
               generated: Callable[[int], None] | None = None) -> Iterator[pa.RecordBatch]:
    """The game's transitions generated here, renumbered rank by rank where it has a rank:
    batches of (src, dst, move) in the published order. Where they are reordered (all
    moves are generated before the first is written), `generated(moves so far)` follows
    the generation."""
    if numbering is None:
        return space.transitions()
    if type(space).transitions_from is not Space.transitions_from:
        return numbering.by_rank(space)
    return numbering.reorder(_counted(space.transitions(), generated), scratch)


def _counted(batches: Iterator[pa.RecordBatch], generated: Callable[[int], None] | None) -> Iterator[pa.RecordBatch]:
    count = 0
    for batch in batches:
        count += batch.num_rows
        if generated is not None:
            generated(count)
        yield batch


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
            raise DataError(f"the game's rank goes from {rank.min()} to {rank.max()}, beyond the 32 bits it is "
                            f"held in ({RANKS[0]:,} to {RANKS[1]:,}): the game module is wrong")
        # the game's ids already 0..n-1 by rank (the heap games'): nothing to renumber
        self.identity = bool(game_ids.size == 0 or (game_ids[0] == 0 and game_ids[-1] == game_ids.size - 1
                                                    and (np.diff(game_ids) == 1).all() and (np.diff(rank) >= 0).all()))
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

    def by_rank(self, space: Space) -> Iterator[pa.RecordBatch]:
        """The game's transitions generated rank by rank (Space.transitions_from), lowest
        first, renumbered and checked to lower the rank: the published order, at once."""
        bounds = np.flatnonzero(np.diff(self.rank)) + 1
        for lo, hi in zip(np.concatenate(([0], bounds)), np.concatenate((bounds, [self.rank.size]))):
            for batch in space.transitions_from(self.order[lo:hi]):
                src, dst = batch.column(0).to_numpy(), batch.column(1).to_numpy()
                if not self.identity:
                    src, dst = self._new_ids(src), self._new_ids(dst)
                if src.size and (src[0] < lo or src[-1] >= hi or (src[1:] < src[:-1]).any()):
                    raise DataError("the game's transitions_from gave moves out of positions it was not asked "
                                    "for, or out of order: the game module is wrong")
                if src.size and (dst.min() < 0 or dst.max() >= self.rank.size):
                    raise DataError("the game gave a move to a position it did not list: the game module is wrong")
                # new ids go up with the rank: a move lowers it iff it lands below this rank's first id
                if src.size and dst.max() >= lo:
                    check_rank_falls(self.rank, src, dst)
                yield pa.RecordBatch.from_arrays([pa.array(src), pa.array(dst), batch.column(2)],
                                                 schema=TRANSITION_SCHEMA)

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
                    raise DataError(f"scratch file {path} holds {path.stat().st_size:,} bytes, not the "
                                    f"{12 * self.spilled[group]:,} written: was the disk full?")
                rows = np.fromfile(path, dtype=np.int32).reshape(-1, 3)
                if self.per_group > 1:
                    # rows came in the game's source order, which is the new order within a rank
                    within = self.rank[rows[:, 0]] - (self.low + group * self.per_group)
                    rows = rows[np.argsort(within.astype(np.uint16 if self.per_group <= 1 << 16 else np.int64),
                                           kind="stable")]
                if rows.shape[0] > 1 and (rows[1:, 0] < rows[:-1, 0]).any():
                    # a game that lists its positions out of the order it makes their moves in
                    rows = rows[np.argsort(rows[:, 0], kind="stable")]
                for lo in range(0, rows.shape[0], BATCH_ROWS):
                    part = rows[lo : lo + BATCH_ROWS]
                    yield pa.RecordBatch.from_arrays(
                        [pa.array(part[:, 0].astype(np.int64)), pa.array(part[:, 1].astype(np.int64)),
                         pa.DictionaryArray.from_arrays(pa.array(np.ascontiguousarray(part[:, 2])), dictionary)],
                        schema=TRANSITION_SCHEMA,
                    )

    def _spill(self, batch: pa.RecordBatch, labels: dict[str, int], scratch: Path,
               files: dict[int, BinaryIO]) -> None:
        src = self.new_id[batch.column("src").to_numpy()]
        dst = self.new_id[batch.column("dst").to_numpy()]
        check_rank_falls(self.rank, src, dst)
        src_rank = self.rank[src]
        move = batch.column("move")
        codes = np.array([labels.setdefault(label, len(labels)) for label in move.dictionary.to_pylist()],
                         dtype=np.int32)
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
                    files[key] = open(scratch / f"{key}.bin", "ab")
                self.spilled[key] = self.spilled.get(key, 0) + int(hi - lo)
                try:
                    rows[lo:hi].tofile(files[key])
                except OSError as error:
                    raise _short_write(error, scratch / f"{key}.bin") from None
