"""All stages for one ruleset, built aside and published only once verified."""

from __future__ import annotations

import shutil

from pipeline.core.dataset import CatalogRow
from pipeline.core.errors import VerificationError
from pipeline.datadir.catalog import rewrite_database, write_catalog
from pipeline.datadir.layout import DataDir
from pipeline.datadir.written import moved
from pipeline.engines import EngineKind, engine_kind
from pipeline.games.rulesets import Ruleset
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.estimate import require_fit
from pipeline.stages.export import export
from pipeline.stages.run import open_run
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify
from pipeline.storage.progress import Stage, log


def build(
    rules: Ruleset,
    data: DataDir,
    size_check: bool = True,
    engine: EngineKind | None = None,
    database: bool = True,
    part_rows: int | None = None,
) -> CatalogRow:
    """Enumerate, solve, verify and export `rules` in data/.staging, then publish.

    Nothing under data/<game>/<slug>/ changes unless every stage succeeds; an interrupted or
    failed build leaves the previous tablebase as it was. Builds of other rulesets may run
    at the same time into the same data directory; a second build of the same ruleset is
    refused while the first runs. With `size_check`, a ruleset whose estimate does not fit
    the machine's memory or disk is refused before any work. One session of `engine`
    (pipeline.engines; None: the one --engine or TABLEBASE_ENGINE names) runs every stage:
    the Spark engine generates the moves on its executors too. Without
    `database`, data/tablebases.duckdb is left for the caller to rewrite (once for many builds).
    `part_rows`: the files as folders of parts (Run.part_rows).
    """
    data.require_writable_here()
    engine = engine or engine_kind()
    if size_check:
        require_fit(rules, data.root, engine)
    busy = f"{rules.id} is being built by another process into {data.root}: wait for it to finish"
    with data.lock(f"build.{rules.game_name}.{rules.slug}", wait=False, busy=busy):
        with data.lock("publish"):
            recovered = tuple(data.sweep())
        stage = data.staging(rules)
        shutil.rmtree(stage.dir, ignore_errors=True)
        stage.dir.mkdir(parents=True)
        keep = False
        try:
            with open_run(stage, data.temp, rules, engine, store=data, part_rows=part_rows) as run:
                enumerate_ruleset(run)
                solve(run)
                try:
                    verify(run)
                except VerificationError:
                    keep = True
                    log.error("the failed build is kept for inspection in %s until the next build", stage.dir)
                    raise
                summary = export(run)
            with Stage(f"publish {rules.id}"), data.lock("publish"):
                with data.publishing(stage, rules) as final:  # the old folder comes back if the catalog fails
                    moved(data, stage.dir, final.dir)  # what the stages wrote, under its published name
                    write_catalog(data, database=False, changed=rules.folder, exported=recovered)
                if database:
                    rewrite_database(data, rules.id)
                _replace_old_layout(data, rules)
            return summary
        finally:
            data.drop(data.temp)
            if not keep:
                data.drop(stage.dir)


def _replace_old_layout(data: DataDir, rules: Ruleset) -> None:
    """The earlier layout's folder of `rules`, now built in this one, goes; the others stay
    (a user's tablebases, which nothing reads until they are rebuilt), and are named."""
    replaced = data.remove_old_layout(rules.id)
    if replaced is not None:
        log.info("removed %s, the earlier layout's folder of %s, now built in %s", replaced, rules.id, rules.folder)
    if data.old_layout():
        log.warning(
            "%s still holds %d ruleset folder(s) of an earlier version's layout, kept, which nothing reads: %s",
            data.root,
            len(data.old_layout()),
            data.old_layout_remedy(),
        )
