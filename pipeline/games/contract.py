"""The game seam: the contract every game satisfies (each game is one module of
pipeline/games/ exporting one object, a `Game`; pipeline/games/registry.py finds them).

A game turns a ruleset into a `Space`: every position (as integer columns, a position
text and a terminal value) and every transition, generated in bulk as Arrow data. The
pipeline's stages know nothing else about a game.

A finished game's value is from the side to move: 'win', 'loss' or 'tie' (pipeline/core/values.py),
NULL for "not over yet".
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Protocol

import numpy as np
import pyarrow as pa

from pipeline.core.dataset import KEY
from pipeline.core.errors import PositionError
from pipeline.core.params import QUOTED, quoted, shortened
from pipeline.games._svg import text_picture

if TYPE_CHECKING:
    from pathlib import Path

    from pipeline.core.params import Param


class Rules(Protocol):
    """What a game is handed of a ruleset (pipeline/games/rulesets.py's Ruleset, made from
    the registry's games: the contract knows it only by this)."""

    @property
    def id(self) -> str:
        """The canonical id, `game:key=value,…`."""

    @property
    def game(self) -> Game:
        """The ruleset's game."""

    def __getitem__(self, name: str) -> Any:
        """A parameter's value, parsed (IntParam: an int)."""


#: Columns every game's positions table starts with, in this order.
POSITION_COLUMNS = pa.schema(
    [
        pa.field("id", pa.int64(), nullable=False),
        pa.field("text", pa.string(), nullable=False),
        pa.field("terminal", pa.string()),
    ]
)

#: The column a keyed space's positions hold in place of `text` (Space.keyed).
POSITION_KEY = KEY.field

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
    depends on both (pipeline/stages/estimate.py); unsure, leave them False. `window` for a space
    streamed part by part; `disk_per_position` and `disk_per_transition` for a game whose
    files take far less than the estimate's figures for any game; the `likely_` counts for
    a game whose bounds are far above the real counts and that can guess them."""

    positions: int
    transitions: int
    exact: bool = False
    ranked: bool = False
    by_rank: bool = False
    #: Where the space lists its positions part by part (Space.positions_part): a bound on
    #: the positions a stage holds at once, the widest rank and the ranks its moves lead to.
    window: int | None = None
    #: Bytes a position and a transition (of those counted above) take on disk at the
    #: build's peak, files and scratch, where the game has measured its own (connect's
    #: boards). None: the estimate's figures for any game (pipeline/stages/estimate.py:
    #: 40 B a position, whatever its texts' length; 16 B a transition, 4 B where `by_rank`).
    disk_per_position: float | None = None
    disk_per_transition: float | None = None
    #: Where the counts above are bounds, the game's best guess of the real ones (connect
    #: draws boards of its bound at random and counts the share that are positions): the
    #: estimate sizes memory and disk by them, so that a bound several times the real count
    #: does not refuse a build that fits (pipeline/stages/estimate.py). None: the bounds.
    likely_positions: int | None = None
    likely_transitions: int | None = None
    likely_window: int | None = None


class Search:
    """A keyed space's positions found level by level from their keys alone, where the
    work is spread over machines that share nothing else (the Spark engine's enumerate:
    pipeline/engines/spark_enumerate.py). Subclass it; keys are int64 NumPy arrays.

    Level 0 is `starts()`. Level L + 1 is the children of level L's positions that play
    goes on from (code 0), each once, less those found at any level before; where `rank`
    gives ranks, every move goes from a level to the next, so none is looked for there
    (and the engine checks that each move's child is at the next level).

    The ids number the positions level by level, the last level first where `descending`,
    within a level by key (by terminal code, then key, where `by_code`): the ids the
    space's positions_part gives, to which tests/test_search.py holds them.
    """

    #: Whether the last level's positions take the first ids (connect: the full boards first).
    descending: bool = False
    #: Whether a level's positions are numbered by their terminal code, then key.
    by_code: bool = False
    #: The moves' names, by their code in `children`.
    moves: list[str]

    def starts(self) -> np.ndarray:
        """The keys of level 0, distinct."""
        raise NotImplementedError

    def codes(self, keys: np.ndarray, level: int) -> np.ndarray:
        """Each key's terminal code (int8): 0 where play goes on, 1 and up where the game is
        over (which terminal word each is, `positions` says)."""
        raise NotImplementedError

    def children(self, keys: np.ndarray, level: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(the row in `keys` each move is made from, the move's code, the child's key) for
        every move of `keys` (each of code 0, at `level`): a move a distinct child of its
        position, the first in the game's order where two lead to one."""
        raise NotImplementedError

    def positions(self, ids: np.ndarray, keys: np.ndarray, codes: np.ndarray, levels: np.ndarray) -> pa.Table:
        """The rows positions_part gives for these positions (POSITION_COLUMNS with `key` for
        `text`, then the game's columns), in the order given."""
        raise NotImplementedError

    def rank(self, level: int) -> int | None:
        """The rank (Space.rank) of every position at `level`; None where moves can return."""
        raise NotImplementedError


class Space:
    """Every position and transition of one ruleset. Subclass it.

    Required:
      positions() one table: POSITION_COLUMNS, then the game's decoded columns (documented
                  in `Game.columns`). `id` is unique; `terminal` is 'win', 'loss' or 'tie'
                  (pipeline.core.values.TERMINAL) where the game is over (no transitions leave such a position) and NULL
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
                  ids ascending and consecutive from 0 across the parts. Where the game
                  has a rank, each part is all of one rank, part_rank(i), the ranks never
                  falling from one part to the next: numbered rank by rank already. Where
                  moves can cycle (dobutsu), part_rank(i) is None for every part and the
                  ids are the space's own order; a move may then lead to any id, before
                  or after its source's part, below the number of positions. Enumerate
                  streams the parts, holding one part's positions and moves at a time,
                  never every position (connect:cols=5,rows=6 has a billion). positions()
                  and rank() default to every part's, for check-game and the Spark
                  engine's driver.
      keyed and texts(keys)
                  False: positions() gives each position's text. A space whose texts are
                  made from a 64-bit key (connect: John Tromp's key) may set keyed = True:
                  its positions then hold `key` (POSITION_KEY, int64) where the others
                  hold `text`, and texts(keys) makes the texts of any keys (an int64 NumPy
                  array) as a pyarrow string array. positions.parquet then stores the keys,
                  which cost a byte or two each, and each text is made and compressed once,
                  for the tablebase (twice was a fifth of a Connect-Four build).
      search()    None: not offered. A keyed space whose positions can be found level by
                  level from their keys alone gives a Search: the Spark engine then finds
                  them on its executors, and no process holds every position.
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
    scratch: Path | None = None
    keyed = False

    def texts(self, keys: Any) -> pa.Array:
        raise NotImplementedError

    def positions(self) -> pa.Table:
        if type(self).positions_part is Space.positions_part:
            raise NotImplementedError
        return pa.concat_tables([self.positions_part(part) for part in range(self.parts())])

    def streams(self) -> bool:
        """Whether the space lists its positions part by part (positions_part)."""
        return type(self).positions_part is not Space.positions_part

    def positions_part(self, part: int) -> pa.Table:
        raise NotImplementedError

    def part_rank(self, part: int) -> int | None:
        raise NotImplementedError

    def transitions(self) -> Iterator[pa.RecordBatch]:
        if type(self).transitions_part is Space.transitions_part:
            raise NotImplementedError
        for part in range(self.parts()):
            yield from self.transitions_part(part)

    def rank(self) -> Any:
        if type(self).positions_part is not Space.positions_part:
            ranks = [self.part_rank(part) for part in range(self.parts())]
            if any(rank is None for rank in ranks):  # moves can cycle: no rank
                return None
            return np.concatenate(
                [np.full(self.positions_part(part).num_rows, rank, dtype=np.int64) for part, rank in enumerate(ranks)]
            )
        return None

    def parts(self) -> int:
        return 1

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        if part != 0:
            raise IndexError(f"part {part} of a space in one part")
        return self.transitions()

    def transitions_from(self, ids: Any) -> Iterator[pa.RecordBatch] | None:
        return None

    def search(self) -> Search | None:
        return None


def position_texts(space: Space, positions: pa.Table) -> pa.Array:
    """The texts of a positions table of `space`: its `text`, or the texts of its keys
    where the space is keyed."""
    if space.keyed:
        return space.texts(positions[POSITION_KEY.name].to_numpy())
    return positions["text"].combine_chunks()


class Game:
    """One game with its rule parameters. Subclass it; `check` says what is missing.

    Required: name (`[a-z][a-z0-9_]*`), summary, params, columns (decoded position columns:
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
      note(rules, text) None: nothing to say; else one line a command shows where it reads
                        the position a user typed as another than the one written (dobutsu:
                        a text with the second player to move, `w`, turned to the mover)
    """

    name: str
    summary: str
    params: tuple[Param, ...]
    columns: Mapping[str, str]
    impartial: bool
    #: Optional: whether every position text has the same length, a board written cell by
    #: cell (tictactoe, connect). Such texts are stored as they are, which zstd compresses
    #: better and quicker than the prefix each shares with the one before (stored so for
    #: the other games' texts: chopsticks' take a third of the space that way).
    fixed_texts: bool = False

    def space(self, rules: Rules) -> Space:
        raise NotImplementedError

    def start(self, rules: Rules) -> str:
        """The start position's text."""
        raise NotImplementedError

    def canonical_position(self, rules: Rules, text: str) -> str:
        """The canonical text of a position a user typed; PositionError if malformed."""
        raise NotImplementedError

    def validate(self, values: dict) -> None:
        return None

    def starts(self, rules: Rules) -> list[str]:
        return [self.start(rules)]

    def size(self, rules: Rules) -> Size | None:
        return None

    def sides(self, rules: Rules, text: str) -> tuple[str, str] | None:
        return None

    def note(self, rules: Rules, text: str) -> str | None:
        return None

    def draw(self, rules: Rules, text: str) -> str:
        """A picture of the position `text` (canonical) as inline SVG for an HTML page:
        shapes and text alone, no script and no reference outside itself, as
        pipeline/products/pictures.py lists (helpers in pipeline/games/_svg.py)."""
        return text_picture(text)


#: What each member of a game and of its space gives back, as the docstrings above say:
#: (the test, the words for an error line). The pipeline reads an answer without asking
#: what it is, so a plug-in's `size()` giving a str failed deep in a stage with a traceback;
#: registry.py checks every answer of a plug-in's members here (`guarded`), and check-game
#: every game's. validate() is left out: what it returns is never read.
GAME_RETURNS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "start": (lambda value: isinstance(value, str), "a position's text (a str)"),
    "starts": (
        lambda value: isinstance(value, (list, tuple)) and bool(value) and all(isinstance(t, str) for t in value),
        "a list of position texts (str), at least one",
    ),
    "canonical_position": (lambda value: isinstance(value, str), "a position's text (a str)"),
    "size": (lambda value: value is None or _is_size(value), "a Size of whole numbers, or None"),
    "sides": (
        lambda value: (
            value is None
            or (isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(s, str) for s in value))
        ),
        "None or a pair of str (the mover's part, the other's)",
    ),
    "note": (lambda value: value is None or isinstance(value, str), "None or one line (a str)"),
    "draw": (lambda value: isinstance(value, str), "inline SVG (a str)"),
    "space": (lambda value: isinstance(value, Space), "a pipeline.games.Space"),
}
SPACE_RETURNS: dict[str, tuple[Callable[[Any], bool], str]] = {
    "positions": (lambda value: isinstance(value, pa.Table), "a pyarrow Table"),
    "positions_part": (lambda value: isinstance(value, pa.Table), "a pyarrow Table"),
    "part_rank": (lambda value: value is None or _is_int(value), "an int or None"),
    "parts": (lambda value: _is_int(value) and value >= 0, "a count of parts (an int)"),
    "rank": (lambda value: value is None or _integers(value), "None or one integer per position"),
    "texts": (lambda value: isinstance(value, pa.Array) and pa.types.is_string(value.type), "a pyarrow string Array"),
    # the batches these give are checked as they come (registry.py's `_checked_batches`)
    "transitions": (lambda value: isinstance(value, Iterable), "batches of TRANSITION_SCHEMA"),
    "transitions_part": (lambda value: isinstance(value, Iterable), "batches of TRANSITION_SCHEMA"),
    "search": (lambda value: value is None or isinstance(value, Search), "a pipeline.games.Search or None"),
    "transitions_from": (
        lambda value: value is None or isinstance(value, Iterable),
        "None or batches of TRANSITION_SCHEMA",
    ),
}


def is_transitions(batch: object) -> bool:
    """Whether `batch` is one of the batches of transitions the contract asks for."""
    return isinstance(batch, pa.RecordBatch) and batch.schema.equals(TRANSITION_SCHEMA)


def _is_int(value: object) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool)


def _integers(value: object) -> bool:
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - whatever NumPy cannot read is not integers
        return False
    return array.ndim == 1 and (array.size == 0 or np.issubdtype(array.dtype, np.integer))


#: Size's fields by what each holds: the estimate does arithmetic on every one.
_SIZE_FIELDS = {
    "positions": "count",
    "transitions": "count",
    "exact": "flag",
    "ranked": "flag",
    "by_rank": "flag",
    "window": "count or None",
    "likely_positions": "count or None",
    "likely_transitions": "count or None",
    "likely_window": "count or None",
    "disk_per_position": "number or None",
    "disk_per_transition": "number or None",
}


def _is_size(value: object) -> bool:
    return isinstance(value, Size) and not _wrong_fields(value)


def _wrong_fields(size: Size) -> list[str]:
    """The fields of `size` that do not hold what they should, as `name=value`."""
    wrong = []
    for name, kind in _SIZE_FIELDS.items():
        field = getattr(size, name)
        if kind == "flag":
            ok = isinstance(field, bool)
        elif field is None:
            ok = kind.endswith("or None")
        elif kind.startswith("count"):
            ok = _is_int(field) and bool(field >= 0)
        else:
            ok = isinstance(field, (int, float, np.number)) and not isinstance(field, bool) and bool(field >= 0)
        if not ok:
            wrong.append(f"{name}={field!r}"[: QUOTED + len(name)])
    return wrong


def return_problem(member: str, value: object, returns: Mapping[str, tuple[Callable[[Any], bool], str]]) -> str | None:
    """Why `value`, given back by the game's or space's `member`, breaks the contract, or None."""
    if member not in returns:
        return None
    allowed, says = returns[member]
    if allowed(value):
        return None
    return f"{member}() gave {_shown(value)}, where the game contract asks for {says}"


def _shown(value: object) -> str:
    """A value a member gave, for an error line: its repr cut short, and its type."""
    try:
        text = repr(value)
    except Exception:  # noqa: BLE001 - a plug-in's own __repr__ may fail too
        text = "?"
    text = text if len(text) <= QUOTED else f"{text[:QUOTED]}…"
    if isinstance(value, Size):  # which field is wrong, not the whole dataclass
        return f"a Size with {', '.join(_wrong_fields(value))}"
    return f"{text} ({type(value).__name__})"


def impartial_problem(game: Game, finished: set[str]) -> str | None:
    """Why the values of the finished positions of one ruleset contradict the game's
    `impartial`, or None. An impartial game ends the same way wherever it ends: all lost
    (normal play) or all won (misère); with ties, or wins beside losses, its Grundy values
    say nothing and would be published, 0 on won positions as on lost ones."""
    if not game.impartial or (len(finished) <= 1 and "tie" not in finished):
        return None
    return (
        f"impartial is True, but finished positions are {' and '.join(sorted(finished))}: "
        f"an impartial game's finished positions are all lost (normal play) or all won "
        f"(misère); a game that ends otherwise is not impartial (impartial = False)"
    )


#: The word that names a ruleset's start position wherever a position is taken.
START = "start"


def read_position(rules: Rules, text: str) -> str:
    """The canonical text of a position a user typed: `start` (any case) is the ruleset's
    start; anything else goes to the game's canonical_position (PositionError if malformed)."""
    if text.strip().lower() == START:
        return rules.game.start(rules)
    try:
        return rules.game.canonical_position(rules, text)
    except PositionError as error:  # the games quote the text whole: a line of 100 KB for a 100 KB text
        raise PositionError(quoting_less(str(error), text)) from None


#: Longest error line a game's refusal of a position may make once the text is cut short.
LONGEST_REFUSAL = 500


def quoting_less(message: str, text: str) -> str:
    """A game's error `message` about the position `text` with every quote of the text cut
    to its first QUOTED characters (`quoted`), and the line to LONGEST_REFUSAL."""
    if len(text) > QUOTED:
        for form in dict.fromkeys((text, text.strip(), " ".join(text.split()))):
            message = message.replace(repr(form), quoted(form)).replace(form, shortened(form))
    return message if len(message) <= LONGEST_REFUSAL else f"{message[:LONGEST_REFUSAL]}…"


def position_note(rules: Rules, text: str) -> str | None:
    """What the game says of a position a user typed (Game.note: dobutsu's `w` texts are
    read turned to the mover), or None; nothing for `start`. Called after read_position,
    so the text is known to be a position."""
    if text.strip().lower() == START:
        return None
    return rules.game.note(rules, text)


def legal_starts(rules: Rules) -> list[str]:
    """Every position a game may begin from; `reachable` means reachable from one of these."""
    return list(rules.game.starts(rules))


def first_line(error: BaseException) -> str:
    """An exception's message cut to one line of reasonable length, for an error line."""
    from pipeline.core.params import shortened

    text = str(error).strip()
    return shortened(text.splitlines()[0] if text else "")


def failed(error: BaseException) -> str:
    """What a game's code raised, for an error line: 'ZeroDivisionError: oops'."""
    if isinstance(error, SystemExit):
        return f"it called sys.exit({error.code!r})"
    return f"{type(error).__name__}: {first_line(error)}"
