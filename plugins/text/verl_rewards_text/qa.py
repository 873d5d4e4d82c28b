"""The scoring rule ``qa_em`` and ``qa_f1`` share: verl's search-R1 rule around a match metric."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from .extract import extract
from .golds import gold_answers

Metric = Callable[[str, Iterable[str]], float]


def score_answer(
    metric: Metric,
    solution_str: str,
    ground_truth: Any,
    *,
    whole_response: bool,
    score: float,
    format_score: float,
    max_answer_tags: int,
) -> dict[str, Any]:
    """``{"score", "answer_found", "match"}`` for one response.

    The answer is the last ``<answer>`` block (or the whole response, stripped,
    with ``whole_response``). No answer: 0. ``match`` (the metric, 0..1) above 0:
    ``match * score``, divided by 4 when the response holds more than
    ``max_answer_tags`` open or close answer tags. ``match`` 0: ``format_score``.
    """
    golds = gold_answers(ground_truth)  # a malformed ground truth fails even without an answer
    answer: str | None
    if whole_response:
        answer, spammed = solution_str.strip(), False
    else:
        found = extract(solution_str)
        answer, spammed = found.answer, max(found.opened, found.closed) > max_answer_tags
    if answer is None:
        return {"score": 0.0, "answer_found": False, "match": 0.0}
    match = metric(answer, golds)
    if match <= 0:
        return {"score": float(format_score), "answer_found": True, "match": 0.0}
    earned = score / 4 if spammed else score
    return {"score": match * earned, "answer_found": True, "match": match}
