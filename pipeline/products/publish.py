"""`tablebase publish`: what goes on a download page, written from a checked data folder.

    OUT/tablebase-<version>/            the whole dataset, unpacked: catalog, every ruleset's
                                        files by kind, tablebases.duckdb, pages, claims report,
                                        DATASET.md, LICENSE, SHA256SUMS; with --explorer the
                                        explorer with no server (index.html, explorer/:
                                        pipeline/products/explorer.py)
    OUT/tablebase-<version>.zip         the same folder as one archive
    OUT/tablebase-<version>-<game>.zip  one game: its files, its catalog rows, its own
                                        tablebases.duckdb, DATASET.md, LICENSE, SHA256SUMS
    OUT/SHA256SUMS                      checksums of the archives

Inside, the Parquet files are laid out by kind (pipeline.datadir.layout.BY_KIND):
tablebase/<game>/<slug>.parquet, transitions/<game>/<slug>.parquet, and so on for
positions, solution, verification and summary. The data folder keeps one folder a ruleset,
which build publishes by one rename; a download is read by pandas, pyarrow, Polars and
DuckDB, which given a folder read every file in it with the first one's columns, without a
word: here a folder holds one kind. The bundle's catalog names its own paths, with the
checksums of the data folder's (the files are the same), and each summary.parquet is its
row of that catalog.

Every folder inside is a dataset of its own that `tablebase check` accepts. Scratch
folders (.staging, .tmp, .trash) never go in. Zip archives open on every system; their
entries are sorted and dated 1980-01-01, so the same files give the same archive.
"""

from __future__ import annotations

import os
import shutil
import zipfile
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from pipeline import __version__
from pipeline.core.dataset import QUERIED, CatalogRow
from pipeline.core.errors import DataError, full_disk
from pipeline.datadir.catalog import write_catalog_table
from pipeline.datadir.check import SUMS, check
from pipeline.datadir.layout import BY_KIND, KINDS, DataDir, Layout, is_bundle
from pipeline.datadir.views import write_database
from pipeline.products import metadata
from pipeline.products.datacard import data_card, data_licence
from pipeline.products.explorer import require_wasm, write_explorer
from pipeline.storage import parts
from pipeline.storage.files import atomic_path
from pipeline.storage.parquet import sha256
from pipeline.storage.progress import Stage, log

#: Files that zip would not make smaller.
STORED = (".parquet", ".zip")

#: The shares of publish's time its phases take, for the bar's time left: measured on a
#: data folder of 31 MB (connect:cols=5,rows=4 and three small rulesets; 7.9 s): the check
#: 1.6 s, the dataset folder (database, metadata, SHA256SUMS, its check) 2.6 s, its archive
#: 0.1 s (Parquet is stored, not compressed), a folder, a check and an archive a game 3.7 s.
CHECK_SHARE, DATASET_SHARE, ARCHIVE_SHARE, GAMES_SHARE = 0.2, 0.3, 0.05, 0.45


def publish(data: Path, out: Path, url: str | None = None, explorer: bool = False) -> list[Path]:
    """Write the bundle of `data` into `out`; the archives and the unpacked folder. `url` is
    where the bundle is published (its metadata's address); by default the project's
    Homepage or Repository, as pyproject.toml's [project.urls] declares them. `explorer`:
    the whole dataset's folder and archive carry the explorer with no server."""
    metadata.libraries()
    if explorer:
        require_wasm()  # before any work
    with Stage(f"publish {out}") as stage:
        stage.phase("checking the data folder", CHECK_SHARE)
        problems = check(data)
        if problems:
            more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
            raise DataError(f"{problems[0]}{more}: nothing published; see `tablebase check {data}`")
        return _publish(data, out, stage, url, explorer)


def _publish(data: Path, out: Path, stage: Stage, url: str | None, explorer: bool) -> list[Path]:
    if data.resolve() in [out.resolve(), *out.resolve().parents]:
        raise DataError(f"--out {out} is inside the data folder {data}: publish elsewhere (default dist/)")
    inside = next((folder for folder in [out, *out.resolve().parents] if is_bundle(folder)), None)
    if inside is not None:  # its SHA256SUMS would be rewritten, a second bundle nested in it
        raise DataError(f"--out {out} is inside the published bundle {inside}: publish elsewhere (default dist/)")
    final = out / f"tablebase-{__version__}"
    if final.is_symlink() or (final.exists() and not (final.is_dir() and is_bundle(final))):
        raise DataError(
            f"{final} is in the way and is not a bundle publish wrote: move it, or publish elsewhere with --out"
        )
    declared = metadata.project_urls()
    url = url or declared.get("Homepage") or declared.get("Repository")
    if url is None:  # said with -v: a bundle for one's own use needs no address
        log.debug(
            "no address for the dataset: croissant.json, datapackage.json and CITATION.cff say none; "
            "publish --url URL (where the bundle goes) or declare [project.urls] Homepage in pyproject.toml"
        )
    links = (url, declared.get("Repository"))
    store = DataDir(data)
    catalog = pq.read_table(store.catalog)
    name = f"tablebase-{__version__}"
    try:
        out.mkdir(parents=True, exist_ok=True)
        written = []
        stage.phase("the dataset folder", DATASET_SHARE)
        tree = _replace(out / name, lambda tmp: _dataset(store, catalog, tmp, links, extras=True, explorer=explorer))
        written.append(tree)
        stage.phase(f"{name}.zip", ARCHIVE_SHARE)
        archives = [_zip(tree, out / f"{name}.zip", name, stage)]
        games = sorted(set(catalog["game"].to_pylist()))
        stage.phase("an archive a game", GAMES_SHARE)
        for done, game in enumerate(games):
            stage.count(done, len(games), "games")
            rows = catalog.filter(pc.equal(catalog["game"], game))
            scratch = out / f".{name}-{game}"
            shutil.rmtree(scratch, ignore_errors=True)
            try:
                _dataset(store, rows, scratch, links, extras=False)
                archives.append(_zip(scratch, out / f"{name}-{game}.zip", f"{name}-{game}"))
            finally:
                shutil.rmtree(scratch, ignore_errors=True)
        _write_sums(out, [path.name for path in archives])
    except Exception as error:  # only a full disk is said here, and only --out is written
        if not full_disk(error):
            raise
        raise DataError(
            f"no space left on the disk of --out {out}: nothing half-written is left there; "
            f"free some space there and publish again, or publish elsewhere"
        ) from None
    stage.count(len(games), len(games), "games")
    stage.summary = f"{catalog.num_rows} rulesets, {len(archives)} archives"
    return written + archives + [out / SUMS]


def _dataset(
    store: DataDir,
    catalog: pa.Table,
    folder: Path,
    links: tuple[str | None, str | None],
    extras: bool,
    explorer: bool = False,
) -> None:
    """A complete dataset folder: the catalog's rulesets laid out by kind, database, card,
    licence, checksums; with `explorer`, the explorer with no server."""
    folder.mkdir(parents=True)
    catalog = laid_out(catalog, BY_KIND)
    for index, row in enumerate(catalog.to_pylist()):
        built, laid = store.files(row["folder"]), BY_KIND.files(folder, row["folder"])
        for kind in KINDS:
            if kind != "summary":
                if parts.in_parts(built.path(kind)):  # a folder of parts: each part
                    for part in parts.parts(built.path(kind)):
                        _link(part, parts.folder_of(laid.path(kind)) / part.name)
                else:
                    _link(built.path(kind), laid.path(kind))
        laid.summary.parent.mkdir(parents=True, exist_ok=True)
        write_catalog_table(catalog.slice(index, 1), laid.summary)  # its row, with the bundle's paths
    write_catalog_table(catalog, folder / "catalog.parquet")
    if extras:
        for item in ("pages", "claims.md"):
            source = store.root / item
            if source.is_dir():
                for path in sorted(p for p in source.rglob("*") if p.is_file()):
                    _link(path, folder / item / path.relative_to(source))
            elif source.is_file():
                _link(source, folder / item)
    if explorer:
        write_explorer(folder, _link)
    (folder / "LICENSE").write_text(data_licence())
    # the card first: it makes the folder a bundle, whose layout the database's views are checked by
    _write_metadata(folder, catalog, *links)
    write_database(folder)
    files = sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file())
    _write_sums(folder, files)
    problems = check(folder)
    if problems:
        raise DataError(f"the bundle does not check: {problems[0]}")


def _write_metadata(folder: Path, catalog: pa.Table, url: str | None, repository: str | None) -> None:
    """The data card (DATASET.md, and README.md, where dataset hubs look for it), Croissant,
    Frictionless and citation metadata, from the catalog and the Parquet files in `folder`."""
    card = data_card(folder, catalog, url)
    rows = CatalogRow.rows(catalog)
    files = metadata.parquet_files(folder, rows)
    for name, text in (
        ("DATASET.md", card),
        ("README.md", card),
        ("croissant.json", metadata.croissant(files, url)),
        ("datapackage.json", metadata.datapackage(files, url)),
        ("CITATION.cff", metadata.citation_cff(rows, url, repository)),
    ):
        (folder / name).write_text(text, encoding="utf-8")


def laid_out(catalog: pa.Table, layout: Layout) -> pa.Table:
    """The catalog with each row's tablebase_path and transitions_path where `layout` puts
    them; its folder, the ruleset's identity, and checksums as they were."""
    folders = catalog["folder"].to_pylist()
    for kind in QUERIED:
        index = catalog.schema.get_field_index(f"{kind}_path")
        paths = pa.array(
            [
                layout.parts_glob(folder, kind) if named.endswith("/part-*.parquet") else layout.file(folder, kind)
                for folder, named in zip(folders, catalog[f"{kind}_path"].to_pylist())
            ],
            pa.string(),
        )
        catalog = catalog.set_column(index, catalog.schema.field(index), paths)
    return catalog


def _write_sums(folder: Path, names: list[str]) -> None:
    """SHA256SUMS in the format `sha256sum -c` reads."""
    lines = [f"{sha256(folder / name)}  {name}\n" for name in sorted(names) if name != SUMS]
    with atomic_path(folder / SUMS) as tmp:  # never a cut-off list beside the archives
        tmp.write_text("".join(lines))


def _link(source: Path, target: Path) -> None:
    """`target` as a hard link to `source` (a copy across file systems): the bundle keeps
    the bytes it was published with even when a later build replaces the data."""
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.link(source, target)
    except OSError:
        shutil.copy2(source, target)


def _replace(final: Path, make: Callable[[Path], object]) -> Path:
    """Make a folder aside with `make(tmp)` and put it at `final`, replacing the old one."""
    tmp = final.with_name(f".{final.name}.tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    try:
        make(tmp)
        old = final.with_name(f".{final.name}.old")
        shutil.rmtree(old, ignore_errors=True)  # left by a killed publish
        if final.exists():
            os.rename(final, old)
        os.rename(tmp, final)
        shutil.rmtree(old, ignore_errors=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    return final


def _zip(folder: Path, archive: Path, root: str, stage: Stage | None = None) -> Path:
    """A zip of `folder` whose entries sit under `root/`, written aside then renamed;
    `stage` counts the MB read."""
    tmp = archive.with_name(f".{archive.name}.tmp")
    files = sorted(p for p in folder.rglob("*") if p.is_file())
    total, done = sum(path.stat().st_size for path in files), 0
    try:
        with zipfile.ZipFile(tmp, "w") as handle:
            for path in files:
                if stage is not None:
                    stage.count(done >> 20, total >> 20, "MB")
                done += path.stat().st_size
                entry = zipfile.ZipInfo(
                    f"{root}/{path.relative_to(folder).as_posix()}", date_time=(1980, 1, 1, 0, 0, 0)
                )
                entry.external_attr = 0o644 << 16
                entry.compress_type = zipfile.ZIP_STORED if path.suffix in STORED else zipfile.ZIP_DEFLATED
                with open(path, "rb") as source, handle.open(entry, "w", force_zip64=True) as sink:
                    shutil.copyfileobj(source, sink, 1 << 20)
        os.replace(tmp, archive)
    finally:
        tmp.unlink(missing_ok=True)
    return archive
