"""The symbolic-check worker: a child process that owns SymPy (and math-verify).

Run as ``python -c <this source> <sys.path as JSON> <function names as JSON>``,
the names being those ``latex_expr.FUNCTIONS`` translates to. It reads one JSON
request per line on stdin and answers one JSON line, so the parent can kill
it at a deadline however long SymPy would have run. The answers go to the
original stdout, kept on a private fd; ``sys.stdout`` and fd 1 are pointed at
stderr, so nothing a library prints can be taken for an answer. It caps its
own address space and exits when stdin closes or its parent exits.

Requests: ``{"id": n, "op": "sympy", "a": ..., "b": ...}`` with strings from
``latex_expr.to_sympy_syntax``, or ``{"id": n, "op": "math_verify", "pairs":
[[gold, pred], ...]}`` (equal when math-verify finds any pair equal). Answers: ``{"id": n, "equal": true|false|null, "error": ...}``,
after a first line ``{"ready": true}`` once SymPy is imported.
"""

from __future__ import annotations

import json
import os
import re
import resource
import string
import sys
import threading
import time
from typing import Any, TextIO

MEMORY_BYTES = 2 * 1024**3
TOLERANCE = 1e-9
# A reference written as a decimal with k places stands for any value it rounds or
# truncates to: within one unit of its last place, never looser. A predicted decimal
# states no such thing (3.14 is not pi: the reference pi is exact).
_DECIMAL = re.compile(r"^\(*-?\d+\.(\d+)\)*$")


def _setup() -> dict[str, Any]:
    sys.path[:] = json.loads(sys.argv[1])
    try:
        resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    except (ValueError, OSError):
        pass
    import sympy
    from sympy.parsing import sympy_parser as sp

    _warm_up(sympy)

    names: dict[str, Any] = {c: sympy.Symbol(c) for c in string.ascii_letters}
    names.update(e=sympy.E, i=sympy.I, pi=sympy.pi, oo=sympy.oo, sqrt=sympy.sqrt)
    # The SymPy functions the parent's translator emits (latex_expr.FUNCTIONS).
    for name in json.loads(sys.argv[2]):
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


def exit_with_parent(period_s: float = 1.0) -> None:
    """Exit once the parent is gone, even in the middle of a long computation."""
    parent = os.getppid()

    def watch() -> None:
        while os.getppid() == parent:
            time.sleep(period_s)
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()


def reply_channel() -> TextIO:
    """The original stdout, for answers only; fd 1 and ``sys.stdout`` now go to stderr."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return replies


def main() -> int:
    """Serve requests until stdin closes or the parent exits."""
    replies = reply_channel()
    exit_with_parent()
    ctx = _setup()
    print(json.dumps({"ready": True}), file=replies, flush=True)
    for line in sys.stdin:
        answer: dict[str, Any] = {"id": None, "equal": None}
        try:
            request = json.loads(line)
            answer["id"] = request.get("id")
            if request["op"] == "sympy":
                answer["equal"] = sympy_equal(ctx, request["a"], request["b"])
            elif request["op"] == "math_verify":
                answer["equal"] = math_verify_equal(request["pairs"])
            else:
                answer["error"] = f"unknown op {request['op']!r}"
        except Exception as e:  # noqa: BLE001 - any failure is "undecided", never a crash
            answer["error"] = f"{type(e).__name__}: {e}"[:300]
        print(json.dumps(answer), file=replies, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
