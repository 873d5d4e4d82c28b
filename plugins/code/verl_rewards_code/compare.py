"""Compare a program's answer with the expected one, as the judges of APPS/TACO and LiveCodeBench do.

Every function here reads program output in time linear in its length: no
regular expressions (a backtracking token regex took about 5 s on 16 KB of
digits followed by a letter, and hours on the 4 MiB output cap), only
``str`` methods that scan once.
"""

from __future__ import annotations

import math
from typing import Any

FLOAT_TOLERANCE = 1e-6

_DIGITS = "0123456789"


def outputs_match(actual: str, expected: str) -> bool:
    """True when the outputs agree line by line up to trailing whitespace, or
    token by token: integers exactly, numbers with a decimal point or an
    exponent within ``FLOAT_TOLERANCE`` (absolute or relative), the rest as text."""
    if _lines(actual) == _lines(expected):
        return True
    got, want = actual.split(), expected.split()
    return len(got) == len(want) and all(_token_match(g, w) for g, w in zip(got, want))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n")]


def _token_match(got: str, want: str) -> bool:
    if got == want:
        return True
    a, b = _integer(got), _integer(want)
    if a is not None and b is not None:
        # Exactly, and without int(): no digit limit, "007" == "7", "-0" == "0".
        return a == b
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


def is_decimal(token: str) -> bool:
    """Whether ``token`` is ``[-+]?(digits[.digits*] | .digits)([eE][-+]?digits)?``."""
    at = _sign_length(token)
    whole = _digit_count(token, at)
    at += whole
    fraction = 0
    if token[at : at + 1] == ".":
        fraction = _digit_count(token, at + 1)
        at += 1 + fraction
    if whole == 0 and fraction == 0:
        return False
    if token[at : at + 1] in ("e", "E"):
        at += 1
        at += _sign_length(token[at : at + 1])
        exponent = _digit_count(token, at)
        if exponent == 0:
            return False
        at += exponent
    return at == len(token)


def returns_match(returned: Any, expected: Any) -> bool:
    """Whether a call-based test's return value is the expected one, by the rule
    of APPS's and verl's ``prime_code`` evaluators (Python ``==``, no float
    tolerance): tuples count as lists (JSON has no tuples), and an expected
    one-element list ``[x]`` (APPS wraps return values so) also accepts ``x``.

    ``returned`` must be a plain value the caller built itself (the harness
    rebuilds the program's answer), never an object of the program's.
    """
    returned = _tuples_as_lists(returned)
    if returned == expected:
        return True
    return type(expected) is list and len(expected) == 1 and returned == expected[0]


def _tuples_as_lists(value: Any) -> Any:
    if type(value) in (list, tuple):
        return [_tuples_as_lists(item) for item in value]
    if type(value) is dict:
        return {key: _tuples_as_lists(item) for key, item in value.items()}
    return value
