"""What a game's picture (`Game.draw`) may hold to go inline into a page.

A page embeds each position's picture as it is, and its script copies pictures from one
place to another through innerHTML; a page goes into published bundles and opens in other
people's browsers. So a picture is SVG shapes and text alone: no script, no event handler,
no link, no animation, no HTML inside it (foreignObject), no reference outside itself.

What is allowed is an allow-list given to ammonia, a maintained HTML sanitiser (Rust,
through its Python binding nh3) that parses a picture as a browser parses it inline in
HTML, SVG's own rules included. A picture the sanitiser would change is refused, never
cleaned silently: the game's author learns what was dropped (`tablebase check-game`,
`tablebase draw`), and a picture that passes is what the sanitiser would have written.
"""

from __future__ import annotations

import functools
import re
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import nh3

from pipeline.core.errors import TablebaseError


class PictureError(TablebaseError):
    """A game's drawing that a page may not hold (`tablebase draw` refuses it)."""


#: The elements a picture may hold: shapes, groups and text. Not a, use, image (links and
#: references), foreignObject (HTML inside), script, style, animate and set (handlers and
#: timed changes), nor title and desc (HTML parses their content as HTML). Nor gradients,
#: patterns, markers, clips or filters: they work through ids, which would clash between
#: the hundreds of pictures one page holds.
ELEMENTS = frozenset({"svg", "g", "rect", "circle", "ellipse", "line", "polyline", "polygon", "path", "text", "tspan"})

#: The attributes any of them may hold: presentation, text layout, accessibility and the
#: classes the pages' style and script read (sides, board, mover, other, words).
PRESENTATION = frozenset(
    {
        "class",
        "transform",
        "opacity",
        "fill",
        "fill-opacity",
        "fill-rule",
        "stroke",
        "stroke-width",
        "stroke-opacity",
        "stroke-dasharray",
        "stroke-dashoffset",
        "stroke-linecap",
        "stroke-linejoin",
        "font-family",
        "font-size",
        "font-style",
        "font-weight",
        "text-anchor",
        "dominant-baseline",
        "role",
        "aria-label",
        "aria-hidden",
    }
)

#: Each element's own geometry.
GEOMETRY = {
    "svg": {"width", "height", "viewBox", "preserveAspectRatio"},
    "rect": {"x", "y", "width", "height", "rx", "ry"},
    "circle": {"cx", "cy", "r"},
    "ellipse": {"cx", "cy", "rx", "ry"},
    "line": {"x1", "y1", "x2", "y2"},
    "polyline": {"points"},
    "polygon": {"points"},
    "path": {"d"},
    "text": {"x", "y", "dx", "dy"},
    "tspan": {"x", "y", "dx", "dy"},
}

ATTRIBUTES = {"*": set(PRESENTATION), **{element: set(names) for element, names in GEOMETRY.items()}}


def _outside_reference(element: str, attribute: str, value: str) -> str | None:
    """A value is kept unless CSS could read it as url(): a paint fetched from elsewhere,
    or from an id (see ELEMENTS); a backslash (a CSS escape) could spell it. ammonia checks
    the URLs of link attributes alone, and a picture has none. Labels are words, not CSS."""
    if attribute == "aria-label" or ("(" not in value and "\\" not in value):
        return value
    return None if "url(" in "".join(value.lower().split()) or "\\" in value else value


@functools.cache
def _cleaner() -> nh3.Cleaner:
    """The sanitiser with the allow-list, made once rather than for each picture."""
    return nh3.Cleaner(
        tags=set(ELEMENTS),
        attributes=ATTRIBUTES,
        attribute_filter=_outside_reference,
        url_schemes=set(),
        link_rel=None,
        strip_comments=True,
    )


def sanitised(picture: str) -> str:
    """`picture` as the sanitiser writes it, holding only what a page's picture may."""
    return _cleaner().clean(picture)


def picture_problem(picture: object) -> str | None:
    """What keeps `picture` from going inline into a page, or None: it must be SVG text,
    well-formed, one <svg> element, and unchanged by the sanitiser."""
    if not isinstance(picture, str):
        return f"gives {type(picture).__name__}, not SVG text"
    try:
        root = ET.fromstring(picture)
    except ET.ParseError as error:
        return f"is not well-formed SVG: {error}"
    if root.tag.rpartition("}")[2] != "svg":
        return f"gives <{root.tag}>, not <svg>"
    # Unchanged means: the sanitiser, reading the picture as HTML as a browser does, writes
    # back the same elements, attributes and texts. Refused first, the markup an XML parser
    # and an HTML one read differently (comments, CDATA, declarations, processing
    # instructions): without it every "<" of a well-formed picture opens a tag for both, so
    # what the picture holds can be read from its XML tree (quickly: the sanitiser writes
    # it back as is) or, where they differ in form only (a line break in a value, which
    # XML turns into a space), from the tags and texts an HTML tokenizer reads.
    clean = sanitised(picture)
    if clean == _as_html(root) and "<!" not in picture and "<?" not in picture:
        return None
    refused = _changed(picture, clean)
    if refused is None and "<!" not in picture and "<?" not in picture:
        return None
    return (
        f"holds {refused or 'markup the sanitiser reads otherwise'}, which a page's picture may not hold "
        "(SVG shapes and text alone: no script, event handler, link, animation, HTML or outside reference)"
    )


def _as_html(element: ET.Element) -> str:
    """`element` written as the sanitiser (html5ever) writes HTML: every end tag, attributes
    in their order, these characters escaped."""
    attributes = "".join(f' {name}="{_escape(value, quote=True)}"' for name, value in element.attrib.items())
    inside = "".join(_as_html(child) + _escape(child.tail or "") for child in element)
    return f"<{element.tag}{attributes}>{_escape(element.text or '')}{inside}</{element.tag}>"


_ESCAPED = re.compile('[&<>"\u00a0]')


def _escape(text: str, quote: bool = False) -> str:
    if not _ESCAPED.search(text):  # most values are numbers
        return text
    text = text.replace("&", "&amp;").replace("\u00a0", "&nbsp;").replace("<", "&lt;").replace(">", "&gt;")
    return text.replace('"', "&quot;") if quote else text


class _Tokens(HTMLParser):
    """The tags, attributes and texts of markup as an HTML tokenizer reads them: the same
    for a picture and its sanitised copy when the sanitiser dropped nothing (<rect/> and
    <rect></rect> alike, entities decoded, names in lower case)."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tokens: list[tuple] = []
        self.spelt: dict[str, str] = {}  # each tag name as the markup spells it (foreignObject)

    def handle_starttag(self, tag, attrs):
        self.tokens.append(("start", tag, tuple(sorted(attrs, key=lambda pair: pair[0]))))
        self.spelt.setdefault(tag, (self.get_starttag_text() or "<" + tag)[1:][: len(tag)])

    def handle_endtag(self, tag):
        self.tokens.append(("end", tag))

    def handle_data(self, data):
        if self.tokens and self.tokens[-1][0] == "text":  # one text, however the parser splits it
            self.tokens[-1] = ("text", self.tokens[-1][1] + data)
        else:
            self.tokens.append(("text", data))

    def handle_comment(self, data):
        self.tokens.append(("comment", data))

    def handle_decl(self, decl):
        self.tokens.append(("declaration", decl))

    def unknown_decl(self, data):
        cdata = data.startswith("CDATA[")
        self.tokens.append(("CDATA section", data[6:]) if cdata else ("declaration", data))

    def handle_pi(self, data):
        self.tokens.append(("processing instruction", data))


def _tokens(markup: str) -> _Tokens:
    parser = _Tokens()
    parser.feed(markup)
    parser.close()
    return parser


def _changed(picture: str, clean: str) -> str | None:
    """What the sanitiser dropped or changed first, in words, or None if nothing."""
    read = _tokens(picture)
    before, after = read.tokens, _tokens(clean).tokens
    for i, token in enumerate(before):
        other = after[i] if i < len(after) else None
        if token == other:
            continue
        kind = token[0]
        if kind == "start" and other is not None and other[:2] == token[:2]:
            kept = dict(other[2])
            for name, value in token[2]:
                if kept.get(name) != value:
                    return f"the attribute {name}={_short(value)} on <{read.spelt[token[1]]}>"
        if kind in ("start", "end"):
            return f"the element <{read.spelt.get(token[1], token[1])}>"
        if kind == "text":
            return f"the text {_short(token[1])}, which the sanitiser reads otherwise"
        return f"a{'n' * (kind[0] in 'aeiou')} {kind} {_short(token[1])}"
    return None if len(after) == len(before) else "markup the sanitiser adds"


def _short(text: str | None) -> str:
    text = text or ""
    return repr(text if len(text) <= 60 else text[:57] + "...")
