"""The explorer with no server: what `tablebase publish --explorer` adds to a bundle, so that
the bundle on any static host (one that honours HTTP Range, as they all do) is explorable
in a browser, the billion-position boards included.

    <bundle>/index.html             the page `tablebase serve` serves at /, reading the
                                    bundle's Parquet instead of the API
    <bundle>/explorer/              explorer.js and explorer.css (the served explorer's),
                                    parquet.js (its lookups by DuckDB-WASM, over HTTP ranges)
    <bundle>/explorer/duckdb/       DuckDB-WASM, vendored by `make duckdb-wasm`: duckdb.mjs,
                                    its worker and wasm, NOTICE

The page sits at the bundle's root, so the bundle's address opens it and the Parquet files
are found beside it. DuckDB-WASM (35 MB) is not in the Python package: the light install
stays light, and only a bundle published with --explorer needs it.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from importlib import resources
from pathlib import Path

from pipeline.core.errors import DataError

#: The environment variable naming the folder of DuckDB-WASM's files, where it is not the
#: one `make duckdb-wasm` fills (.venv/duckdb-wasm).
WASM_FOLDER = "TABLEBASE_DUCKDB_WASM"
#: DuckDB-WASM's files the page loads (parquet.js names them), and its NOTICE.
WASM_FILES = ("duckdb.mjs", "duckdb-browser-eh.worker.js", "duckdb-eh.wasm", "NOTICE")
#: The served explorer's files the bundle's explorer shares, and its own.
SCRIPTS = ("explorer.js", "explorer.css", "parquet.js")
#: The served page's script tag, before which the bundle's page loads parquet.js.
SERVED_SCRIPT = '<script src="explorer/explorer.js" defer></script>'


class MissingExplorer(DataError):
    """DuckDB-WASM's files are not where the static explorer is written from."""


def wasm_folder() -> Path:
    """Where DuckDB-WASM's files are read from: $TABLEBASE_DUCKDB_WASM, else the folder
    `make duckdb-wasm` fills in the environment's prefix (.venv/duckdb-wasm)."""
    return Path(os.environ.get(WASM_FOLDER) or Path(sys.prefix) / "duckdb-wasm")


def require_wasm() -> Path:
    """The folder of DuckDB-WASM's files; MissingExplorer, in one line, where any is missing."""
    folder = wasm_folder()
    missing = [name for name in WASM_FILES if not (folder / name).is_file()]
    if missing:
        raise MissingExplorer(
            f"the static explorer needs DuckDB-WASM ({', '.join(missing)} missing in {folder}): "
            f"run `make duckdb-wasm` (it needs npm), or set {WASM_FOLDER} to a folder holding {', '.join(WASM_FILES)}"
        )
    return folder


def page() -> str:
    """The bundle's index.html: the served explorer's page, loading parquet.js before
    explorer.js (a module script runs in order with the deferred ones)."""
    served = (resources.files("pipeline") / "explorer" / "index.html").read_text(encoding="utf-8")
    if served.count(SERVED_SCRIPT) != 1:  # a change to the page that this must follow
        raise DataError(f"pipeline/explorer/index.html no longer loads its script as {SERVED_SCRIPT}")
    return served.replace(SERVED_SCRIPT, '<script type="module" src="explorer/parquet.js"></script>\n' + SERVED_SCRIPT)


def write_explorer(folder: Path, link: Callable[[Path, Path], None]) -> None:
    """The static explorer into the bundle folder `folder`; `link(source, target)` puts a
    file in (publish's hard link, a copy across file systems)."""
    wasm = require_wasm()
    (folder / "index.html").write_text(page(), encoding="utf-8")
    scripts = resources.files("pipeline") / "explorer"
    (folder / "explorer" / "duckdb").mkdir(parents=True, exist_ok=True)
    for name in SCRIPTS:
        (folder / "explorer" / name).write_bytes((scripts / name).read_bytes())
    for name in WASM_FILES:
        link(wasm / name, folder / "explorer" / "duckdb" / name)
