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
# Ported from verl 0.9.1, verl/utils/reward_score/math_reward.py. Changed by
# verl-rewards: strip_string lives in hendrycks.py; nothing is printed.
"""lighteval/MATH, MATH-lighteval, MATH-500: the last ``\\boxed{}`` against the reference, Hendrycks-normalised."""

from __future__ import annotations

from .hendrycks import balanced_end, strip_string


def compute_score(solution_str: str, ground_truth: str) -> float:
    retval = 0.0
    try:
        string_in_last_boxed = last_boxed_only_string(solution_str)
        if string_in_last_boxed is not None:
            answer = remove_boxed(string_in_last_boxed)
            if is_equiv(answer, ground_truth):
                retval = 1.0
    except Exception:  # noqa: BLE001 - verl's rule: any failure scores 0 (verl prints it)
        pass
    return retval


def is_equiv(str1: str | None, str2: str | None) -> bool:
    if str1 is None and str2 is None:
        return True
    if str1 is None or str2 is None:
        return False
    try:
        return strip_string(str1) == strip_string(str2)
    except Exception:  # noqa: BLE001 - verl's rule: compare as written when normalising fails
        return str1 == str2


def remove_boxed(s: str) -> str:
    if "\\boxed " in s:
        left = "\\boxed "
        if s[: len(left)] != left:
            raise AssertionError(f"box error: {s[:80]}")
        return s[len(left) :]
    left = "\\boxed{"
    if s[: len(left)] != left or s[-1] != "}":
        raise AssertionError(f"box error: {s[:80]}")
    return s[len(left) : -1]


def last_boxed_only_string(string: str) -> str | None:
    idx = string.rfind("\\boxed")
    if "\\boxed " in string:
        return "\\boxed " + string.split("\\boxed ")[-1].split("$")[0]
    if idx < 0:
        idx = string.rfind("\\fbox")
        if idx < 0:
            return None
    closing = balanced_end(string, idx)
    return None if closing is None else string[idx : closing + 1]
