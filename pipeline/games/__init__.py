"""The game seam: every game is one module here exporting one object, a `Game`.

A game turns a ruleset into a `Space`: every position (as integer columns, a position
text and a terminal value) and every transition, generated in bulk as Arrow data. The
pipeline's stages know nothing else about a game.

A finished game's value is from the side to move: 'win', 'loss' or 'tie' (pipeline/values.py),
NULL for "not over yet".
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass
from importlib import metadata
from typing import TYPE_CHECKING, Any, Iterator, Mapping

import numpy as np
import pyarrow as pa

from pipeline.errors import RulesetError
from pipeline.games._svg import text_picture

if TYPE_CHECKING:
    from pathlib import Path

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
    else an upper bound; `transitions` (distinct position pairs) an upper bound. `ranked`
    where the game has a rank (Space.rank), `by_rank` where it also generates its moves
    rank by rank (Space.transitions_from): what the build holds in memory and on disk
    depends on both (pipeline/estimate.py); unsure, leave them False."""

    positions: int
    transitions: int
    exact: bool = False
    ranked: bool = False
    by_rank: bool = False


class Space:
    """Every position and transition of one ruleset. Subclass it.

    Required:
      positions() one table: POSITION_COLUMNS, then the game's decoded columns (documented
                  in `Game.columns`). `id` is unique; `terminal` is 'win', 'loss' or 'tie'
                  (pipeline.values.TERMINAL) where the game is over (no transitions leave such a position) and NULL
                  elsewhere.
      transitions() batches of TRANSITION_SCHEMA: one row per distinct (src, dst) pair,
                  `move` naming the first move (in the game's order) that leads there.
                  Batches come in ascending `src`; within a source, ascending `dst`.

    Optional, with their defaults:
      rank()      None: moves may return to a position, so the pipeline solves by
                  retrograde analysis. A game whose moves never can returns one integer
                  per row of positions() that every transition strictly lowers (sticks
                  left, say); enumerate then numbers the positions rank by rank and solve
                  computes each rank from the one below in a single pass, checking that
                  the rank did fall.
      parts() and transitions_part(part)
                  1 and transitions(): the transitions come in one piece. A game that can
                  generate them in independent parts (each a run of sources) says how
                  many, and transitions_part(part) gives part 0, 1, … of transitions() in
                  order; the Spark engine then generates the parts on its executors, each
                  from a Space of its own, so no process holds every move. A game giving
                  parts need not write transitions(): by default it is every part in order.
      positions_part(part) and part_rank(part)
                  not offered: positions() gives every position at once. A space too big
                  for that lists them part by part, in the parts of transitions_part:
                  part i's positions are the sources of part i's moves (it may have none),
                  ids ascending and consecutive from 0 across the parts, each part all of
                  one rank, part_rank(i), and the ranks never falling from one part to the
                  next: numbered rank by rank already. Enumerate then streams the parts,
                  holding one part's positions and moves at a time, never every position
                  (connect:cols=5,rows=6 has a billion). positions() and rank() default to
                  every part's, for check-game and the Spark engine's driver.
      transitions_from(ids)
                  None: not offered. A game with a rank that can generate the moves of
                  any positions it is given (ids: an ascending array of ids) yields the
                  rows transitions() has for them, in the same order. Enumerate then
                  generates the moves rank by rank in the published order, instead of
                  spilling every move to scratch files to reorder them (sticks:rows=13's
                  3×10^9 moves would need 36 GB).
    """

    #: A folder for the space's own scratch files, set by enumerate before it asks for
    #: anything (None: keep everything in memory); removed when enumerate ends.
    scratch: "Path | None" = None

    def positions(self) -> pa.Table:
        if type(self).positions_part is Space.positions_part:
            raise NotImplementedError
        return pa.concat_tables([self.positions_part(part) for part in range(self.parts())])

    def streams(self) -> bool:
        """Whether the space lists its positions part by part (positions_part)."""
        return type(self).positions_part is not Space.positions_part

    def positions_part(self, part: int) -> pa.Table:
        raise NotImplementedError

    def part_rank(self, part: int) -> int:
        raise NotImplementedError

    def transitions(self) -> Iterator[pa.RecordBatch]:
        if type(self).transitions_part is Space.transitions_part:
            raise NotImplementedError
        for part in range(self.parts()):
            yield from self.transitions_part(part)

    def rank(self) -> Any:
        if type(self).positions_part is not Space.positions_part:
            return np.concatenate([np.full(self.positions_part(part).num_rows, self.part_rank(part), dtype=np.int64)
                                   for part in range(self.parts())])
        return None

    def parts(self) -> int:
        return 1

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        if part != 0:
            raise IndexError(f"part {part} of a space in one part")
        return self.transitions()

    def transitions_from(self, ids: Any) -> Iterator[pa.RecordBatch] | None:
        return None


class Game:
    """One game with its rule parameters. Subclass it; `check` says what is missing.

    Required: name ([a-z][a-z0-9_]*), summary, params, columns (decoded position columns:
    name -> meaning), impartial (True where both players have the same moves from every
    position and a player without a move loses under normal play, so Grundy values mean
    something; False, as for tic-tac-toe, and no Grundy value is computed), space(rules),
    start(rules), canonical_position(rules, text).
    Optional, with their defaults:
      validate(values)  nothing: every combination of individually valid values is accepted
      starts(rules)     [start(rules)]: where the first player chooses how the game begins
                        (nim's arrow), every legal start; `reachable` counts from them all
      size(rules)       None: the ruleset is not counted before it is built, so not checked
                        against the machine; else a Size, in well under a second
      sides(rules, text) None: the position has no part that is a player's (heaps, a
                        tree); else (the player to move's part, the other's) as players see
                        them, which `tablebase play` labels "you" and "the computer"
      draw(rules, text) the position's text in a box: the picture of a position on the pages
                        (`tablebase draw`); a game draws its hands, heaps or board instead
    """

    name: str
    summary: str
    params: tuple["Param", ...]
    columns: Mapping[str, str]
    impartial: bool

    def space(self, rules: "Ruleset") -> Space:
        raise NotImplementedError

    def start(self, rules: "Ruleset") -> str:
        """The start position's text."""
        raise NotImplementedError

    def canonical_position(self, rules: "Ruleset", text: str) -> str:
        """The canonical text of a position a user typed; PositionError if malformed."""
        raise NotImplementedError

    def validate(self, values: dict) -> None:
        return None

    def starts(self, rules: "Ruleset") -> list[str]:
        return [self.start(rules)]

    def size(self, rules: "Ruleset") -> Size | None:
        return None

    def sides(self, rules: "Ruleset", text: str) -> tuple[str, str] | None:
        return None

    def draw(self, rules: "Ruleset", text: str) -> str:
        """A picture of the position `text` (canonical) as inline SVG for an HTML page:
        no script and no reference outside itself (helpers in pipeline/games/_svg.py)."""
        return text_picture(text)


REQUIRED_ATTRIBUTES = ("name", "summary", "params", "columns", "impartial")
REQUIRED_METHODS = ("space", "start", "canonical_position")
#: Folder names a game may not take: they sit beside the games in the data folder.
RESERVED_NAMES = ("pages", "dist")


def check_contract(game: object) -> list[str]:
    """What `game` lacks of the Game contract, one line each (GamesmanOne checks its
    games' required API the same way when they are registered)."""
    label = getattr(game, "name", type(game).__name__)
    if not isinstance(game, Game):
        return [f"game {label!r}: not a pipeline.games.Game"]
    problems = [f"game {label!r}: no {attribute}" for attribute in REQUIRED_ATTRIBUTES
                if not hasattr(game, attribute)]
    from pipeline.games.simple import REQUIRED_SIMPLE, SimpleGame

    required, base = (REQUIRED_SIMPLE, SimpleGame) if isinstance(game, SimpleGame) else (REQUIRED_METHODS, Game)
    problems += [f"game {label!r}: {method}() is required" for method in required
                 if getattr(type(game), method) is getattr(base, method)]
    if hasattr(game, "impartial") and not isinstance(game.impartial, bool):
        problems.append(f"game {label!r}: impartial must be True or False")
    name = getattr(game, "name", "")
    if not (isinstance(name, str) and re.fullmatch(r"[a-z][a-z0-9_]*", name)) or name in RESERVED_NAMES:
        problems.append(f"game {label!r}: its name must be [a-z][a-z0-9_]* and not {' or '.join(RESERVED_NAMES)}")
    return problems


#: The word that names a ruleset's start position wherever a position is taken.
START = "start"


def read_position(rules: "Ruleset", text: str) -> str:
    """The canonical text of a position a user typed: `start` (any case) is the ruleset's
    start; anything else goes to the game's canonical_position (PositionError if malformed)."""
    if text.strip().lower() == START:
        return rules.game.start(rules)
    return rules.game.canonical_position(rules, text)


def legal_starts(rules: "Ruleset") -> list[str]:
    """Every position a game may begin from; `reachable` means reachable from one of these."""
    return list(rules.game.starts(rules))


#: Where plug-ins declare their games: `[project.entry-points."tablebase.games"]`,
#: `name = "module:GAME"`, the object a Game (or a pipeline.games.simple.SimpleGame).
ENTRY_POINTS = "tablebase.games"


@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, Game]:
    """Every game, built in or plug-in, checked against the contract once."""
    from pipeline.games import chopsticks, connect, hackenbush, nim, octal, sticks, tictactoe

    games: list[Any] = [chopsticks.GAME, sticks.GAME, nim.GAME, hackenbush.GAME, octal.GAME, tictactoe.GAME, connect.GAME,
                        *_plugins()]
    found: dict[str, Game] = {}
    for game in games:
        problems = check_contract(game)
        if problems:
            raise RulesetError(problems[0])
        if game.name in found:
            raise RulesetError(f"two games are called {game.name!r}: uninstall one of the plug-ins")
        found[game.name] = game
    return found


def _plugins() -> tuple[Any, ...]:
    """The games installed packages declare in the entry-point group tablebase.games."""
    games = []
    for entry in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        try:
            games.append(entry.load())
        except Exception as error:  # noqa: BLE001 - a plug-in's bug, named in one line
            raise RulesetError(f"the game plug-in {entry.name!r} ({entry.value}) failed to load: "
                               f"{type(error).__name__}: {error}") from None
    return tuple(games)


def all_games() -> dict[str, Game]:
    """Every registered game by name."""
    return _registry()


def find_game(name: str) -> Game:
    """The game called `name`; RulesetError if there is none."""
    games = _registry()
    if name not in games:
        raise RulesetError(f"unknown game {name!r} (known: {', '.join(sorted(games))})")
    return games[name]
