"""Rulesets: a game plus its parameter values, named by a canonical id `game:key=value,…`."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.errors import RulesetError
from pipeline.games import Game, find_game


@dataclass(frozen=True)
class Ruleset:
    """A validated game + parameter values. Compare and hash by canonical id."""

    game_name: str
    values: tuple[tuple[str, Any], ...]  # every parameter, in the game's declared order

    @property
    def game(self) -> Game:
        return find_game(self.game_name)

    def __getitem__(self, name: str) -> Any:
        for key, value in self.values:
            if key == name:
                return value
        raise KeyError(name)

    @property
    def params(self) -> dict[str, str]:
        """Every parameter's value as text, defaults included."""
        return {p.name: p.format(self[p.name]) for p in self.game.params}

    @property
    def id(self) -> str:
        """The canonical id: keys in alphabetical order, defaults omitted."""
        changed = sorted(
            (p.name, p.format(self[p.name]))
            for p in self.game.params
            if p.format(self[p.name]) != p.default
        )
        if not changed:
            return self.game_name
        return self.game_name + ":" + ",".join(f"{k}={v}" for k, v in changed)

    @property
    def dirname(self) -> str:
        """The id made safe as one path component ('/' appears in hackenbush trees)."""
        return self.id.replace("%", "%25").replace("/", "%2F")

    def __str__(self) -> str:
        return self.id

    @staticmethod
    def parse(text: str) -> "Ruleset":
        """Parse `game` or `game:key=value,…`; RulesetError on anything wrong."""
        text = text.strip()
        name, _, rest = text.partition(":")
        game = find_game(name)
        given: dict[str, str] = {}
        if rest:
            for pair in rest.split(","):
                key, eq, value = pair.partition("=")
                if not eq or not key:
                    raise RulesetError(f"bad parameter {pair!r} in {text!r}: expected key=value")
                if key in given:
                    raise RulesetError(f"parameter {key!r} given twice in {text!r}")
                given[key] = value
        known = {p.name: p for p in game.params}
        for key in given:
            if key not in known:
                raise RulesetError(
                    f"unknown parameter {key!r} for game {name!r} (known: {', '.join(known)})"
                )
        values = {p.name: p.parse(given.get(p.name, p.default)) for p in game.params}
        validate = getattr(game, "validate", None)
        if validate is not None:
            validate(values)
        return Ruleset(name, tuple(values.items()))


def load_ruleset_file(path: Path) -> list[tuple[Ruleset, str]]:
    """The named rulesets of a ruleset file, each with its comment, in file order."""
    try:
        data = tomllib.loads(path.read_text())
    except FileNotFoundError:
        raise RulesetError(f"ruleset file {path} does not exist") from None
    except tomllib.TOMLDecodeError as error:
        raise RulesetError(f"ruleset file {path} is not valid TOML: {error}") from None
    entries = data.get("ruleset", [])
    result = []
    seen = set()
    for entry in entries:
        if "id" not in entry:
            raise RulesetError(f"ruleset file {path}: an entry has no id")
        rules = Ruleset.parse(entry["id"])
        if rules.id in seen:
            raise RulesetError(f"ruleset file {path}: {rules.id} is listed twice")
        seen.add(rules.id)
        result.append((rules, entry.get("comment", "")))
    return result
