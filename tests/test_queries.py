"""Every query file: documented, listed, and answering correctly on small tablebases."""

from __future__ import annotations

import contextlib
import json
import subprocess
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from pipeline.core.errors import PositionError, RulesetError
from pipeline.products.query import QueryError, find_query, list_queries, query_files, run_sql
from tests.command import tablebase

ROOT = Path(__file__).resolve().parent.parent
QUERIES = ROOT / "queries"


def run(data: Path, name: str, **params: str) -> list[dict]:
    return run_sql(data, (QUERIES / f"{name}.sql").read_text(), params).to_pylist()


def cli(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    """`tablebase ARGS` run in `cwd`, with this checkout's package."""
    return tablebase(*args, cwd=cwd)


def own_queries(folder: Path) -> Path:
    """A folder of a user's query files: one new, one named like a packaged query."""
    folder.mkdir()
    (folder / "my_count.sql").write_text(
        "-- How many rulesets are built.\n-- Parameters: none.\n"
        "-- Example: tablebase query my_count --queries mine\nSELECT count(*) AS rulesets FROM catalog\n"
    )
    (folder / "who_wins.sql").write_text("-- My own who wins.\nSELECT 'mine' AS who\n")
    return folder


def test_library_is_the_queries_folder():
    assert list(query_files()) == sorted(p.stem for p in QUERIES.glob("*.sql"))


@pytest.mark.parametrize("query", list_queries(), ids=lambda q: q.name)
def test_every_query_says_what_it_answers(query):
    assert query.description, f"{query.name} has no header comment"
    assert any(line.startswith("Parameters:") for line in query.header), query.name
    assert query.example and query.example.startswith(f"tablebase query {query.name}"), query.name
    for name in query.parameters:
        assert f"-p {name}=" in query.example or f"--param {name}=" in query.example, (query.name, name)


def test_who_wins_every_ruleset(built):
    rows = {r["ruleset"]: r for r in run(built, "who_wins")}
    catalog = pq.read_table(built / "catalog.parquet").to_pylist()
    assert set(rows) == {r["ruleset"] for r in catalog}
    assert (rows["chopsticks"]["winner"], rows["chopsticks"]["plies"]) == ("second player", 8)
    assert rows["chopsticks:overflow=rollover"]["winner"] == "nobody (draw)"


def test_compare_rulesets_counts_every_difference(built):
    rows = run(built, "compare_rulesets", ruleset_a="chopsticks", ruleset_b="chopsticks:split=any")
    a = {
        r["position"]: r["value"]
        for r in pq.read_table(built / "chopsticks" / "default" / "tablebase.parquet").to_pylist()
    }
    b = {
        r["position"]: r["value"]
        for r in pq.read_table(built / "chopsticks" / "split-any" / "tablebase.parquet").to_pylist()
    }
    expected: dict[tuple, list] = {}
    for position in sorted(a):
        if a[position] != b[position]:
            expected.setdefault((a[position], b[position]), []).append(position)
    start, *changed = rows
    assert (start["kind"], start["value_a"], start["plies_a"], start["value_b"]) == ("start", "loss", 8, "loss")
    assert start["examples"] == ["1-1|1-1"]
    assert {r["kind"] for r in changed} == {"changed"}
    assert {(r["value_a"], r["value_b"]): r["positions"] for r in changed} == {k: len(v) for k, v in expected.items()}
    for r in changed:
        assert r["examples"] == expected[(r["value_a"], r["value_b"])][:3]


def test_variants_say_who_wins_each_ruleset_of_a_game(built):
    rows = {r["ruleset"]: r for r in run(built, "variants", game="chopsticks")}
    catalog = {r["ruleset"]: r for r in pq.read_table(built / "catalog.parquet").to_pylist()}
    assert set(rows) == {ruleset for ruleset, row in catalog.items() if row["game"] == "chopsticks"}
    assert (rows["chopsticks"]["rules"], rows["chopsticks"]["winner"], rows["chopsticks"]["plies"]) == (
        "the defaults",
        "second player",
        8,
    )
    rollover = rows["chopsticks:overflow=rollover"]
    assert (rollover["rules"], rollover["winner"], rollover["plies"]) == ("overflow = rollover", "nobody (draw)", None)
    assert rollover["draws"] == catalog["chopsticks:overflow=rollover"]["draws"] > 0
    with pytest.raises(QueryError, match="no built ruleset of game tictactoe"):
        run(built, "variants", game="tictactoe")


def test_mirror_classes_pair_each_board_with_its_mirror_image(tmp_path):
    from pipeline.datadir.layout import DataDir
    from pipeline.games.rulesets import Ruleset
    from pipeline.stages.build import build

    build(Ruleset.parse("tictactoe"), DataDir(tmp_path))
    rows = {r["value"]: r for r in run(tmp_path, "mirror_classes", ruleset="tictactoe")}
    texts = pq.read_table(tmp_path / "tictactoe" / "default" / "tablebase.parquet").to_pylist()
    boards = {r["position"]: r["value"] for r in texts}
    mirrored = {p: "/".join(row[::-1] for row in p.split("/")) for p in boards}
    classes = {min(p, m) for p, m in mirrored.items()}
    assert rows["all"]["positions"] == len(boards) == 5478
    assert rows["all"]["classes"] == len(classes)
    assert rows["all"]["symmetric"] == sum(p == m for p, m in mirrored.items())
    assert rows["all"]["alone"] == rows["all"]["values_differ"] == 0
    assert sum(rows[v]["classes"] for v in ("win", "loss", "tie")) == len(classes)


def test_compare_rulesets_refuses_two_games(built):
    with pytest.raises(QueryError, match="different games"):
        run(built, "compare_rulesets", ruleset_a="chopsticks", ruleset_b="sticks:rows=2")


def test_start_by_parameter_varies_one_parameter(built):
    rows = run(built, "start_by_parameter", game="chopsticks", parameter="overflow")
    by_setting = {r["setting"]: r["start_by_value"] for r in rows}
    assert by_setting["fingers=5 hands=2 split=none split_kill=true self_attack=false"] == "cutoff:second rollover:draw"
    assert by_setting["fingers=5 hands=2 split=any split_kill=true self_attack=false"] == "cutoff:second"
    with pytest.raises(QueryError, match="no built chopsticks ruleset has a parameter colour"):
        run(built, "start_by_parameter", game="chopsticks", parameter="colour")


def test_remoteness_distribution_adds_up(built):
    rows = run(built, "remoteness_distribution", ruleset="chopsticks")
    assert sum(r["positions"] for r in rows) == 224
    assert sum(r["reachable"] for r in rows) == 92
    assert max(r["remoteness"] for r in rows if r["value"] == "loss") == 8


def test_longest_lines_are_the_longest(built):
    rows = run(built, "longest_lines", ruleset="chopsticks:split=any")
    table = pq.read_table(built / "chopsticks" / "split-any" / "tablebase.parquet").to_pylist()
    for value in ("win", "loss"):
        longest = max(r["remoteness"] for r in table if r["value"] == value)
        mine = [r for r in rows if r["value"] == value]
        assert mine[0]["remoteness"] == longest and len(mine) == 10
        assert [r["remoteness"] for r in mine] == sorted((r["remoteness"] for r in mine), reverse=True)


def test_puzzles_have_one_winning_move_each(built):
    """Each puzzle, probed move by move (the children's values, not the winning_moves
    column): more than one move, and the listed one the only move that keeps the win."""
    from pipeline.products.probe import probe

    rows = run(built, "puzzles", ruleset="chopsticks:split=any")
    assert len(rows) == 20
    assert [r["remoteness"] for r in rows] == sorted((r["remoteness"] for r in rows), reverse=True)
    for row in rows:
        result = probe("chopsticks:split=any", row["position"], built)
        assert result.value == "win" and len(result.moves) == row["moves"] > 1
        assert [move.move for move in result.moves if move.outcome == "win"] == [row["winning_move"]]


def test_principal_variation_follows_best_play(built):
    from pipeline.products.probe import probe

    rows = run(built, "principal_variation", ruleset="chopsticks", position="1-1|1-1")
    assert [r["remoteness"] for r in rows] == list(range(8, -1, -1))
    assert [r["value"] for r in rows] == ["loss", "win"] * 4 + ["loss"]
    for before, after in zip(rows, rows[1:]):
        best = probe("chopsticks", before["position"], built).moves[0]
        assert (best.value, best.remoteness) == (after["value"], after["remoteness"])


def test_principal_variation_of_a_draw_stops(built):
    rows = run(built, "principal_variation", ruleset="chopsticks:overflow=rollover", position="1-1|1-1")
    assert len(rows) == 41 and {r["value"] for r in rows} == {"draw"}


def test_principal_variation_keeps_null_remoteness_on_drawn_rows(built):
    # arg_min skips NULL arguments: a drawn row once showed another move's remoteness
    from pipeline.probe import probe

    rows = run(built, "principal_variation", ruleset="chopsticks:split=any", position="1-3|2-2")
    assert any(r["value"] == "draw" for r in rows)
    for row in rows:
        found = probe("chopsticks:split=any", row["position"], built)
        assert (row["value"], row["remoteness"]) == (found.value, found.remoteness), row
    for before, after in zip(rows, rows[1:]):
        move = next(
            m for m in probe("chopsticks:split=any", before["position"], built).moves if m.move == after["move"]
        )
        assert move.position == after["position"]


@pytest.mark.parametrize(
    "params, error, message",
    [
        ({"ruleset": "chopsticks:fingers=9", "position": "1-1|1-1"}, QueryError, "not built"),
        ({"ruleset": "chopstix", "position": "1-1|1-1"}, RulesetError, "unknown game"),
        ({"ruleset": "chopsticks", "position": "1-1|1-9"}, PositionError, "impossible"),
        ({"ruleset": "chopsticks"}, QueryError, "missing parameter"),
    ],
)
def test_bad_parameters_are_refused(built, params, error, message):
    with pytest.raises(error, match=message):
        run(built, "principal_variation", **params)


@pytest.mark.parametrize("value", ["x' OR '1'='1", "'; DROP VIEW tablebase; --", "chopsticks' --"])
def test_parameters_are_values_never_sql(built, value):
    sql = "SELECT count(*) AS n FROM tablebase WHERE position = $text"
    assert run_sql(built, sql, {"text": value}).to_pylist() == [{"n": 0}]
    assert run_sql(built, "SELECT $text AS echoed", {"text": value}).to_pylist() == [{"echoed": value}]
    assert run_sql(built, "SELECT count(*) AS n FROM tablebase").to_pylist()[0]["n"] > 0


def test_query_list_and_formats_on_the_command_line(built, tmp_path):
    def tablebase(*args):
        return cli(*args, "--data", str(built), cwd=tmp_path)  # not the repository: the library is packaged

    listed = tablebase("query", "--list")
    assert listed.returncode == 0, listed.stderr
    assert "who_wins" in listed.stdout
    for query in list_queries():
        assert query.name in listed.stdout
    as_json = tablebase("query", "who_wins", "--format", "json")
    assert json.loads(as_json.stdout) == run(built, "who_wins")
    as_jsonl = tablebase("query", "who_wins", "--format", "jsonl")
    assert [json.loads(line) for line in as_jsonl.stdout.splitlines()] == run(built, "who_wins")
    empty = tablebase("sql", "SELECT ruleset FROM catalog WHERE false", "-f", "json")
    assert json.loads(empty.stdout) == []
    refused = tablebase("query", "who_wins", "--format", "xml")
    assert refused.returncode == 2 and "jsonl" in refused.stderr
    as_csv = tablebase("query", "remoteness_distribution", "-p", "ruleset=chopsticks", "-f", "csv")
    assert as_csv.stdout.splitlines()[0] == '"value","remoteness","positions","reachable"'
    bad = tablebase("sql", "SELECT * FROM nowhere")
    assert bad.returncode == 1 and len(bad.stderr.strip().splitlines()) == 1


def test_own_query_folder_adds_to_the_library(tmp_path):
    mine = own_queries(tmp_path / "mine")
    files = query_files(mine)
    assert files["my_count"] == mine / "my_count.sql"
    assert set(query_files()) < set(files)
    assert {q.name: q.description for q in list_queries(mine)}["my_count"] == "How many rulesets are built"


def test_own_query_wins_over_a_packaged_one(tmp_path):
    mine = own_queries(tmp_path / "mine")
    assert find_query("who_wins", mine) == mine / "who_wins.sql"
    assert find_query("who_wins").read_text() == (QUERIES / "who_wins.sql").read_text()


def test_unknown_query_names_the_known_ones(tmp_path):
    mine = own_queries(tmp_path / "mine")
    with pytest.raises(QueryError, match=r"no query named 'nope'.*known: .*my_count.*remoteness_distribution"):
        find_query("nope", mine)
    with pytest.raises(QueryError, match="does not exist"):
        query_files(tmp_path / "nowhere")


def test_own_query_folder_on_the_command_line(built, tmp_path):
    mine = own_queries(tmp_path / "mine")
    listed = cli("query", "--list", "--queries", "mine", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "my_count" in listed.stdout and "My own who wins" in listed.stdout and "longest_lines" in listed.stdout
    ran = cli("query", "who_wins", "--queries", str(mine), "--data", str(built), "-f", "csv", cwd=tmp_path)
    assert ran.stdout == '"who"\n"mine"\n', ran.stderr
    unknown = cli("query", "nope", "--queries", str(mine), "--data", str(built), cwd=tmp_path)
    assert unknown.returncode == 1 and "my_count" in unknown.stderr and "who_wins" in unknown.stderr


def test_database_file_holds_the_views(built, tmp_path, monkeypatch):
    import duckdb

    monkeypatch.chdir(built)  # the views read the files beside the database, by relative paths
    con = duckdb.connect("tablebases.duckdb", read_only=True)
    rulesets = {r[0] for r in con.execute("SELECT ruleset FROM catalog").fetchall()}
    in_tablebase = {r[0] for r in con.execute("SELECT DISTINCT ruleset FROM tablebase").fetchall()}
    moves = con.execute("SELECT count(*) FROM transitions WHERE ruleset = 'chopsticks'").fetchall()[0][0]
    con.close()
    assert rulesets == in_tablebase and "chopsticks" in rulesets
    assert moves == 350


@pytest.mark.parametrize(
    ("sql", "bound"),
    [
        ("SELECT count(*) FROM catalog", {"catalog"}),
        ("WITH c AS (SELECT * FROM catalog) SELECT count(*) FROM c", {"catalog"}),
        ("SELECT count(*) FROM tablebase JOIN catalog USING (ruleset)", {"catalog", "tablebase"}),
        ("SELECT 1", set()),
        ("SELECT count(*) FROM 'elsewhere.parquet'", {"catalog", "tablebase", "transitions"}),  # refused later
        ("SELECT count(*) FROM tablebas", {"catalog", "tablebase", "transitions"}),  # DuckDB's 'Did you mean'
        ("EXPLAIN SELECT count(*) FROM transitions", {"transitions"}),
        ("PIVOT catalog ON game USING count(*)", {"catalog", "tablebase", "transitions"}),
    ],
)
def test_a_statement_binds_only_the_views_it_names(built, monkeypatch, sql, bound):
    """Binding a view reads the footer of every file it names: a look at the catalog binds no other."""
    import pipeline.products.query as query

    seen = []
    real = query.connect_views

    def spy(data, read_only=False, views=None, con=None):
        con = real(data, read_only, views, con)
        seen.append({name for (name,) in con.sql("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()})
        return con

    monkeypatch.setattr(query, "connect_views", spy)
    with contextlib.suppress(query.QueryError):  # the typo and the file: refused, after the views were made
        query.run_sql(built, sql)
    assert seen == [bound]
