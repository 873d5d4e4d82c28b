"""``qa_f1``: the best token F1 under qa_em's answer and tag rules."""

from __future__ import annotations

import pytest
from verl_rewards_text.qa_f1 import compute_score


@pytest.mark.parametrize(
    ("response", "ground_truth", "kwargs", "expected"),
    [
        ("<answer>President Barack Obama</answer>", {"target": ["Barack Obama"]}, {}, 0.8),
        ("<answer>Obama</answer>", '["Barack Obama", "Obama"]', {}, 1.0),
        ("<answer>Obama</answer>", "Barack Obama", {"score": 3.0}, 2.0),
        ("<answer>Obama</answer>" + "</answer>" * 10, "Barack Obama", {}, 1 / 6),
        ("<answer>Bush</answer>", "Barack Obama", {"format_score": 0.1}, 0.1),
        ("Obama", "Barack Obama", {"format_score": 0.1}, 0.0),
        ("Obama\n", "Barack Obama", {"whole_response": True}, 2 / 3),
    ],
)
def test_f1_times_score_with_search_r1s_rules(response: str, ground_truth: object, kwargs: dict[str, float],
                                             expected: float) -> None:
    assert compute_score("nq", response, ground_truth, **kwargs)["score"] == pytest.approx(expected)


def test_the_f1_is_reported_as_match() -> None:
    assert compute_score("nq", "<answer>Obama</answer>", "Barack Obama") == {
        "score": pytest.approx(2 / 3), "answer_found": True, "match": pytest.approx(2 / 3)}
