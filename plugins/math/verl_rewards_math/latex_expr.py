"""Translate a normalised LaTeX answer into a safe SymPy expression string.

The output is meant for ``sympy.parse_expr``, which evaluates its input, so
it is built to contain only digits, operators, parentheses, single-letter
symbols and a fixed set of function and constant names; anything else
(an unknown command, a long input, a huge literal) gives None.
"""

from __future__ import annotations

import re

from .boxed import closing_brace

MAX_CHARS = 160
MAX_DIGITS = 30
FUNCTIONS = {
    "arcsin": "asin",
    "arccos": "acos",
    "arctan": "atan",
    "sinh": "sinh",
    "cosh": "cosh",
    "tanh": "tanh",
    "sin": "sin",
    "cos": "cos",
    "tan": "tan",
    "cot": "cot",
    "sec": "sec",
    "csc": "csc",
    "ln": "log",
    "log": "log",
    "exp": "exp",
}
NAMES = frozenset({*FUNCTIONS.values(), "sqrt", "pi", "oo"})

_FUNCTION = re.compile(r"\\(" + "|".join(sorted(FUNCTIONS, key=len, reverse=True)) + r")(?![a-zA-Z])")
_SAFE = re.compile(r"[0-9a-zA-Z+\-*/^()., =]*")
_WORD = re.compile(r"[a-zA-Z]+")
_LONG_NUMBER = re.compile(r"\d{" + str(MAX_DIGITS + 1) + ",}")
_BAD_DOT = re.compile(r"(?<!\d)\.|\.(?!\d)")


def to_sympy_syntax(latex: str) -> str | None:
    """``\\frac{\\sqrt{3}}{2}x^2`` -> ``((sqrt((3)))/((2)))x**2``, or None when unsupported."""
    if len(latex) > MAX_CHARS or _LONG_NUMBER.search(latex):
        return None
    s = _replace_fracs_and_roots(latex)
    if s is None:
        return None
    s = s.replace("\\cdot", "*").replace("\\times", "*").replace("\\div", "/")
    s = _FUNCTION.sub(lambda m: f" {FUNCTIONS[m.group(1)]} ", s)
    s = s.replace("\\pi", " pi ").replace("\\infty", " oo ")
    s = s.replace("{", "(").replace("}", ")")
    if "\\" in s or not _SAFE.fullmatch(s) or _BAD_DOT.search(s):
        return None
    s = _WORD.sub(_split_word, s)
    return s.replace("^", "**")


def _split_word(match: re.Match[str]) -> str:
    # Only known names survive as words: "xy" is x*y, so no identifier can
    # reach anything but a symbol or a whitelisted function.
    word = match.group(0)
    return word if word in NAMES else "*".join(word)


def _replace_fracs_and_roots(s: str) -> str | None:
    out: list[str] = []
    i = 0
    while i < len(s):
        if s.startswith("\\frac", i):
            args = _groups(s, i + len("\\frac"), 2)
            if args is None:
                return None
            (num, den), i = args
            parts = [_replace_fracs_and_roots(num), _replace_fracs_and_roots(den)]
            if None in parts:
                return None
            out.append(f"(({parts[0]})/({parts[1]}))")
        elif s.startswith("\\sqrt", i):
            root = _sqrt(s, i + len("\\sqrt"))
            if root is None:
                return None
            text, i = root
            out.append(text)
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def _sqrt(s: str, i: int) -> tuple[str, int] | None:
    index = None
    if s.startswith("[", i):
        close = s.find("]", i)
        if close < 0:
            return None
        index, i = _replace_fracs_and_roots(s[i + 1 : close]), close + 1
    args = _groups(s, i, 1)
    if args is None:
        return None
    (radicand,), i = args
    inner = _replace_fracs_and_roots(radicand)
    if inner is None:
        return None
    if index is None:
        return f"sqrt(({inner}))", i
    return f"(({inner})**(1/({index})))", i


def _groups(s: str, i: int, count: int) -> tuple[list[str], int] | None:
    """``count`` brace groups starting at ``i``: their contents and the index after them."""
    groups = []
    for _ in range(count):
        close = closing_brace(s, i) if s.startswith("{", i) else None
        if close is None:
            return None
        groups.append(s[i + 1 : close])
        i = close + 1
    return groups, i
