# Copyright 2024 Bytedance Ltd. and/or its affiliates
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
# Ported from verl 0.9.1, verl/utils/reward_score/geo3k.py, with mathruler
# 0.1.0's extract_boxed_content (mathruler/grader.py, Apache-2.0; its
# grade_answer is in prm800k.py). Changed by verl-rewards: the format check
# scans with str.find (verl's `<think>.*</think>.*\\boxed\{.*\}.*` with DOTALL
# backtracks polynomially on responses with many tags and no closing brace);
# the SymPy step has a deadline (mathruler runs it in-process with none).
"""hiyouga/geometry3k: 0.9 x (the last box equals the reference, by mathruler) + 0.1 x (think/box format)."""

from __future__ import annotations

from . import prm800k
from .hendrycks import balanced_end

SYMPY_TIMEOUT_S = 10.0  # as prime_math's; mathruler has none: SymPy may run forever there


def extract_boxed_content(text: str) -> str:
    """The content of the last ``\\boxed{...}``, stripped; the text ``"None"`` without one."""
    start_pos = text.rfind(r"\boxed{")
    if start_pos != -1:
        end = balanced_end(text, start_pos)
        if end is not None:
            return text[start_pos + len(r"\boxed{") : end].strip()
    return "None"


def format_reward(predict_str: str) -> float:
    """1.0 when the whole response matches ``<think>.*</think>.*\\boxed\\{.*\\}.*`` (DOTALL), else 0.0."""
    # Earliest positions suffice: each later piece only has to come after the one before.
    if not predict_str.startswith("<think>"):
        return 0.0
    think_end = predict_str.find("</think>", len("<think>"))
    if think_end < 0:
        return 0.0
    box = predict_str.find("\\boxed{", think_end + len("</think>"))
    if box < 0:
        return 0.0
    return 1.0 if predict_str.find("}", box + len("\\boxed{")) >= 0 else 0.0


def acc_reward(
    predict_str: str, ground_truth: str, use_boxed: bool = True, sympy_timeout_s: float = SYMPY_TIMEOUT_S
) -> float:
    answer = extract_boxed_content(predict_str) if use_boxed else predict_str
    return 1.0 if prm800k.grade_answer(answer, ground_truth, "mathruler", sympy_timeout_s) else 0.0


def compute_score(
    predict_str: str,
    ground_truth: str,
    use_boxed: bool = True,
    format_score: float = 0.1,
    sympy_timeout_s: float = SYMPY_TIMEOUT_S,
) -> float:
    accuracy = acc_reward(predict_str, ground_truth, use_boxed, sympy_timeout_s)
    return (1.0 - format_score) * accuracy + format_score * format_reward(predict_str)
