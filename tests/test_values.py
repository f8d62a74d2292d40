"""The value domain is defined once, in pipeline/core/values.py: the SQL, the pages' script,
check and every sentence a person reads take it from there."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from pipeline.core import values
from pipeline.core.values import BAND, LOST_WEIGHT, Value, decode, for_pages, in_plies, in_words, plies, score
from pipeline.datadir import check
from pipeline.products import pages

PIPELINE = Path(values.__file__).parents[1]
#: The numbers of the packed scores and the weights, as a file might retype them.
CONSTANTS = {str(BAND), str(LOST_WEIGHT), "2^20", "2^30", "2**20", "2**30", "1 << 20", "1 << 30"}
#: A value word quoted as a literal, in SQL or JavaScript (DuckDB reads a code as getvariable('win')).
QUOTED_WORD = re.compile(r"""(?<!getvariable\()['"](win|loss|tie|draw)['"]""")


@pytest.mark.parametrize("path", sorted((PIPELINE / "sql").rglob("*.sql")), ids=lambda p: f"{p.parent.name}/{p.name}")
def test_the_engines_sql_takes_weights_bands_and_words_as_variables(path):
    text = path.read_text()
    assert not [c for c in CONSTANTS if c in text], f"{path} retypes a constant of pipeline/core/values.py"
    assert not QUOTED_WORD.search(text), f"{path} retypes a value word"


def test_no_module_but_values_retypes_the_weights_or_bands():
    found = [
        (p, c)
        for p in PIPELINE.rglob("*.py")
        if p.name != "values.py"
        for c in (str(BAND), str(LOST_WEIGHT))
        if c in p.read_text()
    ]
    assert not found


def test_a_lost_child_outweighs_every_count_of_won_children():
    # a position's moves are counted in an int32 column; LOST_WEIGHT must exceed any such sum of ones
    assert LOST_WEIGHT > 2**29 and values.sql_variables()["lost_weight"] == LOST_WEIGHT


@pytest.mark.parametrize(
    "packed",
    [0, 1, BAND - 2, BAND - 1, BAND, BAND + 1, 2 * BAND - 1, 2 * BAND, 2 * BAND + 1, 3 * BAND - 2, 3 * BAND - 1],
)
def test_decoding_a_score_gives_back_what_was_packed(packed):
    value, remoteness = decode(packed)
    assert score(value, remoteness) == packed
    assert 0 <= remoteness < BAND


def test_decoding_reads_each_band_as_its_value():
    assert decode(score(Value.WIN, 7)) == (Value.WIN, 7)
    assert decode(score(Value.TIE, 0)) == (Value.TIE, 0)
    assert decode(score(Value.LOSS, 12)) == (Value.LOSS, 12)


@pytest.mark.parametrize(
    "value, remoteness, short, said",
    [
        ("win", 8, "wins in 8 plies", "the first player wins in 8 plies"),
        ("loss", 3, "loses in 3 plies", "the second player wins in 3 plies"),
        ("tie", 5, "a tie in 5 plies", "a tie in 5 plies"),
        ("draw", None, "a draw", "a draw (neither player can force the game to end)"),
        ("win", 1, "wins in 1 ply", "the first player wins in 1 ply"),
        ("loss", 1234, "loses in 1,234 plies", "the second player wins in 1,234 plies"),
        ("win", 0, "has won", "the first player has won (game over)"),
        ("loss", 0, "has lost", "the second player has won (game over)"),
        ("tie", 0, "a tie (game over)", "a tie (game over)"),
    ],
)
def test_a_value_is_phrased_one_way_with_its_plies(value, remoteness, short, said):
    assert in_plies(value, remoteness) == short
    assert in_words(value, remoteness) == said


def test_the_verb_agrees_with_you():
    assert in_words("win", 3, "you", "the computer") == "you win in 3 plies"
    assert in_words("loss", 0, "the computer", "you") == "you have won (game over)"
    assert plies(1) == "1 ply" and plies(2) == "2 plies"


def test_check_counts_the_values_by_the_words_of_values():
    assert not QUOTED_WORD.search(check.COUNTS)


def test_the_pages_script_and_style_take_words_colours_and_phrases_from_values():
    script = pages.asset("ruleset.js")
    assert not QUOTED_WORD.search(script)
    assert not re.search(r"""['"](1 ply| plies)['"]""", script)  # the unit comes from PHRASES
    sources = [Path(pages.__file__), *(Path(pages.__file__).parent / "templates").iterdir()]
    # the draw's greys are also the pages' neutral borders and axes, so they may appear on their own
    shades = [colours[v] for colours in (values.COLOURS, values.EDGE_COLOURS) for v in values.WORDS if v != "draw"]
    assert not [(path.name, c) for path in sources for c in shades if c in path.read_text()]
    style = pages.index_page([], {}, set(), {}).split("<style>")[1].split("</style>")[0]
    for v in values.WORDS:
        assert f".{v}, tr.{v} > td.v {{ background: {values.COLOURS[v]}; }}" in style
        assert f"#here[data-value={v}] .pic {{ border-color: {values.EDGE_COLOURS[v]}; }}" in style
    # the page's JSON document carries the domain as for_pages() gives it
    assert json.loads(json.dumps(for_pages())) == for_pages()
    assert for_pages()["words"][Value.TIE.code - 1] == "tie"
    assert [for_pages()["words"][i] for i in for_pages()["opposite"]] == ["loss", "win", "tie", "draw"]


#: Scores at the edges of each band, where a decoding off by one would show.
EDGES = [0, 1, BAND - 2, BAND - 1, BAND, BAND + 1, 2 * BAND - 1, 2 * BAND, 2 * BAND + 1, 3 * BAND - 2, 3 * BAND - 1]


def decoded() -> list[tuple[int, str, int]]:
    return [(i, decode(s)[0].value, decode(s)[1]) for i, s in enumerate(EDGES)]


def test_duckdb_decodes_the_packed_scores_as_values_does():
    import duckdb
    import pyarrow as pa

    from pipeline.core.dataset import SOLVER_MADE
    from pipeline.engines.base import declared
    from pipeline.storage.db import set_variables, sql_text

    con = duckdb.connect()
    set_variables(con, **values.sql_variables())
    nothing = [None] * len(EDGES)
    solved = pa.table(
        {"id": range(len(EDGES)), "score": EDGES, "grundy": nothing, "height": nothing}
        | {column.name: nothing for column in SOLVER_MADE},
        schema=pa.schema(
            [("id", pa.int32()), ("score", pa.int32()), ("grundy", pa.int32()), ("height", pa.int32())]
            + [column.field for column in SOLVER_MADE]
        ),
    )
    con.register("solved", solved)
    rows = con.sql(declared(sql_text("rank_solution", "duckdb"))).fetchall()
    assert [row[:3] for row in rows] == decoded()


def test_probe_says_a_draw_once_and_a_finished_game_as_over(built):
    from tests.test_cli import tablebase

    drawn = tablebase("probe", "chopsticks:overflow=rollover", "start", data=built)
    assert drawn.returncode == 0, drawn.stderr
    assert (
        drawn.stdout.splitlines()[0]
        == "chopsticks:overflow=rollover  1-1|1-1  a draw (neither player can force the game to end)"
    )
    over = tablebase("probe", "chopsticks", "0-0|1-3", data=built)
    assert over.returncode == 0, over.stderr
    assert over.stdout.splitlines()[0] == "chopsticks  0-0|1-3  has lost: the other player has won (game over)"


def test_every_phrase_table_the_pages_script_reads_is_one_values_writes():
    read = set(re.findall(r"PHRASES\.(\w+)", pages.asset("ruleset.js")))
    assert read and read <= set(values.PHRASES)
