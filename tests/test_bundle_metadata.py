"""The published bundle as dataset hubs and citation tools read it: the Hugging Face card
header, Croissant, Frictionless, CITATION.cff, each checked by its format's own validator
(frictionless, mlcroissant, cffconvert), and every game read at once; and the repository's
own CITATION.cff, the software's, checked likewise."""

from __future__ import annotations

import fnmatch
import glob
import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import duckdb
import pyarrow
import pyarrow.dataset
import pyarrow.parquet
import pytest

from pipeline import __released__, __version__
from pipeline.core.dataset import TABLEBASE
from pipeline.datadir.check import check
from pipeline.datadir.layout import DataDir
from pipeline.games.rulesets import Ruleset
from pipeline.products.datacard import ALL_GAMES, WITH_RULESET
from pipeline.products.publish import publish
from pipeline.stages.build import build

ROOT = Path(__file__).resolve().parent.parent
METADATA = ("README.md", "croissant.json", "datapackage.json", "CITATION.cff")
URL = "https://tablebase.example/dataset"
#: Besides the session's chopsticks (loopy, with draws) and sticks (Grundy values): a game that
#: is not impartial and ties, one whose positions file holds keys, one with list and NULL columns.
MORE = ["tictactoe:rows=1", "connect:cols=3,k=3,rows=3", "nim"]
#: The validators' commands, beside this Python (`make dev` installs them; cffconvert apart).
BIN = Path(sys.executable).parent
CFFCONVERT = ROOT / ".venv" / "cffconvert" / "bin" / "cffconvert"


@pytest.fixture(scope="module")
def data(built, tmp_path_factory) -> Path:
    data = tmp_path_factory.mktemp("data") / "data"
    shutil.copytree(built, data)
    for ruleset in MORE:
        build(Ruleset.parse(ruleset), DataDir(data))
    return data


@pytest.fixture(scope="module")
def bundle(data, tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    publish(data, out, URL)
    return out / f"tablebase-{__version__}"


def parquet_files(bundle: Path) -> list[str]:
    return sorted(p.relative_to(bundle).as_posix() for p in bundle.rglob("*.parquet"))


def run(command: list[str | Path], cwd: Path) -> subprocess.CompletedProcess:
    if not Path(command[0]).exists():
        pytest.skip(f"{command[0]} is not installed: make dev installs it")
    return subprocess.run([str(part) for part in command], cwd=cwd, capture_output=True, text=True)


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


def test_publishing_twice_gives_the_same_metadata(data, bundle, tmp_path):
    publish(data, tmp_path, URL)
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
    records = list(dataset.records(record_set="sticks/tablebase"))
    assert len(records) == pyarrow.parquet.read_table(bundle / "tablebase" / "sticks" / "rows-2.parquet").num_rows


def test_datapackage_validates(bundle):
    frictionless = pytest.importorskip("frictionless", reason="the test extra's frictionless is not installed")
    descriptor = json.loads((bundle / "datapackage.json").read_text())
    report = frictionless.Package.validate_descriptor(descriptor)
    assert report.valid, report.flatten(["type", "note"])
    for resource in descriptor["resources"]:
        assert (bundle / resource["path"]).is_file()


def cff_schema_and_reader():
    """CFF 1.2.0's schema as a validator, and a reader of YAML as CFF reads it: a date stays the
    string that the schema's format 'date' checks. cffconvert, the format's validator, validates
    with this schema; it needs jsonschema < 4, which frictionless rules out, so the schema is
    vendored (tests/fixtures/README.md)."""
    jsonschema = pytest.importorskip("jsonschema", reason="the test extra's jsonschema is not installed")
    yaml = pytest.importorskip("yaml", reason="the test extra's pyyaml is not installed")

    class CffLoader(yaml.SafeLoader):
        pass

    CffLoader.yaml_implicit_resolvers = {
        first: [(tag, pattern) for tag, pattern in resolvers if tag != "tag:yaml.org,2002:timestamp"]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }
    schema = json.loads((Path(__file__).parent / "fixtures" / "cff-1.2.0.schema.json").read_text())
    validator = jsonschema.Draft7Validator(schema, format_checker=jsonschema.Draft7Validator.FORMAT_CHECKER)
    return validator, lambda text: yaml.load(text, Loader=CffLoader)


def test_citation_cff_validates_against_the_cff_schema(bundle):
    validator, read = cff_schema_and_reader()
    citation = read((bundle / "CITATION.cff").read_text())
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
        for kind in sorted(path.name for path in bundle.iterdir() if path.is_dir() and path.name != "pages"):
            has = "ruleset" in pyarrow.parquet.read_schema(bundle / kind / f"{row['folder']}.parquet").names
            assert has == (kind in WITH_RULESET), (kind, row["folder"])
            assert (f"`{kind}`" in card.split("have a `ruleset` column")[0].splitlines()[-1]) == has


@pytest.mark.parametrize("line", ALL_GAMES[:3], ids=["duckdb", "pyarrow", "polars"])
def test_every_game_reads_at_once(bundle, monkeypatch, line):
    import polars

    monkeypatch.chdir(bundle)
    result = eval(line, {"duckdb": duckdb, "glob": glob, "polars": polars, "pyarrow": pyarrow})
    total = sum(pyarrow.parquet.read_table("catalog.parquet")["positions"].to_pylist())
    if isinstance(result, duckdb.DuckDBPyRelation):
        assert sum(row[-1] for row in result.fetchall()) == total
        assert {row[0] for row in result.fetchall()} == {"chopsticks", "connect", "nim", "sticks", "tictactoe"}
        return
    names = result.column_names if isinstance(result, pyarrow.Table) else result.columns
    assert len(result) == total and {"rows", "mover", "opponent", "heaps", "value"} <= set(names)


# -- each format's own validator ------------------------------------------------------------


def test_frictionless_validates_every_file_of_the_bundle(bundle):
    result = run([BIN / "frictionless", "validate", "datapackage.json"], bundle)
    assert result.returncode == 0, result.stdout[-3000:]
    described = [resource["path"] for resource in json.loads((bundle / "datapackage.json").read_text())["resources"]]
    assert sorted(described) == parquet_files(bundle)


def test_every_resource_lists_its_files_own_columns(bundle):
    for resource in json.loads((bundle / "datapackage.json").read_text())["resources"]:
        names = [field["name"] for field in resource["schema"]["fields"]]
        assert names == pyarrow.parquet.read_schema(bundle / resource["path"]).names, resource["path"]
    tablebase = next(
        r
        for r in json.loads((bundle / "datapackage.json").read_text())["resources"]
        if r["name"] == "tablebase.nim.default"
    )
    fields = {field["name"]: field for field in tablebase["schema"]["fields"]}
    assert fields["id"]["type"] == "integer" and fields["id"]["constraints"] == {"required": True}
    assert fields["remoteness"]["type"] == "integer" and "required" not in fields["remoteness"].get("constraints", {})
    assert "list<" in fields["heaps"]["description"]


def test_frictionless_catches_the_shared_schema_of_before(bundle, tmp_path):
    """0.3.0 gave every tablebase the 8 shared columns: frictionless failed 155 of 158 resources."""
    copy = tmp_path / "copy"
    shutil.copytree(bundle, copy)
    descriptor = json.loads((copy / "datapackage.json").read_text())
    # the tablebases alone: the other resources' validation is the test above's, and half this one's time
    descriptor["resources"] = [r for r in descriptor["resources"] if r["path"].startswith("tablebase/")]
    for resource in descriptor["resources"]:
        resource["schema"] = {"fields": [{"name": c.name, "type": "any"} for c in TABLEBASE.columns]}
    (copy / "datapackage.json").write_text(json.dumps(descriptor))
    result = run([BIN / "frictionless", "validate", "datapackage.json"], copy)
    assert result.returncode != 0 and "extra-label" in result.stdout


def test_mlcroissant_validates_and_names_creator_address_version_and_date(bundle):
    result = run([BIN / "mlcroissant", "validate", "--jsonld", "croissant.json"], bundle)
    assert result.returncode == 0 and "error" not in result.stderr.lower(), result.stderr[-3000:]
    assert "warning" not in result.stderr.lower(), result.stderr[-3000:]
    document = json.loads((bundle / "croissant.json").read_text())
    assert document["url"] == URL and document["creator"]["name"]
    assert (document["version"], document["datePublished"]) == (__version__, __released__)


def test_croissant_describes_every_parquet_file_with_its_columns(bundle):
    document = json.loads((bundle / "croissant.json").read_text())
    sources = {}
    for item in document["distribution"]:
        patterns = item.get("contentUrl") or item["includes"]
        for pattern in [patterns] if isinstance(patterns, str) else patterns:
            sources[pattern] = item["@id"]
    fields = {record["@id"]: [field["name"] for field in record["field"]] for record in document["recordSet"]}
    for path in parquet_files(bundle):
        matched = [source for pattern, source in sources.items() if fnmatch.fnmatch(path, pattern)]
        assert len(matched) == 1, path
        record = next(
            r
            for r in document["recordSet"]
            if r["field"][0]["source"].get("fileSet", r["field"][0]["source"].get("fileObject"))["@id"] == matched[0]
        )
        assert fields[record["@id"]] == pyarrow.parquet.read_schema(bundle / path).names, path


def test_croissant_reads_every_record_set_but_the_catalogs(bundle):
    """mlcroissant 1.1 cannot cast a Parquet map (the catalog's and summaries' `params`) to
    any of its types; every other record set reads, a record per row."""
    mlcroissant = pytest.importorskip("mlcroissant", reason="the test extra's mlcroissant is not installed")
    dataset = mlcroissant.Dataset(jsonld=str(bundle / "croissant.json"))
    for record_set in dataset.metadata.record_sets:
        if record_set.name == "catalog" or record_set.name.endswith("/summary"):
            continue
        game, kind = record_set.name.split("/")
        rows = sum(pyarrow.parquet.read_metadata(p).num_rows for p in bundle.glob(f"{kind}/{game}/*.parquet"))
        assert sum(1 for _ in dataset.records(record_set=record_set.uuid)) == rows, record_set.name


def test_cffconvert_validates_the_citation_and_catches_a_broken_one(bundle, tmp_path):
    result = run([CFFCONVERT, "--validate", "-i", "CITATION.cff"], bundle)
    assert result.returncode == 0, result.stdout + result.stderr
    citation = (bundle / "CITATION.cff").read_text()
    assert f"url: {URL}" in citation and f"date-released: '{__released__}'" in citation
    (tmp_path / "CITATION.cff").write_text(citation.replace("cff-version: 1.2.0", "cff-version: 1.2.0\nauthors: []"))
    assert run([CFFCONVERT, "--validate", "-i", "CITATION.cff"], tmp_path).returncode != 0


def test_the_version_is_the_changelogs_and_every_metadata_file_carries_it(bundle):
    top = re.search(r"^## \[(\S+)\] - (\d{4}-\d{2}-\d{2})$", (ROOT / "CHANGELOG.md").read_text(), re.M)
    assert top is not None and top.groups() == (__version__, __released__)
    assert json.loads((bundle / "datapackage.json").read_text())["version"] == __version__
    assert f"version: {__version__}\n" in (bundle / "CITATION.cff").read_text()
    assert f"# tablebase dataset {__version__}" in (bundle / "DATASET.md").read_text()


def test_the_softwares_citation_is_valid_and_names_this_version():
    """The repository's own CITATION.cff (the software's; a bundle's cites the dataset) passes
    the schema and cffconvert, and says the version and release date the package says: a
    release that raised __version__ alone would leave the citation naming the one before."""
    validator, read = cff_schema_and_reader()
    citation = read((ROOT / "CITATION.cff").read_text())
    assert [error.message for error in validator.iter_errors(citation)] == []
    licence = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["license"]
    assert (citation["type"], citation["license"]) == ("software", licence)
    assert (citation["version"], citation["date-released"]) == (__version__, __released__)
    result = run([CFFCONVERT, "--validate", "-i", "CITATION.cff"], ROOT)
    assert result.returncode == 0, result.stdout + result.stderr


def test_publish_without_the_publish_extra_says_what_to_install(monkeypatch):
    import importlib.util

    from pipeline.core.errors import DataError
    from pipeline.products import metadata

    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *rest: None if name == "mlcroissant" else real(name, *rest)
    )
    with pytest.raises(
        DataError, match=r"with mlcroissant, which is not installed: pip install 'tablebase\[publish\]'"
    ):
        metadata.libraries()
