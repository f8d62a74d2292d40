"""Typed rule parameters: each parses its text form from a ruleset id and formats it back."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pipeline.core.errors import RulesetError, UsageError

#: Longest number a position or parameter may hold: far past any game here, far short of
#: what would overflow an int32 column or make int() slow.
MAX_DIGITS = 9


def is_number(text: str) -> bool:
    """ASCII digits only ('²'.isdigit() is true), at most MAX_DIGITS of them."""
    return 0 < len(text) <= MAX_DIGITS and text.isascii() and text.isdigit()


#: Characters of a user's text quoted in an error line before it is cut short.
QUOTED = 80


def quoted(text: str) -> str:
    """`text` as repr() for an error line, cut short where it is long: an error is one
    readable line even for a parameter of a million characters."""
    if len(text) <= QUOTED:
        return repr(text)
    return f"{text[:QUOTED]!r}… ({len(text):,} characters)"


def utf8(text: str, what: str) -> str:
    """`text` where it is Unicode text; UsageError naming `what` where it holds bytes that
    are not UTF-8, which Python keeps from a command line as lone surrogates ('\\udcff')
    that DuckDB, Arrow and JSON cannot take."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError as error:
        code = ord(text[error.start])
        byte = f"byte 0x{code - 0xDC00:02x}" if 0xDC80 <= code <= 0xDCFF else f"U+{code:04X}"
        raise UsageError(
            f"{what} is not UTF-8 text ({byte} at character {error.start + 1}): "
            "write it in UTF-8, as the terminal's locale should"
        ) from None
    return text


def shortened(text: str) -> str:
    """`text` for an error line as it is, cut short where it is long (as `quoted`)."""
    if len(text) <= QUOTED:
        return text
    return f"{text[:QUOTED]}… ({len(text):,} characters)"


def count(number: int) -> str:
    """A count for an error line: with thousands separators, or its power of ten where it
    has too many digits to print (int() and str() refuse beyond 4,300)."""
    if number.bit_length() <= 100:
        return f"{number:,}"
    return f"about 10^{int(number.bit_length() * 0.30103)}"


@dataclass(frozen=True)
class Param:
    """A rule parameter: its name, default (as text), help line and how to parse a value."""

    name: str
    default: str
    help: str

    def parse(self, text: str) -> Any:
        raise NotImplementedError

    def format(self, value: Any) -> str:
        return str(value)

    def values_help(self) -> str:
        raise NotImplementedError

    def fail(self, text: str, why: str) -> RulesetError:
        return RulesetError(f"bad value {quoted(text)} for parameter {self.name!r}: {why}")


@dataclass(frozen=True)
class IntParam(Param):
    minimum: int = 0
    maximum: int | None = None
    none_ok: bool = False

    def parse(self, text: str) -> int | None:
        if self.none_ok and text == "none":
            return None
        if not is_number(text):
            expected = f"an integer ≥ {self.minimum}" + (" or 'none'" if self.none_ok else "")
            raise self.fail(text, f"expected {expected}")
        value = int(text)
        if value < self.minimum:
            raise self.fail(text, f"must be ≥ {self.minimum}")
        if self.maximum is not None and value > self.maximum:
            raise self.fail(text, f"must be ≤ {self.maximum}")
        return value

    def format(self, value: int | None) -> str:
        return "none" if value is None else str(value)

    def values_help(self) -> str:
        upper = f"..{self.maximum}" if self.maximum is not None else " or more"
        return f"integer {self.minimum}{upper}" + (", or none" if self.none_ok else "")


@dataclass(frozen=True)
class ChoiceParam(Param):
    choices: tuple[str, ...] = ()

    def parse(self, text: str) -> str:
        if text not in self.choices:
            raise self.fail(text, f"expected one of {', '.join(self.choices)}")
        return text

    def values_help(self) -> str:
        return " | ".join(self.choices)


@dataclass(frozen=True)
class BoolParam(Param):
    def parse(self, text: str) -> bool:
        if text not in ("true", "false"):
            raise self.fail(text, "expected true or false")
        return text == "true"

    def format(self, value: bool) -> str:
        return "true" if value else "false"

    def values_help(self) -> str:
        return "true | false"


@dataclass(frozen=True)
class TextParam(Param):
    """A structured value (heap sizes, a tree) with its own parser and canonical form."""

    parser: Callable[[str], Any] | None = None
    formatter: Callable[[Any], str] | None = None
    shape: str = ""

    def parse(self, text: str) -> Any:
        assert self.parser is not None
        try:
            return self.parser(text)
        except ValueError as error:
            raise self.fail(text, str(error)) from None

    def format(self, value: Any) -> str:
        return self.formatter(value) if self.formatter else str(value)

    def values_help(self) -> str:
        return self.shape
