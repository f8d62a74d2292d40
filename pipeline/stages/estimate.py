"""How much memory and disk a build will take, known before it starts (`tablebase estimate`).

The game counts positions and transitions without building (`Game.size`: exact where it
can count, an upper bound where it cannot). The model below turns them into bytes; its
constants were measured with `/usr/bin/time -v` on `tablebase enumerate` and `build`
(BENCHMARKS.md, "What a build needs") and err on the large side. `build` refuses a
ruleset that does not fit, before any work, in one line. A game whose positions list
numbers that grow with its moves (hackenbush: each position's edges) gives their total
as its Size's `listed`: enumerate holds them too.
"""

from __future__ import annotations

import dataclasses
import os
import shutil
from dataclasses import dataclass
from pathlib import Path

from pipeline.core.errors import RulesetError
from pipeline.core.params import shortened
from pipeline.engines import EngineKind
from pipeline.games import Size
from pipeline.games.rulesets import Ruleset
from pipeline.storage.db import DEFAULT_MEMORY_LIMIT, parse_size

MiB = 1 << 20
#: Python with NumPy, pyarrow and DuckDB loaded.
BASE = 300 * MiB
#: enumerate holds every position at once: its text, decoded columns, ids and numbering
#: (measured 157-170 B on chopsticks with 1.9 M and 24.6 M positions).
PER_POSITION = 200
#: Per number a position lists, where a game says how many (`listed`): enumerate holds
#: them in the positions' lists and text (measured 35 B on hackenbush paths of 8,000 and
#: 20,000 edges, 32 M and 200 M numbers).
PER_LISTED = 40
#: Batches of moves being generated, renumbered and written (measured at most 260 MiB).
MOVE_BATCHES = 512 * MiB
#: What the SQL stages ask of DuckDB (capped by TABLEBASE_MEMORY_LIMIT, beyond which it
#: spills to disk), per transition and per position; and besides, per position, the
#: frontiers kept in Arrow.
SQL_PER_TRANSITION = 32
SQL_PER_POSITION = 64
PER_POSITION_SQL = 16
#: Where moves can cycle, the retrograde solver's NumPy state (pipeline/engines/retrograde.py)
#: instead of the frontiers: per position a value, a remoteness and a counter, and while
#: the first pass runs each position's level-0 facts, a byte each, and a level's frontier
#: at most as many bytes again; Grundy values' counter, mask, value and height besides in
#: an impartial game. Two buckets of moves being made into lists. They count within
#: TABLEBASE_MEMORY_LIMIT: the solver's DuckDB is capped at what they leave of it (a
#: quarter at least).
RETROGRADE_PER_POSITION = 8
RETROGRADE_GRUNDY_PER_POSITION = 16
RETROGRADE_BUCKETS = 2 * 20 << 25
#: verify's and export's NumPy passes (pipeline/engines/arrays.py), not capped by DuckDB's
#: limit: per position, its columns as a child and its facts (measured 245 B on
#: chopsticks:fingers=15,hands=4); per transition, the children held for a breadth-first
#: search where moves can cycle (4 B), and a row group in flight.
ARRAYS_PER_POSITION = 320
ARRAYS_PER_TRANSITION = 4
#: A space streamed part by part (Size.window): per position of the window, what the game
#: holds while it makes its positions (connect: a ply's keys, its children and their sort)
#: and what verify holds of each child (its value and remoteness, a Grundy value and height);
#: per position of the ruleset, export's mark of what is reachable.
WINDOW_GAME = 32
WINDOW_ARRAYS = 16
REACH_PER_POSITION = 1
#: Where such a space's moves can cycle, verify holds every position's value, remoteness
#: and facts, not a window's: measured 11.3 B a position on dobutsu (5.6 GB for 493.6 M
#: positions) and 11.4 B on dobutsu:try=off (10.4 GB for 906.7 M).
LOOPY_CHECK_PER_POSITION = 12
#: Disk while building, for a game whose Size does not give its own (disk_per_position,
#: disk_per_transition: connect's boards). Per transition: the moves spilled in rank order
#: (12 B, not where the game makes them rank by rank), transitions.parquet and DuckDB's
#: spill files (BENCHMARKS.md, "The disk a build takes"). The data folder peaked 8.9-10.4 B
#: a move above its finished files where nim, hackenbush and tictactoe spilled theirs, whose
#: transitions.parquet took 1.4-3.1 B; 1.0-3.5 B a move where nothing is spilled (sticks,
#: octal, chopsticks). Per position: its texts in positions.parquet and tablebase.parquet
#: and its value in solution.parquet, texts of any length: measured 3.5-7.3 B on chopsticks
#: and nim, 9-19 B on tictactoe, octal, sticks and hackenbush:fib=7, 60 B on a hackenbush
#: path of 500 edges (texts of 250 edges on average, each edge also a move, counted 16 B).
DISK_PER_TRANSITION = 16
SPILL_PER_TRANSITION = 12
DISK_PER_POSITION = 40
#: The data folder's own files beside a ruleset's: tablebases.duckdb (0.5 MB, the same for
#: 1 or 19 rulesets) written aside before the old one goes, the catalog, SHA256SUMS and the
#: ruleset's summaries: tictactoe's whole data folder took 0.67 MB, its positions and
#: transitions counted at 0.5 MiB.
DISK_BASE = 4 * MiB
#: Address space a build reserves beyond the memory it uses, counted only against an
#: address-space limit (ulimit -v, RLIMIT_AS): the threads' stacks and malloc arenas,
#: DuckDB's above all, reserved whole and mostly never touched. Measured on 2 cores:
#: chopsticks' build peaks at 2.4 GiB of address space for 184 MiB resident; under
#: `ulimit -v` of 1 GB it failed to start a thread or crashed inside DuckDB, at 2.4 GB the
#: database of views failed, at 2.9 GB it built. DuckDB's threads (one per core) reserve
#: 30-70 MiB each.
RESERVED = 2 << 30
RESERVED_PER_CORE = 64 * MiB


@dataclass(frozen=True)
class Estimate:
    rules: Ruleset
    size: Size
    memory: int  # peak bytes
    disk: int  # bytes written while building, scratch included

    def describe(self) -> str:
        """One line: the counts and what they need."""
        size = self.size
        positions = f"{size.positions:,}" if size.exact else f"at most {size.positions:,}"
        transitions = f"at most {size.transitions:,}"
        if size.likely_positions is not None:
            positions += f" (likely {size.likely_positions:,})"
        if size.likely_transitions is not None:
            transitions += f" (likely {size.likely_transitions:,})"
        return (
            f"{shortened(self.rules.id)}: {positions} positions, {transitions} transitions; "
            f"needs up to {gib(self.memory)} of memory and {gib(self.disk)} of disk"
        )


def estimate(rules: Ruleset, engine: EngineKind | None = None) -> Estimate | None:
    """The estimate for `rules` on this machine with `engine` (None: the stages run in this
    process), or None if its game cannot count itself. Where the engine runs the stages outside this
    process (Engine.heap: Spark's executors, which in local mode are a JVM here, whose heap
    is spark.driver.memory, and on a cluster are elsewhere), this machine finds the
    positions (unless the executors do: a space that searches) and writes the files, and
    the engine's heap is added; else the model below
    counts DuckDB's SQL stages and the NumPy passes."""
    bound = rules.game.size(rules)
    if bound is None:
        return None
    size = likely(bound)  # the model below sizes the build by the counts the game expects
    enumerating = (
        BASE
        + PER_POSITION * size.positions
        + PER_LISTED * getattr(size, "listed", 0)
        + min(MOVE_BATCHES, 64 * size.transitions)
    )
    per_transition = size.disk_per_transition
    if per_transition is None:
        per_transition = DISK_PER_TRANSITION - (SPILL_PER_TRANSITION if size.by_rank else 0)
    per_position = DISK_PER_POSITION if size.disk_per_position is None else size.disk_per_position
    disk = DISK_BASE + int(per_transition * size.transitions + per_position * size.positions)
    heap = engine.heap() if engine is not None else None
    if heap is not None:
        assert engine is not None
        if not engine.capabilities.local_moves and rules.game.space(rules).search() is not None:
            enumerating = BASE  # the engine's executors find the positions (Space.search): none held here
        return Estimate(rules, bound, enumerating + heap, disk)
    duckdb = min(memory_limit(), SQL_PER_TRANSITION * size.transitions + SQL_PER_POSITION * size.positions)
    if size.ranked:
        solving = BASE + duckdb + PER_POSITION_SQL * size.positions
    else:
        state = RETROGRADE_PER_POSITION + (RETROGRADE_GRUNDY_PER_POSITION if rules.game.impartial else 0)
        arrays = state * size.positions + min(RETROGRADE_BUCKETS, 40 * size.transitions)
        solving = BASE + arrays + min(duckdb, max(memory_limit() - arrays, memory_limit() // 4))
    if size.window is not None:
        # streamed part by part: the stages hold a window of parts, DuckDB spills beyond its
        # cap (ranks solved one by one); where moves can cycle the retrograde solver's
        # arrays hold every position
        enumerating = BASE + WINDOW_GAME * size.window + MOVE_BATCHES
        if size.ranked:
            checking = BASE + MOVE_BATCHES + WINDOW_ARRAYS * size.window + REACH_PER_POSITION * size.positions
        else:
            checking = BASE + MOVE_BATCHES + LOOPY_CHECK_PER_POSITION * size.positions
        solving = BASE + duckdb if size.ranked else solving
        return Estimate(rules, bound, max(enumerating, solving, checking), disk)
    # the children held for a breadth-first search only where there is no rank
    held = 0 if size.ranked else ARRAYS_PER_TRANSITION * size.transitions
    checking = BASE + MOVE_BATCHES + ARRAYS_PER_POSITION * size.positions + held
    return Estimate(rules, bound, max(enumerating, solving, checking), disk)


def likely(size: Size) -> Size:
    """The counts a build is sized by: the game's likely ones where it gives them (the
    bounds stay in the line `describe` prints)."""
    return dataclasses.replace(
        size,
        positions=size.positions if size.likely_positions is None else size.likely_positions,
        transitions=size.transitions if size.likely_transitions is None else size.likely_transitions,
        window=size.window if size.likely_window is None else size.likely_window,
    )


def require_fit(rules: Ruleset, data: Path, engine: EngineKind | None = None) -> Estimate | None:
    """The estimate, or RulesetError in one line if the ruleset cannot fit this machine's
    memory, this process's address-space limit or the disk under `data`."""
    found = estimate(rules, engine)
    require_address_space(shortened(rules.id), (found.memory if found is not None else BASE) + reserved())
    if found is None:
        return None
    memory = available_memory()
    if memory is not None and found.memory > memory:
        counted = likely(found.size)
        enumerating = BASE + PER_POSITION * counted.positions + PER_LISTED * getattr(counted, "listed", 0)
        hint = (
            "give DuckDB less memory with TABLEBASE_MEMORY_LIMIT, or use a machine with more"
            if enumerating < memory
            else "it needs a machine with more memory"
        )
        raise RulesetError(
            f"{shortened(rules.id)} is too big for this machine: it needs up to {gib(found.memory)} "
            f"of memory and {gib(memory)} is available ({found.size.positions:,} positions): {hint}"
        )
    existing = next(folder for folder in [data, *data.resolve().parents] if folder.exists())
    free = shutil.disk_usage(existing).free
    if found.disk > free:
        raise RulesetError(
            f"{shortened(rules.id)} needs up to {gib(found.disk)} of disk while building and {data} has "
            f"{gib(free)} free (at most {found.size.transitions:,} transitions): free some, "
            f"or build into a --data folder on a larger disk"
        )
    return found


def memory_limit() -> int:
    """DuckDB's memory cap (TABLEBASE_MEMORY_LIMIT) in bytes."""
    return parse_size(DEFAULT_MEMORY_LIMIT, "TABLEBASE_MEMORY_LIMIT")


def available_memory() -> int | None:
    """Memory a build may use: TABLEBASE_MAX_MEMORY if set (e.g. 8GB, to leave room for
    other work), else MemAvailable on Linux, else the physical memory."""
    if os.environ.get("TABLEBASE_MAX_MEMORY"):
        return parse_size(os.environ["TABLEBASE_MAX_MEMORY"], "TABLEBASE_MAX_MEMORY")
    limit = None
    try:  # a container's memory limit (cgroup v2), where it is below the machine's
        text = Path("/sys/fs/cgroup/memory.max").read_text().strip()
        limit = int(text) if text.isdigit() else None
    except OSError:
        pass
    found = _machine_memory()
    return min(x for x in (limit, found) if x is not None) if (limit or found) else None


def address_space_limit() -> int | None:
    """This process's address-space limit (ulimit -v, RLIMIT_AS) in bytes; None if unlimited
    or where there is none (Windows)."""
    try:
        import resource
    except ImportError:
        return None
    soft, _ = resource.getrlimit(resource.RLIMIT_AS)
    return None if soft == resource.RLIM_INFINITY else soft


def require_address_space(what: str = "tablebase", needs: int | None = None) -> None:
    """RulesetError in one line if this process's address-space limit (ulimit -v) is below
    `needs` (by default what the libraries reserve however small the work): beyond the
    limit DuckDB and Arrow cannot start their threads, and crash or fail in misleading ways."""
    limit = address_space_limit()
    needs = BASE + reserved() if needs is None else needs
    if limit is not None and needs > limit:
        raise RulesetError(
            f"{what} needs up to {gib(needs)} of address space and this process may have "
            f"{gib(limit)} (ulimit -v): raise the limit, or lift it (ulimit -v unlimited)"
        )


def reserved() -> int:
    """Address space reserved beyond the memory used, on this machine (RESERVED)."""
    return RESERVED + RESERVED_PER_CORE * (os.cpu_count() or 1)


def _machine_memory() -> int | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (AttributeError, ValueError, OSError):
        return None  # Windows: not checked


def gib(size: int) -> str:
    return f"{size / (1 << 30):.1f} GiB" if size >= 1 << 30 else f"{size / MiB:.0f} MiB"
