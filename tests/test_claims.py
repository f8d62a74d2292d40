"""The claim queries give the verdicts and counterexamples the reference solver gives.

Each seed claim is re-implemented here in plain Python on position texts and applied to
the reference solver's values; the query over the pipeline's tablebases must list the
same counterexamples (or say it holds on every position).
"""

from __future__ import annotations

from functools import reduce
from operator import xor
from pathlib import Path

import pytest

from pipeline.games.rulesets import Ruleset
from pipeline.products.claims import claim_queries, report
from pipeline.products.query import run_sql
from pipeline.tablebases import Tablebases
from tests import reference

QUERIES = Path(__file__).resolve().parent.parent / "queries"

NIM = {  # variant -> starts
    "normal": ["1-2-3", "2-3-5"],
    "largest": ["2-2-3", "1-3-4"],
    "distinct": ["1-2-4", "2-3-6"],
    "arrow": ["1-1-3", "2-3"],
    "arrow-other": ["1-2-3", "2-2-4"],
    "coin": ["1-2-3", "2-4"],
}
HACKENBUSH = ["hackenbush", "hackenbush:fib=4", "hackenbush:fib=5", "hackenbush:tree=1:5;5:2/9;9:3"]


def parse_nim(text: str) -> tuple[list[int], int | None, str | None]:
    arrow = coin = None
    if " " in text:
        text, coin = text.split(" ")
    if "@" in text:
        text, pointed = text.split("@")
        arrow = int(pointed)
    heaps = [] if text == "0" else [int(h) for h in text.split("-")]
    return heaps, arrow, coin


def claimed_loss(variant: str, heaps: list[int], arrow: int | None) -> bool:
    """Seed 002's rule for the lost positions of each variant, as the seed states it."""
    if variant == "normal":
        return reduce(xor, heaps, 0) == 0
    if variant == "largest":
        return heaps.count(max(heaps, default=0)) % 2 == 0 if heaps else True
    if variant == "distinct":
        return not heaps or (max(heaps) % 2 == 0 and max(heaps) - 1 in heaps)
    if variant == "arrow":
        ones = heaps.count(1)
        if all(h == 1 for h in heaps):
            return len(heaps) % 2 == 0
        return arrow == 1 and ones % 2 == 1
    if variant == "arrow-other":
        return len(heaps) % 2 == 0 and (not heaps or arrow == min(heaps))
    if variant == "coin":
        return reduce(xor, (h // 2 for h in heaps), 0) == 0
    raise AssertionError(variant)


def colon_value(present: set[int], parent: dict[int, int]) -> int:
    def value(node: int) -> int:
        return reduce(xor, (1 + value(kid) for kid in present if parent[kid] == node), 0)

    return value(1)


@pytest.fixture(scope="module")
def claims_data(tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("claims")
    ids = [f"nim:start={s},variant={v}" for v, starts in NIM.items() for s in starts]
    ids += ["nim:play=misere,start=1-2-3", *HACKENBUSH]
    Tablebases(data).build(*ids)
    return data


def expected_nim(variant: str) -> dict[str, set]:
    result = {}
    for start in NIM[variant]:
        rules = Ruleset.parse(f"nim:start={start},variant={variant}")
        solved = reference.solve("nim", {"start": start, "variant": variant})
        bad = set()
        for text, (value, _, _) in solved.items():
            heaps, arrow, _ = parse_nim(text)
            claimed = "loss" if claimed_loss(variant, heaps, arrow) else "win"
            if claimed != value:
                bad.add((text, claimed, value))
        result[rules.id] = bad or {f"holds on {len(solved)} positions"}
    return result


def answered(table) -> dict[str, set]:
    result: dict[str, set] = {}
    for row in table.to_pylist():
        if row["verdict"] == "fails":
            result.setdefault(row["ruleset"], set()).add((row["position"], row["claimed"], row["computed"]))
        else:
            result.setdefault(row["ruleset"], set()).add(row["verdict"])
    return result


@pytest.mark.parametrize("variant", list(NIM))
def test_nim_claim_query_matches_reference(claims_data, variant):
    name = "claim_nim_" + variant.replace("-", "_")
    table = run_sql(claims_data, (QUERIES / f"{name}.sql").read_text())
    assert answered(table) == expected_nim(variant)


def test_coin_claim_is_refuted_and_the_others_hold(claims_data):
    assert all(
        v == {next(iter(v))} and "holds" in next(iter(v))
        for variant in NIM
        if variant != "coin"
        for v in expected_nim(variant).values()
    )
    assert all(("1 T", "loss", "win") in bad for bad in expected_nim("coin").values())


def test_colon_principle_query_matches_reference(claims_data):
    table = run_sql(claims_data, (QUERIES / "claim_hackenbush_colon.sql").read_text())
    expected = {}
    for ruleset in HACKENBUSH:
        rules = Ruleset.parse(ruleset)
        params = dict(p.split("=", 1) for p in ruleset.partition(":")[2].split(",") if p)
        parent = (
            reference._fib_tree(int(params["fib"]))
            if "fib" in params
            else reference._parse_tree(params.get("tree", "1:2/3;2:4/5;4:7;3:6"))
        )
        solved = reference.solve("hackenbush", params)
        bad = {
            (text, colon_value(set() if text == "0" else {int(n) for n in text.split("-")}, parent), grundy)
            for text, (_, _, grundy) in solved.items()
            if colon_value(set() if text == "0" else {int(n) for n in text.split("-")}, parent) != grundy
        }
        expected[rules.id] = bad or {f"holds on {len(solved)} positions"}
    assert answered(table) == expected


def test_seed004_winning_move_is_cut_4(claims_data):
    table = run_sql(claims_data, (QUERIES / "seed004_winning_moves.sql").read_text())
    row = next(r for r in table.to_pylist() if r["ruleset"] == "hackenbush")
    assert (row["grundy"], row["winning_moves"], row["agrees_with_seed"]) == (6, ["cut 4"], True)


def test_report_lists_every_claim(claims_data):
    text = report(claims_data)  # the packaged library
    for name in ["claim_nim_normal", "claim_nim_coin", "claim_hackenbush_colon", "seed004_winning_moves"]:
        assert f"## {name}" in text
    assert "**fails**" in text and "holds on" in text


def test_report_adds_a_folder_of_ones_own(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "claim_mine.sql").write_text("-- Mine.\nSELECT 1 AS one\n")
    (mine / "claim_nim_coin.sql").write_text("-- My coin.\nSELECT 1 AS one\n")
    (mine / "not_a_claim.sql").write_text("-- Other.\nSELECT 1 AS one\n")
    queries = {query.name: query.description for query in claim_queries(mine)}
    assert queries["claim_mine"] == "Mine" and queries["claim_nim_coin"] == "My coin"
    assert "claim_nim_normal" in queries and "not_a_claim" not in queries


def test_the_claims_command_says_where_it_is_and_what_it_found(claims_data, tmp_path):
    import subprocess
    import sys

    result = subprocess.run(
        [sys.executable, "-m", "pipeline", "claims", "--data", str(claims_data), "--out", str(tmp_path / "c.md")],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 0, result.stderr
    text = (tmp_path / "c.md").read_text()
    verdicts = [line.split("` | ")[1] for line in text.splitlines() if line.startswith("| claim_") and "` | " in line]
    held, failed = sum(v.startswith("holds") for v in verdicts), sum(v.startswith("**fails**") for v in verdicts)
    queries = len(claim_queries())
    assert f"claims: {queries} queries, {held} claims hold, {failed} fail in " in result.stderr
