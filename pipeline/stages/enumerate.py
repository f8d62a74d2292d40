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

Where the engine makes the moves away from this process (Spark) and the space searches
(Space.search: connect, dobutsu), the engine finds, numbers and writes the positions and
moves there too (Engine.write_searched), and this process holds none of them.
"""

from __future__ import annotations

import queue
import tempfile
from collections.abc import Generator, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pyarrow as pa

from pipeline.core.dataset import POSITIONS, PUBLISHED_TRANSITIONS, documented_schema
from pipeline.core.errors import DataError
from pipeline.datadir.layout import RulesetFiles
from pipeline.games import POSITION_KEY, RANKS, Search, Space
from pipeline.games._bulk import BATCH_ROWS
from pipeline.games.rulesets import Ruleset
from pipeline.graph.moves import Counted
from pipeline.graph.numbering import RankNumbering
from pipeline.stages.run import Run
from pipeline.storage.parquet import ROW_GROUP_ROWS, Encoding, with_dictionaries, write_batches
from pipeline.storage.progress import Stage, log
from pipeline.storage.threads import in_order


@dataclass(frozen=True)
class Enumerated:
    positions: int
    transitions: int


def enumerate_ruleset(run: Run) -> Enumerated:
    """Write the run's transitions and positions files (scratch files under run.scratch,
    removed when done). The positions are found in this process; the moves are generated
    where the run's engine makes them (Engine.capabilities.local_moves: the Spark engine on its
    executors, part by part)."""
    enumerated = _enumerate(run)
    run.wrote(run.files.positions, run.files.transitions)
    return enumerated


def _enumerate(run: Run) -> Enumerated:
    rules, out, scratch = run.ruleset, run.files, run.scratch
    with Stage(f"enumerate {rules.id}", unit="transitions") as stage:
        space = rules.game.space(rules)
        search = None if run.engine.capabilities.local_moves else space.search()
        if search is not None:
            return _searched(run, search, stage)
        if space.streams() and run.engine.capabilities.local_moves:
            scratch.mkdir(parents=True, exist_ok=True)
            with tempfile.TemporaryDirectory(prefix=".space-", dir=scratch) as folder:
                space.scratch = Path(folder)
                return _streamed(rules, space, out, stage, run.part_rows)
        positions = space.positions()
        log.debug("enumerate %s: %s positions", rules.id, f"{positions.num_rows:,}")
        game_ids = positions["id"].to_numpy()
        rank = space.rank()
        numbering = None if rank is None else RankNumbering(game_ids, np.asarray(rank))
        # each published file names its ruleset, so files can be globbed together
        ruleset = pa.array([rules.id])
        # indexed by src: the game's ids, or the new ones (0..n-1, below the game's bound too)
        moves = np.zeros(int(game_ids.max()) + 1 if len(game_ids) else 0, dtype=np.int64)

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
                failure = positions_written.exception() if positions_written.done() else None
                if failure is not None:
                    raise failure  # a full disk: no use making the rest

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
            schema = positions_schema(empty.schema)

            def parts() -> Iterator[pa.RecordBatch]:
                for lo in range(0, table.num_rows, ROW_GROUP_ROWS):
                    hi = min(lo + ROW_GROUP_ROWS, table.num_rows)
                    counted_upto.wait(hi)
                    count = moves[lo:hi] if ids is None else moves[ids[lo:hi]]
                    yield from (
                        _with_counts(table.slice(lo, hi - lo), count, rank_column[lo:hi]).cast(schema).to_batches()
                    )

            write_batches(parts(), out.positions, schema, positions_encoding(rules, schema, run.part_rows))

        engine_session = run.engine
        aside = ThreadPoolExecutor(max_workers=1)  # positions put in rank order and written while moves are made
        positions_written = aside.submit(write_positions)
        generated = None
        try:
            if not engine_session.capabilities.local_moves:  # made and written where they are made
                written = engine_session.write_transitions(
                    rules, space, numbering, moves.size, out.transitions, transitions_encoding(run.part_rows)
                )
                moves += written.counts[: moves.size]
                transitions = written.rows
                stage.count(transitions)
            else:
                generated = engine_session.transitions(
                    rules,
                    space,
                    numbering,
                    moves.size,
                    scratch,
                    lambda count: stage.count(count, unit="moves generated"),
                )
                transitions = write_batches(
                    counted(generated), out.transitions, PUBLISHED_TRANSITIONS, transitions_encoding(run.part_rows)
                )
            counted_upto.finish()
            positions_written.result()
        finally:
            counted_upto.stop()
            if isinstance(generated, Generator):  # a generator left half way removes its scratch files now
                generated.close()
            engine_session.release()
            aside.shutdown(wait=True, cancel_futures=True)
        stage.summary = f"{positions.num_rows:,} positions, {transitions:,} transitions"
    return Enumerated(positions.num_rows, transitions)


def _searched(run: Run, search: Search, stage: Stage) -> Enumerated:
    """Enumerate a space that searches (Space.search) where the run's engine makes the moves
    (the Spark engine's executors): the positions found, numbered and written there, level by
    level, none of them held by this process."""
    rules = run.ruleset
    empty = np.zeros(0, dtype=np.int64)
    columns = search.positions(empty, empty, empty.astype(np.int8), empty)
    schema = positions_schema(_with_counts(columns, empty, pa.nulls(0, pa.int32())).schema)
    encodings = (positions_encoding(rules, schema, run.part_rows), transitions_encoding(run.part_rows))
    try:
        positions, transitions = run.engine.write_searched(
            rules,
            search,
            run.files,
            schema,
            encodings,
            _with_counts,
            lambda found: stage.count(found, unit="positions"),
        )
    finally:
        run.engine.release()
    stage.count(transitions)
    stage.summary = f"{positions:,} positions, {transitions:,} transitions"
    return Enumerated(positions, transitions)


def _streamed(rules: Ruleset, space: Space, out: RulesetFiles, stage: Stage, part_rows: int | None) -> Enumerated:
    """Enumerate a space that lists its positions part by part (Space.positions_part),
    numbered rank by rank, or in its own order where moves can cycle (part_rank None):
    two threads make the parts, in order, each part's positions and moves; the moves are
    counted per position and checked to leave the part's positions for a lower rank (for
    some position, where moves can cycle); the positions and the moves go to their
    files, each written by a thread of its own. One part at a time is held, never every
    position."""
    ruleset = pa.array([rules.id])
    positions_out: queue.Queue = queue.Queue(maxsize=2)
    writer = ThreadPoolExecutor(max_workers=1)
    written: Future | None = None
    counts = {"positions": 0, "transitions": 0}

    def make(part: int) -> tuple[pa.Table, int | None, list[pa.RecordBatch]]:
        return space.positions_part(part), space.part_rank(part), list(space.transitions_part(part))

    def moves() -> Iterator[pa.RecordBatch]:
        nonlocal written
        next_id, rank, rank_first, schema = 0, None, 0, None
        ranked: bool | None = None  # whether the parts have ranks, as the first part says
        furthest = -1  # the greatest child where moves can cycle: checked once every id is known
        for positions, part_rank, batches in in_order(make, range(space.parts())):
            n = positions.num_rows
            ids = positions["id"].to_numpy()
            if n and (ids[0] != next_id or (n > 1 and not (np.diff(ids) == 1).all())):
                raise DataError(
                    "the game's positions_part gave ids that do not follow on from the part before: "
                    "the game module is wrong"
                )
            if ranked is None:
                ranked = part_rank is not None
            elif ranked != (part_rank is not None):
                raise DataError(
                    "the game's part_rank gave a rank for some parts and None for others: the game module is wrong"
                )
            if part_rank is None:
                rank_first = np.iinfo(np.int64).max  # any child id; the greatest is checked at the end
            elif not RANKS[0] <= part_rank <= RANKS[1]:
                raise DataError(
                    f"the game's rank {part_rank:,} is beyond the 32 bits the positions file holds "
                    f"({RANKS[0]:,} to {RANKS[1]:,}): the game module is wrong"
                )
            elif rank is None or part_rank > rank:
                rank, rank_first = part_rank, next_id
            elif part_rank < rank:
                raise DataError("the game's part_rank fell from one part to the next: the game module is wrong")
            made = np.zeros(n, dtype=np.int32)
            for batch in batches:
                src, dst = batch.column(0).to_numpy(), batch.column(1).to_numpy()
                if not src.size:
                    continue
                if src[0] < next_id or src[-1] >= next_id + n or (src[1:] < src[:-1]).any():
                    raise DataError(
                        "the game's transitions_part gave moves out of positions of another part, or "
                        "out of order: the game module is wrong"
                    )
                if dst.min() < 0 or dst.max() >= rank_first:  # ids go rank by rank: below this rank's first
                    at = int(np.flatnonzero((dst < 0) | (dst >= rank_first))[0])
                    raise DataError(
                        f"the game's rank does not fall along the move from position {src[at]} to "
                        f"{dst[at]}, or it leads to no position: the game module is wrong"
                        if ranked
                        else f"the game's move from position {src[at]} leads to no position ({dst[at]}): "
                        f"the game module is wrong"
                    )
                if not ranked:
                    furthest = max(furthest, int(dst.max()))
                made += np.bincount(src - next_id, minlength=n).astype(np.int32)
                name = pa.DictionaryArray.from_arrays(np.zeros(batch.num_rows, np.int8), ruleset)
                yield pa.RecordBatch.from_arrays([name, *batch.columns[:3]], schema=PUBLISHED_TRANSITIONS)
                counts["transitions"] += batch.num_rows
                stage.count(counts["transitions"])
            rank_column = pa.nulls(n, pa.int32()) if part_rank is None else pa.array(np.full(n, part_rank, np.int32))
            table = _with_counts(positions, made, rank_column)
            if schema is None:
                schema = positions_schema(table.schema)
                written = writer.submit(
                    write_batches,
                    _until_done(positions_out),
                    out.positions,
                    schema,
                    positions_encoding(rules, schema, part_rows),
                )
            assert written is not None  # submitted with the first part's schema
            _hand(positions_out, table.cast(schema), written)
            next_id += n
        if not next_id:
            raise DataError("the game listed no position, not even the start: the game module is wrong")
        if furthest >= next_id:
            raise DataError(
                f"the game's transitions_part gave a move to position {furthest:,}, but it listed "
                f"{next_id:,} positions: the game module is wrong"
            )
        counts["positions"] = next_id

    try:
        write_batches(moves(), out.transitions, PUBLISHED_TRANSITIONS, transitions_encoding(part_rows))
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


def positions_schema(table: pa.Schema) -> pa.Schema:
    """The positions file's schema for a game's positions table: POSITIONS with the game's
    columns, `key` in place of `text` where the space is keyed (Space.keyed), the terminal
    words a dictionary."""
    return with_dictionaries(documented_schema(POSITIONS, table), ("terminal",))


def positions_encoding(rules: Ruleset, schema: pa.Schema, part_rows: int | None = None) -> Encoding:
    """The positions file's delta-encoded columns (the ids, the keys, and the texts unless
    the game's are all of one length: Game.fixed_texts), and its texts without min/max;
    `part_rows`: in a folder of parts of so many rows (Run.part_rows)."""
    if POSITION_KEY.name in schema.names:
        return Encoding(delta=("id", POSITION_KEY.name), part_rows=part_rows)  # keys ascend ply by ply
    return Encoding(
        delta=("id",) if rules.game.fixed_texts else ("id", "text"), unranged=("text",), part_rows=part_rows
    )


def transitions_encoding(part_rows: int | None = None) -> Encoding:
    """src ascending and dst near it: delta encoding beats dictionaries, in time and size."""
    return Encoding(delta=("src", "dst"), part_rows=part_rows)


def _with_counts(positions: pa.Table, moves: np.ndarray, rank: pa.Array) -> pa.Table:
    """Positions with the solver's starting counters, and a fact users ask for ("how many
    moves here?"), and their rank, as the third and fourth columns."""
    positions = positions.add_column(3, "moves", pa.array(moves.astype(np.int32)))
    return positions.add_column(4, "rank", rank)
