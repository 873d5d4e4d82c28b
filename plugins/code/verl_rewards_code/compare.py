"""Compare a program's stdout with the expected output, as judges of APPS/TACO do."""

from __future__ import annotations

import math

FLOAT_TOLERANCE = 1e-6


def outputs_match(actual: str, expected: str) -> bool:
    """True when the outputs agree line by line up to trailing whitespace, or
    token by token (numbers within ``FLOAT_TOLERANCE``, absolute or relative)."""
    if _lines(actual) == _lines(expected):
        return True
    got, want = actual.split(), expected.split()
    return len(got) == len(want) and all(_token_match(g, w) for g, w in zip(got, want))


def _lines(text: str) -> list[str]:
    return [line.rstrip() for line in text.replace("\r\n", "\n").strip("\n").split("\n")]


def _token_match(got: str, want: str) -> bool:
    if got == want:
        return True
    try:
        a, b = float(got), float(want)
    except ValueError:
        return False
    if math.isnan(a) or math.isnan(b):
        return False
    return math.isclose(a, b, rel_tol=FLOAT_TOLERANCE, abs_tol=FLOAT_TOLERANCE)
