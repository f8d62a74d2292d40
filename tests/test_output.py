"""Query results as text: every format holds the rows, JSON parses as one array."""

from __future__ import annotations

import json

import pyarrow as pa
import pytest

from pipeline.errors import TablebaseError
from pipeline.output import Format, render

ROWS = [
    {"ruleset": "chopsticks", "plies": 8, "grundy": None, "moves": ["1-1", "0-2"]},
    {"ruleset": "nim:heaps=1-2-3", "plies": 6, "grundy": 0, "moves": []},
]
TABLE = pa.Table.from_pylist(ROWS)


def test_json_is_one_array_of_the_rows():
    text = render(TABLE, Format.json)
    assert json.loads(text) == ROWS
    assert text.splitlines()[0] == "[" and len(text.splitlines()) == len(ROWS) + 2  # an object a line


def test_json_of_no_rows_is_an_empty_array():
    assert render(TABLE.slice(0, 0), "json") == "[]\n"
    assert json.loads(render(TABLE.slice(0, 0), "json")) == []


def test_jsonl_is_one_object_per_line():
    lines = render(TABLE, Format.jsonl).splitlines()
    assert [json.loads(line) for line in lines] == ROWS
    assert render(TABLE.slice(0, 0), Format.jsonl) == ""


def test_maps_become_objects():
    table = pa.table({"m": pa.array([[("a", 1)]], pa.map_(pa.string(), pa.int64()))})
    assert json.loads(render(table, Format.json)) == [{"m": {"a": 1}}]


@pytest.mark.parametrize("form", ["xml", "parquet"])
def test_unknown_and_binary_formats_are_refused(form):
    with pytest.raises(TablebaseError, match=form):
        render(TABLE, form)
