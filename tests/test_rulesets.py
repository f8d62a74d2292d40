"""Ruleset ids: parsing, validation and the canonical form."""

import re

import pytest

from pipeline.core.errors import RulesetError
from pipeline.games.rulesets import Ruleset


@pytest.mark.parametrize(
    "given, canonical",
    [
        ("chopsticks", "chopsticks"),
        ("chopsticks:fingers=5,hands=2", "chopsticks"),
        ("chopsticks:split=any", "chopsticks:split=any"),
        ("chopsticks:split=any,overflow=rollover", "chopsticks:overflow=rollover,split=any"),
        ("chopsticks:fingers=07", "chopsticks:fingers=7"),
        ("chopsticks:self_attack=true,split_kill=false", "chopsticks:self_attack=true,split_kill=false"),
    ],
)
def test_canonical_id_sorts_keys_and_drops_defaults(given, canonical):
    assert Ruleset.parse(given).id == canonical


def test_equal_rulesets_compare_equal():
    assert Ruleset.parse("chopsticks:hands=2,split=any") == Ruleset.parse("chopsticks:split=any")


@pytest.mark.parametrize(
    "bad, message",
    [
        ("chopstix", "unknown game 'chopstix'"),
        ("chopsticks:colour=red", "unknown parameter 'colour'"),
        ("chopsticks:fingers=1", "must be ≥ 2"),
        ("chopsticks:hands=0", "must be ≥ 1"),
        ("chopsticks:fingers=five", "expected an integer"),
        ("chopsticks:overflow=sideways", "expected one of cutoff, rollover"),
        ("chopsticks:self_attack=yes", "expected true or false"),
        ("chopsticks:split", "expected key=value"),
        ("chopsticks:split=any,split=none", "given twice"),
        ("chopsticks:fingers=100,hands=10", "more than"),
    ],
)
def test_bad_ids_are_refused_with_a_reason(bad, message):
    with pytest.raises(RulesetError, match=message):
        Ruleset.parse(bad)


def test_path_component_escapes_slashes():
    rules = Ruleset.parse("chopsticks:split=any")
    assert re.fullmatch(r"[a-z0-9._-]+", rules.slug)
