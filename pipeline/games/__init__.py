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


#: The range a rank lies in (Space.rank): positions.parquet and the solvers hold it in 32 bits.
RANKS = (-(2**31), 2**31 - 1)


@dataclass(frozen=True)
class Size:
    """How big a ruleset is, known before building it: `positions` exactly where `exact`,
    else an upper bound; `transitions` (distinct position pairs) an upper bound. `ranked`
    where the game has a rank (Space.rank), `by_rank` where it also generates its moves
    rank by rank (Space.transitions_from): what the build holds in memory and on disk
    depends on both (pipeline/estimate.py); unsure, leave them False. `window` for a space
    streamed part by part."""

    positions: int
    transitions: int
    exact: bool = False
    ranked: bool = False
    by_rank: bool = False
    #: Where the space lists its positions part by part (Space.positions_part): a bound on
    #: the positions a stage holds at once, the widest rank and the ranks its moves lead to.
    window: int | None = None


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
                  left, say), within RANKS (32 bits); enumerate then numbers the positions
                  rank by rank and solve computes each rank from the one below in a
                  single pass, checking that the rank did fall.
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
    #: Optional: whether every position text has the same length, a board written cell by
    #: cell (tictactoe, connect). Such texts are stored as they are, which zstd compresses
    #: better and quicker than the prefix each shares with the one before (stored so for
    #: the other games' texts: chopsticks' take a third of the space that way).
    fixed_texts: bool = False

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


def impartial_problem(game: Game, finished: set[str]) -> str | None:
    """Why the values of the finished positions of one ruleset contradict the game's
    `impartial`, or None. An impartial game ends the same way wherever it ends: all lost
    (normal play) or all won (misère); with ties, or wins beside losses, its Grundy values
    say nothing and would be published, 0 on won positions as on lost ones."""
    if not game.impartial or (len(finished) <= 1 and "tie" not in finished):
        return None
    return (f"impartial is True, but finished positions are {' and '.join(sorted(finished))}: "
            f"an impartial game's finished positions are all lost (normal play) or all won "
            f"(misère); a game that ends otherwise is not impartial (impartial = False)")


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
    """Every game, built in or plug-in, checked against the contract once. A plug-in that
    fails to load or breaks the contract is left out and noted in `_broken` (by its name
    and its game's): one bad plug-in must not take the other games down with it."""
    from pipeline.games import chopsticks, connect, hackenbush, nim, octal, sticks, tictactoe

    _broken.clear()
    _plugin_modules.clear()
    found: dict[str, Game] = {}
    for game in (chopsticks.GAME, sticks.GAME, nim.GAME, hackenbush.GAME, octal.GAME, tictactoe.GAME, connect.GAME):
        problems = check_contract(game)
        if problems:  # a built-in game's: our bug, not the user's
            raise RulesetError(problems[0])
        found[game.name] = game
    claimed: dict[str, str] = {}  # a game name -> the plug-in that declared it
    for entry, game in _plugins():
        plugin = f"the game plug-in {entry.name!r} ({entry.value})"
        try:
            problems = check_contract(game)
            name = getattr(game, "name", None)
        except Exception as error:  # noqa: BLE001 - a property that raises, say
            problems, name = [failed(error)], None
        if problems:
            _broken[entry.name] = f"{plugin} breaks the game contract: {problems[0]}"
            if isinstance(name, str) and name:
                _broken.setdefault(name, _broken[entry.name])
            continue
        if name in found or name in claimed:
            other = "the built-in game" if name not in claimed else f"the plug-in {claimed[name]!r}"
            _broken[entry.name] = f"{plugin} is called {name!r}, as {other} is: uninstall one of them"
            if name in claimed:  # two plug-ins of one name: neither is the one meant
                del found[name]
                _broken[name] = f"two game plug-ins are called {name!r} ({claimed[name]}, {entry.name}): uninstall one"
            continue
        claimed[name] = entry.name
        found[name] = game
        modules = (entry.value.partition(":")[0].strip(), type(game).__module__)
        _plugin_modules[entry.name] = {module for module in modules if module.split(".")[0] != "pipeline"}
    return found


#: The plug-ins left out, by entry-point name and by game name: why, in one line.
_broken: dict[str, str] = {}
#: The modules of each plug-in in use, by entry-point name, to know its code in a traceback.
_plugin_modules: dict[str, set[str]] = {}


def _plugins() -> list[tuple[Any, Any]]:
    """(entry point, loaded object) for each game installed packages declare in the
    entry-point group tablebase.games; one that fails to load is noted in `_broken`."""
    games = []
    for entry in sorted(metadata.entry_points(group=ENTRY_POINTS), key=lambda e: e.name):
        try:
            games.append((entry, entry.load()))
        except (Exception, SystemExit) as error:  # noqa: BLE001 - a plug-in's bug, named in one line
            # SystemExit too: a plug-in calling sys.exit() while it loads would end every command
            _broken[entry.name] = f"the game plug-in {entry.name!r} ({entry.value}) failed to load: {failed(error)}"
    return games


def broken_plugins() -> list[str]:
    """Why each plug-in that is installed but left out is, one line each."""
    _registry()
    return sorted(set(_broken.values()))


def broken_plugin(name: str) -> str | None:
    """Why the plug-in (or plug-in game) called `name` is left out, or None if it is not."""
    games = _registry()
    return None if name in games else _broken.get(name)


def first_line(error: BaseException) -> str:
    """An exception's message cut to one line of reasonable length, for an error line."""
    from pipeline.params import shortened

    text = str(error).strip()
    return shortened(text.splitlines()[0] if text else "")


def failed(error: BaseException) -> str:
    """What a game's code raised, for an error line: 'ZeroDivisionError: oops'."""
    if isinstance(error, SystemExit):
        return f"it called sys.exit({error.code!r})"
    return f"{type(error).__name__}: {first_line(error)}"


def plugin_failure(error: BaseException) -> str | None:
    """'the game plug-in NAME failed in METHOD(): …' where `error` was raised in a plug-in
    game's code (a frame of its modules in the traceback, the outermost naming the member
    the pipeline called), else None. SystemExit included: a plug-in may not end a command."""
    if not _plugin_modules:
        return None
    traceback = error.__traceback__
    while traceback is not None:
        module = traceback.tb_frame.f_globals.get("__name__", "")
        for name, modules in _plugin_modules.items():
            if any(module == m or module.startswith(m + ".") for m in modules):
                return f"the game plug-in {name!r} failed in {traceback.tb_frame.f_code.co_name}(): {failed(error)}"
        traceback = traceback.tb_next
    return None


def all_games() -> dict[str, Game]:
    """Every registered game by name."""
    return _registry()


def find_game(name: str) -> Game:
    """The game called `name`; RulesetError if there is none."""
    games = _registry()
    if name not in games:
        if name in _broken:
            raise RulesetError(_broken[name])
        from pipeline.params import quoted

        raise RulesetError(f"unknown game {quoted(name)} (known: {', '.join(sorted(games))})")
    return games[name]
