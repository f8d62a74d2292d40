"""A catalog row is typed (pipeline/core/dataset.py's CatalogRow): its fields are the
catalog's columns, and export, build and the readers of the catalog hand it on whole. A
ruleset's typed paths name the declared kinds of file."""

from __future__ import annotations

from dataclasses import fields

import pyarrow.parquet as pq

from pipeline.core.dataset import CATALOG, RULESET_FILES, CatalogRow
from pipeline.datadir.catalog import read_catalog
from pipeline.datadir.layout import DataDir, RulesetPaths
from pipeline.games.rulesets import Ruleset
from pipeline.products.draw import read_summary
from pipeline.stages.build import build


def test_a_catalog_row_has_the_catalogs_columns_in_order():
    assert [field.name for field in fields(CatalogRow)] == [column.name for column in CATALOG.columns]


def test_a_rulesets_paths_are_the_declared_kinds_of_file():
    """RulesetPaths' typed properties (files.tablebase, …) are written by hand for mypy: one per
    kind of RULESET_FILES, no more."""
    typed = {name for name, member in vars(RulesetPaths).items() if isinstance(member, property)}
    assert typed == {kind.name for kind in RULESET_FILES}


def test_the_kinds_named_without_pyarrow_are_the_datasets():
    """pipeline/core/kinds.py names the kinds of file for the reading commands, which load no
    pyarrow; dataset.py defines them with their columns: the two must name the same kinds."""
    from pipeline.core import dataset, kinds

    assert tuple(kind.name for kind in RULESET_FILES) == kinds.RULESET_KINDS
    assert kinds.QUERIED == dataset.QUERIED


def test_a_build_returns_the_row_its_summary_holds(tmp_path):
    rules = Ruleset.parse("chopsticks:split=any")
    data = DataDir(tmp_path)
    row = build(rules, data)
    assert isinstance(row, CatalogRow)
    assert row.table().equals(pq.read_table(data.ruleset(rules).summary))
    assert (row.ruleset, row.positions, row["wins"], row.parameters["split"]) == (
        rules.id,
        row.wins + row.losses + row.ties + row.draws,
        row.wins,
        "any",
    )
    assert read_summary(rules, tmp_path) == row
    assert read_catalog(data) == [row]
