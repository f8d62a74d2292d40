"""One ruleset's positions and moves as the pictures (draw.py) and the pages (pages.py) read them."""

from __future__ import annotations

from dataclasses import dataclass

from pipeline.core.dataset import CatalogRow
from pipeline.games.rulesets import Ruleset


@dataclass(frozen=True)
class Position:
    id: int
    text: str
    value: str
    remoteness: int | None
    grundy: int | None
    reachable: bool

    @property
    def over(self) -> bool:
        """Whether the game is over here (remoteness 0: no move left)."""
        return self.remoteness == 0


@dataclass(frozen=True)
class Edge:
    src: int
    dst: int
    move: str


@dataclass(frozen=True)
class RulesetGraph:
    """One ruleset's positions and moves, loaded for drawing."""

    rules: Ruleset
    summary: CatalogRow
    positions: dict[int, Position]  # by id, ascending
    moves: dict[int, list[Edge]]  # each position's moves, best first for its mover
    start: int

    def reachable(self) -> list[Position]:
        return [p for p in self.positions.values() if p.reachable]
