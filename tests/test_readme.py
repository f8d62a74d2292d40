"""The README's SQL examples run as printed and answer something."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from pipeline.query import run_sql

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
EXAMPLES = re.findall(r"```sql\n(.*?)```", README, flags=re.S)


def test_readme_has_sql_examples():
    assert len(EXAMPLES) >= 3


@pytest.mark.parametrize("sql", EXAMPLES, ids=[f"example{i}" for i in range(len(EXAMPLES))])
def test_readme_sql_runs(built, sql):
    files = "'data/" in sql  # examples that read the files, for DuckDB itself: full access
    sql = sql.replace("'data/", f"'{built}/")
    table = run_sql(built, sql.strip().rstrip(";"), allow_writes=files)
    assert table.num_rows > 0


def test_readme_probe_example_is_current(built):
    from pipeline.probe import probe

    result = probe("chopsticks", "1-3|0-2", built)
    block = README[README.index("$ tablebase probe chopsticks '1-3|0-2'"):]
    assert f"{result.position}  {result.value} in {result.remoteness}" in block
    for move in result.moves:
        assert move.move in block


READERS = re.search(r"```python\n(duckdb\.sql\(.*?)```", README, flags=re.S).group(1).splitlines()


@pytest.mark.parametrize("line", READERS, ids=[line.split("#")[-1].strip() for line in READERS])
def test_readme_reader_one_liners_run(built, tmp_path, monkeypatch, line):
    import glob

    import duckdb
    import pandas
    import polars
    import pyarrow.dataset

    (tmp_path / "data").symlink_to(built)
    monkeypatch.chdir(tmp_path)
    result = eval(line, {"duckdb": duckdb, "glob": glob, "pandas": pandas, "polars": polars, "pyarrow": pyarrow})
    rows = result.fetchall() if isinstance(result, duckdb.DuckDBPyRelation) else result
    assert len(rows) > 0
