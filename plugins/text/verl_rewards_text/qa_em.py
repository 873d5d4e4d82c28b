"""The ``qa_em`` reward: exact match against one or several gold answers (verl's search-R1 EM)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .metrics import exact_match
from .qa import score_answer

SEARCH_R1_SOURCES = (
    "searchR1_nq",
    "searchR1_triviaqa",
    "searchR1_popqa",
    "searchR1_hotpotqa",
    "searchR1_2wikimultihopqa",
    "searchR1_musique",
    "searchR1_bamboogle",
)


@reward(
    description=(
        "Exact match of the last <answer>...</answer> (or the whole response) against any gold "
        "answer after SQuAD normalisation; equals verl's search_r1_like_qa_em.compute_score."
    ),
    data_sources=SEARCH_R1_SOURCES,
    timeout_s=5.0,
    tags=("qa", "exact-match"),
    kind="generic",
    examples=[
        Example(solution_str="<think>It is Paris.</think><answer>Paris</answer>",
                ground_truth='["Paris", "City of Paris"]', expected=1.0),
        Example(solution_str="<answer>The Eiffel Tower!</answer>", ground_truth="eiffel tower", expected=1.0),
        Example(solution_str="<answer>Lyon</answer>", ground_truth='["Paris"]', expected=0.0),
        Example(solution_str="Paris", ground_truth="Paris", expected=0.0),
        Example(solution_str="Paris", ground_truth="Paris", expected=1.0, kwargs={"whole_response": True}),
        Example(solution_str="<answer>Lyon</answer>", ground_truth="Paris", expected=0.2,
                kwargs={"format_score": 0.2}),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    whole_response: bool = False,
    score: float = 1.0,
    format_score: float = 0.0,
    max_answer_tags: int = 10,
) -> dict[str, Any]:
    """``score`` when the answer matches a gold answer exactly after normalisation.

    The answer is the last ``<answer>`` block (none: 0), or the whole response
    with ``whole_response``. A wrong answer scores ``format_score``; a right one
    ``score / 4`` when the response holds more than ``max_answer_tags`` open or
    close answer tags. Extra info: ``answer_found``, ``match``.
    """
    return score_answer(exact_match, solution_str, ground_truth, whole_response=whole_response,
                        score=score, format_score=format_score, max_answer_tags=max_answer_tags)
