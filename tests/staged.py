"""One stage run as the command line runs it: on an engine session of its own
(pipeline/stages/run.py), for tests that call the stages on files directly."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

from pipeline.datadir.layout import RulesetFiles
from pipeline.engines import engine_kind
from pipeline.games.rulesets import Ruleset
from pipeline.stages.run import Run, open_run

T = TypeVar("T")


def staged(
    stage: Callable[[Run], T],
    files: RulesetFiles,
    scratch: Path | None = None,
    label: str = "",
    impartial: bool | None = None,
    engine: str | None = None,
    rules: Ruleset | None = None,
) -> T:
    """`stage` on `files` (scratch: the files' folder unless given); `engine` by name."""
    with open_run(files, scratch or files.dir, rules, engine_kind(engine), label, impartial) as run:
        return stage(run)
