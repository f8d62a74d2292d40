"""Small SVG pictures of positions, for the pages (`Game.draw`).

A picture is inline SVG meant for an HTML page: no XML declaration, no namespace, no
script and no reference outside itself, so a page stays self-contained; the elements and
attributes allowed are pipeline/products/pictures.py's. Sizes are in CSS pixels; the pages
scale a picture through its viewBox.
"""

from __future__ import annotations

import html

#: Colours shared by the pictures: the player to move, the other player, lines, paper.
MOVER = "#1565c0"
OTHER = "#e65100"
INK = "#37474f"
FAINT = "#b0bec5"
PAPER = "#fafafa"


def esc(text: object) -> str:
    return html.escape(str(text), quote=True)


def svg(width: float, height: float, body: list[str], label: str, sides: bool = False, board: bool = False) -> str:
    """An inline SVG of `body` (SVG elements), `label` its accessible name. With `sides`
    the player to move is drawn below and the other above: the pages flip the picture
    (its texts kept upright) where the second player moves, so each player keeps a side.
    A `board` seen from the mover's side (dobutsu) is turned half round there instead, as
    the first player sees it, the colours of class `mover` and `other` swapped so that each
    player keeps theirs, and only texts of class `words` kept upright."""
    kind = " sides" * sides + " board" * board
    return (
        f'<svg class="position{kind}" width="{width:g}" height="{height:g}" viewBox="0 0 {width:g} {height:g}" '
        f'role="img" aria-label="{esc(label)}" font-family="system-ui,sans-serif">{"".join(body)}</svg>'
    )


def text(
    x: float,
    y: float,
    words: object,
    size: int = 11,
    anchor: str = "middle",
    fill: str = INK,
    weight: str = "normal",
    kind: str = "",
) -> str:
    """A text; its font is the picture's (`svg`); `kind` its class (`svg`'s board)."""
    bold = ' font-weight="bold"' if weight == "bold" else ""
    classes = f' class="{esc(kind)}"' if kind else ""
    return (
        f'<text x="{x:g}" y="{y:g}" font-size="{size}" text-anchor="{anchor}" fill="{fill}"{bold}{classes}>'
        f"{esc(words)}</text>"
    )


def text_picture(words: str, width: object = None) -> str:
    """The position text in a box: the picture of a game that draws none. `width` is for
    the pages' script, which puts a text into a box drawn with placeholders."""
    if width is None:
        width = max(40, 8 * len(words) + 16)
        middle, inner = f"{width / 2:g}", f"{width - 1:g}"
    else:
        middle, inner = "@X@", "@R@"
    return (
        f'<svg class="position" width="{width}" height="28" viewBox="0 0 {width} 28" role="img" '
        f'aria-label="{esc(words)}"><rect x="0.5" y="0.5" width="{inner}" height="27" rx="4" fill="{PAPER}" '
        f'stroke="{FAINT}"/><text x="{middle}" y="18" font-size="13" text-anchor="middle" fill="{INK}" '
        f'font-family="ui-monospace,monospace">{esc(words)}</text></svg>'
    )


def row_of_tokens(x: float, y: float, count: int, shape: str, colour: str, gap: float = 9) -> list[str]:
    """`count` tokens from (x, y) rightwards: 'stick' (a bar 4 wide, 22 high) or 'stone'
    (a disc 7.2 across, its box's corner at (x, y)). One dashed line draws them all: a
    page holds thousands of pictures."""
    if not count:
        return []
    if shape == "stick":
        return [
            f'<path d="M{x:g} {y + 11:g}h{count * gap - (gap - 4):g}" stroke="{colour}" stroke-width="22" '
            f'stroke-dasharray="4 {gap - 4:g}"/>'
        ]
    return [stones(x + 4, y + 4, count, gap, colour)]


def stones(x: float, y: float, count: int, gap: float, colour: str, upwards: bool = False) -> str:
    """`count` discs `gap` apart from the centre (x, y), rightwards or upwards, as one
    dashed line: a dash of length 0 with round caps is a disc."""
    length = f"{(count - 1) * gap + 0.01:g}"
    return (
        f'<path d="M{x:g} {y:g}{"v-" if upwards else "h"}{length}" stroke="{colour}" stroke-width="7.2" '
        f'stroke-linecap="round" stroke-dasharray="0 {gap:g}"/>'
    )


def heap_rows(words: str, shape: str, what: str) -> str:
    """Heaps written `3-4-5` (or `0`) as rows of tokens, one row a heap, its size on the left."""
    heaps = [int(n) for n in words.split("-") if int(n) > 0]
    if not heaps:
        return svg(120, 28, [text(60, 18, f"no {what} left", 12, fill=FAINT)], f"no {what} left")
    step, top = 28, 4
    width = 28 + 9 * max(heaps) + 4
    body = []
    for i, n in enumerate(heaps):
        y = top + i * step
        body.append(text(10, y + 15, n, 11, fill=INK))
        body += row_of_tokens(
            24, y + (0 if shape == "stick" else 7), n, shape, MOVER if shape == "stone" else "#8d6e63"
        )
    return svg(width, top + len(heaps) * step, body, f"{what}: {', '.join(map(str, heaps))}")
