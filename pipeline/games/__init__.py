"""The games: the contract every game satisfies (contract.py), the registry that finds
them by name (registry.py), a ruleset (rulesets.py), and one module per built-in game.

Plug-ins and the rest of the pipeline take the contract's names from here
(`pipeline.games.Game`, `pipeline.games.simple.SimpleGame`)."""

from pipeline.games.contract import (
    POSITION_COLUMNS,
    POSITION_KEY,
    RANKS,
    START,
    TRANSITION_SCHEMA,
    Game,
    Search,
    Size,
    Space,
    failed,
    first_line,
    impartial_problem,
    legal_starts,
    position_note,
    position_texts,
    read_position,
)
from pipeline.games.registry import (
    ENTRY_POINTS,
    all_games,
    broken_plugin,
    broken_plugins,
    check_contract,
    find_game,
    guarded,
    plugin_failure,
)

__all__ = [
    "ENTRY_POINTS",
    "POSITION_COLUMNS",
    "POSITION_KEY",
    "RANKS",
    "START",
    "TRANSITION_SCHEMA",
    "Game",
    "Search",
    "Size",
    "Space",
    "all_games",
    "broken_plugin",
    "broken_plugins",
    "check_contract",
    "failed",
    "find_game",
    "first_line",
    "guarded",
    "impartial_problem",
    "legal_starts",
    "plugin_failure",
    "position_note",
    "position_texts",
    "read_position",
]
