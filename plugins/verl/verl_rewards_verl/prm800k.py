# Copyright 2024 PRIME team and/or its affiliates
#
# Licensed under the Apache License, Version 2.0 (the "License");
# you may not use this file except in compliance with the License.
# You may obtain a copy of the License at
#
#     http://www.apache.org/licenses/LICENSE-2.0
#
# Unless required by applicable law or agreed to in writing, software
# distributed under the License is distributed on an "AS IS" BASIS,
# WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
# See the License for the specific language governing permissions and
# limitations under the License.
#
# Ported from verl 0.9.1, verl/utils/reward_score/prime_math/__init__.py
# (grade_answer and its helpers, from https://github.com/openai/prm800k
# prm800k/grading/grader.py), and from mathruler 0.1.0 (Apache-2.0),
# mathruler/grader.py, the same grader with small changes. Changed by
# verl-rewards: the two copies are one, their differences a `Dialect`; the
# SymPy step runs in a child process with a deadline (sympy_child.py) for
# both (verl runs prime_math's in a forked process with a 10 s timeout,
# mathruler runs it in-process with none); compiled patterns; types.
"""prm800k's answer grader (``grade_answer``), in prime_math's and mathruler's dialects."""

from __future__ import annotations

import re
from typing import Literal

from pylatexenc import latex2text

from . import sympy_child
from .hendrycks import MATHRULER_PERCENT, VERL_PERCENT, normalize_answer

Dialect = Literal["prime_math", "mathruler"]

# sympy might hang -- we don't care about trying to be lenient in these cases
BAD_SUBSTRINGS = ["^{", "^("]
BAD_REGEXES = [re.compile(r"\^[0-9]+\^"), re.compile(r"\^[0-9][0-9]+")]
TUPLE_CHARS = "()[]"

_UNITS = [
    "degree", "cm", "centimeter", "meter", "mile", "second", "minute", "hour", "day", "week",
    "month", "year", "foot", "feet", "inch", "yard",
]
_UNIT_PATTERNS = {
    "prime_math": [re.compile(f"{unit}(es)?(s)? *(\\^[0-9]+)?") for unit in [*_UNITS, "liter"]],
    "mathruler": [re.compile(rf"{unit}(es)?(s)? *(\^[0-9]+)?") for unit in _UNITS],
}
_TEXT = re.compile(r"^\\text\{(?P<text>.+?)\}$")
_CIRC = re.compile(r"\^ *\\circ")
_THIN_SPACE = re.compile(",\\\\! *")
_MINUS = re.compile("- *")
_MIXED = re.compile(r"([0-9]) +([0-9])")
_FRAC = re.compile(r"^-?[0-9]+.?/0*[1-9][0-9]*.?$")
_COMMAS = re.compile(r"(\d)(,)(\d\d\d)($|\D)")
# pylatexenc reads about a character every 10-25 us, in Python: an answer this long or
# shorter is read here (tens of ms at most), a longer one in the SymPy child, under the
# reward call's deadline (verl reads a megabyte of backslashes for a minute).
LOCAL_LATEX_CHARS = 2000


class LatexCut(Exception):
    """pylatexenc's reading of a long answer was cut short at its deadline: the answer is not equal."""


def _latex_to_text(expr: str, timeout_s: float) -> str:
    if len(expr) <= LOCAL_LATEX_CHARS:
        return str(latex2text.LatexNodes2Text().latex_to_text(expr))
    text = sympy_child.latex_to_text(expr, timeout_s)
    if text is None:
        raise LatexCut(f"pylatexenc did not read a {len(expr):,}-character answer in time")
    return text


def _parse_latex(expr: str, timeout_s: float = sympy_child.TIMEOUT_S) -> str:
    """Attempts to parse latex to an expression sympy can read."""
    expr = expr.replace("\\tfrac", "\\frac")
    expr = expr.replace("\\dfrac", "\\frac")
    expr = expr.replace("\\frac", " \\frac")  # Play nice with mixed numbers.
    expr = _latex_to_text(expr, timeout_s)

    # Replace the specific characters that this parser uses.
    expr = expr.replace("√", "sqrt")
    expr = expr.replace("π", "pi")
    expr = expr.replace("∞", "inf")
    expr = expr.replace("∪", "U")
    expr = expr.replace("·", "*")
    expr = expr.replace("×", "*")

    return expr.strip()


def _is_float(num: str) -> bool:
    try:
        float(num)
        return True
    except ValueError:
        return False


def _is_int(x: float) -> bool:
    try:
        return abs(x - round(x)) <= 1e-7
    except Exception:  # noqa: BLE001 - inf and nan are not integers
        return False


def _is_frac(expr: str) -> bool:
    return bool(_FRAC.search(expr))


def _str_is_int(x: str) -> bool:
    try:
        value = float(_strip_properly_formatted_commas(x))
        return abs(value - round(value)) <= 1e-7
    except Exception:  # noqa: BLE001 - not a number, or inf/nan
        return False


def _str_to_int(x: str) -> int:
    return int(float(x.replace(",", "")))


def _inject_implicit_mixed_number(step: str) -> str:
    """Automatically make a mixed number evalable, e.g. 7 3/4 => 7+3/4."""
    return _MIXED.sub(r"\1+\2", step)


def _strip_properly_formatted_commas(expr: str) -> str:
    # We want to be careful because we don't want to strip tuple commas
    while True:
        next_expr = _COMMAS.sub(r"\1\3\4", expr)
        if next_expr == expr:
            break
        expr = next_expr
    return next_expr


def _normalize(expr: str | None, dialect: Dialect, timeout_s: float = sympy_child.TIMEOUT_S) -> str | None:
    """Normalize answer expressions (``LatexCut`` when reading the LaTeX of a long one ran out of time)."""
    if expr is None:
        return None

    # Remove enclosing `\text{}`.
    m = _TEXT.search(expr)
    if m is not None:
        expr = m.group("text")

    expr = expr.replace("\\%", "%")
    expr = expr.replace("\\$", "$")
    expr = expr.replace("$", "")
    expr = expr.replace("%", "")
    expr = expr.replace(" or ", " , ")
    expr = expr.replace(" and ", " , ")

    expr = expr.replace("million", "*10^6")
    expr = expr.replace("billion", "*10^9")
    expr = expr.replace("trillion", "*10^12")

    for unit in _UNIT_PATTERNS[dialect]:
        expr = unit.sub("", expr)
    expr = _CIRC.sub("", expr)

    if len(expr) > 0 and expr[0] == "{" and expr[-1] == "}":
        expr = expr[1:-1]

    expr = _THIN_SPACE.sub("", expr)
    if _is_float(expr) and _is_int(float(expr)):
        expr = str(round(float(expr)))
    if "\\" in expr:
        try:
            expr = _parse_latex(expr, timeout_s)
        except LatexCut:
            raise
        except Exception:  # noqa: BLE001 - verl's rule: LaTeX that does not parse stays as written
            pass

    # edge case with mixed numbers and negative signs
    expr = _MINUS.sub("-", expr)

    expr = _inject_implicit_mixed_number(expr)
    if dialect == "mathruler":
        expr = expr.replace(" ", "")
        # if we somehow still have latex braces here, just drop them
        expr = expr.replace("{", "")
        expr = expr.replace("}", "")

    # don't be case sensitive for text answers
    expr = expr.lower()

    if _str_is_int(expr):
        expr = str(_str_to_int(expr))

    return expr


def count_unknown_letters_in_expr(expr: str) -> int:
    expr = expr.replace("sqrt", "")
    expr = expr.replace("frac", "")
    return len({x for x in expr if x.isalpha()})


def should_allow_eval(expr: str) -> bool:
    # we don't want to try parsing unknown text or functions of more than two variables
    if count_unknown_letters_in_expr(expr) > 2:
        return False
    if any(bad_string in expr for bad_string in BAD_SUBSTRINGS):
        return False
    return all(bad_regex.search(expr) is None for bad_regex in BAD_REGEXES)


def are_equal_under_sympy(ground_truth_normalized: str, given_normalized: str, timeout_s: float) -> bool:
    """Whether SymPy simplifies ``(gt)-(given)`` to 0; False when it cannot tell within ``timeout_s``."""
    expr = f"({ground_truth_normalized})-({given_normalized})"
    if not should_allow_eval(expr):
        return False
    return sympy_child.difference_is_zero(ground_truth_normalized, given_normalized, timeout_s)


def split_tuple(expr: str) -> list[str]:
    """Split the elements in a tuple/interval, while handling well-formatted commas in large numbers."""
    expr = _strip_properly_formatted_commas(expr)
    if len(expr) == 0:
        return []
    if (
        len(expr) > 2
        and expr[0] in TUPLE_CHARS
        and expr[-1] in TUPLE_CHARS
        and all(ch not in expr[1:-1] for ch in TUPLE_CHARS)
    ):
        return [elem.strip() for elem in expr[1:-1].split(",")]
    return [expr]


def grade_answer(given_answer: str | None, ground_truth: str, dialect: Dialect, timeout_s: float) -> bool:
    """The answer is correct if (a) it normalizes to the same string as the ground truth,
    or (b) SymPy simplifies the difference of the two to 0."""
    if given_answer is None:
        return False

    percent = VERL_PERCENT if dialect == "prime_math" else MATHRULER_PERCENT
    # be at least as lenient as mathd
    if normalize_answer(ground_truth, percent) == normalize_answer(given_answer, percent):
        return True

    try:
        ground_truth_normalized = _normalize(ground_truth, dialect, timeout_s)
        given_normalized = _normalize(given_answer, dialect, timeout_s)
    except LatexCut:
        return False  # not read in time: not equal (verl would read it for as long as it takes)

    if ground_truth_normalized is None or given_normalized is None:
        return False
    if ground_truth_normalized == given_normalized:
        return True
    if len(given_normalized) == 0:
        return False

    ground_truth_elems = split_tuple(ground_truth_normalized)
    given_elems = split_tuple(given_normalized)

    if (
        len(ground_truth_elems) > 1
        and (ground_truth_normalized[0] != given_normalized[0] or ground_truth_normalized[-1] != given_normalized[-1])
    ) or len(ground_truth_elems) != len(given_elems):
        return False
    is_correct = False
    for ground_truth_elem, given_elem in zip(ground_truth_elems, given_elems):
        if _is_frac(ground_truth_elem) and _is_frac(given_elem):
            # if fractions aren't reduced, then shouldn't be marked as correct
            # so, we don't want to allow sympy.simplify in this case
            is_correct = ground_truth_elem == given_elem
        elif _str_is_int(ground_truth_elem) != _str_is_int(given_elem):
            # if the ground truth answer is an integer, we require the given answer to be a strict match
            # (no sympy.simplify)
            is_correct = False
        else:
            is_correct = are_equal_under_sympy(ground_truth_elem, given_elem, timeout_s)
        if not is_correct:
            break
    return is_correct
