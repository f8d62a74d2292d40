"""Octal games: the published Grundy values of Kayles and Dawson's Kayles, computed by the
pipeline and read back through the grundy_sequence query; and the heap engine's keys of
several 64-bit words, which number what one word cannot."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from pipeline.core.errors import RulesetError
from pipeline.datadir.layout import DataDir
from pipeline.games import TRANSITION_SCHEMA, _heaps
from pipeline.games.rulesets import Ruleset
from pipeline.products.query import library, run_sql
from pipeline.stages.build import build
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.tablebases import Tablebases
from tests.staged import staged

# Dawson's Kayles takes two at a time: an even start leaves only even heaps alone, an odd
# start only odd ones, so both are built. A heap of 44 takes keys of two words.
RULESETS = [
    "octal:start=14",
    "octal:code=0.07,start=12",
    "octal:code=0.07,start=13",
    "octal:code=0.3,start=30",
    "octal:start=44",
]
#: Kayles' Grundy values of heaps 0..44: OEIS A002186 (Guy and Smith 1956; Winning Ways, p. 91).
KAYLES = [
    "0",
    "1",
    "2",
    "3",
    "1",
    "4",
    "3",
    "2",
    "1",
    "4",
    "2",
    "6",
    "4",
    "1",
    "2",
    "7",
    "1",
    "4",
    "3",
    "2",
    "1",
    "4",
    "6",
    "7",
    "4",
    "1",
    "2",
    "8",
    "5",
    "4",
    "7",
    "2",
    "1",
    "8",
    "6",
    "7",
    "4",
    "1",
    "2",
    "3",
    "1",
    "4",
    "7",
    "2",
    "1",
]


@pytest.fixture(scope="module")
def octal_data(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("octal")
    Tablebases(data).build(*RULESETS)
    return data


@pytest.fixture(scope="module")
def sequences(octal_data) -> dict[str, dict]:
    sql = library().joinpath("grundy_sequence.sql").read_text()
    return {row["ruleset"]: row for row in run_sql(octal_data, sql).to_pylist()}


def values(row: dict) -> list[str]:
    return row["grundy_by_heap"].split()


def test_kayles_grundy_values_are_the_published_ones(sequences):
    assert values(sequences["octal:start=14"])[:12] == ["0", "1", "2", "3", "1", "4", "3", "2", "1", "4", "2", "6"]


def test_kayles_grundy_values_past_the_heaps_one_word_numbers_are_the_published_ones(sequences):
    """A single heap of 39 tokens or more was refused when keys were one 64-bit word."""
    rules = Ruleset.parse("octal:start=44")
    assert rules.game.space(rules).words == 2
    assert values(sequences["octal:start=44"]) == KAYLES


def test_dawsons_kayles_grundy_values_are_the_published_ones(sequences):
    even, odd = values(sequences["octal:code=0.07,start=12"]), values(sequences["octal:code=0.07,start=13"])
    merged = [e if e != "." else o for e, o in zip(even, odd)]
    assert merged[:12] == ["0", "0", "1", "1", "2", "0", "3", "1", "1", "0", "3", "3"]
    assert sequences["octal:code=0.07,start=12"]["missing"] == 6  # the odd heaps 1..11


def test_a_period_is_named_only_when_it_shows(sequences):
    """0.3 (take one token from a heap, nothing more) alternates 0 1 from heap 0; Kayles'
    period (12, from 71 on) lies far beyond a heap of 14."""
    assert (
        sequences["octal:code=0.3,start=30"]["period"],
        sequences["octal:code=0.3,start=30"]["period_from_heap"],
    ) == (2, 0)
    assert sequences["octal:start=14"]["period"] is None


def test_a_period_shows_above_a_heap_never_held_alone(tmp_path):
    """0.2 (take one, leaving one heap): the empty position never arises, the period 2
    starts at heap 1."""
    build(Ruleset.parse("octal:code=0.2,start=20"), DataDir(tmp_path))
    build(Ruleset.parse("takeaway"), DataDir(tmp_path))  # a game without a heaps column
    rows = run_sql(tmp_path, library().joinpath("grundy_sequence.sql").read_text()).to_pylist()
    assert [(r["ruleset"], r["period"], r["period_from_heap"], r["missing"]) for r in rows] == [
        ("octal:code=0.2,start=20", 2, 1, 1)
    ]


def enumerated(folder: Path, ruleset: str) -> tuple[bytes, bytes]:
    rules = Ruleset.parse(ruleset)
    files = DataDir(folder).ruleset(rules)
    files.dir.mkdir(parents=True)
    staged(enumerate_ruleset, files, rules=rules)
    return files.positions.read_bytes(), files.transitions.read_bytes()


@pytest.mark.parametrize(
    "ruleset",
    [
        "sticks:rows=6",
        "sticks:max_take=2,play=normal,rows=7",
        "octal:start=20",
        "octal:code=0.137,start=9-5",
        "octal:code=0.07,play=misere,start=3-4-5",
    ],
)
def test_keys_of_several_words_give_the_files_of_one(tmp_path, monkeypatch, ruleset):
    """Forced on small rulesets (a word per heap size, or a few sizes a word), keys of
    several words find and number every position and move as one word does: the same
    files byte for byte, and the same moves part by part (as Spark asks for them)."""
    rules = Ruleset.parse(ruleset)
    one = enumerated(tmp_path / "one", ruleset)
    whole = pa.Table.from_batches(list(rules.game.space(rules).transitions()), schema=TRANSITION_SCHEMA)
    for limit in (2, 2**7):
        monkeypatch.setattr(_heaps, "WORD_LIMIT", limit)
        space = rules.game.space(rules)
        assert space.words > 1
        assert enumerated(tmp_path / str(limit), ruleset) == one
        batches = [batch for part in range(space.parts()) for batch in space.transitions_part(part)]
        parts = pa.Table.from_batches(batches, schema=TRANSITION_SCHEMA)
        assert parts.equals(whole)


def test_a_start_reaching_more_positions_than_ids_number_is_refused_while_they_are_found(tmp_path, monkeypatch):
    """Ids are 32-bit where the pipeline solves: past that a start is refused as its
    positions are found, in one line, and nothing is published."""
    monkeypatch.setattr(_heaps, "MAX_POSITIONS", 500)
    with pytest.raises(RulesetError, match=r"^the heaps 1-2-3-4-5-6 reach more than 500 positions"):
        build(Ruleset.parse("sticks:rows=6"), DataDir(tmp_path))
    assert not list(tmp_path.rglob("*.parquet"))
    monkeypatch.setattr(_heaps, "MAX_POSITIONS", 834)  # exactly its positions
    build(Ruleset.parse("sticks:rows=6"), DataDir(tmp_path))
