"""Decide whether two answers are the same: cheap exact checks first, but only
a check that cannot be overturned gives a final "wrong".

1. the normalised strings are equal (``exact``);
2. both are plain numbers (integers, decimals, fractions, ``a/b``, mixed
   numbers, clock times; a percentage also as its hundredth): equal as exact
   rationals within a relative 1e-9 (``numeric``). This "wrong" is final:
   nothing was left for a better check to read;
3. both are collections (tuples, intervals, sets, lists, matrices,
   inequalities read as intervals, ``\\pm`` read as two answers): same shape,
   items equal by these same cheap rules (``sequence``). "Wrong" is final only
   when every item on both sides is a plain number, or when ``ordered_lists``
   asks for an order that math-verify (which reads lists as sets) ignores;
4. math-verify (``math_verify``), in the symbolic child. Its "wrong" is final
   unless our conventions differ from its own (a decimal read as any value it
   rounds to, ``i`` as the imaginary unit), or it could not decide;
5. SymPy (``symbolic``), item by item for collections.

Checks 4 and 5 share one budget, ``Options.timeout_s`` seconds of the
symbolic child's CPU time (the same on a loaded machine as on an idle one),
within ``symbolic.WALL_PER_CPU`` times that of wall-clock time, which starts
once the child is running: its start (or restart after a timeout) is never
charged to an answer. Both run in a child process killed when the budget is
spent (or when the reward call's time runs out): an answer whose checks were cut short
there and found nothing equal is "not equal", with the method ``undecided``
(a hostile ``9^{9^{9^{9}}}`` is a 0 in bounded time, never a hang).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from fractions import Fraction
from typing import Literal, NamedTuple

from . import symbolic
from .latex_expr import to_sympy_syntax
from .normalize import is_percent, normalize, split_top_level

Method = Literal["exact", "numeric", "sequence", "math_verify", "symbolic", "none", "undecided"]

# At most three exponent digits: Fraction("1e10000000") takes seconds in C.
_DECIMAL = re.compile(r"^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d{1,3})?$")
_FRAC = re.compile(r"^([-+]?)\\frac\{(-?\d+(?:\.\d+)?)\}\{(-?\d+(?:\.\d+)?)\}$")
_SLASH = re.compile(r"^([-+]?\d+)/(\d+)$")
_OPENERS, _CLOSERS = "([", ")]"
_REL_TOL = Fraction(1, 10**9)
# Spaces are gone by now ("5 \\geq x" is "5\\geqx"): the longest command wins.
_RELATION = re.compile(r"(\\(?:le|ge)(?:qslant|q)?|<|>)")
_VARIABLE = re.compile(r"^[a-zA-Z](?:_\w)?(?:\([a-z]\))?$")
_INFINITY = "\\infty"
_CLOCK = re.compile(r"^\d\d:\d\d:\d\d$")
_GLUED = re.compile(r"^-?\d+(?:\.\d+)?[a-zA-Z]{1,2}$")
_ROUNDED = re.compile(r"\d\.\d")
_IMAGINARY = re.compile(r"(?<![a-zA-Z\\])i(?![a-zA-Z])")
# One comma between digits that cannot be a thousands separator (normalize.py reads "1,222"
# as 1222): in a reference, a decimal comma ("1,22", "0,111"). A predicted comma never is.
_DECIMAL_COMMA = re.compile(r"^-?\d+,\d+$")


class Verdict(NamedTuple):
    """Whether two answers are equal, and which check said so.

    ``answered`` is False when the prediction normalises to nothing (``""``,
    ``\\$``, ``\\text{}``): no answer was given at all.
    """

    equal: bool
    method: Method
    answered: bool = True


class Options(NamedTuple):
    """How far to go, and the conventions where peers differ.

    ``timeout_s`` is the CPU time math-verify and SymPy may take together for one
    answer (within ``symbolic.WALL_PER_CPU`` times that of wall-clock time). ``ordered_lists``: a bare list ``1, 2, 3`` must be in the same
    order (sets and tuples are order-free and ordered whatever this says).
    """

    symbolic: bool = True
    math_verify: bool = True
    timeout_s: float = 2.0
    ordered_lists: bool = False


class Items(NamedTuple):
    """A tuple, interval, set, list or matrix: its brackets and items."""

    opener: str
    closer: str
    items: list[str]


def equivalent(pred: str, gold: str, options: Options = Options()) -> Verdict:
    """Compare a predicted answer with the reference, both as LaTeX strings."""
    p, g = normalize(pred), normalize(gold)
    if not p:
        return Verdict(False, "none", answered=False)
    if _DECIMAL_COMMA.match(g):
        # a reference written with a decimal comma: "1,22" is also 1.22
        a, b = as_number(p), as_number(g.replace(",", "."))
        if a is not None and b is not None and _numbers_equal(a, b):
            return Verdict(True, "numeric")
    verdict = _cheap(p, g, is_percent(pred), is_percent(gold), options)
    if verdict is not None:
        return verdict
    if not (options.symbolic or (options.math_verify and symbolic.math_verify_installed())):
        return Verdict(False, "none")
    with symbolic.recording_cuts() as cuts:
        verdict = _checked(pred, gold, p, g, options)
    return Verdict(False, "undecided") if verdict.method == "none" and cuts else verdict


def _checked(pred: str, gold: str, p: str, g: str, options: Options) -> Verdict:
    """math-verify's verdict, then SymPy's, within ``options.timeout_s`` together."""
    # The child's (re)start is done before the deadline starts: a slow start
    # must not turn a right answer wrong in one run and not in the next.
    symbolic.ensure_started()
    budget = symbolic.Budget(options.timeout_s)
    if options.math_verify and symbolic.math_verify_installed():
        # The answers as written: math-verify reads LaTeX better than our normal form.
        said = budget.run(lambda seconds: symbolic.math_verify_equal([(gold, pred)], seconds))
        if said:
            return Verdict(True, "math_verify")
        if said is False and not _conventions_differ(p, g):
            return Verdict(False, "math_verify")
    if options.symbolic and _symbolic_equal(p, g, options, budget):
        return Verdict(True, "symbolic")
    return Verdict(False, "none")


def _cheap(p: str, g: str, p_percent: bool, g_percent: bool, options: Options) -> Verdict | None:
    """A verdict from the cheap checks, or None when a better check should decide."""
    if p == g:
        return Verdict(True, "exact")
    a, b = _values(p, p_percent), _values(g, g_percent)
    if a is not None and b is not None:
        return Verdict(any(_numbers_equal(x, y) for x in a for y in b), "numeric")
    if _CLOCK.match(p) and _CLOCK.match(g):
        return Verdict(False, "numeric")
    if (a is not None and _GLUED.match(g)) or (b is not None and _GLUED.match(p)):
        # "10cm" against "10": a unit of one or two letters needs a space
        # (normalize.py), so this is a product, which math-verify would read as 10.
        return Verdict(False, "numeric")
    pseq, gseq = as_collection(p), as_collection(g)
    if pseq is None or gseq is None:
        return None
    if _collections_equal(pseq, gseq, _item_cheap, options):
        return Verdict(True, "sequence")
    if (_all_numbers(pseq) and _all_numbers(gseq)) or (options.ordered_lists and "" in (pseq.opener, gseq.opener)):
        return Verdict(False, "sequence")
    return None


def _all_numbers(items: Items) -> bool:
    """Every item is a plain number (or a collection of them): nothing for a better check to read."""
    for item in items.items:
        s = normalize(item)
        inner = as_collection(s) if as_number(s) is None else None
        if as_number(s) is None and (inner is None or not _all_numbers(inner)):
            return False
    return True


def _conventions_differ(p: str, g: str) -> bool:
    """Whether our SymPy check reads these answers differently from math-verify:
    a reference decimal as any value it rounds to (``1.732`` for ``\\sqrt{3}``), a
    predicted one within a relative 1e-9 (math-verify rounds both sides to 6 places),
    or ``i`` as the imaginary unit."""
    return any(_ROUNDED.search(s) or _IMAGINARY.search(s) for s in (p, g))


def _values(s: str, percent: bool) -> list[Fraction] | None:
    value = as_number(s)
    if value is None:
        return None
    return [value, value / 100] if percent else [value]


def _item_cheap(p: str, g: str, options: Options = Options()) -> bool:
    p, g = normalize(p), normalize(g)
    if p == g:
        return True
    a, b = as_number(p), as_number(g)
    if a is not None and b is not None:
        return _numbers_equal(a, b)
    pseq, gseq = as_collection(p), as_collection(g)
    return pseq is not None and gseq is not None and _collections_equal(pseq, gseq, _item_cheap, options)


def _symbolic_equal(p: str, g: str, options: Options, budget: symbolic.Budget) -> bool:
    """SymPy's verdict, item by item for collections, within what is left of ``budget``."""
    pseq, gseq = as_collection(p), as_collection(g)
    if pseq is not None and gseq is not None:

        def same(x: str, y: str, options: Options) -> bool:
            return _item_cheap(x, y, options) or _symbolic_equal(normalize(x), normalize(y), options, budget)

        return _collections_equal(pseq, gseq, same, options)
    return _sympy_item(p, g, budget)


def _sympy_item(p: str, g: str, budget: symbolic.Budget) -> bool:
    if budget.spent():
        return False
    a, b = to_sympy_syntax(p), to_sympy_syntax(g)
    if a is None or b is None:
        return False
    return budget.run(lambda seconds: symbolic.sympy_equal(a, b, seconds)) is True


def as_number(s: str) -> Fraction | None:
    """The exact value of a plain number: ``-12``, ``3.50``, ``1e-3``, ``\\frac{3}{4}``, ``3/4``.

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
            return -value if sign == "-" else value
        slash = _SLASH.match(s)
        if slash and int(slash.group(2)) != 0:
            return Fraction(int(slash.group(1)), int(slash.group(2)))
    except ValueError:
        return None
    return None


def _numbers_equal(a: Fraction, b: Fraction) -> bool:
    """Equal within a relative ``1e-9``, in exact arithmetic (no float overflow or rounding)."""
    return abs(a - b) <= _REL_TOL * max(abs(a), abs(b))


def as_collection(s: str) -> Items | None:
    """``(1,2)``, ``[0,1)``, ``\\{1,2\\}``, ``{1,2}``, ``1,2;3``, ``[[1,2],[3,4]]``,
    ``x \\le 5`` (as ``(-\\infty,5]``) or ``\\pm 2`` (as ``{2,-2}``); None for one plain item."""
    interval = relation_as_interval(s)
    if interval is not None:
        return interval
    opener, closer, body = "", "", s
    if s.startswith("\\{") and s.endswith("\\}"):
        opener, closer, body = "{", "}", s[2:-2]
    elif len(s) >= 2 and s[0] == "{" and s[-1] == "}" and _wraps(s):
        opener, closer, body = "{", "}", s[1:-1]
    elif len(s) >= 2 and s[0] in _OPENERS and s[-1] in _CLOSERS and _wraps(s):
        opener, closer, body = s[0], s[-1], s[1:-1]
    items = split_top_level(body, ",;")
    if any(not item for item in items) or _unbalanced(body):
        return None
    if opener in ("", "{"):
        items = _expand_plus_minus(items)
        if len(items) > 1 and opener == "" and any("\\pm" in item for item in split_top_level(body, ",;")):
            opener, closer = "{", "}"
    if len(items) < 2:
        return None
    return Items(opener, closer, items)


def relation_as_interval(s: str) -> Items | None:
    """``x \\le 5``, ``5 \\ge x`` -> ``(-\\infty,5]``; ``0 < f(x) < 1`` -> ``(0,1)``; None otherwise."""
    parts = _RELATION.split(s)
    if len(parts) == 3:
        left, op, right = parts
        if _VARIABLE.match(right) and not _VARIABLE.match(left):
            left, op, right = right, _flip(op), left
        if not _VARIABLE.match(left) or _VARIABLE.match(right):
            return None
        strict = op in "<>"
        if op.startswith(("<", "\\le")):
            return Items("(", ")" if strict else "]", ["-" + _INFINITY, right])
        return Items("(" if strict else "[", ")", [right, _INFINITY])
    if len(parts) == 5 and _VARIABLE.match(parts[2]):
        low, op1, _, op2, high = parts
        if op1.startswith(("<", "\\le")) and op2.startswith(("<", "\\le")):
            return Items("(" if op1 == "<" else "[", ")" if op2 == "<" else "]", [low, high])
        if op1.startswith((">", "\\ge")) and op2.startswith((">", "\\ge")):
            return Items("(" if op2 == ">" else "[", ")" if op1 == ">" else "]", [high, low])
    return None


def _flip(op: str) -> str:
    return {"<": ">", ">": "<"}.get(op) or (op.replace("\\le", "\\ge") if op.startswith("\\le") else op.replace("\\ge", "\\le"))


def _expand_plus_minus(items: list[str]) -> list[str]:
    """``1 \\pm \\sqrt{2}`` is two answers, ``1+\\sqrt{2}`` and ``1-\\sqrt{2}``."""
    out = []
    for item in items:
        if item.count("\\pm") == 1:
            plus, minus = item.replace("\\pm", "+"), item.replace("\\pm", "-")
            out += [plus[1:] if plus.startswith("+") else plus, minus]
        else:
            out.append(item)
    return out


def _wraps(s: str) -> bool:
    """The first bracket closes at the very end (``(1,2)`` yes, ``(1)+(2)`` no)."""
    depth = 0
    for i, char in enumerate(s):
        depth += char in "([{"
        depth -= char in ")]}"
        if depth == 0:
            return i == len(s) - 1
    return False


def _unbalanced(body: str) -> bool:
    depth = 0
    for char in body:
        depth += char in "([{"
        depth -= char in ")]}"
        if depth < 0:
            return True
    return depth != 0


def _collections_equal(p: Items, g: Items, same: Callable[..., bool], options: Options) -> bool:
    unordered_p = p.opener == "{" or (p.opener == "" and not options.ordered_lists)
    unordered_g = g.opener == "{" or (g.opener == "" and not options.ordered_lists)
    def equal(a: str, b: str) -> bool:
        return bool(same(a, b, options))

    if unordered_p and unordered_g:
        return _matching(_distinct(p.items), _distinct(g.items), equal)
    if (p.opener, p.closer) != (g.opener, g.closer) or len(p.items) != len(g.items):
        return False
    return all(equal(a, b) for a, b in zip(p.items, g.items))


def _distinct(items: list[str]) -> list[str]:
    seen: dict[str, str] = {}
    for item in items:
        seen.setdefault(normalize(item), item)
    return list(seen.values())


def _matching(ps: list[str], gs: list[str], same: Callable[[str, str], bool]) -> bool:
    """Every item of ``ps`` pairs with a distinct equal item of ``gs``, and none is left over."""
    if len(ps) != len(gs):
        return False
    left = list(gs)
    for p in ps:
        hit = next((i for i, g in enumerate(left) if same(p, g)), None)
        if hit is None:
            return False
        left.pop(hit)
    return True
