"""Compare a program's stdout with the expected output, as judges of APPS/TACO do."""

from __future__ import annotations

import math
import re

FLOAT_TOLERANCE = 1e-6

_INTEGER = re.compile(r"([-+]?)0*([0-9]+)")
_DECIMAL = re.compile(r"[-+]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?")


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
    a, b = _INTEGER.fullmatch(got), _INTEGER.fullmatch(want)
    if a and b:
        # Exactly, and without int(): no digit limit, "007" == "7", "-0" == "0".
        return (a[2], a[1] == "-" and a[2] != "0") == (b[2], b[1] == "-" and b[2] != "0")
    if not (_DECIMAL.fullmatch(got) and _DECIMAL.fullmatch(want)):
        return False  # text, or a spelling float() accepts but judges do not ("1_0", "inf")
    x, y = float(got), float(want)
    if not (math.isfinite(x) and math.isfinite(y)):
        return False
    return math.isclose(x, y, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)
