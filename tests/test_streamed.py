"""A space whose moves can cycle, listed part by part (Space.positions_part with part_rank
None, as dobutsu lists its half a billion positions): enumerated part by part, it gives the
same files as listed whole, and a move to no position is refused."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pytest

import pipeline.games.registry as games_module
from pipeline.core.errors import DataError
from pipeline.core.params import IntParam
from pipeline.datadir.layout import DataDir
from pipeline.games import POSITION_COLUMNS, TRANSITION_SCHEMA, Game, Space, all_games
from pipeline.games.rulesets import Ruleset
from pipeline.stages.build import build
from pipeline.storage.parquet import read_table

REGISTRY = all_games()


class Ring(Game):
    """A toy game on a ring of n squares: step one or two squares on; square 0 ends the
    game, lost by the mover; from the square before it you may also stay in a loop of two."""

    name = "ring"
    summary = "step round a ring"
    impartial = False
    params = (IntParam("n", "7", "squares", minimum=3),)
    columns = {"square": "the square"}

    def __init__(self, part: int = 3, overshoot: bool = False):
        self.part, self.overshoot = part, overshoot

    def space(self, rules):
        n, game = rules["n"], self

        def moves(square: int) -> list[int]:
            if square == 0:
                return []
            found = {(square + 1) % n, (square + 2) % n}
            if square == n - 1:
                found.add(n - 2)  # back and forth: a cycle
            return sorted(found)

        class RingSpace(Space):
            def parts(self):
                return -(-n // game.part)

            def part_rank(self, part):
                return None

            def positions_part(self, part):
                ids = np.arange(part * game.part, min(n, (part + 1) * game.part), dtype=np.int64)
                return pa.Table.from_arrays(
                    [
                        pa.array(ids),
                        pa.array([str(i) for i in ids]),
                        pa.array(["loss" if i == 0 else None for i in ids], pa.string()),
                        pa.array(ids),
                    ],
                    schema=POSITION_COLUMNS.append(pa.field("square", pa.int64())),
                )

            def transitions_part(self, part):
                src, dst = [], []
                for square in range(part * game.part, min(n, (part + 1) * game.part)):
                    for child in moves(square):
                        src.append(square)
                        dst.append(n if game.overshoot and child == 1 else child)
                yield pa.RecordBatch.from_arrays(
                    [
                        pa.array(src, pa.int64()),
                        pa.array(dst, pa.int64()),
                        pa.DictionaryArray.from_arrays(pa.array([0] * len(src), pa.int32()), pa.array(["step"])),
                    ],
                    schema=TRANSITION_SCHEMA,
                )

        return RingSpace()

    def start(self, rules):
        return "1"

    def canonical_position(self, rules, text):
        return text.strip()


def _built(monkeypatch, tmp_path, game: Ring, streams: bool) -> dict[str, pa.Table]:
    monkeypatch.setattr(games_module, "_registry", lambda: {**REGISTRY, "ring": game})
    if not streams:
        monkeypatch.setattr(Space, "streams", lambda self: False)
    data = DataDir(tmp_path)
    build(Ruleset.parse("ring:n=8"), data)
    folder = tmp_path / "ring" / "n-8"
    return {kind: read_table(folder / f"{kind}.parquet") for kind in ("positions", "transitions", "tablebase")}


def test_a_cycling_space_listed_part_by_part_gives_the_files_it_gives_whole(monkeypatch, tmp_path):
    parted = _built(monkeypatch, tmp_path / "parts", Ring(part=3), streams=True)
    whole = _built(monkeypatch, tmp_path / "whole", Ring(part=3), streams=False)
    for kind in parted:
        assert parted[kind].equals(whole[kind]), kind
    assert parted["positions"]["rank"].null_count == 8  # moves cycle: no rank
    values = dict(zip(parted["tablebase"]["position"].to_pylist(), parted["tablebase"]["value"].to_pylist()))
    assert values["0"] == "loss" and values["7"] == "win" and values["6"] == "win"


def test_a_cycling_space_moving_past_its_last_position_is_refused(monkeypatch, tmp_path):
    with pytest.raises(DataError, match="gave a move to position 8, but it listed 8 positions"):
        _built(monkeypatch, tmp_path, Ring(part=3, overshoot=True), streams=True)
