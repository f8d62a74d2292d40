"""Query results as text: an aligned table, CSV, or JSON lines."""

from __future__ import annotations

import io
import json

import pyarrow as pa
import pyarrow.csv as pacsv

from pipeline.errors import TablebaseError

FORMATS = ("table", "csv", "json", "parquet")


def render(table: pa.Table, form: str) -> str:
    """`table` as text in `form`: table, csv or json (one object per line)."""
    if form == "table":
        return _aligned(table)
    if form == "csv":
        sink = io.BytesIO()
        pacsv.write_csv(_flat(table), sink)
        return sink.getvalue().decode()
    if form == "json":
        rows = zip(*(_plain_column(column) for column in table.columns)) if table.num_columns else []
        return "".join(
            json.dumps(dict(zip(table.column_names, row)), default=str, ensure_ascii=False) + "\n"
            for row in rows
        )
    raise TablebaseError(f"unknown format {form!r} (expected one of {', '.join(FORMATS)})")


def _aligned(table: pa.Table) -> str:
    rows = [["NULL" if v is None else str(v) for v in row.values()] for row in table.to_pylist()]
    names = table.column_names
    widths = [max([len(name)] + [len(r[i]) for r in rows]) for i, name in enumerate(names)]
    lines = ["  ".join(name.ljust(w) for name, w in zip(names, widths)).rstrip()]
    lines += ["  ".join(v.ljust(w) for v, w in zip(row, widths)).rstrip() for row in rows]
    return "\n".join(lines) + "\n"


def _plain_column(column: pa.ChunkedArray) -> list:
    """A column's values as plain Python, maps as dicts."""
    values = column.to_pylist()
    if pa.types.is_map(column.type):
        return [None if v is None else dict(v) for v in values]
    return values


def _flat(table: pa.Table) -> pa.Table:
    """Nested columns (lists, maps) as JSON text, which CSV cannot hold otherwise."""
    columns = []
    for column in table.columns:
        if pa.types.is_nested(column.type):
            column = pa.array([None if v is None else json.dumps(v, default=str, ensure_ascii=False)
                               for v in _plain_column(column)], pa.string())
        columns.append(column)
    return pa.Table.from_arrays(columns, names=table.column_names)
