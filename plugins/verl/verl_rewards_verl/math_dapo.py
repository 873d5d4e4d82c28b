# Copyright 2024 Bytedance Ltd. and/or its affiliates
# Copyright 2022 EleutherAI and the HuggingFace Inc. team. All rights reserved.
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
# Adapted from https://github.com/EleutherAI/lm-evaluation-harness/blob/main/lm_eval/tasks/hendrycks_math/utils.py
#
# Ported from verl 0.9.1, verl/utils/reward_score/math_dapo.py. Changed by
# verl-rewards: the brace count jumps with str.find; compiled patterns; types.
"""math_dapo, math, math_dapo_reasoning, aime*: DAPO's Minerva-style ``Answer:`` check, then the last box.

Scores 1.0 or -1.0, with ``acc`` and ``pred`` (the normalised answer read), as verl does.
"""

from __future__ import annotations

import re
from typing import Any

from .hendrycks import balanced_end


def last_boxed_only_string(string: str) -> str | None:
    idx = string.rfind("\\boxed{")
    if idx < 0:
        return None
    closing = balanced_end(string, idx)
    return string[idx : closing + 1] if closing is not None else None


def remove_boxed(s: str) -> str:
    left = "\\boxed{"
    if s[: len(left)] != left or s[-1] != "}":
        raise AssertionError(f"box error: {s}")
    return s[len(left) : -1]


# Constants for normalization
SUBSTITUTIONS = [
    ("an ", ""),
    ("a ", ""),
    (".$", "$"),
    ("\\$", ""),
    (r"\ ", ""),
    (" ", ""),
    ("mbox", "text"),
    (",\\text{and}", ","),
    ("\\text{and}", ","),
    ("\\text{m}", "\\text{}"),
]

REMOVED_EXPRESSIONS = [
    "square",
    "ways",
    "integers",
    "dollars",
    "mph",
    "inches",
    "hours",
    "km",
    "units",
    "\\ldots",
    "sue",
    "points",
    "feet",
    "minutes",
    "digits",
    "cents",
    "degrees",
    "cm",
    "gm",
    "pounds",
    "meters",
    "meals",
    "edges",
    "students",
    "childrentickets",
    "multiples",
    "\\text{s}",
    "\\text{.}",
    "\\text{\ns}",
    "\\text{}^2",
    "\\text{}^3",
    "\\text{\n}",
    "\\text{}",
    r"\mathrm{th}",
    r"^\circ",
    r"^{\circ}",
    r"\;",
    r",\!",
    "{,}",
    '"',
    "\\dots",
]

# The inputs are at most 300 characters (compute_score keeps the response's last 300),
# which bounds these patterns' backtracking.
_DOLLARS = re.compile(r"(.*?)(\$)(.*?)(\$)(.*)")
_TEXT = re.compile(r"(\\text\{)(.*?)(\})")
_TEXTBF = re.compile(r"(\\textbf\{)(.*?)(\})")
_OVERLINE = re.compile(r"(\\overline\{)(.*?)(\})")
_BOXED = re.compile(r"(\\boxed\{)(.*)(\})")
_FRAC = re.compile(r"(frac)([^{])(.)")
_SQRT = re.compile(r"(sqrt)([^{])")
MINERVA_ANSWER = r"(?i)Answer\s*:\s*([^\n]+)"


def normalize_final_answer(final_answer: str) -> str:
    """Normalize a final answer to a quantitative reasoning question."""
    final_answer = final_answer.split("=")[-1]

    # Apply substitutions and removals
    for before, after in SUBSTITUTIONS:
        final_answer = final_answer.replace(before, after)
    for expr in REMOVED_EXPRESSIONS:
        final_answer = final_answer.replace(expr, "")

    # Extract and normalize LaTeX math
    final_answer = _DOLLARS.sub("$\\3$", final_answer)
    final_answer = _TEXT.sub("\\2", final_answer)
    final_answer = _TEXTBF.sub("\\2", final_answer)
    final_answer = _OVERLINE.sub("\\2", final_answer)
    final_answer = _BOXED.sub("\\2", final_answer)

    # Normalize shorthand TeX:
    #  \fracab -> \frac{a}{b}
    #  \frac{abc}{bef} -> \frac{abc}{bef}
    #  \fracabc -> \frac{a}{b}c
    #  \sqrta -> \sqrt{a}
    #  \sqrtab -> sqrt{a}b
    final_answer = _FRAC.sub("frac{\\2}{\\3}", final_answer)
    final_answer = _SQRT.sub("sqrt{\\2}", final_answer)
    final_answer = final_answer.replace("$", "")

    # Normalize numbers
    if final_answer.replace(",", "").isdigit():
        final_answer = final_answer.replace(",", "")

    return final_answer.strip()


def is_correct_minerva(
    solution_str: str, gt: str, gt_need_extract: bool = False, answer_pattern: str = MINERVA_ANSWER
) -> tuple[bool, str]:
    """Check if the solution is correct according to Minerva criteria: (is_correct, normalized_prediction)."""
    match = re.findall(answer_pattern, solution_str)
    extracted_answer = match[-1] if match else "[INVALID]"
    pred = normalize_final_answer(extracted_answer)

    if gt_need_extract:
        boxed = last_boxed_only_string(gt)
        if boxed is None:
            raise TypeError("the reference has no \\boxed{} answer")  # verl: remove_boxed(None) raises TypeError
        gt = normalize_final_answer(remove_boxed(boxed))
    else:
        gt = normalize_final_answer(gt)

    return (pred == gt), pred


def is_correct_strict_box(
    pred: str, gt: str, pause_tokens_index: list[int] | None = None
) -> tuple[int, str | None]:
    """Check the last boxed answer of the prediction's last 100 characters: (1 or -1, extracted)."""
    if pause_tokens_index is not None:
        if len(pause_tokens_index) != 4:
            raise AssertionError("pause_tokens_index must have 4 entries")
        pred = pred[pause_tokens_index[-1] - 100 :]
    else:
        pred = pred[-100:]

    boxed_pred = last_boxed_only_string(pred)
    extracted_pred = remove_boxed(boxed_pred) if boxed_pred is not None else None

    return 1 if (extracted_pred == gt) else -1, extracted_pred


def verify(
    solution_str: str, answer: str, strict_box_verify: bool = False, pause_tokens_index: list[int] | None = None
) -> tuple[bool, str | None]:
    """Whether the solution is correct, and the answer read."""
    if strict_box_verify:
        correct, pred = is_correct_strict_box(solution_str, answer, pause_tokens_index)
        return correct == 1, pred

    # Prefer Minerva (`Answer: ...`); fall back to `\boxed{}` when it fails.
    correct_minerva, pred_minerva = is_correct_minerva(solution_str, answer)
    if pred_minerva != "[INVALID]":
        return correct_minerva, pred_minerva

    box_correct, box_pred = is_correct_strict_box(solution_str, answer, pause_tokens_index)
    if box_pred is not None:
        return box_correct == 1, box_pred
    return correct_minerva, pred_minerva


def compute_score(
    solution_str: str,
    ground_truth: str,
    strict_box_verify: bool = False,
    pause_tokens_index: list[int] | None = None,
) -> dict[str, Any]:
    """``{"score": 1.0 or -1.0, "acc": bool, "pred": the answer read}``."""
    # Limit solution length for efficiency
    solution_str = solution_str[-300:]  # The longest answer in MATH-500 has 159 characters

    correct, pred = verify(solution_str, ground_truth, strict_box_verify, pause_tokens_index)

    reward = 1.0 if correct else -1.0
    return {"score": reward, "acc": correct, "pred": pred}
