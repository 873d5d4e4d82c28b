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
# (compute_score, match_answer; grade_answer is in prm800k.py, math_equal in
# prime_grader.py). Changed by verl-rewards: the brace count jumps with
# str.find; the SymPy step's 10 s deadline is held by a reused child process
# instead of a fork per comparison (verl's works in any thread too: it is not
# signal-based); nothing is printed; types.
"""numina_*: PRIME's answer matching (``answer:``/``is``/boxed markers), prm800k's grader, then ``math_equal``."""

from __future__ import annotations

import math

from . import prm800k
from .hendrycks import balanced_end
from .prime_grader import math_equal

# verl's are_equal_under_sympy runs under @timeout_limit(seconds=10).
SYMPY_TIMEOUT_S = 10.0


def _last_boxed_only_string(string: str) -> str | None:
    idx = string.rfind("\\boxed")
    if idx < 0:
        idx = string.rfind("\\fbox")
        if idx < 0:
            return None
    left_brace_idx = string.find("{", idx)
    if left_brace_idx < 0:
        return None
    right_brace_idx = balanced_end(string, idx)
    if right_brace_idx is None:
        return None
    return string[left_brace_idx + 1 : right_brace_idx].strip()


def _after_markers(response: str, markers: list[str]) -> tuple[bool, str]:
    """Whether any of ``markers`` is found, and the response cut, marker by marker in
    turn, to what follows the marker's last occurrence (verl's loop as it is)."""
    is_matched = False
    for ans_marker in markers:
        ans_idx = response.lower().rfind(ans_marker)
        if ans_idx != -1:
            is_matched = True
            response = response[ans_idx + len(ans_marker) :].strip()
            if response.endswith("\n"):
                response = response[:-2]
    return is_matched, response


def match_answer(response: str) -> tuple[bool, str]:
    is_matched, response = _after_markers(response, ["answer:", "answer is", "answers are"])

    for ans_marker in ["is answer", "is the answer", "are answers", "are the answers"]:
        ans_idx = response.lower().rfind(ans_marker)
        if ans_idx != -1:
            is_matched = True
            response = response[:ans_idx].strip()
            if response.endswith("\n"):
                response = response[:-2]

    # Find boxed
    ans_boxed = _last_boxed_only_string(response)
    if ans_boxed:
        is_matched = True
        response = ans_boxed

    if ". " in response:
        dot_idx = response.lower().rfind(". ")
        if dot_idx != -1:
            response = response[:dot_idx].strip()

    found, response = _after_markers(
        response, ["be ", "is ", "are ", "=", ": ", "get ", "be\n", "is\n", "are\n", ":\n", "get\n"]
    )
    is_matched = is_matched or found

    is_matched = is_matched if any(c.isdigit() for c in response) else False  # answer must have a digit
    return is_matched, response


def compute_score(
    model_output: str, ground_truth: str, sympy_timeout_s: float = SYMPY_TIMEOUT_S
) -> tuple[bool, bool, str]:
    """``(is_correct, format_correctness, extracted_answer)``; verl's router scores ``float(is_correct)``."""
    model_output = str(model_output)
    ground_truth = str(ground_truth)

    _is_matched, extracted_model_output = match_answer(model_output)
    format_correctness = "Step 2:" in model_output and "\\box" in model_output

    # grade simple algebra questions. if succeeded, return; otherwise, proceed to more complex grading
    if prm800k.grade_answer(extracted_model_output, ground_truth, "prime_math", sympy_timeout_s):
        return True, True, extracted_model_output

    try:
        if "\\pi" in extracted_model_output or "\\pi" in ground_truth:
            equivs = [
                math_equal(extracted_model_output, ground_truth, timeout=True, pi=pi) for pi in [math.pi, 3.14]
            ]
            is_correct = any(equivs)
        else:
            is_correct = math_equal(extracted_model_output, ground_truth, timeout=True)
    except Exception:  # noqa: BLE001 - verl's rule: a grader that fails says "not equal"
        is_correct = False

    return is_correct, format_correctness, extracted_model_output
