"""Octal games: the published Grundy values of Kayles and Dawson's Kayles, computed by the
pipeline and read back through the grundy_sequence query."""

from __future__ import annotations

from pathlib import Path

import pytest

from pipeline.layout import DataDir
from pipeline.query import library, run_sql
from pipeline.rulesets import Ruleset
from pipeline.stages.build import build

# Dawson's Kayles takes two at a time: an even start leaves only even heaps alone, an odd
# start only odd ones, so both are built.
RULESETS = ["octal:start=14", "octal:code=0.07,start=12", "octal:code=0.07,start=13", "octal:code=0.3,start=30"]


@pytest.fixture(scope="module")
def octal_data(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("octal")
    for ruleset in RULESETS:
        build(Ruleset.parse(ruleset), DataDir(data))
    return data


@pytest.fixture(scope="module")
def sequences(octal_data) -> dict[str, dict]:
    sql = library().joinpath("grundy_sequence.sql").read_text()
    return {row["ruleset"]: row for row in run_sql(octal_data, sql).to_pylist()}


def values(row: dict) -> list[str]:
    return row["grundy_by_heap"].split()


def test_kayles_grundy_values_are_the_published_ones(sequences):
    assert values(sequences["octal:start=14"])[:12] == "0 1 2 3 1 4 3 2 1 4 2 6".split()


def test_dawsons_kayles_grundy_values_are_the_published_ones(sequences):
    even, odd = values(sequences["octal:code=0.07,start=12"]), values(sequences["octal:code=0.07,start=13"])
    merged = [e if e != "." else o for e, o in zip(even, odd)]
    assert merged[:12] == "0 0 1 1 2 0 3 1 1 0 3 3".split()
    assert sequences["octal:code=0.07,start=12"]["missing"] == 6  # the odd heaps 1..11


def test_a_period_is_named_only_when_it_shows(sequences):
    """0.3 (take one token from a heap, nothing more) alternates 0 1 from heap 0; Kayles'
    period (12, from 71 on) lies far beyond a heap of 14."""
    assert (sequences["octal:code=0.3,start=30"]["period"], sequences["octal:code=0.3,start=30"]["period_from_heap"]) == (2, 0)
    assert sequences["octal:start=14"]["period"] is None


def test_a_period_shows_above_a_heap_never_held_alone(tmp_path):
    """0.2 (take one, leaving one heap): the empty position never arises, the period 2
    starts at heap 1."""
    build(Ruleset.parse("octal:code=0.2,start=20"), DataDir(tmp_path))
    build(Ruleset.parse("takeaway"), DataDir(tmp_path))  # a game without a heaps column
    rows = run_sql(tmp_path, library().joinpath("grundy_sequence.sql").read_text()).to_pylist()
    assert [(r["ruleset"], r["period"], r["period_from_heap"], r["missing"]) for r in rows] == [
        ("octal:code=0.2,start=20", 2, 1, 1)]
