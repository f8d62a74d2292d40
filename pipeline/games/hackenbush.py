"""Green Hackenbush on a rooted tree (seed 004): cut an edge, everything above it falls.

A position is a root-connected set of edges (an edge is named by its lower node), and
every such set is reachable. They are numbered densely by a nested mixed radix: the
subtree at node v is 0 without its edge, else 1 + its own number, one digit per child
of v, where the subtree of v (with v) can be in N(v) = prod(1 + N(child)) states. So a
position's id is a sum of `scale[x] * (1 + number of the part above x)` over the top
edges x, and cutting x subtracts exactly that term: children come out of whole arrays.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from pipeline.core.errors import PositionError, RulesetError
from pipeline.core.params import IntParam, TextParam, quoted, shortened
from pipeline.games import _svg
from pipeline.games._bulk import (
    MAX_DIGITS,
    Batcher,
    is_number,
    joined_text,
    number_lists,
    parse_numbers,
    terminal_column,
)
from pipeline.games.contract import POSITION_COLUMNS, Game, Rules, Size, Space

#: Ids are 32-bit where the pipeline solves (DuckDB's INTEGER); below that the machine
#: decides (pipeline/stages/estimate.py): the numbering itself is exact in int64 far beyond.
MAX_POSITIONS = 2**31 - 1
#: Positions x edges per block of move generation and decoding.
CELLS = 1 << 21


@dataclass(frozen=True)
class ListedSize(Size):
    """A Size whose positions' lists hold `listed` numbers in all, which the estimate counts
    (pipeline/stages/estimate.py): a path of 20,000 edges has 20,001 positions listing 200 million."""

    listed: int = 0


#: A tree as (parent, children ascending) in preorder, children visited in ascending order.
Tree = tuple[tuple[int, tuple[int, ...]], ...]


def parse_tree(text: str) -> Tree:
    """Parse 'parent:child/child;…' rooted at node 1; ValueError saying what is wrong."""
    parent: dict[int, int] = {}
    for part in text.split(";"):
        top, colon, kids = part.partition(":")
        numbers = [top, *kids.split("/")]
        if not colon or not all(is_number(n) and int(n) > 0 for n in numbers):
            raise ValueError(
                f"expected parent:child/child;… with node numbers from 1 to {'9' * MAX_DIGITS}, but got {quoted(part)}"
            )
        for kid in map(int, kids.split("/")):
            if kid in parent:
                if parent[kid] == int(top):
                    raise ValueError(f"the edge {top}:{kid} is listed twice")
                raise ValueError(f"node {kid} has two parents, {parent[kid]} and {top}")
            parent[kid] = int(top)
    root: dict[int, int] = {}  # each node's root, found once: a walk stops where a known one begins
    for node in sorted(parent):
        if node in root:
            continue
        path, at = [node], {node: 0}
        while True:
            up = parent.get(path[-1])
            if up is None or up in root:
                found = path[-1] if up is None else root[up]
                break
            if up in at:
                cycle = path[at[up] :][::-1]  # parent to child
                first = cycle.index(min(cycle))
                cycle = cycle[first:] + cycle[: first + 1]
                raise ValueError(f"cycle {shortened(' → '.join(map(str, cycle)))}")
            at[up] = len(path)
            path.append(up)
        for step in path:
            root[step] = found
    roots = sorted({p for p in parent.values() if p not in parent})
    if 1 not in roots:
        raise ValueError("node 1, the root, has no children")
    if len(roots) > 1:
        lost = sorted(n for n in {*parent, *roots} if root.get(n, n) != 1)
        raise ValueError(
            f"two roots, 1 and {roots[1]}: node{'s' * (len(lost) > 1)} {shortened(', '.join(map(str, lost)))} "
            f"{'are' if len(lost) > 1 else 'is'} not connected to the root 1"
        )
    return _preorder(parent)


def _preorder(parent: dict[int, int]) -> Tree:
    children: dict[int, list[int]] = {}
    for kid, top in parent.items():
        children.setdefault(top, []).append(kid)
    result, todo = [], [1]
    while todo:
        node = todo.pop()
        kids = sorted(children.get(node, []))
        if kids:
            result.append((node, tuple(kids)))
        todo.extend(reversed(kids))
    return tuple(result)


def format_tree(tree: Tree) -> str:
    return ";".join(f"{top}:{'/'.join(map(str, kids))}" for top, kids in tree)


def fibonacci_tree(k: int) -> Tree:
    """T(k): T(1) one node, T(2) a root with one child, T(k) a root over T(k-1) and T(k-2), preorder numbers."""
    parent: dict[int, int] = {}
    counter = 0

    def grow(order: int) -> int:
        nonlocal counter
        counter += 1
        root = counter
        for sub in (order - 1, order - 2) if order > 2 else (order - 1,) if order == 2 else ():
            parent[grow(sub)] = root
        return root

    grow(k)
    return _preorder(parent)


def subtree_sizes(tree: Tree, cap: int = MAX_POSITIONS) -> tuple[dict[int, int], int]:
    """(states, moves): each node's number of root-connected edge sets of its subtree
    (N(v) = prod over children (1 + N(child)), 1 for a leaf), and the total number of
    moves of the whole space (the sum over positions of their edge counts). Counts stop
    just past `cap`, so any tree is counted in one pass of small numbers (a star of
    60,000 edges has 2^60,000 positions): the root's count is then cap + 1, meaning more,
    and the moves mean nothing. Below it every count is exact: no subtree has more states
    than the tree, nor more edges in them."""
    most = (cap + 1) * (1 + sum(len(kids) for _, kids in tree))  # moves: at most positions x edges
    states: dict[int, int] = {}
    edge_sum: dict[int, int] = {}  # over the states of v's subtree: edges in it
    for top, kids in reversed(tree):  # preorder reversed: children before their parent
        total, edges = 1, 0
        for kid in kids:
            n, e = states.get(kid, 1), edge_sum.get(kid, 0)
            # with kid: its edge and the edges above it, in each of its n states
            edges = min(edges * (1 + n) + total * (n + e), most)
            total = min(total * (1 + n), cap + 1)
        states[top], edge_sum[top] = total, edges
    return states, edge_sum.get(1, 0)


class Hackenbush(Game):
    name = "hackenbush"
    summary = "green Hackenbush on a rooted tree: cut an edge, what hangs from it falls (seed 004)"
    impartial = True
    params = (
        TextParam(
            "tree",
            "1:2/3;2:4/5;4:7;3:6",
            "the tree: each parent with its children; node 1 is the root",
            parser=parse_tree,
            formatter=format_tree,
            shape="parent:child/child;…",
        ),
        IntParam(
            "fib",
            "none",
            "instead of tree: the Fibonacci tree T(fib), nodes numbered in preorder",
            minimum=1,
            none_ok=True,
        ),
    )
    columns = {
        "edges": "the remaining edges, each named by its lower node, ascending (list of int32)",
        "parents": "the upper node of each remaining edge, in the order of `edges` (list of int32)",
    }

    def validate(self, values: dict) -> None:
        fib = values["fib"]
        if fib is not None and values["tree"] != parse_tree(self.params[0].default):
            raise RulesetError("hackenbush takes either tree or fib, not both")
        if fib is not None and fib > 10:  # T(10) has 143 nodes and astronomically many positions
            raise RulesetError(f"hackenbush with fib={fib} has far more positions than this pipeline numbers")
        tree = fibonacci_tree(fib) if fib is not None else values["tree"]
        states, _ = subtree_sizes(tree)
        if states.get(1, 1) > MAX_POSITIONS:
            what = f"fib={fib}" if fib is not None else f"tree {shortened(format_tree(tree))}"
            raise RulesetError(
                f"hackenbush with {what} has more than {MAX_POSITIONS:,} positions, more than this "
                f"pipeline numbers (its ids are 32-bit where it solves)"
            )

    def size(self, rules: Rules) -> Size:
        """Counted exactly: every root-connected edge set, and one move per edge of each,
        which is also how many edges the positions list in all."""
        states, moves = subtree_sizes(tree_of(rules))
        return ListedSize(states.get(1, 1), moves, exact=True, listed=moves)

    def space(self, rules: Rules) -> HackenbushSpace:
        return HackenbushSpace(tree_of(rules))

    def start(self, rules: Rules) -> str:
        return "-".join(map(str, sorted(kid for _, kids in tree_of(rules) for kid in kids))) or "0"

    def canonical_position(self, rules: Rules, text: str) -> str:
        numbers = parse_numbers(text)
        if numbers is None:
            raise PositionError(
                f"malformed hackenbush position {text!r}: expected the remaining edges' lower nodes "
                f"joined by '-', or 0 for none"
            )
        edges = sorted(n for n in numbers if n > 0)
        parent = {kid: top for top, kids in tree_of(rules) for kid in kids}
        for edge in edges:
            if edge not in parent:
                raise PositionError(f"impossible hackenbush position {text!r}: the tree has no edge {edge}")
        if len(set(edges)) != len(edges):
            raise PositionError(f"impossible hackenbush position {text!r}: an edge is listed twice")
        for edge in edges:
            if parent[edge] != 1 and parent[edge] not in edges:
                raise PositionError(
                    f"impossible hackenbush position {text!r}: edge {edge} hangs from edge {parent[edge]}, which is cut"
                )
        return "-".join(map(str, edges)) or "0"

    def draw(self, rules: Rules, text: str) -> str:
        """The tree standing on the ground (the root), the cut edges gone; every node
        keeps its place, so a move's picture differs from its parent's by what fell."""
        tree = tree_of(rules)
        kids = dict(tree)
        left = {int(n) for n in text.split("-") if int(n) > 0}
        place: dict[int, tuple[float, int]] = {}
        slot = 0

        def lay(node: int, depth: int) -> float:
            nonlocal slot
            below = [lay(kid, depth + 1) for kid in kids.get(node, ())]
            if below:
                x = sum(below) / len(below)
            else:
                x, slot = slot, slot + 1
            place[node] = (x, depth)
            return x

        lay(1, 0)
        step, rise = 30, 34
        top = max(depth for _, depth in place.values())
        width, height = max(slot, 1) * step + 20, top * rise + 36

        def at(node: int) -> tuple[float, float]:
            x, depth = place[node]
            return 10 + step / 2 + x * step, height - 14 - depth * rise

        parts = [f'<line x1="0" y1="{height - 14}" x2="{width}" y2="{height - 14}" stroke="#8d6e63" stroke-width="3"/>']
        edges = "".join(
            f"M{at(top_node)[0]:g} {at(top_node)[1]:g}L{at(kid)[0]:g} {at(kid)[1]:g}"
            for top_node, children in tree
            for kid in children
            if kid in left
        )
        if edges:
            parts.append(f'<path d="{edges}" stroke="#2e7d32" stroke-width="3" stroke-linecap="round"/>')
        for node in (1, *sorted(left)):
            x, y = at(node)
            parts.append(f'<circle cx="{x:g}" cy="{y:g}" r="3.5" fill="{_svg.INK}"/>')
            if node != 1:
                parts.append(_svg.text(x + 7, y + 4, node, 9, "start", _svg.FAINT))
        return _svg.svg(width, height, parts, f"edges left: {', '.join(map(str, sorted(left))) or 'none'}")


def tree_of(rules: Rules) -> Tree:
    return fibonacci_tree(rules["fib"]) if rules["fib"] is not None else rules["tree"]


GAME = Hackenbush()


class HackenbushSpace(Space):
    def __init__(self, tree: Tree):
        self.tree = tree
        states, _ = subtree_sizes(tree)
        self.total = states.get(1, 1)
        # step[x]: the weight of x's digit within its parent's number; scale[x]: within the id
        self.step: dict[int, int] = {}
        self.scale: dict[int, int] = {1: 1}
        for top, kids in tree:
            weight = 1
            for kid in kids:
                self.step[kid] = weight
                self.scale[kid] = weight * self.scale[top]
                weight *= 1 + states.get(kid, 1)
        self.states = {kid: states.get(kid, 1) for _, kids in tree for kid in kids}
        self.edges = sorted(self.states)  # ascending: the order of texts and of labels
        self.column = {edge: i for i, edge in enumerate(self.edges)}
        self.chunk = max(1, CELLS // max(1, len(self.edges)))

    def numbers(self, ids: np.ndarray) -> np.ndarray:
        """above[:, column[x]]: the number of the part above edge x (with x), or -1 if x is gone."""
        above = np.full((len(ids), len(self.edges)), -1, dtype=np.int64)
        own = {1: ids}
        for top, kids in self.tree:
            mine = own[top]
            for kid in kids:
                digit = np.where(mine >= 0, (mine // self.step[kid]) % (1 + self.states[kid]), 0)
                own[kid] = above[:, self.column[kid]] = digit - 1
        return above

    def positions(self) -> pa.Table:
        edges = np.array(self.edges, dtype=np.int32)
        parent_of = {kid: top for top, kids in self.tree for kid in kids}
        parents = np.array([parent_of[edge] for edge in self.edges], dtype=np.int32)
        lists, uppers, texts = [], [], []
        for lo in range(0, self.total, self.chunk):
            present = self.numbers(np.arange(lo, min(lo + self.chunk, self.total), dtype=np.int64)) >= 0
            counts = present.sum(axis=1)
            block = number_lists(counts, np.broadcast_to(edges, present.shape)[present], pa.int32())
            lists.append(block)
            uppers.append(number_lists(counts, np.broadcast_to(parents, present.shape)[present], pa.int32()))
            texts.append(joined_text(block))
        ids = np.arange(self.total, dtype=np.int64)
        return pa.Table.from_arrays(
            [
                pa.array(ids),
                pa.chunked_array(texts, pa.string()),
                terminal_column(ids == 0, "loss"),
                pa.chunked_array(lists, pa.list_(pa.int32())),
                pa.chunked_array(uppers, pa.list_(pa.int32())),
            ],
            schema=POSITION_COLUMNS.append(pa.field("edges", pa.list_(pa.int32()))).append(
                pa.field("parents", pa.list_(pa.int32()))
            ),
        )

    def rank(self) -> np.ndarray:
        """Edges left: every cut removes at least one."""
        return np.concatenate(
            [
                (self.numbers(np.arange(lo, min(lo + self.chunk, self.total), dtype=np.int64)) >= 0).sum(axis=1)
                for lo in range(0, self.total, self.chunk)
            ]
        )

    def parts(self) -> int:
        return max(1, -(-self.total // self.chunk))

    def transitions_part(self, part: int) -> Iterator[pa.RecordBatch]:
        batcher = Batcher([f"cut {edge}" for edge in self.edges])
        scale = np.array([self.scale[edge] for edge in self.edges], dtype=np.int64)
        gone = np.iinfo(np.int64).max
        lo = part * self.chunk
        ids = np.arange(lo, min(lo + self.chunk, self.total), dtype=np.int64)
        above = self.numbers(ids)
        # cutting x drops x and everything above it: its whole term of the id
        child = np.where(above >= 0, ids[:, None] - scale[None, :] * (1 + above), gone)
        order = np.argsort(child, axis=1, kind="stable")
        child = np.take_along_axis(child, order, axis=1)
        source, slot = np.nonzero(child != gone)
        yield from batcher.add(ids[source], child[source, slot], order[source, slot])
        yield from batcher.finish()
