"""The values a position can have, defined once for every stage, the SQL and the user.

A value is always from the side of the player to move:

  win   the mover can force a win;
  tie   the mover cannot force a win but can force the game to end with nobody winning
        (a full tic-tac-toe board);
  draw  neither player can force the game to end: best play goes on for ever;
  loss  the other player can force a win.

The mover prefers them in that order: win > tie > draw > loss. A tie is preferred to a draw
because it ends the game (GamesmanOne orders its values Lose < Draw < Tie < Win the same
way). Remoteness counts plies to the end under best play: the winner hurries and the loser
holds out; a player who can only tie takes the shortest way to the tied end (as
GamesmanOne does); a draw has none.

The solvers' SQL works on small integer codes and packed scores, never on the words: both
come from here (`sql_variables`) and reach the SQL as variables.
"""

from __future__ import annotations

import enum
import functools
from typing import Any


class Value(str, enum.Enum):
    """A position's value for the player to move; compares equal to its word ('win')."""

    WIN = "win"
    LOSS = "loss"
    TIE = "tie"
    DRAW = "draw"

    def __str__(self) -> str:
        return self.value

    @property
    def code(self) -> int:
        """The solvers' integer for the value (0 is "not decided yet")."""
        return list(Value).index(self) + 1

    @property
    def opposite(self) -> Value:
        """The value for the other player: what a move to a position of this value means
        for the player making it."""
        return {Value.WIN: Value.LOSS, Value.LOSS: Value.WIN}.get(self, self)

    @property
    def ends(self) -> bool:
        """Whether best play ends the game (the value has a remoteness)."""
        return self is not Value.DRAW


#: The words, in code order: a code c is WORDS[c - 1] (SQL: getvariable('value_names')[c]).
WORDS = [v.value for v in Value]
#: Values a finished game can have (the `terminal` column of positions.parquet).
TERMINAL = (Value.WIN, Value.LOSS, Value.TIE)
#: The mover's order of preference, best first.
PREFERENCE = (Value.WIN, Value.TIE, Value.DRAW, Value.LOSS)

#: Solving rank by rank packs a position's value and remoteness into one integer score so
#: that the best child is the one with the highest score. There are three bands of BAND
#: scores, one per value a child can have in a game without cycles, from the parent's
#: worst to best: a child won in r scores r; a child tied in r scores BAND + (BAND - 1 - r)
#: (a quick tie is better); a child lost in r scores 2 BAND + (BAND - 1 - r) (a quick win is
#: better). A remoteness must stay below BAND - 1.
BAND = 2**20

#: Solving level by level sums, per parent, the weights of its children decided at the level:
#: a lost child weighs LOST_WEIGHT, a won child 1, so one sum says both whether a lost child
#: was met (the sum reaches LOST_WEIGHT: more than any count of won children) and how many
#: won children were. A position's moves must stay below it.
LOST_WEIGHT = 2**30


#: The value of each band of scores, lowest first.
BANDS = (Value.WIN, Value.TIE, Value.LOSS)


def score(value: Value, remoteness: int) -> int:
    """A position's packed score, as the engines' rank SQL computes it (for tests and docs)."""
    band = BANDS.index(value)
    return remoteness if band == 0 else band * BAND + BAND - 1 - remoteness


def decode(packed: int) -> tuple[Value, int]:
    """The value and remoteness a packed score holds, as the engines' rank_solution.sql
    decodes it (for tests and docs): `score`'s inverse."""
    band = min(packed // BAND, len(BANDS) - 1)
    return BANDS[band], packed if band == 0 else (band + 1) * BAND - 1 - packed


def sql_variables() -> dict[str, object]:
    """The variables the solvers' and verifier's SQL reads: `value_names` (the words in code
    order), one code per value under its word (`getvariable('tie')` is the tie's code),
    `band` (see BAND) and `lost_weight` (see LOST_WEIGHT)."""
    return {"value_names": WORDS, **{v.value: v.code for v in Value}, "band": BAND, "lost_weight": LOST_WEIGHT}


@functools.cache  # a few values and remotenesses, asked for every move a page or answer lists
def best_move_first(value: str, remoteness: int | None) -> tuple[int, int]:
    """Sort key of a move by the value and remoteness of the position it leads to (the new
    mover's): best first for the player making it; a win or tie fastest, a loss slowest."""
    outcome = Value(value).opposite
    rank = PREFERENCE.index(outcome)
    return (rank, -(remoteness or 0) if outcome == Value.LOSS else (remoteness or 0))


#: Fill colour of each value, shared by the DOT files, the pages and their script.
COLOURS = {"win": "#a5d6a7", "loss": "#ef9a9a", "tie": "#fff59d", "draw": "#cfd8dc"}
#: A deeper shade of each, for a border around a position of the value.
EDGE_COLOURS = {"win": "#66bb6a", "loss": "#e57373", "tie": "#fdd835", "draw": "#90a4ae"}
#: The colours' names, for a legend in words.
COLOUR_NAMES = {"win": "green", "loss": "red", "tie": "yellow", "draw": "grey"}

#: How a value reads for a person, the one phrasing of every command, page and card.
#: `said`: what a position's value means for the players (`{mover}` to move, `{other}` not);
#: `short`: the value alone from the side of the one it is for ("wins in 8 plies"); each
#: `_over` where the game has ended (remoteness 0).
#: `{plies}` is the remoteness with its unit (`ply`: singular and plural); `{wins}` and
#: `{has}` agree with the winner ("you win"). The pages' script fills the same table.
PHRASES: dict[str, Any] = {
    "said": {
        "win": "{mover} {wins} in {plies}",
        "loss": "{other} {wins} in {plies}",
        "tie": "a tie in {plies}",
        "draw": "a draw (neither player can force the game to end)",
    },
    "said_over": {
        "win": "{mover} {has} won (game over)",
        "loss": "{other} {has} won (game over)",
        "tie": "a tie (game over)",
    },
    "short": {"win": "wins in {plies}", "loss": "loses in {plies}", "tie": "a tie in {plies}", "draw": "a draw"},
    "short_over": {"win": "has won", "loss": "has lost", "tie": "a tie (game over)"},
    "ply": ["ply", "plies"],
}


def plies(n: int) -> str:
    """A count of plies with its unit: "1 ply", "8 plies", "1,024 plies"."""
    return f"{n:,} {PHRASES['ply'][n != 1]}"


def _phrase(kind: str, value: str, remoteness: int | None, mover: str = "", other: str = "") -> str:
    value = Value(value)
    over = value.ends and remoteness == 0
    template = PHRASES[f"{kind}_over" if over else kind][value.value]
    winner = mover if value == Value.WIN else other
    you = winner == "you"
    return template.format(
        mover=mover,
        other=other,
        plies=plies(remoteness or 0),
        wins="win" if you else "wins",
        has="have" if you else "has",
    )


def in_plies(value: str, remoteness: int | None) -> str:
    """A value with its remoteness, from the side of the one it is for: "wins in 8 plies",
    "loses in 3 plies", "a tie in 5 plies", "a draw"; "has won" where the game has ended."""
    return _phrase("short", value, remoteness)


def in_words(
    value: str, remoteness: int | None, mover: str = "the first player", other: str = "the second player"
) -> str:
    """What a value of the player to move (`mover`) means for the players, in words: "the
    second player wins in 26 plies" for a start lost in 26; "the first player has won (game
    over)" at remoteness 0."""
    return _phrase("said", value, remoteness, mover, other)


def for_pages() -> dict[str, object]:
    """What the pages' script knows of the values, written into each page as JSON: the
    words in code order (a code c is words[c - 1]), each value's opposite and rank of
    preference by code, the phrasing table and the colours."""
    return {
        "words": WORDS,
        "opposite": [list(Value).index(v.opposite) for v in Value],
        "preference": [PREFERENCE.index(v) for v in Value],
        "phrases": PHRASES,
        "colours": COLOURS,
        "edge_colours": EDGE_COLOURS,
    }
