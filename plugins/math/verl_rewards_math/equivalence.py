"""Decide whether two answers are the same: cheapest check first.

1. the normalised strings are equal;
2. both are numbers (integers, decimals, fractions, ``a/b``): equal as exact
   rationals within a relative 1e-9 (``0.3333333333`` vs ``1/3``);
3. both are tuples, intervals or lists: same brackets, same length, each
   item equal (bare lists such as solutions ``1, 2`` and sets ``\\{1, 2\\}``
   in any order);
4. math-verify, when installed and enabled;
5. SymPy (``symbolic.py``).

Checks 4 and 5 (one SymPy check per pair of items for a set) share one
deadline, ``Options.timeout_s`` from the start of the comparison.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from fractions import Fraction
from typing import Literal, NamedTuple

from . import symbolic
from .latex_expr import to_sympy_syntax
from .normalize import normalize

Method = Literal["exact", "numeric", "sequence", "math_verify", "symbolic", "none"]

# At most three exponent digits: Fraction("1e10000000") takes seconds in C.
_DECIMAL = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?$")
_FRAC = re.compile(r"^(-?)\\frac\{(-?\d+(?:\.\d+)?)\}\{(-?\d+(?:\.\d+)?)\}$")
_OPENERS, _CLOSERS = "([", ")]"
_REL_TOL = Fraction(1, 10**9)


class Verdict(NamedTuple):
    """Whether two answers are equal, and which check said so.

    ``answered`` is False when the prediction normalises to nothing (``""``,
    ``\\$``, ``\\text{}``): no answer was given at all.
    """

    equal: bool
    method: Method
    answered: bool = True


class Options(NamedTuple):
    """How far to go: SymPy and math-verify, and the time they may take together, in seconds."""

    symbolic: bool = True
    math_verify: bool = True
    timeout_s: float = 2.0


def equivalent(pred: str, gold: str, options: Options = Options()) -> Verdict:
    """Compare a predicted answer with the reference, both as LaTeX strings."""
    deadline = time.monotonic() + options.timeout_s
    p, g = normalize(pred), normalize(gold)
    if not p:
        return Verdict(False, "none", answered=False)
    verdict = _compare(p, g, options, deadline)
    if verdict is not None:
        return verdict
    if options.math_verify and symbolic.math_verify_installed():
        remaining = deadline - time.monotonic()
        if remaining > 0 and symbolic.math_verify_equal(gold, pred, remaining):
            return Verdict(True, "math_verify")
    if options.symbolic and _symbolic_equal(p, g, deadline):
        return Verdict(True, "symbolic")
    return Verdict(False, "none")


def _compare(p: str, g: str, options: Options, deadline: float) -> Verdict | None:
    """A definite verdict from the cheap checks, or None to go on."""
    if p == g:
        return Verdict(True, "exact")
    a, b = as_number(p), as_number(g)
    if a is not None and b is not None:
        return Verdict(_numbers_equal(a, b), "numeric")
    pseq, gseq = split_sequence(p), split_sequence(g)
    if pseq is not None and gseq is not None:

        def same(x: str, y: str) -> bool:
            return _item_equal(x, y, options, deadline)

        return Verdict(_sequences_equal(pseq, gseq, same), "sequence")
    return None


def _item_equal(p: str, g: str, options: Options, deadline: float) -> bool:
    verdict = _compare(p, g, options, deadline)
    if verdict is not None:
        return verdict.equal
    return options.symbolic and _symbolic_equal(p, g, deadline)


def _symbolic_equal(p: str, g: str, deadline: float) -> bool:
    """SymPy's verdict, within what is left until ``deadline`` (False once it has passed)."""
    if time.monotonic() >= deadline:
        return False
    a, b = to_sympy_syntax(p), to_sympy_syntax(g)
    if a is None or b is None:
        return False
    remaining = deadline - time.monotonic()
    return remaining > 0 and symbolic.sympy_equal(a, b, remaining) is True


def as_number(s: str) -> Fraction | None:
    """The exact value of a plain number: ``-12``, ``3.50``, ``1e-3``, ``\\frac{3}{4}``, ``-\\frac{1}{2}``.

    None for anything else, including a number too long to read (over 4300
    digits, Python's limit on integer conversion) or with an exponent of more
    than three digits.
    """
    try:
        if _DECIMAL.match(s):
            return Fraction(s)
        frac = _FRAC.match(s)
        if frac:
            sign, num, den = frac.groups()
            if Fraction(den) == 0:
                return None
            value = Fraction(num) / Fraction(den)
            return -value if sign else value
    except ValueError:
        return None
    return None


def _numbers_equal(a: Fraction, b: Fraction) -> bool:
    """Equal within a relative ``1e-9``, in exact arithmetic (no float overflow or rounding)."""
    return abs(a - b) <= _REL_TOL * max(abs(a), abs(b))


class Items(NamedTuple):
    """A tuple, interval, set or bare list: its brackets and items."""

    opener: str
    closer: str
    items: list[str]


def split_sequence(s: str) -> Items | None:
    """``(1,2)``, ``[0,1)``, ``\\{1,2\\}`` or ``1,2,3`` split at top-level commas; None for one item."""
    opener, closer, body = "", "", s
    if s.startswith("\\{") and s.endswith("\\}"):
        opener, closer, body = "{", "}", s[2:-2]
    elif len(s) >= 2 and s[0] in _OPENERS and s[-1] in _CLOSERS and _wraps(s):
        opener, closer, body = s[0], s[-1], s[1:-1]
    items = _top_level_split(body)
    if items is None or len(items) < 2:
        return None
    return Items(opener, closer, items)


def _wraps(s: str) -> bool:
    """The first bracket closes at the very end (``(1,2)`` yes, ``(1)+(2)`` no)."""
    depth = 0
    for i, char in enumerate(s):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0:
            return i == len(s) - 1
    return False


def _top_level_split(body: str) -> list[str] | None:
    items, depth, start = [], 0, 0
    for i, char in enumerate(body):
        if char in "([{":
            depth += 1
        elif char in ")]}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(body[start:i])
            start = i + 1
    items.append(body[start:])
    return None if depth != 0 or any(not item for item in items) else items


def _sequences_equal(p: Items, g: Items, same: Callable[[str, str], bool]) -> bool:
    if (p.opener, p.closer) != (g.opener, g.closer) or len(p.items) != len(g.items):
        return False
    if p.opener in ("", "{"):
        return _matching(p.items, g.items, same)
    return all(same(a, b) for a, b in zip(p.items, g.items))


def _matching(ps: list[str], gs: list[str], same: Callable[[str, str], bool]) -> bool:
    """Every item of ``ps`` pairs with a distinct equal item of ``gs`` (order free)."""
    left = list(gs)
    for p in ps:
        hit = next((i for i, g in enumerate(left) if same(p, g)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True
