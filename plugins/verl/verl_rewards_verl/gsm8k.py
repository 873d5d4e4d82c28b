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
# Ported from verl 0.9.1, verl/utils/reward_score/gsm8k.py (the strict method,
# the one default_compute_score uses). Changed by verl-rewards: a compiled
# pattern; types.
"""openai/gsm8k: the number after the last ``#### `` in the response's last 300 characters, as text."""

from __future__ import annotations

import re

_SOLUTION_CLIP_CHARS = 300
_STRICT = re.compile("#### (\\-?[0-9\\.\\,]+)")


def extract_solution(solution_str: str) -> str | None:
    # verl only matches the last 300 characters: the final answer is usually at the end.
    if len(solution_str) > _SOLUTION_CLIP_CHARS:
        solution_str = solution_str[-_SOLUTION_CLIP_CHARS:]
    solutions = _STRICT.findall(solution_str)
    if len(solutions) == 0:
        return None
    # take the last solution
    return str(solutions[-1]).replace(",", "").replace("$", "")


def compute_score(solution_str: str, ground_truth: str, format_score: float = 0.0, score: float = 1.0) -> float:
    """``score`` when the answer read equals ``ground_truth`` as text, else ``format_score``; 0 without one."""
    answer = extract_solution(solution_str)
    if answer is None:
        return 0
    return score if answer == ground_truth else format_score
