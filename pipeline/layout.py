"""Where every file lives under the data directory (default `data/`).

    data/catalog.parquet                 one row per built ruleset (export)
    data/tablebases.duckdb               views catalog, tablebase, transitions for DuckDB (export)
    data/<ruleset>/positions.parquet     every position: id, text, terminal, moves, rank, decoded columns (enumerate)
    data/<ruleset>/transitions.parquet   every move: src, dst, move (enumerate)
    data/<ruleset>/solution.parquet      id, value, remoteness, grundy, grundy_height (solve)
    data/<ruleset>/verification.parquet  one row per consistency check (verify)
    data/<ruleset>/tablebase.parquet     the published tablebase (export)
    data/<ruleset>/summary.parquet       the ruleset's catalog row (export)
    data/pages/                          pictures and HTML pages (`tablebase draw`)
    data/.staging/, data/.tmp/           work in progress of `build`; scratch and DuckDB's spill space

<ruleset> is the canonical ruleset id, with '/' written as %2F.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from pipeline.rulesets import Ruleset


@dataclass(frozen=True)
class RulesetFiles:
    """The files of one ruleset's directory."""

    dir: Path

    @property
    def positions(self) -> Path:
        return self.dir / "positions.parquet"

    @property
    def transitions(self) -> Path:
        return self.dir / "transitions.parquet"

    @property
    def solution(self) -> Path:
        return self.dir / "solution.parquet"

    @property
    def verification(self) -> Path:
        return self.dir / "verification.parquet"

    @property
    def tablebase(self) -> Path:
        return self.dir / "tablebase.parquet"

    @property
    def summary(self) -> Path:
        return self.dir / "summary.parquet"

    def all(self) -> list[Path]:
        """Every file, in the order `build` publishes them (the catalog row last)."""
        return [self.positions, self.transitions, self.solution, self.verification,
                self.tablebase, self.summary]


@dataclass(frozen=True)
class DataDir:
    root: Path

    def ruleset(self, rules: Ruleset) -> RulesetFiles:
        return RulesetFiles(self.root / rules.dirname)

    def staging(self, rules: Ruleset) -> RulesetFiles:
        return RulesetFiles(self.root / ".staging" / rules.dirname)

    @property
    def temp(self) -> Path:
        return self.root / ".tmp"

    @property
    def pages(self) -> Path:
        return self.root / "pages"

    @property
    def catalog(self) -> Path:
        return self.root / "catalog.parquet"

    @property
    def database(self) -> Path:
        return self.root / "tablebases.duckdb"

    def summaries(self) -> list[Path]:
        return sorted(self.root.glob("*/summary.parquet"))
