"""The symbolic checks' handler: what verl-rewards-math's child process runs (SymPy, math-verify).

:mod:`verl_rewards.child` runs it: ``Checks(function_names)`` is built once per
child (importing and warming SymPy and math-verify), then called with each
request; the parent kills the child at its deadline however long SymPy would
have run. The names are those ``latex_expr.FUNCTIONS`` translates to.

Requests: ``{"op": "sympy", "a": ..., "b": ...}`` with strings from
``latex_expr.to_sympy_syntax``, or ``{"op": "math_verify", "pairs": [[gold,
pred], ...]}`` (equal when math-verify finds any pair equal). Answers:
``{"equal": true|false|null, "error": ...}``.
"""

from __future__ import annotations

import re
import string
from collections.abc import Sequence
from typing import Any

MEMORY_BYTES = 2 * 1024**3  # each child's address space (the parent sets it)
TOLERANCE = 1e-9
# A reference written as a decimal with k places stands for any value it rounds or
# truncates to: within one unit of its last place, never looser. A predicted decimal
# states no such thing (3.14 is not pi: the reference pi is exact).
_DECIMAL = re.compile(r"^\(*-?\d+\.(\d+)\)*$")


def _setup(function_names: Sequence[str]) -> dict[str, Any]:
    import sympy
    from sympy.parsing import sympy_parser as sp

    _warm_up(sympy)

    names: dict[str, Any] = {c: sympy.Symbol(c) for c in string.ascii_letters}
    names.update(e=sympy.E, i=sympy.I, pi=sympy.pi, oo=sympy.oo, sqrt=sympy.sqrt)
    # The SymPy functions the parent's translator emits (latex_expr.FUNCTIONS).
    for name in function_names:
        names[name] = getattr(sympy, name)
    # parse_expr evaluates its input: the globals hold only what its
    # transformations emit, and the input was whitelisted by the parent.
    glob: dict[str, Any] = {"__builtins__": {}}
    for name in ("Integer", "Float", "Rational", "Symbol", "Function"):
        glob[name] = getattr(sympy, name)
    transformations = (
        *sp.standard_transformations,
        sp.implicit_multiplication,
        sp.implicit_application,
        sp.function_exponentiation,
        sp.convert_xor,
    )
    return {"sympy": sympy, "parse": sp.parse_expr, "names": names, "glob": glob, "tr": transformations}


def _warm_up(sympy: Any) -> None:
    """Pay the first-use costs now, before "ready": math-verify's LaTeX parser loads its
    grammar and SymPy fills its caches on the first call (~2 s), which would
    otherwise be charged to the first answer's deadline and decide it."""
    x = sympy.Symbol("x")
    sympy.simplify(sympy.sin(x) ** 2 + sympy.cos(x) ** 2 - sympy.sqrt(8) / 2)
    try:
        from math_verify import parse, verify
    except ImportError:
        return
    sample = "\\boxed{F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1} + \\frac{\\sqrt{3}}{2} x^{2}, (1, 2] \\cup \\{3\\}}"
    verify(parse(sample), parse("\\boxed{\\begin{pmatrix} 1 & 2 \\\\ 3 & 4 \\end{pmatrix}}"))
    # Two sums compared: SymPy imports and builds its summation code on first use (~2 s).
    verify(parse("\\boxed{F_n = \\sum_{k=0}^{n-1} F_k F_{n-k-1}}"), parse("\\boxed{F_n = \\sum_{k=0}^{n-2} F_k F_{n-k-2}}"))


def _parse(ctx: dict[str, Any], text: str) -> Any:
    if "__" in text or any(c in text for c in "'\"[]{};:`!@#$&|\\"):
        raise ValueError("refused: not a whitelisted expression")
    return ctx["parse"](
        text, local_dict=dict(ctx["names"]), global_dict=ctx["glob"], transformations=ctx["tr"]
    )


def _same(ctx: dict[str, Any], a: Any, b: Any, places: int | None = None) -> bool:
    sympy = ctx["sympy"]
    if a == b:
        return True
    diff = sympy.simplify(a - b)
    if diff == 0:
        return True
    if not diff.free_symbols:
        error = abs(complex(sympy.N(diff)))
        if places is not None:
            return bool(error <= 10.0**-places)
        return bool(error <= TOLERANCE * max(1.0, abs(complex(sympy.N(b)))))
    return bool(a.equals(b))


def _places(reference: str) -> int | None:
    """The decimal places of a reference that is a bare decimal (``1.732`` for ``\\sqrt{3}``)."""
    match = _DECIMAL.match(reference.strip())
    return len(match.group(1)) if match else None


def sympy_equal(ctx: dict[str, Any], a: str, b: str) -> bool:
    """Whether the prediction ``a`` equals the reference ``b`` (expressions, or equations ``l = r``)."""
    if a.count("=") != b.count("=") or a.count("=") > 1:
        return False
    if "=" in a:
        (la, ra), (lb, rb) = a.split("="), b.split("=")
        left = _parse(ctx, la) - _parse(ctx, ra)
        right = _parse(ctx, lb) - _parse(ctx, rb)
        if _same(ctx, left, right) or _same(ctx, left, -right):
            return True
        # The same equation scaled: 2x + 4y = 6 and x + 2y = 3.
        ratio = ctx["sympy"].simplify(left / right) if right != 0 else None
        return ratio is not None and ratio.is_number and ratio != 0
    return _same(ctx, _parse(ctx, a), _parse(ctx, b), _places(b))


def math_verify_equal(pairs: list[list[str]]) -> bool:
    """Whether math-verify finds any (gold, pred) pair of boxed answers equal."""
    from math_verify import parse, verify

    return any(bool(verify(parse(gold), parse(pred))) for gold, pred in pairs)


class Checks:
    """The child's handler: SymPy and math-verify, imported and warmed once."""

    def __init__(self, function_names: Sequence[str]) -> None:
        self._ctx = _setup(function_names)

    def __call__(self, request: dict[str, Any]) -> dict[str, Any]:
        """One request's answer; a check that raises is undecided (``equal`` null), never a crash."""
        answer: dict[str, Any] = {"equal": None}
        try:
            if request["op"] == "sympy":
                answer["equal"] = sympy_equal(self._ctx, request["a"], request["b"])
            elif request["op"] == "math_verify":
                answer["equal"] = math_verify_equal(request["pairs"])
            else:
                answer["error"] = f"unknown op {request['op']!r}"
        except Exception as e:  # noqa: BLE001 - any failure is "undecided"
            answer["error"] = f"{type(e).__name__}: {e}"[:300]
        return answer
