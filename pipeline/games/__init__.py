"""The game seam: every game is one module here exporting one object that satisfies `Game`.

A game turns a ruleset into a `Space`: every position (as integer columns, a position
text and a terminal value) and every transition, generated in bulk as Arrow data. The
pipeline's stages know nothing else about a game.

Values are always from the side to move: 'win', 'loss', or NULL for "not over yet".
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Iterator, Mapping, Protocol

import pyarrow as pa

from pipeline.errors import RulesetError

if TYPE_CHECKING:
    from pipeline.params import Param
    from pipeline.rulesets import Ruleset

#: Columns every game's positions table starts with, in this order.
POSITION_COLUMNS = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("terminal", pa.string()),
    ]
)

#: The schema of every batch of transitions.
TRANSITION_SCHEMA = pa.schema(
    [
        pa.field("src", pa.int64(), nullable=False),
        pa.field("dst", pa.int64(), nullable=False),
        pa.field("move", pa.dictionary(pa.int32(), pa.string()), nullable=False),
    ]
)


@dataclass(frozen=True)
class Size:
    """How big a ruleset is, known before building it: `positions` exactly where `exact`,
    else an upper bound; `transitions` (distinct position pairs) an upper bound."""

    positions: int
    transitions: int
    exact: bool = False


class Space(Protocol):
    """Every position and transition of one ruleset.

    Required:
      positions() one table: POSITION_COLUMNS, then the game's decoded integer columns
                  (documented in `Game.columns`). `id` is unique; `terminal` is 'win' or
                  'loss' where the game is over (no transitions leave such a position)
                  and NULL elsewhere.
      transitions() batches of TRANSITION_SCHEMA: one row per distinct (src, dst) pair,
                  `move` naming the first move (in the game's order) that leads there.
                  Batches come in ascending `src`; within a source, ascending `dst`.

    Optional:
      rank()      for rulesets whose moves can never return to a position: one integer
                  per row of positions() that every transition strictly lowers (sticks
                  left, say); None where moves can cycle. With it, enumerate numbers the
                  positions rank by rank and solve computes each rank from the one below
                  in a single pass (stages/solve.py), checking that the rank did fall.
    """

    def positions(self) -> pa.Table: ...

    def transitions(self) -> Iterator[pa.RecordBatch]: ...


class Game(Protocol):
    """One game with its rule parameters.

    Required: name, summary, params, columns, space(), start(), canonical_position().
    Optional: validate(values) for checks that involve several parameters; without it
    every combination of individually valid values is accepted. size(rules) -> Size: how
    big the ruleset is, counted without building it (in well under a second); without it
    a ruleset is not checked against the machine before it is built. starts(rules): every
    legal start's text, where the first player chooses how the game begins (`start` is
    then the one shown as the start); without it, only `start`.
    """

    name: str
    summary: str
    params: tuple["Param", ...]
    #: decoded position columns: name -> description (the README's schema comes from here)
    columns: Mapping[str, str]

    def space(self, rules: "Ruleset") -> Space: ...

    def start(self, rules: "Ruleset") -> str:
        """The start position's text."""
        ...

    def canonical_position(self, rules: "Ruleset", text: str) -> str:
        """The canonical text of a position a user typed; PositionError if malformed."""
        ...


def legal_starts(rules: "Ruleset") -> list[str]:
    """Every position a game may begin from: the game's optional `starts(rules)` (where the
    first player has a choice, like the pointed heap of nim's arrow variants), else the
    one start. `reachable` means reachable from one of these."""
    starts = getattr(rules.game, "starts", None)
    return list(starts(rules)) if starts is not None else [rules.game.start(rules)]


def _registry() -> dict[str, Game]:
    from pipeline.games import chopsticks, hackenbush, nim, octal, sticks

    games: list[Any] = [chopsticks.GAME, sticks.GAME, nim.GAME, hackenbush.GAME, octal.GAME]
    return {game.name: game for game in games}


def all_games() -> dict[str, Game]:
    """Every registered game by name."""
    return _registry()


def find_game(name: str) -> Game:
    """The game called `name`; RulesetError if there is none."""
    games = _registry()
    if name not in games:
        raise RulesetError(f"unknown game {name!r} (known: {', '.join(sorted(games))})")
    return games[name]
