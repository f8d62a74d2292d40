"""One ruleset's run through the stages: what every stage of it is handed."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from pipeline.datadir.layout import DataDir, RulesetFiles
from pipeline.datadir.written import note_written, read_as_written
from pipeline.engines import Engine, EngineKind, open_engine
from pipeline.games.rulesets import Ruleset
from pipeline.storage.parquet import regular


@dataclass(frozen=True)
class Run:
    """A ruleset, the folder of its files, a scratch folder and the one engine session its
    stages share (pipeline/engines/). `label` names it in progress lines and errors;
    `impartial` says whether Grundy values are computed and checked (Game.impartial).
    `rules` is None for files made by hand, which solve and verify take as they are.
    `store`: the data folder the files are in, whose record of what the stages wrote
    (pipeline/datadir/written.py) each stage reads its inputs by and adds its outputs to;
    None for files made by hand."""

    rules: Ruleset | None
    files: RulesetFiles
    scratch: Path
    engine: Engine
    label: str
    impartial: bool
    store: DataDir | None = None
    #: Rows a part at most where the positions, transitions, solution, tablebase, index and
    #: lookup are written as folders of parts (pipeline/storage/parts.py); None: one file each.
    part_rows: int | None = None

    @property
    def ruleset(self) -> Ruleset:
        """The ruleset, for the stages that need one (enumerate, export)."""
        if self.rules is None:
            raise TypeError(f"{self.label}: this stage needs a ruleset, not files alone")
        return self.rules

    def reads(self, *paths: Path) -> dict[Path, str]:
        """The digests of a stage's inputs `paths`, each as the stage before wrote it
        (DataError naming the first that is not, and how to make it again)."""
        if self.store is None:
            return {}
        return read_as_written(self.store, f"build it again with `tablebase build {self.label}`", *paths)

    def wrote(self, *paths: Path) -> dict[Path, str]:
        """Note a stage's outputs `paths`, just written; their digests."""
        return {} if self.store is None else note_written(self.store, *paths)


@contextmanager
def open_run(
    files: RulesetFiles,
    scratch: Path,
    rules: Ruleset | None = None,
    engine: EngineKind | None = None,
    label: str = "",
    impartial: bool | None = None,
    store: DataDir | None = None,
    part_rows: int | None = None,
) -> Iterator[Run]:
    """A run of `rules` (or of files alone) on a fresh session of `engine` (None: the one
    --engine or TABLEBASE_ENGINE names), closed at the end. `label` and `impartial` are the
    ruleset's unless given: by default the ruleset's id, else the folder's name; and the
    game's, else True. `store`: the data folder `files` are in (Run.store)."""
    if impartial is None:
        impartial = rules.game.impartial if rules is not None else True
    label = label or (rules.id if rules is not None else files.dir.name)
    for path in files.all():  # a FIFO in a file's place would hold a stage's read for ever
        regular(path, f"the {path.stem} file of {label}")
    session = open_engine(engine, scratch)
    try:
        yield Run(rules, files, scratch, session, label, impartial, store, part_rows)
    finally:
        session.close()
