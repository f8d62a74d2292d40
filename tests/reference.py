"""Independent, deliberately simple reference solver used as a cross-check in tests.

Plain Python, standard library only; shares no code with ``pipeline``.  It implements
the games of docs/reference/games.md directly on Python tuples and strings, builds the whole move
graph of a ruleset, and solves it by round-by-round retrograde analysis.  Speed does
not matter: it is meant for tiny rulesets only.

Public API (``params`` maps parameter names to strings, as on a command line; missing
parameters take their default values):

- ``solve(game, params)``: position text -> (value, remoteness, grundy); value 'win',
  'loss', 'tie' or 'draw' for the player to move; grundy None where a cycle is reachable
  and everywhere in a game that is not impartial (tictactoe, connect, dobutsu)
- ``moves(game, params)``: position text -> set of child position texts
- ``start(game, params)``: start position text
- ``rules(game, params)``: the ruleset's rules (start, children, the value of a position
  without moves), for walking a space too big to build whole
"""

from itertools import combinations_with_replacement

DEFAULTS = {
    "chopsticks": {
        "fingers": "5",
        "hands": "2",
        "overflow": "cutoff",
        "split": "none",
        "split_kill": "true",
        "self_attack": "false",
    },
    "sticks": {"rows": "3", "play": "misere", "max_take": "none"},
    "nim": {"start": "3-4-5", "variant": "normal", "play": "normal"},
    "hackenbush": {"tree": "1:2/3;2:4/5;4:7;3:6", "fib": "none"},
    "octal": {"code": "0.77", "start": "10", "play": "normal"},
    "tictactoe": {"rows": "3", "cols": "3", "k": "3"},
    "connect": {"cols": "7", "rows": "6", "k": "4"},
    "dobutsu": {"try": "on", "pieces": "gec"},
}


# --------------------------------------------------------------------------- helpers


def _params(game, params):
    if game not in DEFAULTS:
        raise ValueError(f"unknown game {game!r}")
    unknown = set(params) - set(DEFAULTS[game])
    if unknown:
        raise ValueError(f"unknown parameter(s) for {game}: {sorted(unknown)}")
    p = dict(DEFAULTS[game])
    p.update(params)
    return p


def _int(value, name, minimum):
    try:
        n = int(value)
    except ValueError:
        raise ValueError(f"{name} must be an integer, got {value!r}") from None
    if n < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    return n


def _choice(value, name, allowed):
    if value not in allowed:
        raise ValueError(f"{name} must be one of {allowed}, got {value!r}")
    return value


def _join(numbers):
    """Ascending numbers joined by '-', '0' when there are none."""
    return "-".join(str(n) for n in sorted(numbers)) or "0"


class _Game:
    """A ruleset reduced to what the solver needs.

    starts:    positions the space is generated from (or every position, for chopsticks)
    children:  position -> list of child positions
    no_move:   position without moves -> 'win', 'loss' or 'tie' (the game is over there)
    text:      position -> canonical text
    start:     the catalog's start position
    impartial: whether Grundy values mean anything (False: solve gives None)
    """

    def __init__(self, starts, children, no_move, text, start, impartial=True):
        self.starts = starts
        self.children = children
        self.no_move = no_move
        self.text = text
        self.start = start
        self.impartial = impartial


# --------------------------------------------------------------------------- chopsticks
# position = (mover's hands, opponent's hands), each a sorted tuple


def _chopsticks(p):
    fingers = _int(p["fingers"], "fingers", 2)
    hands = _int(p["hands"], "hands", 1)
    overflow = _choice(p["overflow"], "overflow", ("cutoff", "rollover"))
    split = _choice(p["split"], "split", ("none", "dead", "any"))
    split_kill = _choice(p["split_kill"], "split_kill", ("true", "false")) == "true"
    self_attack = _choice(p["self_attack"], "self_attack", ("true", "false")) == "true"

    def over(n):
        if overflow == "cutoff":
            return 0 if n >= fingers else n
        return n % fingers

    def dead(h):
        return all(x == 0 for x in h)

    def children(pos):
        me, you = pos
        if dead(me) or dead(you):
            return []
        new_positions = set()  # each element: (my new hands, opponent's new hands)
        # attack: own live hand a onto opponent live hand b
        for i in range(hands):
            for j in range(hands):
                if me[i] and you[j]:
                    y = list(you)
                    y[j] = over(me[i] + you[j])
                    new_positions.add((me, tuple(sorted(y))))
        # split: redistribute own total over own hands
        if split == "any" or (split == "dead" and 0 in me):
            total = sum(me)
            for m in combinations_with_replacement(range(fingers), hands):
                if sum(m) != total or m == me:
                    continue
                if not split_kill and m.count(0) > me.count(0):
                    continue
                new_positions.add((m, you))
        # self attack: own live hand a onto another own live hand c
        if self_attack:
            for i in range(hands):
                for j in range(hands):
                    if i != j and me[i] and me[j]:
                        m = list(me)
                        m[j] = over(me[i] + me[j])
                        m = tuple(sorted(m))
                        if m != me:
                            new_positions.add((m, you))
        # after the move the opponent is to move: swap perspective
        return [(y, m) for (m, y) in new_positions]

    def no_move(pos):
        me, you = pos
        if dead(me):
            return "loss"
        if dead(you):
            return "win"
        raise AssertionError(f"chopsticks position without moves: {pos}")

    def text(pos):
        me, you = pos
        return "-".join(map(str, me)) + "|" + "-".join(map(str, you))

    multisets = list(combinations_with_replacement(range(fingers), hands))
    every = [(a, b) for a in multisets for b in multisets if not (dead(a) and dead(b))]
    start = ((1,) * hands, (1,) * hands)
    return _Game(every, children, no_move, text, start)


# --------------------------------------------------------------------------- sticks
# position = sorted tuple of row lengths (no zeros)


def _sticks(p):
    rows = _int(p["rows"], "rows", 1)
    play = _choice(p["play"], "play", ("misere", "normal"))
    max_take = None if p["max_take"] == "none" else _int(p["max_take"], "max_take", 1)

    def children(pos):
        result = set()
        for i, length in enumerate(pos):
            rest = pos[:i] + pos[i + 1 :]
            for first in range(length):  # index of the first stick removed
                for count in range(1, length - first + 1):
                    if max_take is not None and count > max_take:
                        break
                    left, right = first, length - first - count
                    new = rest + tuple(x for x in (left, right) if x > 0)
                    result.add(tuple(sorted(new)))
        return list(result)

    def no_move(pos):
        assert pos == ()
        return "win" if play == "misere" else "loss"

    start = tuple(range(1, rows + 1))
    return _Game([start], children, no_move, _join, start)


# --------------------------------------------------------------------------- nim
# normal/largest/distinct: sorted tuple of heaps
# arrow/arrow-other:       (sorted tuple of heaps, size of pointed heap or None if no heap)
# coin:                    (sorted tuple of heaps, 'H' or 'T')

NIM_VARIANTS = ("normal", "largest", "distinct", "arrow", "arrow-other", "coin")


def _nim(p):
    variant = _choice(p["variant"], "variant", NIM_VARIANTS)
    play = _choice(p["play"], "play", ("normal", "misere"))
    try:
        heaps = tuple(sorted(int(x) for x in p["start"].split("-")))
    except ValueError:
        raise ValueError(f"bad nim start {p['start']!r}") from None
    if any(h < 0 for h in heaps):
        raise ValueError(f"bad nim start {p['start']!r}")
    heaps = tuple(h for h in heaps if h > 0)
    if variant == "distinct" and len(set(heaps)) != len(heaps):
        raise ValueError("variant=distinct needs distinct start heaps")

    def without(hs, i):
        return hs[:i] + hs[i + 1 :]

    def with_heap(hs, h):
        """hs plus a heap of size h (dropped if empty), sorted."""
        return tuple(sorted(hs + ((h,) if h > 0 else ())))

    def children(pos):
        result = set()
        if variant in ("normal", "largest", "distinct"):
            hs = pos
            for i, h in enumerate(hs):
                if variant in ("largest", "distinct") and h != max(hs):
                    continue
                for k in range(1, h + 1):
                    new = with_heap(without(hs, i), h - k)
                    if variant == "distinct" and len(set(new)) != len(new):
                        continue
                    result.add(new)
        elif variant in ("arrow", "arrow-other"):
            hs, arrow = pos
            if arrow is None:
                return []
            i = hs.index(arrow)  # equal heaps are interchangeable: any one will do
            others = without(hs, i)
            for k in range(1, arrow + 1):
                left = arrow - k
                new = with_heap(others, left)
                if variant == "arrow":
                    targets = set(new)  # any non-empty heap, the same one included
                else:
                    targets = set(others)  # any heap but the one just taken from
                if not new:
                    result.add(((), None))  # last stone taken: no heap to point at
                for t in targets:
                    result.add((new, t))
        else:  # coin
            hs, coin = pos
            for i, h in enumerate(hs):
                for k in range(1, h + 1):
                    if (k % 2 == 0) != (coin == "H"):
                        continue
                    new = with_heap(without(hs, i), h - k)
                    result.add((new, coin))
                    result.add((new, "T" if coin == "H" else "H"))
        return list(result)

    def no_move(pos):
        return "loss" if play == "normal" else "win"

    if variant in ("arrow", "arrow-other"):

        def text(pos):
            hs, arrow = pos
            return _join(hs) if arrow is None else f"{_join(hs)}@{arrow}"

        if heaps:
            starts = [(heaps, a) for a in sorted(set(heaps))]
            start = (heaps, min(heaps))
        else:
            starts = [((), None)]
            start = ((), None)
    elif variant == "coin":

        def text(pos):
            return f"{_join(pos[0])} {pos[1]}"

        start = (heaps, "H")
        starts = [start]
    else:
        text = _join
        start = heaps
        starts = [start]
    return _Game(starts, children, no_move, text, start)


# --------------------------------------------------------------------------- hackenbush
# position = frozenset of remaining edges, each edge named by its child node


def _parse_tree(spec):
    parent = {}
    try:
        for part in spec.split(";"):
            if not part.strip():
                continue
            top, kids = part.split(":")
            for kid in kids.split("/"):
                if int(kid) in parent:
                    raise ValueError(f"node {kid} has two parents")
                parent[int(kid)] = int(top)
    except ValueError as e:
        raise ValueError(f"bad tree {spec!r}: {e}") from None
    for node in parent:  # every node must hang from the root 1, without cycles
        seen, n = set(), node
        while n != 1:
            if n in seen or n not in parent:
                raise ValueError(f"bad tree {spec!r}: node {node} not connected to root 1")
            seen.add(n)
            n = parent[n]
    return parent


def _fib_tree(k):
    parent = {}
    counter = [0]

    def build(k):  # returns the number of the subtree's root, numbering in preorder
        counter[0] += 1
        root = counter[0]
        if k >= 2:
            parent[build(k - 1)] = root
        if k >= 3:
            parent[build(k - 2)] = root
        return root

    build(k)
    return parent


def _hackenbush(p):
    if p["fib"] != "none":
        parent = _fib_tree(_int(p["fib"], "fib", 1))
    else:
        parent = _parse_tree(p["tree"])

    def above(edge):  # the edge and every edge hanging from it
        result = {edge}
        changed = True
        while changed:
            changed = False
            for child, top in parent.items():
                if top in result and child not in result:
                    result.add(child)
                    changed = True
        return result

    def children(pos):
        return [pos - above(e) for e in pos]

    def no_move(pos):
        return "loss"

    start = frozenset(parent)
    return _Game([start], children, no_move, _join, start)


# --------------------------------------------------------------------------- solver

# --------------------------------------------------------------------------- octal
# position = sorted tuple of heap sizes; digit k of the code: 1 take the whole heap of k,
# 2 leave one heap, 4 leave two non-empty heaps


def _octal(p):
    code = p["code"]
    if not (
        code.startswith("0.")
        and 1 <= len(code) - 2 <= 32
        and all(c in "01234567" for c in code[2:])
        and code[-1] != "0"
    ):
        raise ValueError(f"bad octal code {code!r}")
    digits = [int(c) for c in code[2:]]
    heaps = tuple(sorted(int(x) for x in p["start"].split("-")))
    play = _choice(p["play"], "play", ("normal", "misere"))

    def children(pos):
        result = set()
        for i, heap in enumerate(pos):
            rest = pos[:i] + pos[i + 1 :]
            for k in range(1, min(heap, len(digits)) + 1):
                d, left = digits[k - 1], heap - k
                if d & 1 and left == 0:
                    result.add(rest)
                if d & 2 and left > 0:
                    result.add(tuple(sorted(rest + (left,))))
                if d & 4:
                    for a in range(1, left):
                        result.add(tuple(sorted(rest + (a, left - a))))
        return list(result)

    def no_move(pos):
        return "win" if play == "misere" else "loss"

    return _Game([heaps], children, no_move, _join, heaps)


# --------------------------------------------------------------------------- tictactoe
# position = string of rows * cols cells, row by row from the top: 'x', 'o' or '.'


def _tictactoe(p):
    rows = _int(p["rows"], "rows", 1)
    cols = _int(p["cols"], "cols", 1)
    k = _int(p["k"], "k", 1)
    if k > max(rows, cols):
        raise ValueError(f"k={k} does not fit on a {rows}x{cols} board")

    def has_line(pos, mark):
        for r in range(rows):
            for c in range(cols):
                for dr, dc in ((0, 1), (1, 0), (1, 1), (1, -1)):
                    cells = [(r + i * dr, c + i * dc) for i in range(k)]
                    if all(0 <= y < rows and 0 <= x < cols and pos[y * cols + x] == mark for y, x in cells):
                        return True
        return False

    def last_mover(pos):
        return "x" if pos.count("x") > pos.count("o") else "o"

    def over(pos):
        return has_line(pos, last_mover(pos)) or "." not in pos

    def children(pos):
        if over(pos):
            return []
        mark = "o" if last_mover(pos) == "x" else "x"
        return [pos[:i] + mark + pos[i + 1 :] for i, cell in enumerate(pos) if cell == "."]

    def no_move(pos):
        return "loss" if has_line(pos, last_mover(pos)) else "tie"

    def text(pos):
        return "/".join(pos[r * cols : (r + 1) * cols] for r in range(rows))

    start = "." * (rows * cols)
    return _Game([start], children, no_move, text, start, impartial=False)


# --------------------------------------------------------------------------- connect
# position = tuple of columns, each a string of discs from the bottom up: 'x' or 'o'


def _connect(p):
    cols = _int(p["cols"], "cols", 1)
    rows = _int(p["rows"], "rows", 1)
    k = _int(p["k"], "k", 1)
    if k > max(rows, cols):
        raise ValueError(f"k={k} does not fit on a {cols}x{rows} board")

    # every line of k cells on the board: from each cell in each direction, kept where it
    # stays on the board (a line leaving it holds no k discs); listed once, not per position
    lines = [
        [(c + i * dc, h + i * dh) for i in range(k)]
        for c in range(cols)
        for h in range(rows)
        for dc, dh in ((1, 0), (0, 1), (1, 1), (1, -1))
        if 0 <= c + (k - 1) * dc < cols and 0 <= h + (k - 1) * dh < rows
    ]

    def has_line(pos, mark):
        held = {(c, h) for c, column in enumerate(pos) for h, disc in enumerate(column) if disc == mark}
        return any(held.issuperset(line) for line in lines)

    def discs(pos):
        return sum(len(column) for column in pos)

    def last_mover(pos):
        return "o" if discs(pos) % 2 == 0 else "x"

    def children(pos):
        if discs(pos) and has_line(pos, last_mover(pos)):
            return []
        mark = "x" if discs(pos) % 2 == 0 else "o"
        return [pos[:c] + (pos[c] + mark,) + pos[c + 1 :] for c in range(cols) if len(pos[c]) < rows]

    def no_move(pos):
        return "loss" if discs(pos) and has_line(pos, last_mover(pos)) else "tie"

    def text(pos):
        columns = [column.ljust(rows, ".") for column in pos]  # each from the bottom up
        return "/".join("".join(column[h] for column in columns) for h in reversed(range(rows)))

    start = ("",) * cols
    return _Game([start], children, no_move, text, start, impartial=False)


# --------------------------------------------------------------------------- dobutsu
# position = (board, mover's hand, opponent's hand), turned to the mover.  board: 12
# characters, row by row from the far row to the mover's back row, each row left to
# right as the mover sees it; upper case the mover's pieces, lower case the opponent's,
# '.' an empty square.  A hand is a string of upper-case letters in the order G, E, C.
# Turning the board to the other player is reversing the string and swapping case.

_DOBUTSU_STEPS = {  # (rows, columns); forward is up the board, towards row 0
    "L": ((-1, -1), (-1, 0), (-1, 1), (0, -1), (0, 1), (1, -1), (1, 0), (1, 1)),
    "G": ((-1, 0), (1, 0), (0, -1), (0, 1)),
    "E": ((-1, -1), (-1, 1), (1, -1), (1, 1)),
    "C": ((-1, 0),),
    "H": ((-1, 0), (1, 0), (0, -1), (0, 1), (-1, -1), (-1, 1)),
}
# piece -> square -> the squares it reaches from there
_DOBUTSU_REACH = {
    piece: [
        tuple((r + dr) * 3 + c + dc for dr, dc in steps if 0 <= r + dr < 4 and 0 <= c + dc < 3)
        for r in range(4)
        for c in range(3)
    ]
    for piece, steps in _DOBUTSU_STEPS.items()
}
# every piece on its square (second player: giraffe a1, lion b1, elephant c1, chick b2)
_DOBUTSU_START = "gle.c..C.ELG"
_DOBUTSU_BACK_ROW = (9, 10, 11)


def _dobutsu_hand(pieces):
    return "".join(sorted(pieces, key="GEC".index))


def _dobutsu(p):
    try_rule = _choice(p["try"], "try", ("on", "off")) == "on"
    pieces = _choice(p["pieces"], "pieces", ("gec", "ge", "gc", "ec", "g", "e", "c"))
    kept = "l" + pieces
    start = "".join(square if square.lower() in kept else "." for square in _DOBUTSU_START)

    def over(board):
        """'win' if the mover can take the opponent's lion (catch), 'loss' if that lion
        stands on the mover's back row (try), None if the game goes on."""
        lion = board.index("l")
        if any(piece.isupper() and lion in _DOBUTSU_REACH[piece][i] for i, piece in enumerate(board)):
            return "win"
        if try_rule and lion in _DOBUTSU_BACK_ROW:
            return "loss"
        return None

    def children(pos):
        board, mine, yours = pos
        if over(board):
            return []  # the catch is not played out: a lion is never taken below
        result = []
        for i, piece in enumerate(board):
            if not piece.isupper():
                continue
            for j in _DOBUTSU_REACH[piece][i]:
                taken = board[j]
                if taken.isupper():
                    continue
                new = list(board)
                new[i], new[j] = ".", "H" if piece == "C" and j < 3 else piece
                hand = mine if taken == "." else _dobutsu_hand(mine + ("C" if taken == "h" else taken.upper()))
                result.append(("".join(new)[::-1].swapcase(), yours, hand))
        for piece in set(mine):  # a drop on any empty square; a chick stays a chick
            rest = mine.replace(piece, "", 1)
            for j, square in enumerate(board):
                if square == ".":
                    new = board[:j] + piece + board[j + 1 :]
                    result.append((new[::-1].swapcase(), yours, rest))
        return result

    def no_move(pos):
        # RULES.md gives no value to a mover without moves who is neither caught nor tried
        # (none is reachable with try=on; with try=off a lion cornered on the far row among
        # its own pieces): lost, as in shogi, the pipeline's reading too
        return over(pos[0]) or "loss"

    def text(pos):
        board, mine, yours = pos
        rows = "/".join(board[3 * r : 3 * r + 3] for r in range(4))
        for run in ("...", "..", "."):  # the longest runs of empty squares first
            rows = rows.replace(run, str(len(run)))
        return rows + " b " + ((mine + yours.lower()) or "-")

    first = (start, "", "")
    return _Game([first], children, no_move, text, first, impartial=False)


_GAMES = {
    "chopsticks": _chopsticks,
    "sticks": _sticks,
    "nim": _nim,
    "hackenbush": _hackenbush,
    "octal": _octal,
    "tictactoe": _tictactoe,
    "connect": _connect,
    "dobutsu": _dobutsu,
}


def _build(game, params):
    g = _GAMES.get(game)
    if g is None:
        raise ValueError(f"unknown game {game!r}")
    return g(_params(game, params))


def _graph(g):
    """All positions reachable from g.starts: position -> set of children."""
    graph = {}
    todo = list(g.starts)
    while todo:
        pos = todo.pop()
        if pos in graph:
            continue
        graph[pos] = set(g.children(pos))
        todo.extend(c for c in graph[pos] if c not in graph)
    return graph


def _texts(g, graph):
    text = {pos: g.text(pos) for pos in graph}
    assert len(set(text.values())) == len(text), "position texts are not unique"
    return text


def rules(game, params=None):
    """The ruleset's _Game: start, children and no_move, to walk a space too big to build."""
    return _build(game, params or {})


def start(game, params=None):
    g = _build(game, params or {})
    return g.text(g.start)


def moves(game, params=None):
    g = _build(game, params or {})
    graph = _graph(g)
    text = _texts(g, graph)
    return {text[pos]: {text[c] for c in kids} for pos, kids in graph.items()}


def _values(g, graph):
    """Round-by-round retrograde analysis, wins and losses first, then ties.

    Round 0 settles the positions without moves ('win', 'loss' or 'tie').  In round r
    an unsettled position is a win at remoteness r if it has a loss child of remoteness
    r-1, a loss at remoteness r if every child is a win of remoteness <= r-1.  (Either
    rule needs a child settled in round r-1, so only the parents of those are examined.)
    Once no round settles anything, a position that is neither can still force a tie:
    the mover prefers win > tie > draw > loss.  Tie rounds start again from the finished
    ties: in tie round r an unsettled position with a tie child of remoteness r-1 is a
    tie at remoteness r (the mover hurries to the tied end, so the first round that
    reaches it counts).  Whatever is never settled is a draw.
    """
    parents = {pos: set() for pos in graph}
    for pos, kids in graph.items():
        for c in kids:
            parents[c].add(pos)
    value, rem = {}, {}
    for pos, kids in graph.items():
        if not kids:
            value[pos], rem[pos] = g.no_move(pos), 0
    last = [pos for pos in graph if pos in value]
    r = 0
    while last:
        r += 1
        settled = []
        for pos in {p for c in last for p in parents[c] if p not in value}:
            kids = graph[pos]
            if any(value.get(c) == "loss" and rem[c] == r - 1 for c in kids):
                settled.append((pos, "win"))
            elif all(value.get(c) == "win" and rem[c] <= r - 1 for c in kids):
                settled.append((pos, "loss"))
        for pos, v in settled:
            value[pos], rem[pos] = v, r
        last = [pos for pos, v in settled]
    last = [pos for pos in graph if value.get(pos) == "tie"]
    r = 0
    while last:
        r += 1
        settled = {p for c in last for p in parents[c] if p not in value}
        for pos in settled:
            value[pos], rem[pos] = "tie", r
        last = list(settled)
    for pos in graph:
        if pos not in value:
            value[pos], rem[pos] = "draw", None
    return value, rem


def _grundy(graph):
    """Mex of the children's Grundy values where no cycle is reachable, else None.

    Positions are peeled in rounds: a position is peeled once all its children are.
    Exactly the positions from which no cycle can be reached get peeled, and the peel
    order puts every child before its parents.
    """
    grundy = {}
    while True:
        ready = [pos for pos, kids in graph.items() if pos not in grundy and all(c in grundy for c in kids)]
        if not ready:
            break
        for pos in ready:
            seen = {grundy[c] for c in graph[pos]}
            mex = 0
            while mex in seen:
                mex += 1
            grundy[pos] = mex
    return {pos: grundy.get(pos) for pos in graph}


def solve(game, params=None):
    g = _build(game, params or {})
    graph = _graph(g)
    text = _texts(g, graph)
    value, rem = _values(g, graph)
    grundy = _grundy(graph) if g.impartial else dict.fromkeys(graph)
    return {text[pos]: (value[pos], rem[pos], grundy[pos]) for pos in graph}
