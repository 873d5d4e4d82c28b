"""The ``qa_f1`` reward: the best token F1 against one or several gold answers (SQuAD)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .metrics import token_f1
from .qa import score_answer


@reward(
    description=(
        "Best SQuAD token F1 of the last <answer>...</answer> (or the whole response) against "
        "any gold answer, after SQuAD normalisation; search-R1's answer and tag rules."
    ),
    timeout_s=5.0,
    tags=("qa", "f1"),
    kind="generic",
    examples=[
        Example(solution_str="<answer>Barack Obama</answer>", ground_truth='["Barack Obama", "Obama"]',
                expected=1.0),
        Example(solution_str="<answer>President Barack Obama</answer>", ground_truth="Barack Obama",
                expected=0.8),
        Example(solution_str="<answer>the Obama</answer>", ground_truth='["Barack Obama"]',
                expected=2 / 3),
        Example(solution_str="<answer>George Bush</answer>", ground_truth="Barack Obama", expected=0.0),
        Example(solution_str="Barack Obama", ground_truth="Barack Obama", expected=0.0),
        Example(solution_str="Obama", ground_truth="Barack Obama", expected=2 / 3,
                kwargs={"whole_response": True}),
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
    """``F1 * score`` for the answer's best token F1 against the gold answers.

    The answer is the last ``<answer>`` block (none: 0), or the whole response
    with ``whole_response``. F1 0 scores ``format_score``; ``score`` is divided
    by 4 when the response holds more than ``max_answer_tags`` open or close
    answer tags (``qa_em``'s rules). Extra info: ``answer_found``, ``match`` (the F1).
    """
    return score_answer(token_f1, solution_str, ground_truth, whole_response=whole_response,
                        score=score, format_score=format_score, max_answer_tags=max_answer_tags)
