"""Find numbers in free text the way people and models write them.

Handles signs (also the Unicode minus), currency signs (``$``, ``\\$``, ``£``,
``€``), thousands separators (``1,234,567``), decimals (``.5``) and trailing
periods or units (``42.``, ``72 apples``, ``25%``). Values are exact decimals
of any length.
"""

from __future__ import annotations

import collections
import re
from decimal import MAX_EMAX, MIN_EMIN, Decimal, localcontext

NUMBER = re.compile(
    r"(?<![\w.])"
    r"(?P<sign>[-\u2212+]?)"
    r"(?:(?:\\?\$|£|€)\s?)?"
    r"(?P<sign2>-?)"
    # Thousands groups must end the integer part: "1,0800" is not 10800 (nor 1080).
    r"(?P<digits>\d{1,3}(?:,\d{3})+(?!,?\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)"
)


def find_numbers(text: str) -> list[Decimal]:
    """Every number in ``text``, in order."""
    return [_to_decimal(m) for m in NUMBER.finditer(text)]


def last_number(text: str) -> Decimal | None:
    """The last number in ``text`` (None without one): only that one is converted (a
    megabyte of ``1,`` holds half a million numbers)."""
    last = collections.deque(NUMBER.finditer(text), maxlen=1)
    return _to_decimal(last[0]) if last else None


def number_at_start(text: str) -> Decimal | None:
    """The number that ``text`` starts with (after blanks), if any."""
    m = NUMBER.match(text.lstrip())
    return _to_decimal(m) if m else None


def format_number(value: Decimal) -> str:
    """A canonical spelling: ``1080`` for ``1,080.00``, ``-0.5`` for ``-.50``."""
    with localcontext() as context:
        # normalize() rounds to the context's precision (28 digits by default), and overflows
        # past its largest exponent (a number of a million digits).
        context.prec = max(context.prec, len(value.as_tuple().digits))
        context.Emax, context.Emin = MAX_EMAX, MIN_EMIN
        text = format(value.normalize(), "f")
    return "0" if text in ("-0", "+0") else text


def _to_decimal(match: re.Match[str]) -> Decimal:
    # The pattern admits only valid decimals; Decimal(str) is exact, and
    # copy_negate() (unlike unary minus) does not round to the context.
    value = Decimal(match.group("digits").replace(",", ""))
    negative = match.group("sign") in ("-", "\u2212") or match.group("sign2") == "-"
    return value.copy_negate() if negative else value
