"""The names of the dataset's kinds of file, without their schemas.

pipeline/core/dataset.py defines each kind's columns with pyarrow's types; the data folder's
layout and the reading commands (`tablebase sql`, `query`) need only the names, and load
without pyarrow (BENCHMARKS.md, "Start-up, round three"). tests/test_catalog_row.py holds
these names to dataset.py's kinds.
"""

#: The files of a ruleset's folder, by name, in the order `build` writes them (the catalog
#: row, `summary`, last): pipeline.core.dataset.RULESET_FILES.
RULESET_KINDS = ("positions", "transitions", "solution", "verification", "tablebase", "index", "lookup", "summary")

#: The kinds of file whose path every catalog row records (`<kind>_path`, and `<kind>_sha256`):
#: those the data folder's views, `tablebase sql` and `tablebase query` read.
QUERIED = ("tablebase", "transitions")
