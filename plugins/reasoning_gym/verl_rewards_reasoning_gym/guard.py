"""Keep reasoning-gym's scorers from running the model's answer as code.

Nine tasks' ``score_answer`` hand the answer to ``eval`` or to SymPy's
``parse_expr`` (which evaluates Python too, with ``exec``, ``open`` and the
other builtin functions in scope): ``<answer>open(...).write(...)</answer>``
runs in the reward worker. Each of those scorers is rebuilt here over a copy
of its module's globals in which that name is guarded (reasoning-gym itself
is left unchanged):

* ``eval`` becomes ``ast.literal_eval``: the Python literals those tasks ask
  for (a list, a list of lists) read the same; anything else raises, which
  each scorer already treats as an unreadable answer.
* ``parse_expr`` (and ``sympy.parse_expr``/``sp.parse_expr``) first tokenizes
  its text and refuses strings, attribute access, keywords, names with a
  leading or double underscore, and every name SymPy would resolve to
  something other than arithmetic, a math function or a constant (builtins
  such as ``exec``, ``open``, ``chr``, ``getattr``); names it does not know
  become symbols, as before.
"""

from __future__ import annotations

import ast
import functools
import io
import keyword
import tokenize
import types
from collections.abc import Callable, Mapping
from typing import Any

# The name each task's score_answer calls on the answer, checked against its code by the tests.
EVAL_TASKS = frozenset({"binary_matrix", "n_queens", "spiral_matrix", "string_insertion"})
SYMPY_TASKS: Mapping[str, str] = {
    "countdown": "parse_expr",
    "puzzle24": "parse_expr",
    "polynomial_multiplication": "sp",
    "simple_integration": "sympy",
    "intermediate_integration": "sympy",
}
_OPERATORS = frozenset({"+", "-", "*", "/", "**", "//", "%", "^", "(", ")", ",", "==", "!", "<", ">", "<=", ">="})


def guarded(task: str, score_answer: Callable[..., Any]) -> Callable[..., Any]:
    """``score_answer`` (a bound method), or a copy of it whose dangerous global is guarded."""
    if task in EVAL_TASKS:
        return _rebound(score_answer, {"eval": literal_eval})
    name = SYMPY_TASKS.get(task)
    if name == "parse_expr":
        return _rebound(score_answer, {name: safe_parse_expr})
    if name is not None:
        return _rebound(score_answer, {name: _SympyProxy(score_answer.__func__.__globals__[name])})  # type: ignore[attr-defined]
    return score_answer


def literal_eval(source: Any, *_: Any) -> Any:
    """``eval`` for literals only: what ``eval(source)`` gives for a Python literal, else ValueError
    (or SyntaxError). Leading spaces and tabs are dropped, as ``eval`` drops them."""
    return ast.literal_eval(source.lstrip(" \t") if isinstance(source, str) else source)


def safe_parse_expr(text: Any, *args: Any, **kwargs: Any) -> Any:
    """SymPy's ``parse_expr``, for text that is arithmetic on numbers, symbols and math functions."""
    from sympy.parsing.sympy_parser import parse_expr

    if isinstance(text, str):
        refuse_code(text)
    return parse_expr(text, *args, **kwargs)


def refuse_code(text: str) -> None:
    """Raise ValueError unless every token of ``text`` is a number, an operator or a safe name."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (tokenize.TokenError, SyntaxError) as e:
        raise ValueError(f"refused: not an expression ({e})") from None
    unsafe = _unsafe_names()
    for token in tokens:
        kind, value = token.type, token.string
        if kind in (tokenize.NUMBER, tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER,
                    tokenize.INDENT, tokenize.DEDENT) or (kind == tokenize.OP and value in _OPERATORS):
            continue
        if kind == tokenize.ERRORTOKEN and value in ("!", " "):  # factorial notation
            continue
        if (kind == tokenize.NAME and not keyword.iskeyword(value) and not value.startswith("_")
                and "__" not in value and value not in unsafe):
            continue
        raise ValueError(f"refused: {value!r} could run code in SymPy's parse_expr")


@functools.cache
def _unsafe_names() -> frozenset[str]:
    """Names ``parse_expr`` resolves (SymPy's namespace, builtin functions) that are not math."""
    import builtins

    import sympy
    from sympy import functions

    scope: dict[str, Any] = {}
    exec("from sympy import *", scope)  # what parse_expr puts in scope, as it does it
    scope.update({n: f for n, f in vars(builtins).items() if isinstance(f, types.BuiltinFunctionType)})
    constants = {"pi", "E", "I", "oo", "zoo", "nan", "EulerGamma", "Catalan", "GoldenRatio", "TribonacciConstant"}
    arithmetic = {"Integer", "Rational", "Float", "Add", "Mul", "Pow", "Mod", "Eq", "N", "gcd", "lcm",
                  "abs", "pow", "round", "max", "min"}
    safe = {n for n in set(functions.__all__) | constants if hasattr(sympy, n)} | arithmetic
    return frozenset(set(scope) - safe)


class _SympyProxy:
    """A module stand-in whose ``parse_expr`` is :func:`safe_parse_expr`; everything else the module's."""

    def __init__(self, module: Any) -> None:
        self._module = module

    def __getattr__(self, name: str) -> Any:
        return safe_parse_expr if name == "parse_expr" else getattr(self._module, name)


def _rebound(method: Callable[..., Any], shadows: Mapping[str, Any]) -> Callable[..., Any]:
    """``method``'s function over a copy of its globals with ``shadows``, bound to the same object."""
    fn: types.FunctionType = method.__func__  # type: ignore[attr-defined]
    copy = types.FunctionType(fn.__code__, {**fn.__globals__, **shadows}, fn.__name__, fn.__defaults__,
                              fn.__closure__)
    copy.__kwdefaults__ = fn.__kwdefaults__
    return types.MethodType(copy, method.__self__)  # type: ignore[attr-defined]
