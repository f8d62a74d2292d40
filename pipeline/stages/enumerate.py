"""Stage 1: every position and every transition of a ruleset, from its game, to Parquet."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.games import TRANSITION_SCHEMA
from pipeline.layout import RulesetFiles
from pipeline.parquet import BatchWriter, atomic_path, write_table
from pipeline.progress import Timer, log
from pipeline.rulesets import Ruleset


@dataclass(frozen=True)
class Enumerated:
    positions: int
    transitions: int


def enumerate_ruleset(rules: Ruleset, out: RulesetFiles) -> Enumerated:
    """Write out.positions and out.transitions for `rules`."""
    with Timer(f"enumerate {rules.id}"):
        space = rules.game.space(rules)
        positions = space.positions()
        write_table(positions, out.positions)
        log.info("enumerate %s: %s positions", rules.id, f"{positions.num_rows:,}")
        # each published file names its ruleset, so files can be globbed together
        ruleset = pa.array([rules.id])
        schema = TRANSITION_SCHEMA.insert(0, pa.field("ruleset", pa.dictionary(pa.int8(), pa.string())))
        with atomic_path(out.transitions) as tmp:
            writer = BatchWriter(tmp, schema)
            try:
                for batch in space.transitions():
                    name = pa.DictionaryArray.from_arrays(np.zeros(batch.num_rows, np.int8), ruleset)
                    writer.write(pa.RecordBatch.from_arrays([name, *batch.columns], schema=schema))
                    log.info("enumerate %s: %s transitions", rules.id, f"{writer.rows:,}")
            finally:
                writer.close()
    return Enumerated(positions.num_rows, writer.rows)
