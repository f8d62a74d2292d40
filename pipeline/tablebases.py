"""The library's face: one object over a data folder, doing what the `tablebase` command does.

    >>> from pipeline import Tablebases
    >>> tables = Tablebases(folder)                  # a data folder; the first build makes it
    >>> row = tables.build("chopsticks")[0]          # enumerate, solve, verify, export, publish
    >>> row.positions, row.start_value, row.start_remoteness
    (224, 'loss', 8)
    >>> best = tables.probe("chopsticks", "start").moves[0]
    >>> best.move, best.outcome                      # the first player loses whatever they do
    ('1 hits 1', 'loss')
    >>> tables.sql("SELECT value, count(*) AS n FROM tablebase GROUP BY value ORDER BY value").to_pylist()
    [{'value': 'loss', 'n': 64}, {'value': 'win', 'n': 160}]
    >>> same = {"ruleset_a": "chopsticks", "ruleset_b": "chopsticks"}
    >>> tables.query("compare_rulesets", same).column("kind").to_pylist()   # a packaged query
    ['start']
    >>> [row.ruleset for row in tables.catalog()]
    ['chopsticks']
    >>> tables.check()                               # every file against its checksums: no problem
    []
    >>> tables.probe("chopsticks", "9-9|9-9")
    Traceback (most recent call last):
    ...
    pipeline.core.errors.PositionError: impossible chopsticks position '9-9|9-9': a hand holds at most 4 fingers

Every method raises only TablebaseError subclasses (pipeline.core.errors) for what a user's
input, data or machine can cause, in the words the command line prints: a DuckDB, Arrow,
file-system or engine error becomes a DataError, OutputError, OutOfMemory, PluginError or
EngineError (pipeline.core.explain), its cause kept as `__cause__`. Ctrl-C stays a
KeyboardInterrupt. Each command of pipeline/commands.py is this object's method with its
options parsed and its result printed.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ParamSpec, TypeAlias, TypeVar, overload

from pipeline.core.errors import DataError, OutputError, RulesetError, UnfinishedError
from pipeline.core.explain import as_error
from pipeline.datadir.layout import DataDir
from pipeline.storage.progress import log

# the games are loaded by the methods that take a ruleset: `sql` and `query` load none
if TYPE_CHECKING:
    import pyarrow as pa

    from pipeline.core.dataset import CatalogRow
    from pipeline.engines import EngineKind
    from pipeline.games.rulesets import Ruleset
    from pipeline.products.probe import Probe
    from pipeline.products.query import QueryFile
    from pipeline.stages.estimate import Estimate
    from pipeline.stages.run import Run

P = ParamSpec("P")
T = TypeVar("T")

#: A ruleset as the methods take it: its id (`chopsticks:split=any`) or a parsed Ruleset.
RulesetLike: TypeAlias = "str | Ruleset"


def _explained(method: Callable[P, T]) -> Callable[P, T]:
    """`method`, raising a TablebaseError in the command line's words for any error it
    can explain (pipeline.core.explain.as_error), with the original as its cause."""

    @functools.wraps(method)
    def call(*args: P.args, **kwargs: P.kwargs) -> T:
        try:
            return method(*args, **kwargs)
        except Exception as error:
            mapped = as_error(error)
            if mapped is error:
                raise
            raise mapped from error

    return call


def _parsed(rulesets: Iterable[RulesetLike]) -> list[Ruleset]:
    """Every ruleset parsed before any work: a misspelt third id fails before the first builds."""
    from pipeline.games.rulesets import Ruleset

    return [rules if isinstance(rules, Ruleset) else Ruleset.parse(rules) for rules in rulesets]


def _out_folder(out: str | os.PathLike[str]) -> Path:
    """An --out folder, which must be one or be made: a file, device or FIFO there is not replaced."""
    target = Path(out)
    if target.exists() and not target.is_dir():
        raise OutputError(f"--out {out} is not a folder: name a folder (it is made if missing)")
    return target


class Tablebases:
    """The tablebases of one data folder: build them, look positions up, query, check and
    publish them.

    `data` is the data folder (made by the first build); `engine` names where the stages'
    SQL runs, "duckdb" or "spark" (None: $TABLEBASE_ENGINE, else duckdb), checked when a
    stage first needs it.
    """

    def __init__(self, data: str | os.PathLike[str] = "data", engine: str | None = None) -> None:
        self.data = Path(data)
        self.engine = engine
        self._store: DataDir | None = None

    def __repr__(self) -> str:
        return f"Tablebases({str(self.data)!r})"

    @property
    def store(self) -> DataDir:
        """The data folder's layout and locks (pipeline.datadir.layout.DataDir)."""
        if self._store is None:
            self._store = DataDir(self.data)
        return self._store

    def _kind(self) -> EngineKind:
        from pipeline.engines import engine_kind

        return engine_kind(self.engine, available=True)

    def _staged(self, stage: Callable[[Run], T], rules: Ruleset, kind: EngineKind) -> T:
        """One stage of `rules` in the data folder, on a session of its own."""
        from pipeline.stages.run import open_run

        store = self.store
        store.require_writable_here()
        with open_run(store.ruleset(rules), store.temp, rules, kind, store=store) as run:
            return stage(run)

    # -- building ---------------------------------------------------------------------

    @_explained
    def build(self, *rulesets: RulesetLike, size_check: bool = True, part_rows: int | None = None) -> list[CatalogRow]:
        """Enumerate, solve, verify and export each ruleset, and publish what verifies; the
        catalog row of each. A ruleset is published whole or not at all: one that fails to
        verify (VerificationError) leaves what was built before as it was. With
        `size_check`, one whose estimate does not fit this machine is refused (RulesetError)
        before any work. With `part_rows`, each ruleset's positions, transitions, solution and
        tablebase are folders of parts of about so many rows (pipeline/storage/parts.py)."""
        from pipeline.core.values import in_words
        from pipeline.datadir.catalog import rewrite_database
        from pipeline.stages.build import build as build_stage

        kind = self._kind()
        parsed = _parsed(rulesets)
        built: list[CatalogRow] = []
        try:
            for rules in parsed:
                # the database of views is rewritten once, after the last (or a failed) build
                summary = build_stage(
                    rules, self.store, size_check, kind, database=len(parsed) == 1, part_rows=part_rows
                )
                built.append(summary)
                log.info(
                    "built %s: %s positions, start %s: %s",
                    rules.id,
                    f"{summary.positions:,}",
                    summary.start,
                    in_words(summary.start_value, summary.start_remoteness),
                )
        except BaseException:
            if built and len(parsed) > 1:
                try:
                    rewrite_database(self.store)
                except UnfinishedError as error:  # the build's own error is the one to raise
                    log.warning("%s", error)
            raise
        if built and len(parsed) > 1:
            rewrite_database(self.store)
        return built

    @_explained
    def enumerate(self, *rulesets: RulesetLike) -> None:
        """Write each ruleset's positions and transitions (the first stage of build)."""
        from pipeline.stages.enumerate import enumerate_ruleset

        kind = self._kind()
        for rules in _parsed(rulesets):
            self._staged(enumerate_ruleset, rules, kind)

    @_explained
    def solve(self, *rulesets: RulesetLike) -> None:
        """Label each enumerated ruleset's positions with value and remoteness."""
        from pipeline.stages.solve import solve

        kind = self._kind()
        for rules in _parsed(rulesets):
            self._staged(solve, rules, kind)

    @_explained
    def verify(self, *rulesets: RulesetLike) -> list[dict[str, Any]]:
        """Check every solved value against its children and the rules (VerificationError
        if one does not), and, where the catalog publishes that solution, the ruleset's
        published files as `check` does. One row a ruleset: `ruleset`,
        `published_files_checked` and the `problems` found in its published files."""
        from pipeline.datadir.check import check_published, published_solutions
        from pipeline.stages.verify import verify as verify_stage

        kind = self._kind()
        rows = []
        for rules in _parsed(rulesets):
            published = frozenset(published_solutions(self.store, rules) or ())  # their verification files stay
            result = self._staged(functools.partial(verify_stage, published=published), rules, kind)
            found = check_published(self.store, rules, result["solution_sha256"][0].as_py())
            rows.append({"ruleset": rules.id, "published_files_checked": found is not None, "problems": found or []})
        return rows

    @_explained
    def export(self, *rulesets: RulesetLike) -> None:
        """Publish each verified ruleset, then write the catalog, the database of views and
        SHA256SUMS again (with no ruleset, only those three, from what is published)."""
        from pipeline.datadir.catalog import write_catalog
        from pipeline.stages.export import export as export_stage

        kind = self._kind()
        parsed = _parsed(rulesets)
        if not parsed and not self.data.is_dir():
            raise DataError(f"{self.data} is not a data folder: build a ruleset into it first")
        self.store.require_writable_here()
        for rules in parsed:
            self._staged(export_stage, rules, kind)
        recovered = self.store.sweep()  # a folder a killed build left aside is put back first
        write_catalog(self.store, exported=tuple(rules.folder for rules in parsed) + tuple(recovered))

    @_explained
    def estimate(self, ruleset: RulesetLike) -> Estimate | None:
        """What building `ruleset` would take (positions, transitions, memory, disk), without
        building it; None where its game cannot count itself before building."""
        from pipeline.stages.estimate import estimate

        return estimate(_parsed([ruleset])[0])

    @_explained
    def require_fit(self, ruleset: RulesetLike) -> None:
        """RulesetError, saying what is short, where building `ruleset` would not fit this
        machine's memory or the disk under the data folder."""
        from pipeline.stages.estimate import require_fit

        require_fit(_parsed([ruleset])[0], self.data)

    # -- reading ----------------------------------------------------------------------

    @_explained
    def catalog(self) -> list[CatalogRow]:
        """Every published ruleset's catalog row (its counts, start value and files), once
        the catalog and the files it names match their checksums."""
        from pipeline import __version__
        from pipeline.core.dataset import CATALOG, CatalogRow
        from pipeline.datadir.check import trusted_catalog

        rows = trusted_catalog(self.store)
        missing = [column.name for column in CATALOG.columns if rows and column.name not in rows[0]]
        if missing:  # a folder an earlier version built: its catalog lacks what this one reads
            raise DataError(
                f"{self.store.catalog} was written by tablebase {rows[0].get('pipeline_version', '?')} "
                f"(this is {__version__}) and has no {', '.join(missing)}: rebuild the folder with "
                f"`tablebase build --all --data {self.store.root}` (or `make all`)"
            )
        return [CatalogRow.of(row) for row in rows]

    @_explained
    def probe(self, ruleset: RulesetLike, position: str = "start") -> Probe:
        """`position`'s value and remoteness for the player to move, and every move best
        first (pipeline.products.probe.Probe); "start" names the ruleset's start.
        PositionError where the ruleset has no such position."""
        from pipeline.products.probe import probe

        return probe(ruleset, position, self.data)

    @overload
    def sql(
        self,
        statement: str,
        params: dict[str, str] | None = None,
        *,
        read_files: bool = False,
        allow_writes: bool = False,
        form: None = None,
    ) -> pa.Table: ...

    @overload
    def sql(
        self,
        statement: str,
        params: dict[str, str] | None = None,
        *,
        read_files: bool = False,
        allow_writes: bool = False,
        form: str,
    ) -> str: ...

    @_explained
    def sql(
        self,
        statement: str,
        params: dict[str, str] | None = None,
        *,
        read_files: bool = False,
        allow_writes: bool = False,
        form: str | None = None,
    ) -> pa.Table | str:
        """The result of one SQL statement over the views catalog, tablebase and
        transitions, as an Arrow table; `$name` parameters bound from `params`. Only
        reading statements run, on the data folder's views alone; `read_files` lets a
        SELECT read other files, `allow_writes` lets any statement do anything.

        `form` (table, csv, json or jsonl): the result as that text instead, as
        `tablebase sql --format` prints it; a table or JSON of plain columns (numbers,
        text, booleans, lists of them) is written from DuckDB's rows, without loading
        pyarrow (CSV always through Arrow's writer)."""
        from pipeline.products.query import run_sql, run_statement
        from pipeline.storage.output import rendered, text_format

        if form is None:
            return run_sql(self.data, statement, params, allow_writes, read_files)
        chosen = text_format(form)
        return run_statement(
            self.data, statement, lambda relation: rendered(relation, chosen), params, allow_writes, read_files
        )

    @overload
    def query(
        self,
        name: str,
        params: dict[str, str] | None = None,
        *,
        queries: str | os.PathLike[str] | None = None,
        read_files: bool = False,
        allow_writes: bool = False,
        form: None = None,
    ) -> pa.Table: ...

    @overload
    def query(
        self,
        name: str,
        params: dict[str, str] | None = None,
        *,
        queries: str | os.PathLike[str] | None = None,
        read_files: bool = False,
        allow_writes: bool = False,
        form: str,
    ) -> str: ...

    @_explained
    def query(
        self,
        name: str,
        params: dict[str, str] | None = None,
        *,
        queries: str | os.PathLike[str] | None = None,
        read_files: bool = False,
        allow_writes: bool = False,
        form: str | None = None,
    ) -> pa.Table | str:
        """The result of a query of the library (`queries()` lists them), or of an .sql
        file, as sql() runs it (`form` too); `queries` names a folder of your own that is
        searched first."""
        from pipeline.products.query import find_query, read_sql

        text = read_sql(find_query(name, None if queries is None else Path(queries)))
        if form is None:
            return self.sql(text, params, read_files=read_files, allow_writes=allow_writes)
        return self.sql(text, params, read_files=read_files, allow_writes=allow_writes, form=form)

    @staticmethod
    @_explained
    def queries(extra: str | os.PathLike[str] | None = None) -> list[QueryFile]:
        """Every query of the library, and of the folder `extra`, with its description and parameters."""
        from pipeline.products.query import list_queries

        return list_queries(None if extra is None else Path(extra))

    # -- checking and publishing -------------------------------------------------------

    @_explained
    def check(self, folder: str | os.PathLike[str] | None = None) -> list[str]:
        """Every problem found in the data folder (or `folder`, an unpacked bundle), one
        sentence each: files against SHA256SUMS and the catalog's checksums, schemas,
        counts. Empty where every file checks."""
        from pipeline.datadir.check import check

        target = self.data if folder is None else Path(folder)
        if not target.is_dir():
            what = "is not a folder" if target.exists() else "does not exist"
            into = "" if target == Path("data") else f" --data {target}"
            raise DataError(
                f"{target} {what}: name a data folder or an unpacked bundle (`tablebase check DIR`), "
                f"or build a ruleset into it first (`tablebase build chopsticks{into}`)"
            )
        return check(target)

    @_explained
    def publish(
        self, out: str | os.PathLike[str] = "dist", url: str | None = None, explorer: bool = False
    ) -> list[Path]:
        """Write the download bundle into `out` (the dataset folder, a zip of it all and one
        per game, their checksums); the files written. `url` is where it will be published;
        `explorer`: the dataset folder carries the explorer with no server (DuckDB-WASM)."""
        from pipeline.products.publish import publish

        return publish(self.data, _out_folder(out), url, explorer)

    @_explained
    def draw(
        self,
        *rulesets: RulesetLike,
        out: str | os.PathLike[str] | None = None,
        graphs: bool = True,
        every: bool = False,
        ruleset_file: str | os.PathLike[str] | None = None,
    ) -> list[Path]:
        """Draw each ruleset's page (and its state graph and strategy with `graphs`), or
        every built one small enough with `every`, then the index; the files written. Pages
        go to DATA/pages unless `out` names a folder outside the data folder."""
        from pipeline.games.rulesets import Ruleset, default_ruleset_file
        from pipeline.products.draw import draw

        target = None if out is None else _out_folder(out)
        if target is not None:
            where, root = target.resolve(), self.data.resolve()
            if (where == root or root in where.parents) and where != root / "pages":
                raise OutputError(
                    f"--out {out} is inside the data folder {self.data}, where pages go in {self.data / 'pages'} "
                    "only: leave --out out, or name a folder outside it"
                )
        if ruleset_file is not None and not Path(ruleset_file).is_file():
            raise RulesetError(f"ruleset file {ruleset_file} does not exist")
        names = [rules.id if isinstance(rules, Ruleset) else rules for rules in rulesets]
        comments = Path(ruleset_file) if ruleset_file is not None else default_ruleset_file()
        return draw(names, self.data, target, graphs=graphs, every=every, ruleset_file=comments)

    @_explained
    def claims(self, out: str | os.PathLike[str] | None = None, queries: str | os.PathLike[str] | None = None) -> Path:
        """Check the seeds' claims (the library's claim_*.sql and seed*.sql queries) and
        write the Markdown report to `out` (default DATA/claims.md); the report's path."""
        from pipeline.products.claims import write_report

        target = Path(out) if out is not None else self.data / "claims.md"
        write_report(self.data, None if queries is None else Path(queries), target)
        return target
