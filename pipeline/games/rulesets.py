"""Rulesets: a game plus its parameter values, named by a canonical id `game:key=value,…`."""

from __future__ import annotations

import difflib
import functools
import hashlib
import os
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pipeline.core.errors import RulesetError
from pipeline.core.params import quoted, shortened
from pipeline.games.contract import Game
from pipeline.games.registry import all_games, broken_plugin, find_game

SLUG_KEY = re.compile(r"[a-z][a-z0-9_]*")
SLUG_VALUE = re.compile(r"[a-z0-9-]+")
#: Longest slug: keeps `data/<game>/<slug>/verification.parquet` well inside Windows' 260.
MAX_SLUG = 96
#: Longest ruleset id read: past the longest any game here can build (a Hackenbush path of
#: 63,000 edges, the most moves allow, written with short node numbers), so that a
#: runaway text is refused before any parser looks at it.
MAX_ID = 1_000_000
#: The keys of a [[ruleset]] table.
ENTRY_KEYS = ("id", "comment")


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
    def changed(self) -> list[tuple[str, str]]:
        """The parameters not at their default, as (key, text), keys in alphabetical order."""
        return sorted((p.name, p.format(self[p.name])) for p in self.game.params if p.format(self[p.name]) != p.default)

    @property
    def id(self) -> str:
        """The canonical id: keys in alphabetical order, defaults omitted."""
        if not self.changed:
            return self.game_name
        return self.game_name + ":" + ",".join(f"{k}={v}" for k, v in self.changed)

    @property
    def slug(self) -> str:
        """The ruleset's folder name: only [a-z0-9._-], so every file system and reader
        (Hadoop paths, Windows, hive-partition sniffing) takes it as it is.

        `default` for the game's defaults; else `key-value` pairs joined by `.`
        (`fingers-10.split-any`), which maps back to the id. Where a value has other
        characters (hackenbush trees) or the name would be long, the readable part is
        followed by `._` and a hash of the id, so slugs stay distinct.
        """
        changed = self.changed
        if not changed:
            return "default"
        text = ".".join(f"{key}-{value}" for key, value in changed)
        exact = all(SLUG_KEY.fullmatch(key) and SLUG_VALUE.fullmatch(value) for key, value in changed)
        if exact and len(text) <= MAX_SLUG:
            return text
        readable = re.sub(r"[^a-z0-9.-]+", "_", text.lower())[: MAX_SLUG - 12].strip("._-")
        return f"{readable}._{hashlib.sha256(self.id.encode()).hexdigest()[:10]}"

    @property
    def folder(self) -> str:
        """The ruleset's folder relative to the data directory: `<game>/<slug>`."""
        return f"{self.game_name}/{self.slug}"

    def __str__(self) -> str:
        return self.id

    @staticmethod
    def parse(text: str) -> Ruleset:
        """Parse `game` or `game:key=value,…`; RulesetError on anything wrong."""
        if not isinstance(text, str):
            raise RulesetError(f"a ruleset id is text, not {type(text).__name__} ({quoted(repr(text))})")
        if len(text) > MAX_ID:
            raise RulesetError(
                f"the ruleset id {quoted(text)} is longer than any ruleset this pipeline builds "
                f"(at most {MAX_ID:,} characters)"
            )
        text = text.strip()
        name, _, rest = text.partition(":")
        game = find_game(name)
        given: dict[str, str] = {}
        if rest:
            for pair in rest.split(","):
                key, eq, value = pair.partition("=")
                if not eq or not key:
                    raise RulesetError(f"bad parameter {quoted(pair)} in {quoted(text)}: expected key=value")
                if key in given:
                    raise RulesetError(f"parameter {quoted(key)} given twice in {quoted(text)}")
                given[key] = value
        known = {p.name: p for p in game.params}
        for key in given:
            if key not in known:
                raise RulesetError(f"unknown parameter {quoted(key)} for game {name!r} (known: {', '.join(known)})")
        values = {p.name: p.parse(given.get(p.name, p.default)) for p in game.params}
        game.validate(values)
        return Ruleset(name, tuple(values.items()))


#: The ruleset file installed with the package (rulesets.toml at the repository's root links to it).
PACKAGED_RULESETS = Path(__file__).with_name("rulesets.toml")


@functools.lru_cache(maxsize=2)
def space_of(ruleset_id: str) -> Any:
    """The space of a ruleset given by its id, made once a process: where only the id
    travels (Spark's executors, a pickled text maker) and the space is made there."""
    rules = Ruleset.parse(ruleset_id)
    return rules.game.space(rules)


def default_ruleset_file() -> Path:
    """The ruleset file to read where none is named: rulesets.toml of the current folder
    where there is anything by that name (even a broken link: the user's file, to be read
    or refused in its own words), else the packaged one."""
    local = Path("rulesets.toml")
    return local if os.path.lexists(local) else PACKAGED_RULESETS


def load_ruleset_file(path: Path, installed_only: bool = False) -> list[tuple[Ruleset, str]]:
    """The named rulesets of a ruleset file, each with its comment, in file order;
    `installed_only`: without those of games not installed here (`not_installed`)."""
    result = []
    seen = set()
    for entry in _entries(path, missing_ok=False):
        if "id" not in entry:
            raise RulesetError(f'ruleset file {path}: a [[ruleset]] table has no id (id = "game:key=value,…")')
        if installed_only and not _installed(entry["id"]):
            continue
        rules = Ruleset.parse(entry["id"])
        if rules.id in seen:
            raise RulesetError(f"ruleset file {path}: {rules.id} is listed twice")
        seen.add(rules.id)
        result.append((rules, entry.get("comment", "")))
    return result


def not_installed(path: Path) -> list[str]:
    """The ids of a ruleset file whose game is not installed here (the packaged file names
    the example plug-in's, examples/takeaway, which a user's installation lacks)."""
    return [entry["id"] for entry in _entries(path, missing_ok=False) if "id" in entry and not _installed(entry["id"])]


def _installed(ruleset_id: str) -> bool:
    """Whether the game of `ruleset_id` is installed, working or not: a broken plug-in's
    rulesets are kept, for reading them to say what is wrong with it."""
    name = ruleset_id.strip().partition(":")[0]
    return name in all_games() or broken_plugin(name) is not None


def read_comments(path: Path) -> dict[str, str]:
    """The comment of each ruleset of a ruleset file by canonical id, for the pages; {}
    where the file does not exist. An id whose game is not installed is kept as written."""
    comments = {}
    for entry in _entries(path, missing_ok=True):
        if "id" in entry and entry.get("comment"):
            try:
                ruleset = Ruleset.parse(entry["id"]).id
            except RulesetError:
                ruleset = entry["id"]
            comments[ruleset] = entry["comment"]
    return comments


def _entries(path: Path, missing_ok: bool) -> list[dict]:
    """The [[ruleset]] tables of a ruleset file, each `id` and `comment` a string where
    given; RulesetError in one line for a file of another shape (TOML takes `id = 5` or a
    single [ruleset] table as readily as what is meant)."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        if missing_ok:
            return []
        raise RulesetError(f"ruleset file {path} does not exist") from None
    except UnicodeDecodeError as error:
        raise RulesetError(
            f"ruleset file {path} is not UTF-8 text (byte {error.start}: "
            f"{error.object[error.start : error.start + 1]!r})"
        ) from None
    except tomllib.TOMLDecodeError as error:
        raise RulesetError(f"ruleset file {path} is not valid TOML: {error}") from None
    for key, value in data.items():
        if key != "ruleset":  # a typo ([[rulesets]]) read as nothing to do said nothing and exited 0
            raise RulesetError(
                f"ruleset file {path}: unknown {_written(key, value)}{_meant(key, ('ruleset',), '[[{}]]')}: "
                f'write each ruleset as a [[ruleset]] table, with id = "…" and comment = "…"'
            )
    entries = data.get("ruleset", [])
    if not isinstance(entries, list):
        raise RulesetError(
            f"ruleset file {path}: `ruleset` is {_kind(entries)}, not a list of tables: "
            f"write each ruleset as a [[ruleset]] table"
        )
    for number, entry in enumerate(entries, start=1):
        if not isinstance(entry, dict):
            raise RulesetError(
                f"ruleset file {path}: ruleset {number} is {_kind(entry)}, not a table: "
                f"write each ruleset as a [[ruleset]] table"
            )
        for key in entry:
            if key not in ENTRY_KEYS:
                raise RulesetError(
                    f"ruleset file {path}: ruleset {number} has an unknown key {quoted(key)}"
                    f"{_meant(key, ENTRY_KEYS)}: a [[ruleset]] table takes {' and '.join(ENTRY_KEYS)}"
                )
        for key in ENTRY_KEYS:
            if key in entry and not isinstance(entry[key], str):
                raise RulesetError(
                    f"ruleset file {path}: the {key} of ruleset {number} is {_kind(entry[key])}, "
                    f'not a string: write it in quotes, {key} = "…"'
                )
    return entries


def _written(key: str, value: object) -> str:
    """A top-level key of a TOML file as it was written: [[key]], [key] or key = …."""
    if isinstance(value, list) and value and all(isinstance(item, dict) for item in value):
        return f"table [[{shortened(key)}]]"
    if isinstance(value, dict):
        return f"table [{shortened(key)}]"
    return f"key {quoted(key)}"


def _meant(key: str, known: tuple[str, ...], written: str = "{}") -> str:
    """' (did you mean …?)' for a key close to one of `known`, written as `written` says
    ([[{}]]); else nothing."""
    close = difflib.get_close_matches(key.lower(), known, n=1, cutoff=0.6)
    return f" (did you mean {written.format(close[0])}?)" if close else ""


def _kind(value: object) -> str:
    """What a TOML value is, in TOML's words."""
    kinds = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "an array", dict: "a table"}
    return next((name for kind, name in kinds.items() if isinstance(value, kind)), "a date or time")
