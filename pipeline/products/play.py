"""Playing a ruleset against the tablebase in the terminal.

    >>> from pipeline.products.play import play
    >>> play("chopsticks", "data", human_first=True)   # reads moves from stdin

The computer plays perfectly, taking the first of `pipeline.products.probe`'s best-first moves:
from a won position it wins fastest, from a lost one it holds out longest, and otherwise
it ties (fastest) or draws. Every ply is one `probe` look-up; nothing is loaded in bulk.

The user enters a move's number, its label as stored in transitions (`3 hits 2`, `cut 4`;
any case and spacing) or the position it leads to; `hint` shows the best move and what it
leads to; `quit` or end of input abandons the game. A drawn game would loop forever, so
play stops after `max_plies` plies. Where the game's positions have sides (`Game.sides`:
chopsticks' hands, written from the side to move so they swap places every ply), each
ply says which is whose. The game ends with a summary: who won, in how many plies, and
every move played.
"""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TextIO

from pipeline.core.errors import PositionError, TablebaseError
from pipeline.core.params import is_number
from pipeline.core.values import Value, in_plies, in_words
from pipeline.core.values import plies as _unit
from pipeline.games import position_note, read_position
from pipeline.games.rulesets import Ruleset
from pipeline.products.probe import Move, Probe, probe

#: Plies after which a game stops; longer than any forced win of the rulesets we build.
MAX_PLIES = 200

SIDES = ("first", "second")


class PlayError(TablebaseError):
    """A game that cannot be set up: a bad side or ply limit."""


@dataclass(frozen=True)
class Played:
    """One ply: who made it ('you' or 'computer'), the move's label, and the positions
    before and after (each from its own side to move)."""

    who: str
    move: str
    before: str
    after: str


@dataclass(frozen=True)
class Outcome:
    """How a game ended: `winner` is 'you', 'computer' or None (a tie, abandoned or stopped)."""

    winner: str | None
    plies: int
    ended: str  # 'over' (no move left), 'quit' (quit or end of input) or 'limit' (max_plies reached)
    position: str  # the last position reached
    moves: tuple[Played, ...] = ()


def parse_side(side: str) -> bool:
    """Whether the user moves first, from --as first|second; PlayError otherwise."""
    if side not in SIDES:
        raise PlayError(f"--as must be first or second, not {side!r}")
    return side == "first"


def game_over(result: Probe) -> bool:
    """Whether the game has ended at this position (no move left)."""
    return not result.moves or result.remoteness == 0


def describe(value: str, remoteness: int | None) -> str:
    """'wins in 3 plies', 'has lost' or 'a draw' (pipeline/core/values.py's `in_plies`)."""
    return in_plies(value, remoteness)


def whose(rules: Ruleset, position: str, human_to_move: bool) -> str | None:
    """ "you 1-2, the computer 1-1" in the order the position writes them, or None where
    the game's positions have no sides."""
    sides = rules.game.sides(rules, position)
    if sides is None:
        return None
    names = ("you", "the computer") if human_to_move else ("the computer", "you")
    return ", ".join(f"{name} {side}" for name, side in zip(names, sides))


def hint(rules: Ruleset, result: Probe) -> str:
    """The best move from `result`'s position and what it means for the one making it."""
    move = result.moves[0]
    remoteness = None if move.remoteness is None else move.remoteness + 1
    return f"hint: {move.move} -> {move.position}: {in_words(move.outcome, remoteness, 'you', 'the computer')}"


def listing_order(moves: list[Move]) -> list[Move]:
    """The moves in label order, numbers compared as numbers, so the list gives no hint."""

    def key(move: Move) -> list:
        return [(0, int(part), "") if part.isdigit() else (1, 0, part) for part in re.split(r"(\d+)", move.move)]

    return sorted(moves, key=key)


def match_entry(rules: Ruleset, entry: str, moves: list[Move]) -> Move | None:
    """The move a user's entry names: its number in `moves` (from 1), its label, or the
    position it leads to; None if it names none of them."""
    entry = " ".join(entry.split())
    if is_number(entry):
        number = int(entry)
        return moves[number - 1] if 1 <= number <= len(moves) else None
    for move in moves:  # `2 HITS 2` and ` 2  hits 2` are `2 hits 2`
        if " ".join(move.move.lower().split()) == entry.lower():
            return move
    try:
        position = rules.game.canonical_position(rules, entry)
    except PositionError:
        return None
    return next((move for move in moves if move.position == position), None)


def play(
    ruleset: str | Ruleset,
    data: Path | str = "data",
    *,
    human_first: bool = True,
    start: str = "start",
    show_values: bool = True,
    stdin: TextIO | None = None,
    stdout: TextIO | None = None,
    max_plies: int = MAX_PLIES,
) -> Outcome:
    """Play `ruleset` from `start` (`start` or any position text; the user moves there
    first with `human_first`), the user against the tablebase, reading the user's moves a
    line at a time from `stdin` and writing the game to `stdout`. Without `show_values`
    no value is shown until the game ends, except by `hint`."""
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    if max_plies < 1:
        raise PlayError(f"the ply limit must be at least 1, not {max_plies}")
    rules = ruleset if isinstance(ruleset, Ruleset) else Ruleset.parse(ruleset)

    def say(line: str = "") -> None:
        print(line, file=stdout, flush=True)

    position = read_position(rules, start)
    result = probe(rules, position, data)  # fails before any output if the data or position is missing
    note = position_note(rules, start)
    if note:
        say(f"note: {note}")
    first = "first" if human_first else "second"
    where = "" if position == rules.game.start(rules) else f" from {position}"
    say(f"{rules.id}: you play {first}{where}; the computer plays perfectly.")
    say(
        "Positions" + (" and values" if show_values else "") + " are from the side to move. Enter a move's "
        "number, its name"
    )
    say("or the position it leads to; 'hint' shows the best move, 'quit' ends the game.")
    human_to_move = human_first
    played: list[Played] = []

    def finish(winner: str | None, ended: str, headline: str) -> Outcome:
        say(headline)
        if played:
            width = max(len(p.move) for p in played)
            say(f"the moves, from {played[0].before}:")
            for number, p in enumerate(played, 1):
                say(
                    f"  {number:>3}. {'you' if p.who == 'you' else 'the computer':<12}  {p.move:<{width}}  -> {p.after}"
                )
        return Outcome(winner, len(played), ended, position, tuple(played))

    while True:
        who = "you" if human_to_move else "computer"
        say()
        line = f"ply {len(played)}  {position}  {who} to move"
        if show_values:
            words = in_words(
                result.value,
                result.remoteness,
                "you" if human_to_move else "the computer",
                "the computer" if human_to_move else "you",
            )
            line += f": {words}"
        say(line)
        sides = whose(rules, position, human_to_move)
        if sides:
            say(f"  {sides}")
        plies = _unit(len(played))
        if game_over(result):
            if result.value == Value.TIE:
                return finish(None, "over", f"game over after {plies}: a tie, nobody wins.")
            other = "computer" if human_to_move else "you"
            winner = who if result.value == Value.WIN else other
            return finish(
                winner, "over", f"game over after {plies}: {'you win' if winner == 'you' else 'the computer wins'}."
            )
        if len(played) >= max_plies:
            side, other = ("you", "the computer") if human_to_move else ("the computer", "you")
            return finish(
                None,
                "limit",
                f"stopped after {plies}, the limit, {side} to move: "
                f"{in_words(result.value, result.remoteness, side, other)}.",
            )
        if human_to_move:
            move = _ask(rules, result, stdin, stdout)
            if move is None:
                return finish(None, "quit", f"game abandoned after {plies}.")
            say(f"you play {move.move} -> {move.position}")
        else:
            move = result.moves[0]
            say(f"computer plays {move.move} -> {move.position}")
        played.append(Played(who, move.move, position, move.position))
        position = move.position
        result = probe(rules, position, data)
        human_to_move = not human_to_move


def _ask(rules: Ruleset, result: Probe, stdin: TextIO, stdout: TextIO) -> Move | None:
    """List the moves and prompt until the user names one; None on 'quit' or end of input.
    'hint' shows the best move and prompts again."""
    moves = listing_order(result.moves)
    width = max(len(move.move) for move in moves)
    for number, move in enumerate(moves, 1):
        print(f"  {number:>2}. {move.move:<{width}}  -> {move.position}", file=stdout)
    while True:
        print("your move> ", end="", file=stdout, flush=True)
        line = stdin.readline()  # Ctrl-C here ends the command as anywhere: one line, status 130
        if not line:
            print(file=stdout)
            return None
        entry = line.strip()
        if not stdin.isatty():
            print(entry, file=stdout)  # echo piped input so the transcript reads like a session
        command = entry.lower()
        if command in ("quit", "exit"):
            return None
        if command == "hint":
            print(hint(rules, result), file=stdout, flush=True)
            continue
        chosen = match_entry(rules, entry, moves)
        if chosen is not None:
            return chosen
        print(
            f"not a move here: {entry!r} (enter 1 to {len(moves)}, a move's name, the position "
            "it leads to, hint or quit)",
            file=stdout,
            flush=True,
        )
