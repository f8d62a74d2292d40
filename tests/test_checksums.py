"""The catalog's bytes do not depend on how it was written."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from pipeline.layout import DataDir
from pipeline.rulesets import Ruleset
from pipeline.stages.build import build

RULESETS = ["chopsticks", "nim", "sticks:rows=5"]


def tablebase(*args: str, data: Path | None = None) -> subprocess.CompletedProcess:
    extra = ["--data", str(data)] if data is not None else []
    return subprocess.run([sys.executable, "-m", "pipeline", *args, *extra],
                          capture_output=True, text=True, timeout=300)


@pytest.fixture(scope="module")
def base(tmp_path_factory) -> Path:
    """The issue's data folder: chopsticks, nim and sticks:rows=5."""
    data = tmp_path_factory.mktemp("checksums") / "data"
    for ruleset in RULESETS:
        build(Ruleset.parse(ruleset), DataDir(data))
    return data


@pytest.fixture(scope="module")
def bundle(base, tmp_path_factory) -> Path:
    from pipeline.publish import publish

    out = tmp_path_factory.mktemp("dist")
    return publish(base, out)[0]


# -- the catalog's bytes ----------------------------------------------------------------------------


def test_the_catalog_has_the_same_bytes_however_it_is_written(base, tmp_path):
    """A build adding its row to the catalog, `export`, a deleted catalog, a touched
    summary, a kill between or after a publish's renames: the same rows, the same bytes."""
    reference = (base / "catalog.parquet").read_bytes()

    def copy(name: str) -> DataDir:
        return DataDir(Path(shutil.copytree(base, tmp_path / name)))

    store = copy("export")
    assert tablebase("export", "nim", "-q", data=store.root).returncode == 0
    written = {"export of a ruleset": store.catalog.read_bytes()}
    store = copy("deleted")
    store.catalog.unlink()
    build(Ruleset.parse("sticks:rows=5"), store)
    written["deleted catalog"] = store.catalog.read_bytes()
    store = copy("touched")
    os.utime(store.root / "nim" / "default" / "summary.parquet")
    build(Ruleset.parse("sticks:rows=5"), store)
    written["touched summary"] = store.catalog.read_bytes()
    store = copy("put back")  # killed between the renames: nothing in place
    (store.trash / "999999999" / "nim").mkdir(parents=True)
    os.rename(store.root / "nim" / "default", store.trash / "999999999" / "nim" / "default")
    build(Ruleset.parse("sticks:rows=5"), store)
    written["a folder put back after a kill"] = store.catalog.read_bytes()
    store = copy("taken in")  # killed after the renames: the new folder in place
    shutil.copytree(store.root / "nim" / "default", store.trash / "999999999" / "nim" / "default")
    os.utime(store.root / "nim" / "default" / "summary.parquet")
    build(Ruleset.parse("sticks:rows=5"), store)
    written["a folder taken in after a kill"] = store.catalog.read_bytes()
    store = copy("rebuilt")
    build(Ruleset.parse("chopsticks"), store)
    written["a rebuild"] = store.catalog.read_bytes()
    assert {how: raw == reference for how, raw in written.items()} == {how: True for how in written}


def test_a_bundle_has_the_data_folders_catalog(base, bundle):
    assert (bundle / "catalog.parquet").read_bytes() == (base / "catalog.parquet").read_bytes()
