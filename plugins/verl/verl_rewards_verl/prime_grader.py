# Copyright (c) 2024, NVIDIA CORPORATION.  All rights reserved.
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
# Copyright (c) Microsoft Corporation. Copyright (c) 2023 OpenAI.
# Copyright (c) 2021 Dan Hendrycks. (MIT License: the permission notice is in
# this plugin's README.md.)
#
# Ported from verl 0.9.1, verl/utils/reward_score/prime_math/grader.py (from
# Hendrycks' MATH, microsoft/ToRA, microsoft/ProphetNet CRITIC and
# openai/prm800k). Changed by verl-rewards, each kept to verl's verdicts where
# verl returns one:
# * `eval` of the response's text (in handle_pi and for a bracketed answer
#   against a matrix) is arith.evaluate: arithmetic only, no code runs, no
#   integer past 2**20 bits;
# * handle_pi replaces every `\pi` in one pass (verl's loop copies the string
#   once per `\pi`: quadratic);
# * `parse_expr` of an answer written `Matrix(...)` runs in the SymPy child,
#   only for a matrix of numbers, with a deadline (verl evaluates any Python
#   there, with no deadline);
# * symbolic_equal returns False: in verl 0.9.1 it enters `timeout_limit(...)`,
#   a decorator factory, as a context manager, which raises TypeError into its
#   `except Exception`, so its SymPy steps never run and it never says equal;
# * nothing is printed; type annotations.
"""prime_math's fallback grader ``math_equal``: strings, numbers (with percentages), intervals, tuples, matrices."""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from math import isclose
from typing import Any

from . import arith, sympy_child

_DOLLAR_NUMBER = re.compile(r"\$\d+(\.\d+)?")
_PERCENT = re.compile(r"^\d+(\.\d+)?%$")
_LATEX_PERCENT = re.compile(r"^\d+(\.\d+)?\\%$")
_INTERVALS = {
    "Interval(": re.compile(r"^Interval\((.*)\)$"),
    "Interval.Ropen(": re.compile(r"^Interval\.Ropen\((.*)\)$"),
    "Interval.Lopen(": re.compile(r"^Interval\.Lopen\((.*)\)$"),
    "Interval.open(": re.compile(r"^Interval\.open\((.*)\)$"),
}
_INTERVAL_BRACKETS = {
    "Interval(": ("[", "]"), "Interval.Ropen(": ("[", ")"), "Interval.Lopen(": ("(", "]"), "Interval.open(": ("(", ")"),
}


def is_digit(s: Any) -> tuple[bool, float | None]:
    try:
        if "{,}" in str(s):
            return True, float(str(s).replace("{,}", ""))
        return True, float(str(s).replace(",", ""))
    except ValueError:
        return False, None


def normalize(answer: Any, pi: float) -> Any:
    # checking if answer is $<number> and removing $ in that case to compare
    if isinstance(answer, str) and bool(_DOLLAR_NUMBER.match(answer)):
        return answer[1:]
    # checking if answer is <number>% or <number>\\% and removing %
    if isinstance(answer, str) and (bool(_PERCENT.match(answer)) or bool(_LATEX_PERCENT.match(answer))):
        return answer.replace("\\%", "").replace("%", "")
    answer = handle_base(answer)
    return handle_pi(answer, pi)


def handle_base(x: Any) -> Any:
    if isinstance(x, str) and "_" in x:
        # Due to base; a ValueError here propagates, as in verl
        return int(float(x.split("_")[0]))
    return x


def handle_pi(string: Any, pi: float) -> Any:
    """Each ``\\pi`` as ``*pi`` after a digit, else ``1*pi``; then the value of the result when it is arithmetic."""
    if not (isinstance(string, str) and "\\pi" in string):
        return string
    pieces = string.split("\\pi")
    out = [pieces[0]]
    for piece in pieces[1:]:
        # The character before this \pi is the last one written so far (a digit of the
        # previous replacement when two are adjacent), as in verl's left-to-right loop.
        previous = out[-1][-1:] if out[-1] else (out[-2][-1:] if len(out) > 1 else "")
        out.append(f"*{pi}" if previous.isdigit() else f"1*{pi}")
        out.append(piece)
    replaced = "".join(out)
    try:
        return arith.evaluate(replaced)
    except Exception:  # noqa: BLE001 - verl's rule: text that is not arithmetic stays text
        return replaced


def math_equal(
    prediction: Any,
    reference: Any,
    include_percentage: bool = True,
    tolerance: float = 1e-4,
    timeout: float = 10.0,
    pi: float = math.pi,
) -> bool:
    """Exact match of math if and only if:
    1. numerical equal: both can convert to float and are equal
    2. symbolic equal: both can convert to sympy expression and are equal
    """
    prediction = normalize(prediction, pi)
    reference = normalize(reference, pi)

    if isinstance(prediction, str) and len(prediction) > 1000:  # handling weird corner-cases
        prediction = prediction[:1000]

    # 0. string comparison
    if isinstance(prediction, str) and isinstance(reference, str):
        if prediction.strip().lower() == reference.strip().lower():
            return True
        if prediction.replace(" ", "") == reference.replace(" ", ""):
            return True

    try:  # 1. numerical equal
        if is_digit(prediction)[0] and is_digit(reference)[0]:
            prediction = is_digit(prediction)[1]
            reference = is_digit(reference)[1]
            # number questions
            gt_result = [reference / 100, reference, reference * 100] if include_percentage else [reference]
            for item in gt_result:
                try:
                    if isclose(item, prediction, rel_tol=tolerance):
                        return True
                except Exception:  # noqa: BLE001 - verl's rule
                    continue
            return False
    except Exception:  # noqa: BLE001 - verl's rule
        pass

    if not prediction and prediction not in [0, False]:
        return False

    # 2. symbolic equal
    reference = str(reference).strip()
    prediction = str(prediction).strip()

    ## deal with [], (), {}
    prediction = format_intervals(prediction)

    pred_str, ref_str = prediction, reference
    if (prediction.startswith("[") and prediction.endswith("]") and not reference.startswith("(")) or (
        prediction.startswith("(") and prediction.endswith(")") and not reference.startswith("[")
    ):
        pred_str = pred_str.strip("[]()")
        ref_str = ref_str.strip("[]()")
    for s in ["{", "}", "(", ")"]:
        ref_str = ref_str.replace(s, "")
        pred_str = pred_str.replace(s, "")
    if pred_str == ref_str:
        return True

    ## [a, b] vs. [c, d], return a==c and b==d
    if (
        prediction
        and reference
        and prediction[0] in "(["
        and prediction[-1] in ")]"
        and prediction[0] == reference[0]
        and prediction[-1] == reference[-1]
    ):
        pred_parts = prediction[1:-1].split(",")
        ref_parts = reference[1:-1].split(",")
        if pairwise_equal(pred_parts, ref_parts, include_percentage, tolerance):
            return True

    if "," in prediction and "," in reference:
        pred_parts = [item.strip() for item in prediction.split(",")]
        ref_parts = [item.strip() for item in reference.split(",")]

        if len(pred_parts) == len(ref_parts):
            return pairwise_equal(pred_parts, ref_parts, include_percentage, tolerance)

    # if we have point == tuple of values
    if prediction.startswith("Point") and reference[0] == "(" and reference[-1] == ")":
        pred_parts = prediction[prediction.find("(") + 1 : -1].split(",")
        ref_parts = reference[1:-1].split(",")
        if pairwise_equal(pred_parts, ref_parts, include_percentage, tolerance):
            return True

    # if reference is a matrix
    if r"\begin{pmatrix}" in reference and prediction.startswith("Matrix"):
        try:
            pred_matrix = sympy_child.matrix_entries(prediction, sympy_child.TIMEOUT_S)
            ref_matrix_items = reference.split()[1:-1:2]
            if pairwise_equal(pred_matrix, ref_matrix_items, include_percentage, tolerance):
                return True
        except Exception:  # noqa: BLE001 - verl's rule
            pass
    elif r"\begin{pmatrix}" in reference and prediction.startswith("[") and prediction.endswith("]"):
        # Outside the try, as in verl: an answer that is not arithmetic raises out of math_equal.
        if isinstance(arith.evaluate(prediction), list):
            try:
                pred_matrix = arith.evaluate(prediction)
                ref_matrix_items = (
                    reference.removeprefix(r"\\begin{pmatrix}")
                    .removeprefix(r"\begin{pmatrix}")
                    .removesuffix(r"\\end{pmatrix}")
                    .removesuffix(r"\end{pmatrix}")
                )
                ref_rows = [row.split("&") if "&" in row else row for row in ref_matrix_items.split("\\")]
                if pairwise_equal(pred_matrix, ref_rows, include_percentage, tolerance):
                    return True
            except Exception:  # noqa: BLE001 - verl's rule
                pass

    return symbolic_equal(prediction, reference, tolerance, timeout)


def pairwise_equal(preds: Sequence[Any], refs: Sequence[Any], include_percentage: bool, tolerance: float) -> bool:
    """Whether ``preds`` and ``refs`` have the same length and each pair is ``math_equal``.
    As in verl, every pair is compared (no short cut: a comparison that raises raises here)."""
    return len(preds) == len(refs) and all(
        [math_equal(pred, ref, include_percentage, tolerance) for pred, ref in zip(preds, refs)]
    )


def symbolic_equal(a: Any, b: Any, tolerance: float, timeout: float = 10.0) -> bool:
    """Always False, as in verl 0.9.1 (see the header: its SymPy steps raise before they run)."""
    return False


def format_intervals(prediction: str) -> str:
    for key, pattern in _INTERVALS.items():
        match = pattern.match(prediction)
        if match:
            opening, closing = _INTERVAL_BRACKETS[key]
            return f"{opening}{match.group(1)}{closing}"
    return prediction
