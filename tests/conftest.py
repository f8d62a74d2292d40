"""Shared fixtures: small rulesets built once per test session into a temporary data dir."""

from __future__ import annotations

import logging
import os
from pathlib import Path

import pytest

from pipeline.tablebases import Tablebases

# The Spark engine's JVM (tests/test_engines.py) runs many tiny jobs on
# 2 cores: C2, the optimising JIT, and the parallel collector spent their CPU on code that runs
# for milliseconds. The JIT tier and the collector change no result, only their cost: four
# small Spark builds took 106 JVM CPU-s with these flags, 191 without. A JVM reads this
# variable at start and says so on its standard error, which Spark's engine sends to its log.
os.environ.setdefault("JAVA_TOOL_OPTIONS", "-XX:TieredStopAtLevel=1 -XX:+UseSerialGC")
# Likewise Spark's generated Java (whole-stage code generation, compiled by Janino for each new
# plan) costs more than it saves on rows counted in tens: the eight small rulesets
# tests/test_engines.py then built took 105 s interpreted, 126 s compiled (2026-11-27, one JVM each).
# And two partitions a shuffle rather than local mode's eight (the CPUs the suite has): every
# stage of a ruleset of tens of rows ran eight tasks of nothing; the engine's Spark tests took
# 104 s with two, 129 s with eight (2026-11-29, alone). The tests that cut partitions set the
# setting they need themselves; the rows are the same whatever it is.
os.environ.setdefault(
    "TABLEBASE_SPARK_CONF",
    "spark.sql.codegen.wholeStage=false spark.sql.codegen.factoryMode=NO_CODEGEN"
    " spark.sql.shuffle.partitions=2 spark.default.parallelism=2",
)

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
    Tablebases(data).build(*BUILT)  # the database of views written once, after the last
    return data
