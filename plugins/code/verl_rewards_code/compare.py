"""Compare a program's answer with the expected one, as the judges of APPS/TACO and LiveCodeBench do.

Every function here reads program output in time linear in its length: no
regular expressions (a backtracking token regex took about 5 s on 16 KB of
digits followed by a letter, and hours on the 4 MiB output cap), only
``str`` methods that scan once.
"""

from __future__ import annotations

import math
from typing import Any, NamedTuple

FLOAT_TOLERANCE = 1e-6

_DIGITS = "0123456789"


def outputs_match(actual: str, expected: str) -> bool:
    """True when the outputs agree line by line up to trailing whitespace, or
    token by token: an expected integer only by a token of exactly its value
    (``07``, ``7.0`` and ``7e0`` are ``7``; ``6.9999999`` is not), an expected
    number with a decimal point or an exponent within ``FLOAT_TOLERANCE``
    (absolute or relative), the rest as text."""
    if _lines(actual) == _lines(expected):
        return True
    got, want = actual.split(), expected.split()
    return len(got) == len(want) and all(token_match(g, w) for g, w in zip(got, want))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n")]


def token_match(got: str, want: str) -> bool:
    """Whether the output token ``got`` matches the expected token ``want`` (see :func:`outputs_match`)."""
    if got == want:
        return True
    integer = _integer(want)
    if integer is not None:
        written = _integer(got)
        if written is not None:
            return written == integer  # the common case, without int(): "007" == "7", "-0" == "0"
        # Exact decimal equality, as LiveCodeBench compares (never a tolerance: a float
        # printed for a big integer, 1.2345678901234568e+29, is a wrong answer).
        return _exactly(got, integer)
    if not (is_decimal(got) and is_decimal(want)):
        return False  # text, or a spelling float() accepts but judges do not ("1_0", "inf")
    x, y = float(got), float(want)
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
    return math.isclose(x, y, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)


def _digit_count(text: str, start: int) -> int:
    """How many ASCII digits ``text`` has in a row from ``start`` (one C-level scan)."""
    rest = text[start:]
    return len(rest) - len(rest.lstrip(_DIGITS))


def _sign_length(text: str) -> int:
    return 1 if text[:1] in ("+", "-") else 0


def _integer(token: str) -> tuple[bool, str] | None:
    """``(negative, digits without leading zeros)`` of ``[-+]?[0-9]+``, else None."""
    start = _sign_length(token)
    if start == len(token) or _digit_count(token, start) != len(token) - start:
        return None
    digits = token[start:].lstrip("0") or "0"
    return token[0] == "-" and digits != "0", digits


class _Decimal(NamedTuple):
    """The parts of ``[-+]?(digits[.digits*] | .digits)([eE][-+]?digits)?``."""

    negative: bool
    whole: str
    fraction: str
    exponent_negative: bool
    exponent: str  # its digits, maybe empty (no exponent)


def _decimal(token: str) -> _Decimal | None:
    """The parts of a decimal number token, else None (one scan, no regex)."""
    sign = _sign_length(token)
    whole = _digit_count(token, sign)
    at = sign + whole
    fraction_at, fraction = at + 1, 0
    if token[at : at + 1] == ".":
        fraction = _digit_count(token, at + 1)
        at += 1 + fraction
    if whole == 0 and fraction == 0:
        return None
    exponent_negative, exponent_at, exponent = False, at, 0
    if token[at : at + 1] in ("e", "E"):
        at += 1
        exponent_negative = token[at : at + 1] == "-"
        at += _sign_length(token[at : at + 1])
        exponent_at, exponent = at, _digit_count(token, at)
        if exponent == 0:
            return None
        at += exponent
    if at != len(token):
        return None
    return _Decimal(
        token[:1] == "-", token[sign : sign + whole], token[fraction_at : fraction_at + fraction],
        exponent_negative, token[exponent_at : exponent_at + exponent],
    )


def is_decimal(token: str) -> bool:
    """Whether ``token`` is ``[-+]?(digits[.digits*] | .digits)([eE][-+]?digits)?``."""
    return _decimal(token) is not None


# An exponent this long moves a non-zero number past any integer an output can hold.
_MAX_EXPONENT_DIGITS = 18


def _exactly(token: str, integer: tuple[bool, str]) -> bool:
    """Whether the decimal ``token`` has exactly the value of ``integer`` (as
    :func:`_integer` gives it): ``1e3``, ``1000.00`` and ``+01000`` are 1000.
    Compares digit strings, never ``int()`` or ``float()``: linear in the
    token, whatever its exponent."""
    parts = _decimal(token)
    if parts is None:
        return False
    negative, digits = integer
    significant = (parts.whole + parts.fraction).lstrip("0")
    if not significant:
        return digits == "0"  # 0, -0.0, 0e99
    core = significant.rstrip("0")
    exponent = parts.exponent.lstrip("0") or "0"
    if len(exponent) > _MAX_EXPONENT_DIGITS:
        return False
    # token = core x 10**shift
    shift = (-1 if parts.exponent_negative else 1) * int(exponent) - len(parts.fraction) + len(significant) - len(core)
    expected_core = digits.rstrip("0")
    return parts.negative == negative and expected_core == core and len(digits) - len(core) == shift


def returns_match(returned: Any, expected: Any, wrapped: bool = True) -> bool:
    """Whether a call-based test's return value is the expected one, by the rule
    of the APPS, LiveCodeBench and verl ``prime_code`` evaluators (Python ``==``,
    no float tolerance): tuples count as lists (JSON has no tuples); with
    ``wrapped`` (a ground truth in APPS's form, which wraps return values as
    ``[x]``) an expected one-element list also accepts ``x``.

    ``returned`` must be a plain value the caller built itself (the harness
    rebuilds the program's answer), never an object of the program's.
    """
    returned = _tuples_as_lists(returned)
    if returned == expected:
        return True
    return wrapped and type(expected) is list and len(expected) == 1 and returned == expected[0]


def _tuples_as_lists(value: Any) -> Any:
    if type(value) in (list, tuple):
        return [_tuples_as_lists(item) for item in value]
    if type(value) is dict:
        return {key: _tuples_as_lists(item) for key, item in value.items()}
    return value
