"""The games: the built-in ones and the plug-ins installed packages declare, each checked
against the contract (pipeline/games/contract.py) once and found by name."""

from __future__ import annotations

import contextlib
import copy
import functools
import re
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import metadata
from typing import Any

from pipeline.core.errors import ContractError, RulesetError
from pipeline.games.contract import (
    GAME_RETURNS,
    SPACE_RETURNS,
    TRANSITION_SCHEMA,
    Game,
    Space,
    failed,
    is_transitions,
    return_problem,
)

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
    problems = [f"game {label!r}: no {attribute}" for attribute in REQUIRED_ATTRIBUTES if not hasattr(game, attribute)]
    from pipeline.games.simple import REQUIRED_SIMPLE, SimpleGame

    required, base = (REQUIRED_SIMPLE, SimpleGame) if isinstance(game, SimpleGame) else (REQUIRED_METHODS, Game)
    problems += [
        f"game {label!r}: {method}() is required"
        for method in required
        if getattr(type(game), method) is getattr(base, method)
    ]
    if hasattr(game, "impartial") and not isinstance(game.impartial, bool):
        problems.append(f"game {label!r}: impartial must be True or False")
    name = getattr(game, "name", "")
    if not (isinstance(name, str) and re.fullmatch(r"[a-z][a-z0-9_]*", name)) or name in RESERVED_NAMES:
        problems.append(f"game {label!r}: its name must be [a-z][a-z0-9_]* and not {' or '.join(RESERVED_NAMES)}")
    return problems


#: Where plug-ins declare their games: `[project.entry-points."tablebase.games"]`,
#: `name = "module:GAME"`, the object a Game (or a pipeline.games.simple.SimpleGame).
ENTRY_POINTS = "tablebase.games"


@functools.lru_cache(maxsize=1)
def _registry() -> dict[str, Game]:
    """Every game, built in or plug-in, checked against the contract once. A plug-in that
    fails to load or breaks the contract is left out and noted in `_broken` (by its name
    and its game's): one bad plug-in must not take the other games down with it."""
    from pipeline.games import chopsticks, connect, dobutsu, hackenbush, nim, octal, sticks, tictactoe

    _broken.clear()
    _plugin_modules.clear()
    found: dict[str, Game] = {}
    for game in (
        chopsticks.GAME,
        sticks.GAME,
        nim.GAME,
        hackenbush.GAME,
        octal.GAME,
        tictactoe.GAME,
        connect.GAME,
        dobutsu.GAME,
    ):
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
        assert isinstance(name, str)  # check_contract found none missing
        if name in found or name in claimed:
            other = "the built-in game" if name not in claimed else f"the plug-in {claimed[name]!r}"
            _broken[entry.name] = f"{plugin} is called {name!r}, as {other} is: uninstall one of them"
            if name in claimed:  # two plug-ins of one name: neither is the one meant
                del found[name]
                _broken[name] = f"two game plug-ins are called {name!r} ({claimed[name]}, {entry.name}): uninstall one"
            continue
        try:
            checked = guarded(game, f"the game plug-in {entry.name!r}")
        except Exception as error:  # noqa: BLE001 - a game that cannot be copied (its own __copy__ failing)
            _broken[entry.name] = f"{plugin} cannot be loaded: {failed(error)}"
            continue
        claimed[name] = entry.name
        found[name] = checked
        modules = (entry.value.partition(":")[0].strip(), type(game).__module__)
        _plugin_modules[entry.name] = {module for module in modules if module.split(".")[0] != "pipeline"}
    return found


def guarded(game: Game, who: str) -> Game:
    """A copy of `game` whose members, and its spaces' members, raise ContractError naming
    `who` and the member where they give back what the contract does not allow
    (contract.py's GAME_RETURNS and SPACE_RETURNS). Every plug-in is guarded here, where it
    is loaded, the one place its code enters the pipeline, rather than at each of the
    stages and commands that ask it; check-game guards the game it checks.

    The members are wrapped on a copy, as attributes of the instance: the copy keeps the
    plug-in's class, so what the pipeline learns from the class (which members a game or
    space overrides, whether it is a SimpleGame) is the same."""
    if getattr(game, "_guarded_as", None) is not None:
        return game
    checked = copy.copy(game)
    vars(checked)["_guarded_as"] = who
    for member in GAME_RETURNS:
        # bound to the copy: a member asking another (SimpleGame.space, its size()) asks the checked one
        vars(checked)[member] = _checking(getattr(checked, member), member, GAME_RETURNS, who)
    space = vars(checked)["space"]
    vars(checked)["space"] = lambda rules: _guarded_space(space(rules), who)
    return checked


def _guarded_space(space: Space, who: str) -> Space:
    """`space` (a Space, as `guarded` has checked) with its members checked as it is asked."""
    if not isinstance(space.keyed, bool):
        raise ContractError(f"{who}: its space's keyed is {space.keyed!r}, where the game contract asks for a bool")
    for member in SPACE_RETURNS:
        vars(space)[member] = _checking(getattr(space, member), member, SPACE_RETURNS, who)
    return space


def _checking(
    method: Callable[..., Any], member: str, returns: Mapping[str, tuple[Callable[[Any], bool], str]], who: str
) -> Callable[..., Any]:
    """`method`, raising ContractError where what it gives back breaks the contract; the
    batches of an iterable checked one by one as they come."""

    def checked(*args: Any, **kwargs: Any) -> Any:
        value = method(*args, **kwargs)
        problem = return_problem(member, value, returns)
        if problem is not None:
            raise ContractError(f"{who}: {problem}")
        if member.startswith("transitions") and value is not None:
            return _checked_batches(value, member, who)
        return value

    return checked


def _checked_batches(batches: Iterable[Any], member: str, who: str) -> Iterator[Any]:
    for batch in batches:
        if not is_transitions(batch):
            shown = f"a batch of {batch.schema}" if hasattr(batch, "schema") else f"a {type(batch).__name__}"
            raise ContractError(
                f"{who}: {member}() gave {' '.join(shown.split())[:200]}, where the game contract asks for "
                f"batches of {', '.join(f'{f.name} {f.type}' for f in TRANSITION_SCHEMA)}"
            )
        yield batch


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
            # what a plug-in prints as it loads goes to stderr: on stdout it broke the
            # machine-readable output of the command (sql --format json)
            with contextlib.redirect_stdout(sys.stderr):
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
        from pipeline.core.params import quoted

        raise RulesetError(f"unknown game {quoted(name)} (known: {', '.join(sorted(games))})")
    return games[name]
