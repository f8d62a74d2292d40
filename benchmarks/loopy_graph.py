"""A large random move graph with cycles, in the pipeline's files, whose solution is known.

For measuring the retrograde solver (pipeline/engines/retrograde.py) beyond the games'
sizes: positions.parquet (id, text, terminal, moves, rank NULL) and transitions.parquet
(ruleset, src, dst, move; sorted by src then dst, one row per distinct pair), as
pipeline/core/dataset.py documents them, shaped like Dōbutsu shōgi's graph (493 M
positions, 1.88 G transitions, 60 % of positions finished, 173 levels of remoteness whose
sizes fall as its do, 1 % draws) at any size.

Each position is given its value and remoteness first, and its moves are drawn so that
retrograde analysis must find exactly those:

  won in r:   one move to a position lost in r - 1; the others to positions won (any r),
              drawn, or lost in r - 1 or more (moves back up the levels: cycles);
  lost in r:  one move to a position won in r - 1; the others to positions won in less;
  drawn:      one move to another drawn position; the others to won or drawn ones
              (never a lost one, so no drawn position is ever decided);
  finished:   no moves ('win' or 'loss' for the mover).

Ids are the levels' positions shuffled by an affine map (id = a * slot + b mod n), so a
level's positions are spread over every row group as a game's would be. Moves are made
part by part on two threads; the files are written as enumerate writes them.

    python benchmarks/loopy_graph.py DIR --positions 100000000 --moves 4.4

prints one JSON line: positions, transitions, each value's count, levels, seconds.
`--check SOLUTION` compares a solution.parquet with the values the graph was made with.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from pathlib import Path

from pipeline.cli import small_pages

# as `tablebase` runs: NumPy reads whether to ask for huge pages when it is first imported
small_pages()

import numpy as np  # noqa: E402
import pyarrow as pa  # noqa: E402
import pyarrow.parquet as pq  # noqa: E402

from pipeline.core.dataset import POSITIONS  # noqa: E402
from pipeline.stages.enumerate import transitions_encoding  # noqa: E402
from pipeline.storage.parquet import ROW_GROUP_ROWS, BatchWriter, Encoding, atomic_path  # noqa: E402
from pipeline.storage.threads import in_order  # noqa: E402

#: Positions decided at each remoteness in Dōbutsu shōgi (the figures its author measured),
#: of 493,573,042: the shape every size is scaled to, levels between them interpolated
#: on a log scale.
DOBUTSU_LEVELS = {
    0: 294.6e6,
    1: 30.7e6,
    2: 24.9e6,
    3: 13.1e6,
    4: 15.8e6,
    5: 9.6e6,
    10: 6.7e6,
    20: 2.1e6,
    28: 1.07e6,
    40: 0.36e6,
    60: 74e3,
    100: 20e3,
    150: 590,
    172: 24,
}
DOBUTSU_POSITIONS = 493_573_042
DOBUTSU_DRAWS = 5.36e6
#: Of the finished positions, the share lost for the mover (the rest won).
FINISHED_LOST = 0.7
#: Of the positions decided at a remoteness, the share won.
WON = 0.6
#: Of a position's moves beyond the first, the share drawn among unfinished positions only
#: (the rest from every position the rules allow, mostly finished ones).
UNFINISHED_MOVES = 0.5
#: Sources made at a time (one part of the moves).
PART = 1 << 22


class Shape:
    """How many positions have each value and remoteness, and where each group sits among
    the slots 0..n-1: lost by remoteness, then won by remoteness, then drawn, so that every
    set of children a position may have is one or two runs of slots."""

    def __init__(self, positions: int, levels: int):
        known = sorted(DOBUTSU_LEVELS.items())
        at = np.arange(levels)
        x = [level * (levels - 1) / 172 for level, _ in known]  # the profile stretched to `levels`
        size = np.exp(np.interp(at, x, [math.log(count) for _, count in known]))
        draws = max(round(positions * DOBUTSU_DRAWS / DOBUTSU_POSITIONS), 2)
        size *= (positions - draws) / size.sum()
        size = np.maximum(np.round(size).astype(np.int64), 2)
        size[0] = positions - draws - int(size[1:].sum())  # the sizes add up to n
        lost_share = np.full(levels, 1 - WON)
        lost_share[0] = FINISHED_LOST
        self.lost = np.maximum(np.round(size * lost_share).astype(np.int64), 1)
        self.won = size - self.lost
        self.n, self.levels, self.draws = positions, levels, draws
        starts = np.cumsum(np.concatenate(([0], self.lost, self.won, [draws])))
        self.lost_start = starts[:levels]  # slot of the first position lost in r
        self.won_start = starts[levels : 2 * levels]
        self.draw_start = int(starts[2 * levels])
        self.bounds = starts  # group g (lost 0.., won 0.., drawn) is bounds[g]..bounds[g + 1]

    def group(self, slots: np.ndarray) -> np.ndarray:
        return np.searchsorted(self.bounds, slots, side="right") - 1


class Ids:
    """Slots to ids and back: id = (a * slot + b) mod n, a prime to n."""

    def __init__(self, n: int, rng: np.random.Generator):
        self.n = n
        a = int(rng.integers(n // 3, n // 2 + 2)) | 1
        while math.gcd(a, n) != 1:
            a += 2
        self.a, self.b = a, int(rng.integers(0, n))
        self.a_inverse = pow(a, -1, n)

    def of(self, slots: np.ndarray) -> np.ndarray:
        return (slots * self.a + self.b) % self.n

    def slot(self, ids: np.ndarray) -> np.ndarray:
        return ((ids - self.b) % self.n) * self.a_inverse % self.n


def _in_runs(rng: np.random.Generator, runs: list[tuple[np.ndarray, np.ndarray]], count: int) -> np.ndarray:
    """A slot drawn uniformly from the union of the runs (lo, hi) of each of `count` sources
    (empty runs allowed; the union never empty)."""
    lengths = [hi - lo for lo, hi in runs]
    total = sum(lengths)
    pick = (rng.random(count) * total).astype(np.int64)
    slot = np.empty(count, dtype=np.int64)
    left = np.ones(count, dtype=bool)
    for (lo, _), length in zip(runs, lengths):
        here = left & (pick < length)
        slot[here] = lo[here] + pick[here]
        pick -= length
        left &= ~here
    return slot


def make_moves(shape: Shape, ids: Ids, moves: float, seed: int, first: int) -> tuple[np.ndarray, np.ndarray]:
    """(src, dst) of the sources first..first+PART-1, sorted, distinct."""
    rng = np.random.default_rng([seed, first])
    src = np.arange(first, min(first + PART, shape.n), dtype=np.int64)
    group = shape.group(ids.slot(src))
    levels = shape.levels
    lost, won = group < levels, (group >= levels) & (group < 2 * levels)
    level = np.where(lost, group, group - levels)
    finished = (lost | won) & (level == 0)
    # moves a position: 1 + uniform 0..2m, m set so that the whole graph averages `moves`
    unfinished_share = 1 - (shape.lost[0] + shape.won[0]) / shape.n
    extra = max(moves / unfinished_share - 1, 0)
    count = np.where(finished, 0, 1 + rng.integers(0, int(2 * extra) + 1, src.size))
    src_of = np.repeat(src, count)
    g, lv = np.repeat(group, count), np.repeat(level, count)
    is_lost, is_won = g < levels, (g >= levels) & (g < 2 * levels)
    first_move = np.zeros(src_of.size, dtype=bool)
    first_move[(np.cumsum(count) - count)[count > 0]] = True
    below = np.maximum(lv - 1, 0)
    lost_at = shape.lost_start
    won_at = shape.won_start
    end = shape.n
    # lost in 1: every other move to a finished position (none is won in less)
    nonterminal = (rng.random(src_of.size) < UNFINISHED_MOVES) & ~(is_lost & (lv == 1))
    # the group every position must have a move into: lost in r - 1, won in r - 1, drawn
    anchor_lo = np.where(is_lost, won_at[below], np.where(is_won, lost_at[below], shape.draw_start))
    anchor_hi = np.where(
        is_lost, won_at[below] + shape.won[below], np.where(is_won, lost_at[below] + shape.lost[below], end)
    )
    # the other moves: lost -> won in less; won -> lost in r - 1 or more, any won, drawn;
    # drawn -> any won, drawn; each run without the finished positions where `nonterminal`
    lost_level_lo = lost_at[below] + np.where(nonterminal & (below == 0), shape.lost[0], 0)
    won_lo = won_at[0] + np.where(nonterminal, shape.won[0], 0)
    runs = [
        (np.where(is_won, lost_level_lo, 0), np.where(is_won, lost_at[0] + shape.lost.sum(), 0)),
        (won_lo, np.where(is_lost, won_at[below] + shape.won[below], end)),
    ]
    other = _in_runs(rng, runs, src_of.size)
    anchor = anchor_lo + (rng.random(src_of.size) * (anchor_hi - anchor_lo)).astype(np.int64)
    anchor = np.where(first_move, anchor, np.repeat(anchor[first_move], count[count > 0]))
    # a move to itself is no move: a drawn position's first goes to the next drawn slot
    # instead, another move to the first's child (dropped as a duplicate)
    loop = ids.of(anchor) == src_of
    anchor[loop] = np.where(anchor[loop] + 1 < end, anchor[loop] + 1, shape.draw_start)
    slots = np.where(first_move, anchor, other)
    loop = ids.of(slots) == src_of
    slots[loop] = anchor[loop]
    dst = ids.of(slots)
    key = np.sort(src_of << 32 | dst)  # np.unique hashes: 5x slower
    key = key[np.concatenate(([True], key[1:] != key[:-1]))]
    return key >> 32, key & 0xFFFFFFFF


def generate(folder: Path, positions: int, moves: float, levels: int, seed: int) -> dict:
    began = time.perf_counter()
    shape = Shape(positions, levels)
    rng = np.random.default_rng(seed)
    ids = Ids(positions, rng)
    folder.mkdir(parents=True, exist_ok=True)
    transitions = 0
    moves_of: list[np.ndarray] = []
    ruleset = pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), pa.array(["loopy"]))
    move = pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), pa.array(["move"]))
    schema = pa.schema(
        [
            pa.field("ruleset", ruleset.type, nullable=False),
            pa.field("src", pa.int64(), nullable=False),
            pa.field("dst", pa.int64(), nullable=False),
            pa.field("move", move.type, nullable=False),
        ]
    )
    with atomic_path(folder / "transitions.parquet") as tmp:
        writer = BatchWriter(tmp, schema, transitions_encoding())
        parts = range(0, positions, PART)
        made = in_order(lambda first: make_moves(shape, ids, moves, seed, first), parts, ahead=2)
        for first, (src, dst) in zip(parts, made):
            moves_of.append(np.bincount(src - first, minlength=min(PART, positions - first)).astype(np.int32))
            for lo in range(0, src.size, ROW_GROUP_ROWS):
                hi = min(lo + ROW_GROUP_ROWS, src.size)
                rows = hi - lo
                writer.write(
                    pa.table(
                        [
                            pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int8)), ruleset.dictionary),
                            pa.array(src[lo:hi]),
                            pa.array(dst[lo:hi]),
                            pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int8)), move.dictionary),
                        ],
                        schema=schema,
                    )
                )
            transitions += src.size
        writer.close()
    _write_positions(folder / "positions.parquet", shape, ids, moves_of)
    return {
        "positions": positions,
        "transitions": transitions,
        "finished": int(shape.lost[0] + shape.won[0]),
        "won": int(shape.won[1:].sum()),
        "lost": int(shape.lost[1:].sum()),
        "draws": shape.draws,
        "levels": levels,
        "seconds": round(time.perf_counter() - began, 1),
    }


def _write_positions(path: Path, shape: Shape, ids: Ids, moves_of: list[np.ndarray]) -> None:
    schema = POSITIONS.schema()
    text = pa.DictionaryArray.from_arrays(pa.array([0], pa.int8()), pa.array([""]))
    schema = schema.set(schema.get_field_index("text"), pa.field("text", text.type, nullable=False))
    terminal_type = pa.dictionary(pa.int8(), pa.string())
    schema = schema.set(schema.get_field_index("terminal"), pa.field("terminal", terminal_type))
    words = pa.array(["win", "loss"])
    with atomic_path(path) as tmp:
        writer = BatchWriter(tmp, schema, Encoding(delta=("id",)))
        for part, moves in zip(range(0, shape.n, PART), moves_of):
            for lo in range(part, part + moves.size, ROW_GROUP_ROWS):
                hi = min(lo + ROW_GROUP_ROWS, part + moves.size)
                id_ = np.arange(lo, hi, dtype=np.int64)
                group = shape.group(ids.slot(id_))
                finished_lost, finished_won = group == 0, group == shape.levels
                code = np.where(finished_lost, 1, 0).astype(np.int8)
                rows = hi - lo
                writer.write(
                    pa.table(
                        [
                            pa.array(id_),
                            pa.DictionaryArray.from_arrays(pa.array(np.zeros(rows, np.int8)), text.dictionary),
                            pa.DictionaryArray.from_arrays(pa.array(code, mask=~(finished_lost | finished_won)), words),
                            pa.array(moves[lo - part : hi - part]),
                            pa.nulls(rows, pa.int32()),
                        ],
                        schema=schema,
                    )
                )
        writer.close()


def check(folder: Path, solution: Path, positions: int, levels: int, seed: int) -> int:
    """The number of positions whose solved value or remoteness is not the one made."""
    shape = Shape(positions, levels)
    ids = Ids(positions, np.random.default_rng(seed))
    file = pq.ParquetFile(solution)
    wrong = 0
    for group in range(file.num_row_groups):
        rows = file.read_row_group(group, columns=["id", "value", "remoteness"])
        id_ = rows["id"].to_numpy()
        made = shape.group(ids.slot(id_))
        lost, won = made < levels, (made >= levels) & (made < 2 * levels)
        word = np.where(lost, "loss", np.where(won, "win", "draw"))
        remoteness = np.where(lost, made, np.where(won, made - levels, -1))
        value = rows["value"].to_numpy(zero_copy_only=False).astype(str)
        solved = rows["remoteness"].fill_null(-1).to_numpy()
        wrong += int(((value != word) | (solved != remoteness)).sum())
    return wrong


def run_stage(folder: Path, stage: str, impartial: bool) -> int:
    """The pipeline's solve or verify on the folder's files, as `tablebase` runs a stage
    (its level lines on stderr), timed."""
    from pipeline.cli import reuse_freed_memory
    from pipeline.datadir.layout import RulesetFiles
    from pipeline.stages.run import open_run
    from pipeline.stages.solve import solve
    from pipeline.stages.verify import verify
    from pipeline.storage.progress import configure

    configure(verbose=True)
    reuse_freed_memory()  # as `tablebase` runs
    began = time.perf_counter()
    with open_run(RulesetFiles(folder), folder / ".scratch", label=folder.name, impartial=impartial) as run:
        (solve if stage == "solve" else verify)(run)
    print(json.dumps({"stage": stage, "seconds": round(time.perf_counter() - began, 1)}))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="where to write positions.parquet and transitions.parquet")
    parser.add_argument("--positions", type=int, default=1_000_000, help="number of positions")
    parser.add_argument("--moves", type=float, default=3.8, help="transitions per position, on average")
    parser.add_argument("--levels", type=int, default=173, help="levels of remoteness (the deepest is levels - 1)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--check", type=Path, metavar="SOLUTION", help="compare this solution with the graph made")
    parser.add_argument(
        "--stage",
        choices=("solve", "verify"),
        help="run the pipeline's stage on the folder's files (solution.parquet, verification.parquet) and exit",
    )
    parser.add_argument("--impartial", action="store_true", help="with --stage: compute Grundy values too")
    args = parser.parse_args(argv)
    if args.stage:
        return run_stage(args.folder, args.stage, args.impartial)
    if args.check:
        wrong = check(args.folder, args.check, args.positions, args.levels, args.seed)
        print(json.dumps({"wrong": wrong}))
        return 1 if wrong else 0
    print(json.dumps(generate(args.folder, args.positions, args.moves, args.levels, args.seed)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
