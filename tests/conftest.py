"""Shared fixtures: small rulesets built once per test session into a temporary data dir."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build

#: Rulesets the query and seed tests read; the cross-check builds its own.
BUILT = [
    "chopsticks",
    "chopsticks:split=any",
    "chopsticks:overflow=rollover",
    "chopsticks:split=dead",
    "sticks:rows=2",
]


@pytest.fixture(scope="session")
def built(tmp_path_factory) -> Path:
    """A data directory holding the BUILT rulesets, built by the pipeline."""
    logging.getLogger("tablebase").setLevel(logging.WARNING)
    data = tmp_path_factory.mktemp("data")
    for ruleset in BUILT:
        build(Ruleset.parse(ruleset), DataDir(data))
    return data
