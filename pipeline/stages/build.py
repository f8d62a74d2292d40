"""All stages for one ruleset, built aside and published only once verified."""

from __future__ import annotations

import shutil

from pipeline.errors import VerificationError
from pipeline.layout import DataDir, prune
from pipeline.progress import log
from pipeline.rulesets import Ruleset
from pipeline.stages.enumerate import enumerate_ruleset
from pipeline.stages.export import export, write_catalog
from pipeline.stages.solve import solve
from pipeline.stages.verify import verify


def build(rules: Ruleset, data: DataDir) -> dict:
    """Enumerate, solve, verify and export `rules` in data/.staging, then publish.

    Nothing under data/<game>/<slug>/ changes unless every stage succeeds; an interrupted or
    failed build leaves the previous tablebase as it was.
    """
    data.recover()
    removed = data.remove_old_layout()
    if removed:
        log.info("removed %d ruleset folder(s) of an earlier layout from %s: rebuild them to have them back",
                 removed, data.root)
    stage = data.staging(rules)
    shutil.rmtree(stage.dir, ignore_errors=True)
    stage.dir.mkdir(parents=True)
    keep = False
    try:
        enumerate_ruleset(rules, stage, data.temp)
        solve(stage, data.temp, rules.id)
        try:
            verify(stage, data.temp, rules.id)
        except VerificationError:
            keep = True
            log.error("the failed build is kept for inspection in %s", stage.dir)
            raise
        summary = export(rules, stage, data.temp)
        data.publish(stage, rules)
        write_catalog(data)
        return summary
    finally:
        if not keep:
            shutil.rmtree(stage.dir, ignore_errors=True)
            prune(stage.dir.parent, data.root)
