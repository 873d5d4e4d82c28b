"""In-sandbox harness of an assert test: run the program, then its assertion, checked by us.

This file is the sandboxed ``main.py`` of an assert test (standard library
only; it never imports the package). Stdin holds one JSON object, read before
the program runs and then replaced by ``/dev/null``: the program, the
assertion and a per-run nonce. Only after the assertion held does the harness
print the nonce as the last line of stdout and ``_exit(0)``; the scorer
requires it, so a program that exits early (``os._exit(0)``, ``sys.exit``,
``exec`` of another binary) fails.

An audit hook, installed before the program runs (and never removable),
refuses what would let the program reach the harness's state: frames
(``sys._getframe``, tracebacks' ``tb_frame``, generators' frames, tracing and
profiling), ``gc`` object walks, ``ctypes``, ``/proc`` and fresh copies of
``signal``; the process is made non-dumpable so no other process can read its
memory either. This is hardening inside one process, not a proof.

Comparisons and truth tests anywhere in an ``assert`` (and ``any``, ``all``,
``bool`` called from it) are done by the harness on plain values only
(``None``, ``bool``, ``int``, ``float``, ``complex``, ``str``, ``bytes`` and
``list``/``tuple``/``dict``/``set``/``frozenset`` of them, exact types): an
operand of any other type, e.g. an object whose ``__eq__`` is always true or a
subclass of ``int``, fails the assertion. The modules an assertion may use
(``builtins``, ``math``, ``cmath``, ``operator``) must be as before the
program ran.
"""

from __future__ import annotations

import ast
import builtins
import cmath
import ctypes
import json
import math
import operator
import os
import signal
import sys
import types
from collections.abc import Callable
from typing import Any

# Functions defined below look names up in this copy, not in the builtins
# module the program can change (``builtins.type = ...``).
__builtins__ = dict(vars(builtins))  # type: ignore[assignment]
_PLAIN_SCALARS = frozenset({type(None), bool, int, float, complex, str, bytes})
_PLAIN_CONTAINERS = frozenset({list, tuple, set, frozenset, dict})
_WATCHED = (builtins, math, cmath, operator)
_BLOCKED_EVENTS = frozenset(
    {
        "sys._current_frames",
        "sys._current_exceptions",
        "sys.settrace",
        "sys.setprofile",
        "object.__getattr__",
        "gc.get_objects",
        "gc.get_referrers",
        "gc.get_referents",
    }
)
_OPS: dict[str, Callable[[Any, Any], Any]] = {
    "Eq": operator.eq,
    "NotEq": operator.ne,
    "Lt": operator.lt,
    "LtE": operator.le,
    "Gt": operator.gt,
    "GtE": operator.ge,
    "In": lambda a, b: operator.contains(b, a),
    "NotIn": lambda a, b: not operator.contains(b, a),
    "Is": operator.is_,
    "IsNot": operator.is_not,
}
_PR_SET_DUMPABLE = 4


def plain(value: Any, depth: int = 0) -> Any:
    """``value`` itself when it is plain data (exact builtin types all the way down)."""
    kind = type(value)
    if kind in _PLAIN_SCALARS:
        return value
    if kind in _PLAIN_CONTAINERS and depth < 100:
        items = list(value.items()) if kind is dict else list(value)
        for item in items:
            if kind is dict:
                plain(item[0], depth + 1)
                plain(item[1], depth + 1)
            else:
                plain(item, depth + 1)
        return value
    # An AssertionError: a value the harness will not compare is a wrong answer.
    raise AssertionError(f"the assertion compares a {kind.__name__}, not a plain value (bool, int, str, list, ...)")


def compare(ops: tuple[str, ...], thunks: list[Callable[[], Any]]) -> bool:
    """A chained comparison on plain values, lazily as Python does (``is`` takes anything)."""
    left = thunks[0]()
    for name, thunk in zip(ops, thunks[1:]):
        right = thunk()
        op = _OPS[name]
        if name not in ("Is", "IsNot"):
            plain(left)
            plain(right)
        if not op(left, right):
            return False
        left = right
    return True


def truth(value: Any) -> bool:
    """The truth of a plain value (a program's object decides nothing here)."""
    return bool(plain(value))


class _Rewrite(ast.NodeTransformer):
    """In every ``assert``, comparisons and truth tests become calls of the
    harness's own functions, wherever they sit (comprehensions, calls...)."""

    def visit_Assert(self, node: ast.Assert) -> ast.stmt:
        test = _call("__verl_truth__", _Checked().visit(node.test))
        return ast.copy_location(ast.Assert(test=test, msg=node.msg), node)


class _Checked(ast.NodeTransformer):
    def visit_Compare(self, node: ast.Compare) -> ast.expr:
        self.generic_visit(node)
        if not all(type(op).__name__ in _OPS for op in node.ops):
            return node
        ops = ast.Tuple([ast.Constant(type(op).__name__) for op in node.ops], ast.Load())
        thunks = ast.List([_thunk(e) for e in (node.left, *node.comparators)], ast.Load())
        return ast.Call(_name("__verl_compare__"), [ops, thunks], [])

    def visit_BoolOp(self, node: ast.BoolOp) -> ast.expr:
        self.generic_visit(node)
        return ast.BoolOp(node.op, [_call("__verl_truth__", v) for v in node.values])

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.expr:
        self.generic_visit(node)
        if isinstance(node.op, ast.Not):
            return ast.UnaryOp(ast.Not(), _call("__verl_truth__", node.operand))
        return node

    def visit_IfExp(self, node: ast.IfExp) -> ast.expr:
        self.generic_visit(node)
        return ast.IfExp(_call("__verl_truth__", node.test), node.body, node.orelse)

    def visit_comprehension(self, node: ast.comprehension) -> ast.comprehension:
        self.generic_visit(node)
        node.ifs = [_call("__verl_truth__", test) for test in node.ifs]
        return node


def _call(name: str, arg: ast.expr) -> ast.Call:
    return ast.Call(_name(name), [arg], [])


def _name(name: str) -> ast.Name:
    return ast.Name(name, ast.Load())


def _thunk(node: ast.expr) -> ast.Lambda:
    args = ast.arguments(posonlyargs=[], args=[], kwonlyargs=[], kw_defaults=[], defaults=[])
    return ast.Lambda(args, node)


def _guard(event: str, args: tuple[Any, ...]) -> None:
    if event == "sys._getframe":
        # ValueError: what the standard library (namedtuple, enum, typing)
        # already expects from sys._getframe where frames are unavailable.
        raise ValueError("code_exec assert tests do not allow sys._getframe")
    if event in _BLOCKED_EVENTS or event.startswith("ctypes."):
        raise RuntimeError(f"code_exec assert tests do not allow {event}")
    if event == "open" and isinstance(args[0], (str, bytes)):
        path = os.path.realpath(os.fsdecode(args[0]))
        if path == "/proc" or path.startswith("/proc/"):
            raise RuntimeError("code_exec assert tests do not allow opening /proc")
    if event == "import" and args[0] in ("_signal", "signal"):
        raise RuntimeError("code_exec assert tests do not allow re-importing signal")


def _no_signal_handlers(*_: Any) -> Any:
    raise RuntimeError("code_exec assert tests do not allow signal handlers (they see the harness's frames)")


def _seal() -> None:
    """Before the program runs: nobody may read this process's memory or frames."""
    if sys.platform.startswith("linux"):
        ctypes.CDLL(None).prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    for module in (signal, sys.modules["_signal"]):
        for name in ("signal", "setitimer", "alarm"):
            if hasattr(module, name):
                setattr(module, name, _no_signal_handlers)
    sys.addaudithook(_guard)


def _snapshot() -> list[tuple[str, str, Any]]:
    return [(m.__name__, k, v) for m in _WATCHED for k, v in list(vars(m).items())]


def _tampered(before: list[tuple[str, str, Any]]) -> str | None:
    modules = {m.__name__: vars(m) for m in _WATCHED}
    for module, key, value in before:
        if modules[module].get(key, _tampered) is not value:
            return f"{module}.{key}"
    return None


def _run_program(program: str, namespace: dict[str, Any]) -> None:
    try:
        exec(compile(program, "solution.py", "exec"), namespace)
    except SystemExit as e:
        if e.code not in (None, 0):
            raise
        # sys.exit(0) at the end of a program is not a reason to skip the asserts.


def _read_spec() -> dict[str, Any]:
    """The run, from stdin (read with os.read: no buffer keeps it); stdin is then /dev/null."""
    chunks = []
    while chunk := os.read(0, 1 << 16):
        chunks.append(chunk)
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    spec: dict[str, Any] = json.loads(b"".join(chunks))
    return spec


def _compile_assertion(source: str) -> types.CodeType:
    tree = _Rewrite().visit(ast.parse(source, "assertion.py"))
    ast.fix_missing_locations(tree)
    return compile(tree, "assertion.py", "exec")


def main() -> None:
    """Run the program, then the assertion; print the nonce only when it held."""
    spec = _read_spec()
    emit = _emitter(spec.pop("nonce"))
    assertion = _compile_assertion(spec["assertion"])
    # any/all/bool ask a value's own __bool__: in an assertion they ask truth().
    pristine = {
        **vars(builtins),
        "any": lambda values: any(truth(v) for v in values),
        "all": lambda values: all(truth(v) for v in values),
        "bool": truth,
    }
    before = _snapshot()
    # The program is __main__ (as when run directly); this harness is then
    # reachable by no name, and by no frame once sealed.
    program = types.ModuleType("__main__")
    sys.modules["__main__"] = program
    _seal()
    _run_program(spec["program"], program.__dict__)
    _check_untouched(before)
    scope = {
        **program.__dict__,
        # The assertion's math, cmath and operator are the real ones, whatever
        # the program bound to those names.
        **{m.__name__: types.SimpleNamespace(**vars(m)) for m in _WATCHED if m is not builtins},
        "__builtins__": pristine,
        "__verl_compare__": compare,
        "__verl_truth__": truth,
    }
    exec(assertion, scope)
    _check_untouched(before)
    emit()


def _check_untouched(before: list[tuple[str, str, Any]]) -> None:
    changed = _tampered(before)
    if changed is not None:
        raise AssertionError(f"the program replaced {changed}, which an assertion may use")


def _emitter(nonce: str) -> Callable[[], None]:
    write, exit_now, stdout = os.write, os._exit, sys.stdout

    def emit() -> None:
        try:
            stdout.flush()
            sys.stdout.flush()
        except (OSError, ValueError, AttributeError, TypeError):  # the program replaced or closed it
            pass
        write(1, f"\n{nonce}\n".encode())
        exit_now(0)

    return emit


if __name__ == "__main__":
    main()
