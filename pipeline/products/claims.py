"""The seeds' claims and tables, put to the test by the query files, as one Markdown report.

Every query of the library (queries/, installed as pipeline.queries; plus a folder of the
user's own, whose files win on a name both have) whose name starts with `claim_` or `seed`
runs over the built tablebases; its header comment says what it checks. Claim queries answer one row per
ruleset ('holds on N positions') or one 'fails' row per counterexample.
"""

from __future__ import annotations

from contextlib import nullcontext
from pathlib import Path

import pyarrow as pa

from pipeline.datadir.layout import DataDir
from pipeline.products.query import QueryError, QueryFile, query_files, run_sql
from pipeline.storage.output import write_output
from pipeline.storage.progress import Stage

#: Parameters for the report's run of queries that take some.
REPORT_PARAMS = {"seed003_state_graph": {"ruleset": "chopsticks"}}
#: Counterexamples shown per ruleset; the count is always given.
SHOWN = 10


def claim_queries(queries: Path | None = None) -> list[QueryFile]:
    """The claim and seed queries, packaged and in the folder `queries`, by name."""
    return [QueryFile.read(path) for name, path in query_files(queries).items() if name.startswith(("claim_", "seed"))]


def report(data: Path, queries: Path | None = None) -> str:
    """Run every claim and seed query (packaged, and in the folder `queries`); the Markdown report."""
    out = ["# The seeds' claims, checked against the tablebases", ""]
    summary: list[str] = []
    sections = []
    listed = claim_queries(queries)
    with Stage("claims", unit="queries") as stage:
        for done, query in enumerate(listed):
            stage.phase(query.name, 1 / len(listed))
            stage.count(done, len(listed))
            sections += _section(data, query, summary)
        holding = sum("| **fails**" not in line for line in summary)
        stage.summary = f"{len(listed)} queries, {holding} claims hold, {len(summary) - holding} fail"
    if summary:
        out += ["| query | ruleset | verdict |", "|---|---|---|", *summary, ""]
    else:
        out += ["No claim could be checked: build nim and hackenbush rulesets first.", ""]
    return "\n".join(out + sections)


def _section(data: Path, query: QueryFile, summary: list[str]) -> list[str]:
    """The report's section for one query (its rows, or why it did not run); its verdicts
    added to `summary`."""
    params = REPORT_PARAMS.get(query.name, {})
    text = [line for line in query.header if not line.startswith(("Example", "Parameters"))]
    section = [f"## {query.name}", "", *text, ""]
    if any(name not in params for name in query.parameters):
        return [*section, "(skipped: needs parameters)", ""]
    try:
        table = run_sql(data, query.path.read_text(), params)
    except QueryError as error:
        return [*section, f"(not run: {error})", ""]
    command = f"`tablebase query {query.name}" + "".join(f" --param {k}={v}" for k, v in params.items()) + "`"
    section += [command, ""]
    if "verdict" in table.column_names:
        rows = table.to_pylist()
        for ruleset in dict.fromkeys(r["ruleset"] for r in rows):
            mine = [r for r in rows if r["ruleset"] == ruleset]
            if mine[0]["verdict"].startswith("holds"):
                summary.append(f"| {query.name} | `{ruleset}` | {mine[0]['verdict']} |")
            else:
                summary.append(f"| {query.name} | `{ruleset}` | **fails**: {len(mine)} counterexamples |")
        section += _markdown(_shown(table))
    else:
        section += _markdown(table)
    return [*section, ""]


def _shown(table: pa.Table) -> pa.Table:
    """Every 'holds' row and at most SHOWN counterexamples per ruleset."""
    kept: list[dict] = []
    seen: dict[str, int] = {}
    for row in table.to_pylist():
        seen[row["ruleset"]] = seen.get(row["ruleset"], 0) + 1
        if row["verdict"] != "fails" or seen[row["ruleset"]] <= SHOWN:
            kept.append(row)
    return pa.Table.from_pylist(kept, schema=table.schema)


def _markdown(table: pa.Table) -> list[str]:
    if table.num_rows == 0:
        return ["(no rows: no matching ruleset is built)"]
    names = table.column_names
    lines = ["| " + " | ".join(names) + " |", "|" + "---|" * len(names)]
    for row in table.to_pylist():
        lines.append("| " + " | ".join("" if row[n] is None else str(row[n]) for n in names) + " |")
    return lines


def write_report(data: Path, queries: Path | None, out: Path) -> None:
    """Write the report to `out`: a file atomically, a device or FIFO written to
    (output.write_output)."""
    text = report(data, queries)
    # beside the catalog, under the publish lock: a build's sweep then takes a file written
    # aside there for a killed writer's
    beside = out.resolve().parent == data.resolve()
    with DataDir(data).lock("publish") if beside else nullcontext():
        write_output(text.encode(), out)
