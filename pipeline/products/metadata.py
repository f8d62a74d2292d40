"""croissant.json, datapackage.json and CITATION.cff: a published bundle described for the
tools that read datasets (MLCommons Croissant, Frictionless Data, citation managers).

Every Parquet file of the bundle is described with the columns its own footer lists, the
game's included, each with its meaning from pipeline/core/dataset.py or from the game.
The schemas come from the footers rather than from frictionless's inference, which reads a
whole file into pandas (hundreds of millions of rows for the larger games), takes its types
from the first rows it samples (a nullable integer column came out as `number`, an all-NULL
one as `any`) and stops on list columns (frictionless 5.21: "The truth value of an array
... is ambiguous"); a footer is read in a millisecond and says each type exactly.

Each document is made with its format's own library (mlcroissant's classes, frictionless's
Package, PyYAML), which the `publish` extra installs. None holds a date but the release's
(pipeline.__released__), so the same data gives the same bytes.
"""

from __future__ import annotations

import datetime
import json
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pipeline import __released__, __version__
from pipeline.core.dataset import CATALOG, KEY, POSITIONS, RULESET_FILES, CatalogRow, FileKind
from pipeline.core.errors import DataError
from pipeline.datadir.layout import BY_KIND
from pipeline.games import find_game
from pipeline.storage import parts
from pipeline.storage.imports import show_pandas
from pipeline.storage.parquet import sha256

TITLE = "tablebase: two-player games solved completely"
DESCRIPTION = (
    "Every position, every move and the value of every position under perfect play "
    "(win/loss/tie/draw for the player to move, remoteness in plies, Grundy value) "
    "of small two-player games and their rule variants, as Parquet."
)
KEYWORDS = ("game-theory", "combinatorial-game-theory", "tablebase", "retrograde-analysis", "parquet")
#: Who made the dataset, as CITATION.cff and Croissant name them (LICENSE's copyright holder).
CREATOR = "the tablebase authors"
DATA_LICENCE = "CC0-1.0"
DATA_LICENCE_URL = "https://creativecommons.org/publicdomain/zero/1.0/"
#: Parquet's media type as IANA registered it (Croissant readers know it as mlcroissant's
#: EncodingFormat.PARQUET, application/x-parquet, and read nothing else as Parquet).
PARQUET = "application/vnd.apache.parquet"

#: The blog posts the games come from (docs/explanation/seeds.md): number, title, author, URL
#: where one is recorded (../shared/seeds/ keeps the texts, not their addresses).
SEEDS = (
    ("000", "指で数字を増やして5を目指すゲームが後手必勝であることを示す", "the blog ねぇうしくんうしくん", None),
    ("001", "棒消しゲームは先手必勝か後手必勝かどうかについて微考ペガサス", "stackprobe7s_memo", None),
    ("002", "変種石取りゲームの必勝法", "Enjapma (ISer Advent Calendar 2019, day 19)", None),
    (
        "003",
        "「割りばし」が後手必勝であることを確認する",
        "kaityo256 (Qiita)",
        "https://qiita.com/kaityo256/items/86562e9ab20ae7bced1d",
    ),
    ("004", "グリーン・ハッケンブッシュとGrundy数", "Qiita", None),
)


class MissingLibrary(DataError):
    """A library the metadata is written with is not installed."""


def libraries() -> None:
    """Fail in one line, before any work, where the `publish` extra is not installed; let
    mlcroissant and frictionless import pandas, which the command line hides."""
    import importlib.util

    show_pandas()
    missing = [name for name in ("frictionless", "mlcroissant", "yaml") if importlib.util.find_spec(name) is None]
    if missing:
        raise MissingLibrary(
            f"publish writes the dataset's metadata with {', '.join(missing)}, which is not installed: "
            f"pip install 'tablebase[publish]' (make dist installs it)"
        )


def project_urls() -> dict[str, str]:
    """The project's addresses as the installed package declares them ([project.urls] in
    pyproject.toml: Homepage, Repository, …), by label."""
    try:
        declared = metadata.metadata("tablebase").get_all("Project-URL") or []
    except metadata.PackageNotFoundError:
        return {}
    return dict(entry.split(", ", 1) for entry in declared if ", " in entry)


def type_name(data_type: pa.DataType) -> str:
    """A column type as a reader sees it: `list<int8>`, `string` (dictionary-encoded)."""
    if pa.types.is_dictionary(data_type):
        return f"{type_name(data_type.value_type)} (dictionary-encoded)"
    if pa.types.is_list(data_type):
        return f"list<{type_name(data_type.value_type)}>"
    if pa.types.is_map(data_type):
        return f"map<{type_name(data_type.key_type)}, {type_name(data_type.item_type)}>"
    return {"bool": "boolean"}.get(str(data_type), str(data_type))


# -- the bundle's Parquet files -----------------------------------------------------------


@dataclass(frozen=True)
class ParquetFile:
    """One Parquet file of a bundle, as its footer describes it."""

    path: str  # relative to the bundle, with /
    kind: FileKind
    game: str | None  # None for the catalog
    ruleset: str | None
    schema: pa.Schema
    sha256: str

    @property
    def name(self) -> str:
        """A name unique in the bundle, of a-z 0-9 . _ - (folders' / as .: game names hold no .)."""
        return self.path.removesuffix(".parquet").replace("/", ".")

    def meaning(self, column: str) -> str:
        """What `column` holds, from the documented columns or the game's own."""
        documented = {c.name: c.meaning for c in self.kind.columns}
        if self.kind is POSITIONS:
            documented[KEY.name] = KEY.meaning
        if self.kind.game_columns and self.game is not None:
            documented = {**find_game(self.game).columns, **documented}
        return documented.get(column, "")


def parquet_files(folder: Path, rows: list[CatalogRow]) -> list[ParquetFile]:
    """The catalog and every ruleset's Parquet file in the bundle `folder` (laid out by kind),
    sorted by path. Checksums come from the catalog where it records them; the others are computed."""
    files = [
        ParquetFile(
            "catalog.parquet",
            CATALOG,
            None,
            None,
            pq.read_schema(folder / "catalog.parquet"),
            sha256(folder / "catalog.parquet"),
        )
    ]
    for row in rows:
        for kind in RULESET_FILES:
            path = BY_KIND.file(row.folder, kind.name)
            recorded = getattr(row, f"{kind.name}_sha256", None)
            if parts.in_parts(folder / path):  # a folder of parts: each part is a file of the bundle
                for part in parts.parts(folder / path):
                    name = part.relative_to(folder).as_posix()
                    files.append(ParquetFile(name, kind, row.game, row.ruleset, pq.read_schema(part), sha256(part)))
                continue
            files.append(
                ParquetFile(
                    path,
                    kind,
                    row.game,
                    row.ruleset,
                    pq.read_schema(folder / path),
                    recorded if isinstance(recorded, str) else sha256(folder / path),
                )
            )
    return files[:1] + sorted(files[1:], key=lambda file: file.path)


def _by_game_and_kind(files: list[ParquetFile]) -> dict[tuple[str, str], list[ParquetFile]]:
    """The ruleset files grouped by game and kind; every group shares one schema."""
    groups: dict[tuple[str, str], list[ParquetFile]] = {}
    for file in files:
        if file.game is not None:
            groups.setdefault((file.game, file.kind.name), []).append(file)
    for group in groups.values():
        for file in group[1:]:
            if not file.schema.equals(group[0].schema):
                raise DataError(
                    f"{file.path}: its columns differ from {group[0].path}'s, the same kind of the same game"
                )
    return groups


def _type_note(data_type: pa.DataType) -> str:
    """The Parquet type where the formats' own types say less than it (lists, maps)."""
    return f" (Parquet type {type_name(data_type)})"


# -- Frictionless Data Package --------------------------------------------------------------


def _table_type(data_type: pa.DataType) -> str:
    """The Table Schema type frictionless checks a Parquet column's cells against."""
    if pa.types.is_dictionary(data_type):
        return _table_type(data_type.value_type)
    if pa.types.is_string(data_type) or pa.types.is_large_string(data_type):
        return "string"
    if pa.types.is_integer(data_type):
        return "integer"
    if pa.types.is_floating(data_type):
        return "number"
    if pa.types.is_boolean(data_type):
        return "boolean"
    if pa.types.is_map(data_type):
        return "array"  # frictionless reads a map through pandas, as a list of (key, value) pairs
    # lists: frictionless reads them through pandas as NumPy arrays, which its `array` type
    # refuses cell by cell; `any` takes them, and the description names the Parquet type
    return "any"


#: A NULL of a numeric column as frictionless reads it: through pandas, which makes an integer
#: column with NULLs floats with NaN for them, and frictionless takes NaN for the text "nan"
#: (without this, every NULL remoteness was a type error).
NAN = ["", "nan"]


def datapackage(files: list[ParquetFile], url: str | None) -> str:
    """datapackage.json: every Parquet file of the bundle as a resource of a Frictionless
    Data Package, with its own columns, their meanings, NOT NULL as `required`, and its SHA-256."""
    import frictionless

    resources = []
    for file in files:
        fields = []
        for field in file.schema:
            kind = _table_type(field.type)
            described = file.meaning(field.name) + (_type_note(field.type) if kind in ("any", "array") else "")
            fields.append(
                {
                    "name": field.name,
                    "type": kind,
                    **({"description": described.strip()} if described.strip() else {}),
                    **({} if field.nullable else {"constraints": {"required": True}}),
                    **({"missingValues": NAN} if field.nullable and kind in ("integer", "number") else {}),
                }
            )
        resources.append(
            frictionless.Resource(
                name=file.name,
                title=file.ruleset or "catalog",
                description=f"{file.ruleset}: {file.kind.what}" if file.ruleset else file.kind.what,
                path=file.path,
                format="parquet",
                mediatype=PARQUET,
                hash=f"sha256:{file.sha256}",
                schema=frictionless.Schema.from_descriptor({"fields": fields}),
            )
        )
    package = frictionless.Package(
        name="tablebase",
        title=TITLE,
        description=DESCRIPTION,
        version=__version__,
        homepage=url,
        created=f"{__released__}T00:00:00Z",
        licenses=[{"name": DATA_LICENCE, "path": DATA_LICENCE_URL, "title": "Creative Commons Zero v1.0 Universal"}],
        contributors=[{"title": CREATOR, "roles": ["creator"]}],
        keywords=list(KEYWORDS),
        sources=[
            {"title": f"seed {number}: {title} ({author})", **({"path": link} if link else {})}
            for number, title, author, link in SEEDS
        ],
        resources=resources,
    )
    return json.dumps(package.to_descriptor(), ensure_ascii=False, indent=2) + "\n"


# -- MLCommons Croissant ----------------------------------------------------------------------


def _croissant_type(data_type: pa.DataType) -> str:  # an mlcroissant DataType
    import mlcroissant as mlc

    if pa.types.is_dictionary(data_type):
        return _croissant_type(data_type.value_type)
    if pa.types.is_list(data_type) or pa.types.is_large_list(data_type):
        return _croissant_type(data_type.value_type)
    if pa.types.is_integer(data_type):
        return mlc.DataType.INTEGER
    if pa.types.is_floating(data_type):
        return mlc.DataType.FLOAT
    if pa.types.is_boolean(data_type):
        return mlc.DataType.BOOL
    return mlc.DataType.TEXT  # strings, and maps as their text


def croissant(files: list[ParquetFile], url: str | None) -> str:
    """croissant.json (MLCommons Croissant, made and validated by mlcroissant): the catalog
    as a file, every game's files of each kind as a file set, each with a record set whose
    fields are the files' columns."""
    import mlcroissant as mlc

    def fields(record_set: str, source: mlc.FileObject | mlc.FileSet, file: ParquetFile) -> list[mlc.Field]:
        made = []
        for column in file.schema:
            listed = pa.types.is_list(column.type) or pa.types.is_large_list(column.type)
            described = file.meaning(column.name) + (
                _type_note(column.type) if listed or pa.types.is_map(column.type) else ""
            )
            made.append(
                mlc.Field(
                    id=f"{record_set}/{column.name}",
                    name=column.name,
                    description=described.strip() or None,
                    data_types=[_croissant_type(column.type)],
                    is_array=listed or None,
                    array_shape="-1" if listed else None,
                    source=mlc.Source(
                        **(
                            {"file_object": source.id}
                            if isinstance(source, mlc.FileObject)
                            else {"file_set": source.id}
                        ),
                        extract=mlc.Extract(column=column.name),
                    ),
                )
            )
        return made

    catalog = files[0]
    distribution: list[mlc.FileObject | mlc.FileSet] = [
        mlc.FileObject(
            id="catalog.parquet",
            name="catalog.parquet",
            description=CATALOG.what,
            content_url="catalog.parquet",
            encoding_formats=[mlc.EncodingFormat.PARQUET],
            sha256=catalog.sha256,
        )
    ]
    record_sets = [
        mlc.RecordSet(
            id="catalog", name="catalog", description=CATALOG.what, fields=fields("catalog", distribution[0], catalog)
        )
    ]
    for (game, kind), group in sorted(_by_game_and_kind(files).items()):
        what = group[0].kind.what
        file_set = mlc.FileSet(
            id=f"{kind}/{game}",
            name=f"{kind}/{game}",
            description=f"every {game} ruleset's {kind} file: {what}",
            encoding_formats=[mlc.EncodingFormat.PARQUET],
            includes=[BY_KIND.file(f"{game}/*", kind)],
        )
        distribution.append(file_set)
        record_sets.append(
            mlc.RecordSet(
                id=f"{game}/{kind}",
                name=f"{game}/{kind}",
                description=f"{what}, of every {game} ruleset",
                fields=fields(f"{game}/{kind}", file_set, group[0]),
            )
        )
    document = mlc.Metadata(
        name="tablebase",
        description=DESCRIPTION,
        url=url,
        creators=[mlc.Organization(name=CREATOR)],
        license=[DATA_LICENCE_URL],
        version=__version__,
        date_published=datetime.datetime.fromisoformat(__released__),
        keywords=list(KEYWORDS),
        cite_as=citation_bibtex(url),
        distribution=distribution,
        record_sets=record_sets,
    )
    problems = document.ctx.issues
    if problems.errors:
        raise DataError(f"croissant.json does not validate: {sorted(problems.errors)[0]}")
    return json.dumps(document.to_json(), ensure_ascii=False, indent=2) + "\n"


# -- citation ---------------------------------------------------------------------------------


def citation_bibtex(url: str | None) -> str:
    """The dataset's BibTeX entry, on one line."""
    year = __released__[:4]
    link = f", url = {{{url}}}" if url else ""
    return f"@misc{{tablebase, title = {{{TITLE}}}, note = {{Dataset version {__version__}}}, year = {{{year}}}{link}}}"


def citation_cff(rows: list[CatalogRow], url: str | None, repository: str | None) -> str:
    """CITATION.cff (Citation File Format 1.2.0): how to cite this dataset, dumped by PyYAML.
    `url` is the dataset's address, `repository` its code's."""
    import yaml

    versions = ", ".join(sorted({row.pipeline_version for row in rows}))
    document: dict = {
        "cff-version": "1.2.0",
        "message": "If you use this dataset, please cite it as below (a citation is welcome, not required: CC0).",
        "type": "dataset",
        "title": TITLE,
        "authors": [{"name": CREATOR}],
        "version": __version__,
        # a string, as CFF's schema has it: a YAML date would be read back as a date object
        "date-released": __released__,
        "license": DATA_LICENCE,
        **({"url": url} if url else {}),
        **({"repository-code": repository} if repository else {}),
        "abstract": f"{DESCRIPTION} {len(rows)} rulesets, built by tablebase {versions}.",
        "keywords": list(KEYWORDS),
        "references": [
            {
                "type": "blog",
                "title": title,
                "authors": [{"name": author}],
                **({"url": link} if link else {}),
                "notes": f"seed {number}",
            }
            for number, title, author, link in SEEDS
        ],
    }
    return yaml.safe_dump(document, sort_keys=False, allow_unicode=True, width=100)
