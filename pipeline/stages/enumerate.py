"""Stage 1: every position and every transition of a ruleset, from its game, to Parquet."""

from __future__ import annotations

from dataclasses import dataclass

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
        with atomic_path(out.transitions) as tmp:
            writer = BatchWriter(tmp, TRANSITION_SCHEMA)
            try:
                for batch in space.transitions():
                    writer.write(batch)
                    log.info("enumerate %s: %s transitions", rules.id, f"{writer.rows:,}")
            finally:
                writer.close()
    return Enumerated(positions.num_rows, writer.rows)
