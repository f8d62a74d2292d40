"""Stage 1: every position and every transition of a ruleset, from its game, to Parquet.

positions.parquet: id, text, terminal, moves (the number of distinct children), then
the game's decoded columns. transitions.parquet: ruleset, src, dst, move.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.games import TRANSITION_SCHEMA
from pipeline.layout import RulesetFiles
from pipeline.parquet import BatchWriter, atomic_path, write_table
from pipeline.progress import Timer, log
from pipeline.rulesets import Ruleset

PUBLISHED_TRANSITIONS = TRANSITION_SCHEMA.insert(0, pa.field("ruleset", pa.dictionary(pa.int8(), pa.string())))


@dataclass(frozen=True)
class Enumerated:
    positions: int
    transitions: int


def enumerate_ruleset(rules: Ruleset, out: RulesetFiles) -> Enumerated:
    """Write out.transitions and out.positions for `rules`."""
    with Timer(f"enumerate {rules.id}"):
        space = rules.game.space(rules)
        positions = space.positions()
        log.info("enumerate %s: %s positions", rules.id, f"{positions.num_rows:,}")
        ids = positions["id"].to_numpy()
        moves = np.zeros(int(ids.max()) + 1 if len(ids) else 0, dtype=np.int64)
        # each published file names its ruleset, so files can be globbed together
        ruleset = pa.array([rules.id])
        with atomic_path(out.transitions) as tmp:
            writer = BatchWriter(tmp, PUBLISHED_TRANSITIONS)
            try:
                for batch in space.transitions():
                    src = batch.column("src").to_numpy()
                    moves[: src.max() + 1] += np.bincount(src)
                    name = pa.DictionaryArray.from_arrays(np.zeros(batch.num_rows, np.int8), ruleset)
                    writer.write(pa.RecordBatch.from_arrays([name, *batch.columns], schema=PUBLISHED_TRANSITIONS))
                    log.info("enumerate %s: %s transitions", rules.id, f"{writer.rows:,}")
            finally:
                writer.close()
        # the solver's starting counters, and a fact users ask for ("how many moves here?")
        positions = positions.add_column(3, "moves", pa.array(moves[ids].astype(np.int32)))
        write_table(positions, out.positions)
    return Enumerated(positions.num_rows, writer.rows)
