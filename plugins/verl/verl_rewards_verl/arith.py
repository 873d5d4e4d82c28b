"""Python's ``eval`` of a model's answer, for the arithmetic it is used for, and nothing else.

verl's prime_math grader calls ``eval`` on text taken from the response (after
replacing ``\\pi`` by a number, and on bracketed answers against a matrix
reference): any Python the response holds runs in the reward's process, and
``9**9**9`` never returns. :func:`evaluate` gives ``eval``'s value for
numbers, ``+ - * / // % **``, unary signs, ``~``, comparisons, bit operations
(not shifts) and tuples, lists and sets of those; it raises ``ValueError``
for anything else (names, calls, attributes, strings in arithmetic: where
``eval`` would run code) and ``OverflowError`` for an integer of more than
``MAX_INT_BITS`` bits (where ``eval`` would compute for minutes). It compiles
the text first, so what ``eval`` rejects (a syntax error, an expression
nested too deep) raises the same error here.
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import Any

MAX_INT_BITS = 1 << 20

_NUMBER = (int, float, complex)  # bool is an int
_BINARY: dict[type[ast.operator], Callable[[Any, Any], Any]] = {
    ast.Add: operator.add, ast.Sub: operator.sub, ast.Mult: operator.mul, ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv, ast.Mod: operator.mod, ast.Pow: operator.pow,
    ast.BitAnd: operator.and_, ast.BitOr: operator.or_, ast.BitXor: operator.xor,
}
_UNARY: dict[type[ast.unaryop], Callable[[Any], Any]] = {
    ast.USub: operator.neg, ast.UAdd: operator.pos, ast.Invert: operator.invert, ast.Not: operator.not_,
}
_COMPARE: dict[type[ast.cmpop], Callable[[Any, Any], Any]] = {
    ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge,
    ast.Eq: operator.eq, ast.NotEq: operator.ne,
}
_CONTAINERS: dict[type[ast.expr], Callable[[list[Any]], Any]] = {ast.Tuple: tuple, ast.List: list, ast.Set: set}


def evaluate(text: str) -> Any:
    """The value ``eval(text)`` has, when ``text`` is plain arithmetic (see the module's docstring)."""
    source = text.lstrip(" \t")  # as eval does
    compile(source, "<string>", "eval")  # eval's own errors, first
    tree = ast.parse(source, mode="eval")
    # Post-order, with a stack of its own: a long chain `1+1+...` is deep.
    values: list[Any] = []
    stack: list[tuple[ast.expr, bool]] = [(tree.body, False)]
    while stack:
        node, ready = stack.pop()
        children = _children(node)
        if not ready:
            stack.append((node, True))
            stack.extend((child, False) for child in reversed(children))
            continue
        count = len(children)
        arguments = values[len(values) - count :] if count else []
        del values[len(values) - count :]
        values.append(_apply(node, arguments))
    return values[0]


def _children(node: ast.expr) -> list[ast.expr]:
    if isinstance(node, ast.BinOp):
        return [node.left, node.right]
    if isinstance(node, ast.UnaryOp):
        return [node.operand]
    if isinstance(node, ast.Compare):
        return [node.left, *node.comparators]
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return list(node.elts)
    if isinstance(node, ast.Constant):
        return []
    raise ValueError(f"not evaluated: {type(node).__name__} (only arithmetic is)")


def _apply(node: ast.expr, arguments: list[Any]) -> Any:
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.BinOp):
        left, right = arguments
        if type(node.op) not in _BINARY or not (isinstance(left, _NUMBER) and isinstance(right, _NUMBER)):
            raise ValueError(f"not evaluated: {type(node.op).__name__} of {type(left).__name__}, {type(right).__name__}")
        _check_size(node.op, left, right)
        return _BINARY[type(node.op)](left, right)
    if isinstance(node, ast.UnaryOp):
        (operand,) = arguments
        if not isinstance(operand, _NUMBER):
            raise ValueError(f"not evaluated: {type(node.op).__name__} of {type(operand).__name__}")
        return _UNARY[type(node.op)](operand)
    if isinstance(node, ast.Compare):
        return _compare(node, arguments)
    return _CONTAINERS[type(node)](arguments)


def _compare(node: ast.Compare, arguments: list[Any]) -> Any:
    result: Any = True
    for op, left, right in zip(node.ops, arguments, arguments[1:]):
        if type(op) not in _COMPARE or not (isinstance(left, _NUMBER) and isinstance(right, _NUMBER)):
            raise ValueError(f"not evaluated: {type(op).__name__}")
        result = _COMPARE[type(op)](left, right)
        if not result:
            return result
    return result


def _check_size(op: ast.operator, left: Any, right: Any) -> None:
    """Refuse integer results past ``MAX_INT_BITS`` before computing them."""
    if not (isinstance(left, int) and isinstance(right, int)):
        return
    if isinstance(op, ast.Pow) and right > 0 and abs(left) > 1:
        bits = right * abs(left).bit_length()
    elif isinstance(op, ast.Mult):
        bits = left.bit_length() + right.bit_length()
    else:
        return
    if bits > MAX_INT_BITS:
        raise OverflowError(f"integer of about {bits} bits: not computed (limit {MAX_INT_BITS})")
