"""Stage 4: the published tablebase of a ruleset, its index and its row of the catalog.

tablebase.parquet: ruleset, id, position, the game's decoded columns, moves, value,
remoteness, grundy, reachable, and the solver-made columns (winning_moves).
index.parquet: hash, id: every position's id by a hash of its text, sorted by hash, where
a lookup by text finds its id reading one small row group (pipeline/products/probe.py).
lookup.parquet: id, position, value, remoteness, dst, move: the tablebase's rows a lookup
shows, each with its moves from transitions.parquet, in small row groups by id.
summary.parquet: the ruleset's catalog row, which build then gathers into catalog.parquet
(pipeline/datadir/catalog.py). Columns and types: pipeline/core/dataset.py.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from pipeline import __version__
from pipeline.core.dataset import (
    INDEX,
    LOOKUP,
    POSITIONS,
    SOLVER_MADE,
    TABLEBASE,
    TEXT_HASHES,
    CatalogRow,
    game_fields,
)
from pipeline.core.errors import DataError
from pipeline.core.values import Value
from pipeline.engines import literal, run_levels
from pipeline.games import POSITION_KEY, impartial_problem, legal_starts
from pipeline.games.rulesets import Ruleset, space_of
from pipeline.stages.run import Run
from pipeline.stages.verify import require_verified
from pipeline.storage import parts
from pipeline.storage.parquet import (
    Encoding,
    require,
    sha256,
    with_dictionaries,
    write_table,
)
from pipeline.storage.progress import Stage

#: Rows a row group of index.parquet: a lookup decodes one row group's hashes and ids (0.26 MB
#: as numbers, 72 KB on disk: 0.15 ms warm, 0.6 ms from the disk on connect:cols=5,rows=6),
#: and a billion positions make 64,000 groups, a footer of 13 MB (120 MB held in memory by a
#: lookup). Groups of 65,536 rows cost 0.5 ms, 2.2 ms from the disk.
INDEX_GROUP_ROWS = 1 << 14

#: Rows a row group of lookup.parquet: a lookup decodes one row group for the position and
#: one for each group its moves lead to (2.6 groups a lookup on connect:cols=5,rows=6: the
#: children's ids lie near each other), most of it the texts' zstd: 16,384 rows took 2.4 ms
#: a group, 4,096 rows 0.6 ms. A group costs 5.7 KB of footer in memory (pyarrow's), and the
#: smaller groups the more bytes: at 8,192 rows connect:cols=5,rows=6 has 127,000 groups,
#: 0.7 GB of footer held by a lookup, and 2 % more bytes than at 16,384.
LOOKUP_GROUP_ROWS = 1 << 13


def export(run: Run) -> CatalogRow:
    """Write the run's tablebase and summary files from verified stage outputs; return the summary."""
    rules, files = run.ruleset, run.files
    require(files.verification, "verification file")
    # each as the stage before wrote it: a file changed by hand never reaches the tablebase
    read = run.reads(files.positions, files.transitions, files.solution, files.verification)
    require_verified(files)
    total = parts.read_metadata(files.positions).num_rows
    # shares of the time (for the progress bar), as measured on a 2-core machine on
    # sticks:rows=8, rows=10 and chopsticks:fingers=12,hands=3
    moves = parts.read_metadata(files.transitions).num_rows
    seconds = {
        "reach": 0.02 + 35e-9 * moves + 0.3e-6 * total,
        "levels": 0.01 + 30e-9 * moves + 0.3e-6 * total,
        "write": 0.01 + 20e-9 * moves + 0.5e-6 * total,
        "count": 0.01,
        "index": 0.01 + 1.0e-6 * total,
        "lookup": 0.01 + 1.0e-6 * total,
    }  # counted while written
    share = {step: time / sum(seconds.values()) for step, time in seconds.items()}
    with Stage(f"export {rules.id}") as stage:
        db = run.engine
        try:
            for view in ("positions", "transitions", "solution"):
                db.register(view, getattr(files, view))
            start_text = rules.game.start(rules)
            starts = legal_starts(rules)
            # a keyed space's positions hold keys, its texts made from them (Space.keyed)
            texts = text_maker(rules, files.positions)
            # a legal start, unless a plug-in says not
            ids = find_texts(files.positions, [*starts, start_text], None if texts is None else texts.texts)
            missing = {*starts, start_text} - set(ids)
            if missing:
                raise DataError(f"{files.positions} has no start position {sorted(missing)[0]!r}")
            stage.phase("reachable", share["reach"])
            with stage.expecting(seconds["reach"], "the moves"):
                steps = db.reach(sorted(ids[text] for text in starts))
            stage.phase("reachable", share["levels"])
            # breadth first from the starts; the bar jumps at the end past what no start reaches
            run_levels(steps, lambda level, finished, done: stage.count(done, total))
            decoded = "".join(f"p.{name}, " for name in rules.game.columns)
            schema = with_dictionaries(
                TABLEBASE.schema(game_fields(parts.read_schema(files.positions), POSITIONS)), ("ruleset", "value")
            )
            text = "p.text" if texts is None else f"p.{POSITION_KEY.name}"
            # the solver's columns as the solution holds them (pipeline/core/dataset.py)
            solver_made = "".join(f", s.{column.name}" for column in SOLVER_MADE)
            stage.phase("writing", share["write"])
            source, order = db.by_id({"p": "positions", "s": "solution", "r": "reach"})
            tally = Tally()
            db.write(
                f"""
              SELECT {db.one_of(literal(rules.id), [rules.id])} AS ruleset, p.id, {text} AS position,
                     {decoded}p.moves, {db.one_of("s.value", [value.value for value in Value])} AS value,
                     s.remoteness, s.grundy, r.seen AS reachable{solver_made}
              FROM {source} {order}""",
                files.tablebase,
                schema,
                Encoding(
                    delta=("id",) if rules.game.fixed_texts else ("id", "position"),
                    unranged=("position",),
                    part_rows=run.part_rows,
                ),
                order=("id",),
                keys=(0, total - 1),  # the positions' ids
                tally=tally,
                convert=texts,
                progress=lambda rows: stage.count(rows, total),  # the bar moves with the rows written
            )
            db.register("tablebase", files.tablebase)
            stage.phase("counting", share["count"])
            positions, reachable, max_remoteness = tally.rows, tally.reachable, tally.max_remoteness
            wins, losses, ties, draws = (tally.values[value.value] for value in Value)
            ended = [tally.ended[end] for end in ENDS]
            # by id, which row groups' min/max find, not by text, which every row group holds
            start = db.rows(f"SELECT value, remoteness, grundy FROM tablebase WHERE id = {ids[start_text]}")[0]
            stage.phase("indexing", share["index"])
            # every text hashed and sorted: DuckDB spills the sort to the scratch folder
            indexed_rows = db.write(
                f"SELECT {db.text_hash('position')} AS hash, id FROM tablebase ORDER BY hash, id",
                files.index,
                INDEX.schema(),
                Encoding(delta=("hash", "id"), group_rows=INDEX_GROUP_ROWS, part_rows=run.part_rows),
                order=("hash", "id"),
                keys=TEXT_HASHES,
                progress=lambda rows: stage.count(rows, total),
            )
        finally:
            db.release()
        stage.phase("lookup", share["lookup"])
        looked_up = run.engine.write_lookup(
            files.tablebase,
            files.transitions,
            files.lookup,
            with_dictionaries(LOOKUP.schema(), ("value",)),
            Encoding(
                delta=("id", "dst.list.element"),
                unranged=("position", "dst", "move"),
                plain=("position",),
                group_rows=LOOKUP_GROUP_ROWS,
                part_rows=run.part_rows,
            ),
            progress=lambda rows: stage.count(rows, total),
        )
        stage.summary = f"{positions:,} positions, {reachable:,} reachable"
    # an impartial game that ends in wins and losses, or ties, would publish Grundy values
    # that mean nothing (0 on a won position): refused, as the contract says
    problem = impartial_problem(rules.game, {end for end, seen in zip(ENDS, ended) if seen})
    if problem is not None:
        raise DataError(f"game {rules.game_name}: {problem}")
    if indexed_rows != positions:
        raise DataError(f"{files.index} holds {indexed_rows:,} positions of {positions:,}: the engine lost rows")
    if looked_up != positions:
        raise DataError(f"{files.lookup} holds {looked_up:,} positions of {positions:,}")
    summary = CatalogRow(
        ruleset=rules.id,
        game=rules.game_name,
        params=list(rules.params.items()),
        folder=rules.folder,
        tablebase_path=f"{rules.folder}/{parts.source_name(files.tablebase)}",
        transitions_path=f"{rules.folder}/{parts.source_name(files.transitions)}",
        positions=positions,
        transitions=parts.read_metadata(files.transitions).num_rows,
        wins=wins,
        losses=losses,
        ties=ties,
        draws=draws,
        reachable=reachable,
        start=start_text,
        start_value=start[0],
        start_remoteness=start[1],
        start_grundy=start[2],
        max_remoteness=max_remoteness,
        tablebase_sha256=sha256(files.tablebase),
        transitions_sha256=read.get(files.transitions) or sha256(files.transitions),
        positions_sha256=read.get(files.positions) or sha256(files.positions),
        solution_sha256=read.get(files.solution) or sha256(files.solution),
        verification_sha256=read.get(files.verification) or sha256(files.verification),
        index_sha256=sha256(files.index),
        lookup_sha256=sha256(files.lookup),
        pipeline_version=__version__,
    )
    write_table(summary.table(), files.summary)
    return summary


class Tally:
    """The catalog's counts of a tablebase, made from its row groups as they are written
    (rather than by reading the file again), where they are written (pipeline/engines/
    base.py Tally: on Spark, a copy on each executor, merged here)."""

    def __init__(self) -> None:
        self.rows = self.reachable = 0
        self.max_remoteness: int | None = None
        self.values: Counter[str] = Counter()  # positions by value
        self.ended: Counter[str] = Counter()  # reachable finished games by value

    def add(self, table: pa.Table) -> None:
        """Count one row group (ruleset, id, position, …, moves, value, remoteness, grundy, reachable)."""
        reachable = table["reachable"]
        self.rows += table.num_rows
        self.reachable += pc.sum(reachable).as_py() or 0
        most = pc.max(table["remoteness"]).as_py()
        if most is not None and (self.max_remoteness is None or most > self.max_remoteness):
            self.max_remoteness = most
        self.values.update(_value_counts(table["value"]))
        self.ended.update(_value_counts(table["value"].filter(pc.and_(reachable, pc.equal(table["moves"], 0)))))

    def merge(self, other: Tally) -> None:
        """Add the counts of another's row groups."""
        self.rows += other.rows
        self.reachable += other.reachable
        if other.max_remoteness is not None and (
            self.max_remoteness is None or other.max_remoteness > self.max_remoteness
        ):
            self.max_remoteness = other.max_remoteness
        self.values.update(other.values)
        self.ended.update(other.ended)


def _value_counts(column: pa.ChunkedArray) -> dict[str, int]:
    return {row["values"]: row["counts"] for row in pc.value_counts(column).to_pylist()}


def text_maker(rules: Ruleset, positions: Path) -> KeyTexts | None:
    """Where the positions file holds keys rather than texts (Space.keyed), what makes the
    texts of keys: the ruleset's space's `texts`; else None."""
    if POSITION_KEY.name not in parts.read_schema(positions).names:
        return None
    space = rules.game.space(rules)
    if not space.keyed:
        raise DataError(f"{positions} holds keys, but game {rules.game_name} makes no texts from keys: rebuild it")
    return KeyTexts(rules.id, rules.game_name, space)


class KeyTexts:
    """The texts of a keyed space's keys (`texts`), and a batch of the tablebase with its
    third column, the positions' keys, as their texts (called as a `convert`). It pickles
    as the ruleset's id, its space made again where it is unpickled (a Spark executor that
    writes a part of the tablebase), once a process."""

    def __init__(self, ruleset: str, game: str, space: Any = None):
        self.ruleset, self.game, self._space = ruleset, game, space

    def __getstate__(self) -> dict[str, Any]:
        return {"ruleset": self.ruleset, "game": self.game}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.ruleset, self.game, self._space = state["ruleset"], state["game"], None

    def texts(self, keys: np.ndarray) -> pa.Array:
        if self._space is None:
            self._space = space_of(self.ruleset)
        made = self._space.texts(keys)
        if not isinstance(made, pa.Array) or not pa.types.is_string(made.type) or len(made) != keys.size:
            raise DataError(
                f"game {self.game}'s texts() gave {type(made).__name__} {getattr(made, 'type', '')} of "
                f"{len(made) if hasattr(made, '__len__') else '?'} for {keys.size:,} keys, not a string array of "
                f"one text a key: the game module is wrong"
            )
        if made.null_count:
            raise DataError(f"game {self.game}'s texts() gave no text for some key: the game module is wrong")
        return made

    def __call__(self, batch: pa.RecordBatch) -> pa.RecordBatch:
        keys = batch.column(2).to_numpy(zero_copy_only=False)
        return batch.set_column(2, batch.schema.field(2).with_type(pa.string()), self.texts(keys))


def find_texts(
    positions: Path, texts: list[str], text_of: Callable[[np.ndarray], pa.Array] | None = None
) -> dict[str, int]:
    """The ids of the positions with these texts (those found), read row group by row
    group, the first, then from the last: numbered rank by rank, the positions play begins
    from are in the highest rank, the file's last rows; numbered breadth first from the
    start (dobutsu), the first. So the rest of the texts are never read. `text_of`: where
    the file holds keys, what makes their texts (text_maker)."""
    wanted = pa.array(sorted(set(texts)), pa.string())
    found: dict[str, int] = {}
    source = parts.open_file(positions)
    groups = source.metadata.num_row_groups
    for group in [0, *reversed(range(1, groups))] if groups else []:
        if text_of is None:
            rows = source.read_row_group(group, columns=["text", "id"])
        else:
            rows = source.read_row_group(group, columns=[POSITION_KEY.name, "id"])
            rows = pa.table({"text": text_of(rows[POSITION_KEY.name].to_numpy()), "id": rows["id"]})
        hits = rows.filter(pc.is_in(rows["text"], value_set=wanted))
        found.update(zip(hits["text"].to_pylist(), hits["id"].to_pylist()))
        if len(found) == len(wanted):
            break
    return found


#: How a game can end, for the finished positions play reaches.
ENDS = (Value.WIN.value, Value.LOSS.value, Value.TIE.value)
