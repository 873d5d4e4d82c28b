# Copyright 2024 Bytedance Ltd. and/or its affiliates
# Copyright 2023-2024 SGLang Team
# Copyright 2025 Search-R1 Contributors
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
# Adapted from https://github.com/PeterGriffinJin/Search-R1/blob/main/verl/utils/reward_score/qa_em.py
#
# Ported from verl 0.9.1, verl/utils/reward_score/search_r1_like_qa_em.py
# (compute_score, the exact-match scorer default_compute_score uses). Changed by
# verl-rewards: the last <answer>...</answer> is found with str.find (verl's lazy
# regex is quadratic in the number of unclosed tags); nothing is printed (verl
# prints one sample in 64, chosen at random); the reference may also be JSON text.
"""searchR1_*: exact match of the last ``<answer>...</answer>`` against any gold answer, SQuAD-normalised."""

from __future__ import annotations

import re
import string
from collections.abc import Iterable
from typing import Any

from verl_rewards.parsing import json_mapping, last_block

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
OPEN, CLOSE = "<answer>", "</answer>"


def normalize_answer(s: str) -> str:
    """Lower case, no punctuation, no articles, single spaces (SQuAD's normalisation)."""
    text = "".join(ch for ch in s.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def em_check(prediction: str, golden_answers: str | Iterable[str]) -> int:
    if isinstance(golden_answers, str):
        golden_answers = [golden_answers]
    normalized_prediction = normalize_answer(prediction)
    for golden_answer in golden_answers:
        if normalize_answer(golden_answer) == normalized_prediction:
            return 1
    return 0


def extract_solution(solution_str: str) -> str | None:
    """The text of the last ``<answer>...</answer>`` (what ``re.finditer(r"<answer>(.*?)</answer>",
    re.DOTALL)`` finds last, in linear time), stripped; None when there is none."""
    block = last_block(solution_str, OPEN, CLOSE)
    return None if block is None else block.strip()


def targets(ground_truth: Any) -> Any:
    """``ground_truth["target"]``: the gold answer(s). verl's data holds a mapping; JSON text of one works too."""
    spec = json_mapping(ground_truth, "searchR1 ground truth", '{"target": [answers]}')
    if "target" not in spec:
        raise ValueError(
            f'searchR1 ground truth must be {{"target": [answers]}}, not {type(spec).__name__} {str(spec)[:80]!r}'
        )
    return spec["target"]


def compute_score(solution_str: str, ground_truth: Any, format_score: float = 0.0, score: float = 1.0) -> float:
    """``score`` on an exact match (a quarter of it with more than 10 answer tags), else ``format_score``; 0 without an answer."""
    gold = targets(ground_truth)
    answer = extract_solution(solution_str)
    if answer is None:
        return 0
    if em_check(answer, gold):
        if solution_str.count(OPEN) > 10 or solution_str.count(CLOSE) > 10:  # prevent output a lot of </answer>
            return score / 4
        return score
    return format_score
