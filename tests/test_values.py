"""The value domain is defined once, in pipeline/core/values.py: the SQL, the pages' script,
check and every sentence a person reads take it from there."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.core import values
from pipeline.core.values import BAND, LOST_WEIGHT, Value, decode, score
from pipeline.datadir import check

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
    found = [(p, c) for p in PIPELINE.rglob("*.py") if p.name != "values.py" for c in (str(BAND), str(LOST_WEIGHT))
             if c in p.read_text()]
    assert not found


def test_a_lost_child_outweighs_every_count_of_won_children():
    # a position's moves are counted in an int32 column; LOST_WEIGHT must exceed any such sum of ones
    assert LOST_WEIGHT > 2**29 and values.sql_variables()["lost_weight"] == LOST_WEIGHT


@pytest.mark.parametrize("packed", [0, 1, BAND - 2, BAND - 1, BAND, BAND + 1, 2 * BAND - 1, 2 * BAND,
                                    2 * BAND + 1, 3 * BAND - 2, 3 * BAND - 1])
def test_decoding_a_score_gives_back_what_was_packed(packed):
    value, remoteness = decode(packed)
    assert score(value, remoteness) == packed
    assert 0 <= remoteness < BAND


def test_decoding_reads_each_band_as_its_value():
    assert decode(score(Value.WIN, 7)) == (Value.WIN, 7)
    assert decode(score(Value.TIE, 0)) == (Value.TIE, 0)
    assert decode(score(Value.LOSS, 12)) == (Value.LOSS, 12)


def test_check_counts_the_values_by_the_words_of_values():
    assert not QUOTED_WORD.search(check.COUNTS)
