"""The SQL solver against the independent reference solver, position by position."""

from __future__ import annotations

import pyarrow.parquet as pq
import pytest

from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from tests import reference

#: Small chopsticks rulesets covering every parameter value, and the edge cases.
CHOPSTICKS = [
    "chopsticks",
    "chopsticks:hands=1",
    "chopsticks:hands=1,fingers=2",
    "chopsticks:fingers=2",
    "chopsticks:fingers=3",
    "chopsticks:fingers=4,hands=3",
    "chopsticks:hands=3,fingers=3,split=any",
    "chopsticks:split=any",
    "chopsticks:split=dead",
    "chopsticks:split=any,split_kill=false",
    "chopsticks:split=dead,split_kill=false",
    "chopsticks:self_attack=true",
    "chopsticks:overflow=rollover",
    "chopsticks:overflow=rollover,split=any",
    "chopsticks:overflow=rollover,split=dead,self_attack=true",
    "chopsticks:overflow=rollover,split=any,split_kill=false,self_attack=true",
    "chopsticks:fingers=6,overflow=rollover,self_attack=true",
    "chopsticks:fingers=2,hands=3,overflow=rollover,split=any",
]


def params_of(ruleset: str) -> dict[str, str]:
    _, _, rest = ruleset.partition(":")
    return dict(pair.split("=", 1) for pair in rest.split(",")) if rest else {}


@pytest.mark.parametrize("ruleset", CHOPSTICKS)
def test_sql_solver_agrees_with_reference(ruleset, tmp_path):
    rules = Ruleset.parse(ruleset)
    build(rules, DataDir(tmp_path))
    files = DataDir(tmp_path).ruleset(rules)
    table = pq.read_table(files.tablebase, columns=["id", "position", "value", "remoteness", "grundy"]).to_pylist()
    ours = {r["position"]: (r["value"], r["remoteness"], r["grundy"]) for r in table}
    assert ours == reference.solve(rules.game_name, params_of(ruleset))

    text_of = {r["id"]: r["position"] for r in table}
    graph: dict[str, set[str]] = {text: set() for text in ours}
    transitions = pq.read_table(files.transitions, columns=["src", "dst"]).to_pylist()
    for row in transitions:
        graph[text_of[row["src"]]].add(text_of[row["dst"]])
    assert graph == reference.moves(rules.game_name, params_of(ruleset))
    assert len(transitions) == sum(len(children) for children in graph.values())
