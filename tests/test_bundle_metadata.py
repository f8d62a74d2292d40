"""The published bundle as dataset hubs and citation tools read it: the Hugging Face card
header, Croissant, Frictionless, CITATION.cff, and every game read at once."""

from __future__ import annotations

import glob
import json
import re
from pathlib import Path

import duckdb
import pyarrow
import pyarrow.dataset
import pyarrow.parquet
import pytest

from pipeline import __version__
from pipeline.datadir.check import check
from pipeline.products.datacard import ALL_GAMES, WITH_RULESET
from pipeline.products.publish import publish

METADATA = ("README.md", "croissant.json", "datapackage.json", "CITATION.cff")


@pytest.fixture(scope="module")
def bundle(built, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    publish(built, out)
    return out / f"tablebase-{__version__}"


def test_the_metadata_files_are_checksummed_and_checked(bundle, tmp_path):
    listed = (bundle / "SHA256SUMS").read_text()
    for name in METADATA:
        assert re.search(rf"^[0-9a-f]{{64}}  {re.escape(name)}$", listed, re.M), name
    assert check(bundle) == []


def test_a_changed_metadata_byte_is_caught(bundle, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy)
    text = (copy / "croissant.json").read_text()
    (copy / "croissant.json").write_text(text.replace("tablebase", "tablebasf", 1))
    assert any("croissant.json" in line for line in check(copy))


def test_publishing_twice_gives_the_same_metadata(built, bundle, tmp_path):
    publish(built, tmp_path)
    for name in METADATA + ("DATASET.md",):
        assert (tmp_path / bundle.name / name).read_bytes() == (bundle / name).read_bytes(), name


def test_the_card_has_a_hugging_face_header_with_a_config_per_game(bundle):
    card = (bundle / "README.md").read_text()
    assert card == (bundle / "DATASET.md").read_text()
    header = card.split("---\n")[1]
    assert "license: cc0-1.0" in header and "size_categories:\n- " in header and "tags:\n" in header
    games = sorted({row["game"] for row in pyarrow.parquet.read_table(bundle / "catalog.parquet").to_pylist()})
    assert re.findall(r"config_name: (\S+)", header) == games


def test_datasets_loads_a_game_by_its_config(bundle, tmp_path, monkeypatch):
    datasets = pytest.importorskip("datasets", reason="the test extra's datasets is not installed")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    loaded = datasets.load_dataset(str(bundle), "chopsticks", cache_dir=str(tmp_path / "cache"))
    rows = loaded["train"]
    positions = sum(
        r["positions"]
        for r in pyarrow.parquet.read_table(bundle / "catalog.parquet").to_pylist()
        if r["game"] == "chopsticks"
    )
    assert rows.num_rows == positions and set(rows["ruleset"]) >= {"chopsticks", "chopsticks:split=any"}


def test_croissant_validates_and_reads_every_game(bundle):
    mlcroissant = pytest.importorskip("mlcroissant", reason="the test extra's mlcroissant is not installed")
    dataset = mlcroissant.Dataset(jsonld=str(bundle / "croissant.json"))
    records = list(dataset.records(record_set="sticks"))
    assert len(records) == pyarrow.parquet.read_table(bundle / "sticks" / "rows-2" / "tablebase.parquet").num_rows


def test_datapackage_validates(bundle):
    frictionless = pytest.importorskip("frictionless", reason="the test extra's frictionless is not installed")
    descriptor = json.loads((bundle / "datapackage.json").read_text())
    report = frictionless.Package.validate_descriptor(descriptor)
    assert report.valid, report.flatten(["type", "note"])
    for resource in descriptor["resources"]:
        assert (bundle / resource["path"]).is_file()


def test_citation_cff_validates_against_the_cff_schema(bundle):
    # cffconvert, the format's validator, validates with this schema; it needs jsonschema < 4,
    # which frictionless rules out, so the schema is vendored (tests/fixtures/README.md)
    jsonschema = pytest.importorskip("jsonschema", reason="the test extra's jsonschema is not installed")
    yaml = pytest.importorskip("yaml", reason="the test extra's pyyaml is not installed")

    class CffLoader(yaml.SafeLoader):
        """YAML as CFF reads it: a date stays the string that the schema's format 'date' checks."""

    CffLoader.yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    schema = json.loads((Path(__file__).parent / "fixtures" / "cff-1.2.0.schema.json").read_text())
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    citation = yaml.load((bundle / "CITATION.cff").read_text(), Loader=CffLoader)
    assert [error.message for error in validator.iter_errors(citation)] == []
    assert citation["type"] == "dataset" and citation["license"] == "CC0-1.0"
    assert not validator.is_valid({**citation, "authors": []})  # the schema holds: an author is required


def test_the_seeds_are_named_with_the_address_that_is_known(bundle):
    card = (bundle / "DATASET.md").read_text()
    for number in ("000", "001", "002", "003", "004"):
        assert f"seed {number}:" in card
    assert "https://qiita.com/kaityo256/items/86562e9ab20ae7bced1d" in card


def test_the_card_says_which_files_carry_the_ruleset_column(bundle):
    card = (bundle / "DATASET.md").read_text()
    assert WITH_RULESET == ("transitions", "tablebase", "summary")
    for row in pyarrow.parquet.read_table(bundle / "catalog.parquet").to_pylist():
        for path in sorted((bundle / row["folder"]).glob("*.parquet")):
            has = "ruleset" in pyarrow.parquet.read_schema(path).names
            assert has == (path.stem in WITH_RULESET), path
            assert (f"`{path.stem}.parquet`" in card.split("have a `ruleset` column")[0].splitlines()[-1]) == has


@pytest.mark.parametrize("line", ALL_GAMES[:3], ids=["duckdb", "pyarrow", "polars"])
def test_every_game_reads_at_once(bundle, monkeypatch, line):
    import polars

    monkeypatch.chdir(bundle)
    result = eval(line, {"duckdb": duckdb, "glob": glob, "polars": polars, "pyarrow": pyarrow})
    total = sum(pyarrow.parquet.read_table("catalog.parquet")["positions"].to_pylist())
    if isinstance(result, duckdb.DuckDBPyRelation):
        assert sum(row[-1] for row in result.fetchall()) == total
        assert {row[0] for row in result.fetchall()} == {"chopsticks", "sticks"}
        return
    names = result.column_names if isinstance(result, pyarrow.Table) else result.columns
    assert len(result) == total and {"rows", "mover", "opponent", "value"} <= set(names)
