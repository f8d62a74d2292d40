"""Games written the simple way: one position at a time, in plain Python.

A game author who does not want NumPy batches subclasses `SimpleGame` and gives:

  name, summary, params          as for every game (pipeline.core.params for the parameters)
  initial(rules)                 the start position: any hashable value (a tuple, say)
  moves(rules, position)         the moves from a position: (label, child position) pairs
  outcome(rules, position)       for a position without moves: 'win', 'loss' or 'tie' for
                                 the player to move (pipeline.core.values.Value)
  text(rules, position)          the position's text, unique and canonical
  parse(rules, text)             the position a text names; ValueError if it names none

The pipeline enumerates the positions for them (`SimpleSpace`): breadth first from the
start, in batches, with progress. Fine up to a few million positions. Moves may cycle;
`rank(rules, position)` may be given (an integer every move lowers) to solve rank by rank.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterator
from typing import Any

import numpy as np
import pyarrow as pa

from pipeline.core.errors import DataError, PositionError
from pipeline.core.params import shortened
from pipeline.core.values import TERMINAL
from pipeline.games.contract import POSITION_COLUMNS, RANKS, TRANSITION_SCHEMA, Game, Rules, Space, failed
from pipeline.storage.progress import log

#: Positions between two progress lines, and per batch of transitions.
STEP = 100_000
#: Most positions the search finds of a game that does not count itself (no size()):
#: each takes about 300 bytes of Python objects (1.5 GB at this bound, found in about 16
#: seconds), and as no size() was given, no estimate has checked that they fit. A game
#: whose positions never end (a counter counting up) filled 11 GB in three minutes before
#: this bound; one that has more gives size(), and is searched up to its own bound.
UNCOUNTED = 5_000_000


class SimpleGame(Game):
    """Base class of a game written one position at a time (see the module docstring)."""

    columns: dict[str, str] = {}

    def moves(self, rules: Rules, position: Hashable) -> list[tuple[str, Hashable]]:
        raise NotImplementedError

    def outcome(self, rules: Rules, position: Hashable) -> str:
        raise NotImplementedError

    def text(self, rules: Rules, position: Hashable) -> str:
        raise NotImplementedError

    def parse(self, rules: Rules, text: str) -> Hashable:
        raise NotImplementedError

    def initial(self, rules: Rules) -> Hashable:
        """The start position (as the game's value); `start` gives its text."""
        raise NotImplementedError

    def rank(self, rules: Rules, position: Hashable) -> int | None:
        return None

    # -- the bulk contract, for the pipeline ------------------------------------------

    def start(self, rules: Rules) -> str:
        return self.text(rules, self.initial(rules))

    def canonical_position(self, rules: Rules, text: str) -> str:
        try:
            position = self.parse(rules, text)
        except ValueError as error:
            raise PositionError(f"malformed {self.name} position {text!r}: {error}") from None
        return self.text(rules, position)

    def space(self, rules: Rules) -> SimpleSpace:
        return SimpleSpace(self, rules)


REQUIRED_SIMPLE = ("initial", "moves", "outcome", "text", "parse")


class SimpleSpace(Space):
    """A SimpleGame's positions, found breadth first; ids in the order found."""

    def __init__(self, game: SimpleGame, rules: Rules):
        self.game, self.rules = game, rules
        self._found: tuple | None = None
        #: Most positions the search may find before it refuses the game (check-game lowers it).
        self.most = UNCOUNTED

    def _bound(self) -> tuple[int, str]:
        """The most positions the search may find, and what bounds them: the game's size()
        where it gives one (finding more breaks the contract), else `most`."""
        size = self.game.size(self.rules)
        if size is not None:
            return size.positions, f"the {size.positions:,} its size() bounds them by"
        return self.most, f"{self.most:,}, and gives no size() to count them"

    def _explore(self) -> tuple:
        if self._found is not None:
            return self._found
        game, rules = self.game, self.rules
        most, why = self._bound()
        ids: dict[Any, int] = {}
        order: list[Any] = []
        edges: list[list[tuple[int, str]]] = []
        start = game.initial(rules)
        ids[start] = 0
        order.append(start)
        at = 0
        while at < len(order):
            position = order[at]
            out: dict[int, str] = {}
            for label, child in self._moves(position):
                if child not in ids:
                    if len(order) == most:  # a game whose positions never end, or a size() that is wrong
                        raise DataError(
                            f"game {game.name}: {shortened(rules.id)} has more positions than {why}: does it "
                            f"end? (moves from {shortened(repr(position))} still lead to new positions)"
                        )
                    ids[child] = len(order)
                    order.append(child)
                out.setdefault(ids[child], str(label))  # the first move leading there names it
            edges.append(sorted(out.items()))
            at += 1
            if at % STEP == 0:
                log.debug("enumerate %s: %s positions explored, %s found", rules.id, f"{at:,}", f"{len(order):,}")
        self._found = (order, edges)
        return self._found

    def _ask(self, member: str, position: Any, call: Callable[[], Any]) -> Any:
        """call(), the game's `member` on `position`; DataError naming both if it fails.
        SystemExit too: a plug-in's sys.exit() ends its build with a line, not the command."""
        try:
            return call()
        except MemoryError:
            raise
        except (Exception, SystemExit) as error:  # noqa: BLE001 - the plug-in's bug, named as such
            raise DataError(f"game {self.game.name}: {member}() failed on {position!r}: {failed(error)}") from None

    def _moves(self, position: Any) -> list:
        def moves() -> list:
            found = list(self.game.moves(self.rules, position))
            for _label, child in found:
                hash(child)
            return found

        return self._ask("moves", position, moves)

    def positions(self) -> pa.Table:
        order, edges = self._explore()
        game, rules = self.game, self.rules
        texts: list[str] = []
        terminal: list[str | None] = []
        for position, out in zip(order, edges):
            texts.append(self._ask("text", position, lambda: game.text(rules, position)))  # noqa: B023 - _ask calls it at once
            if out:
                terminal.append(None)
                continue
            value = self._ask("outcome", position, lambda: game.outcome(rules, position))  # noqa: B023 - _ask calls it at once
            if value not in TERMINAL:
                raise DataError(
                    f"game {game.name}: the finished position {texts[-1]!r} has outcome {value!r}, "
                    f"not {' or '.join(repr(v.value) for v in TERMINAL)}"
                )
            terminal.append(str(value))
        try:
            text_column = pa.array(texts, pa.string())
        except (pa.ArrowException, UnicodeError):
            raise DataError(_bad_text(game.name, order, texts)) from None
        if len(set(texts)) != len(texts):
            raise DataError(f"game {game.name}: two positions have the same text: text() must be unique")
        return pa.Table.from_arrays(
            [pa.array(np.arange(len(order), dtype=np.int64)), text_column, pa.array(terminal, pa.string())],
            schema=POSITION_COLUMNS,
        )

    def transitions(self) -> Iterator[pa.RecordBatch]:
        _, edges = self._explore()
        src, dst, labels = [], [], []
        for source, out in enumerate(edges):
            for target, label in out:
                src.append(source)
                dst.append(target)
                labels.append(label)
            if len(src) >= STEP or (source == len(edges) - 1 and src):
                yield _batch(src, dst, labels)
                src, dst, labels = [], [], []

    def rank(self) -> Any:
        order, _ = self._explore()
        ranks = [self._ask("rank", position, lambda: self.game.rank(self.rules, position)) for position in order]  # noqa: B023 - _ask calls it at once
        if any(r is None for r in ranks):
            return None
        for position, rank in zip(order, ranks):
            if not isinstance(rank, (int, np.integer)) or isinstance(rank, bool) or not RANKS[0] <= rank <= RANKS[1]:
                raise DataError(
                    f"game {self.game.name}: rank() of {position!r} is {rank!r}, not an integer "
                    f"from {RANKS[0]:,} to {RANKS[1]:,}"
                )
        return np.array(ranks, dtype=np.int64)


def _bad_text(name: str, order: list, texts: list) -> str:
    """Why the texts cannot go into the positions' column: the first that is not a str, or
    not Unicode that UTF-8 can hold (a lone surrogate, '\\ud800')."""
    for position, text in zip(order, texts):
        if not isinstance(text, str):
            return f"game {name}: text() of {position!r} gives {type(text).__name__}, not str"
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as error:
            return (
                f"game {name}: text() of {position!r} gives {text!r}, which UTF-8 cannot hold "
                f"({error.reason}): a position's text is written to Parquet as UTF-8"
            )
    return f"game {name}: text() gives what the positions' column cannot hold"


def _batch(src: list[int], dst: list[int], labels: list[str]) -> pa.RecordBatch:
    names = pa.array(labels, pa.string()).dictionary_encode()
    return pa.RecordBatch.from_arrays(
        [
            pa.array(src, pa.int64()),
            pa.array(dst, pa.int64()),
            pa.DictionaryArray.from_arrays(names.indices.cast(pa.int32()), names.dictionary),
        ],
        schema=TRANSITION_SCHEMA,
    )
