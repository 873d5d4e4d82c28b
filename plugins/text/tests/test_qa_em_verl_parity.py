"""``qa_em`` scores exactly as verl 0.9.1's ``search_r1_like_qa_em.compute_score``."""

from __future__ import annotations

import itertools
import json
from types import ModuleType
from typing import Any

import numpy as np
import pytest
from verl_rewards_text.qa_em import compute_score

ANSWERS = ["Paris", "paris.", "The Paris", " PARIS ", "Lyon", "", "the", "Paris, France", "Café Noir",
           "an apple", "U.S.", "Paris\n\nLyon", "«Paris»", "Pa ris"]
WRAPPERS = [
    "<answer>{}</answer>",
    "<think>Let me think.</think>\n<answer>{}</answer>",
    "{}",
    "<answer>Lyon</answer> no, <answer>{}</answer>",
    "<answer>{}</answer> or <answer>Lyon</answer>",
    "<answer>{}",
    "<answer>{}</answer>" + "</answer>" * 10,
    "<answer>{}</answer>" + "</answer>" * 9,
    "<answer>" * 11 + "{}</answer>",
    "<answer>\n{}\n</answer>",
    "<answer><answer>{}</answer>",
    "<answer>{}</answer>\n<|im_end|>",
]
TARGETS: list[Any] = [
    ["Paris"],
    np.array(["paris", "Lutetia"], dtype=object),
    "Paris",
    ["the paris"],
    ["Lyon", "Paris"],
    ["Café noir"],
    ["U.S", "United States"],
    ["an apple", "apple"],
]


def _cases() -> list[tuple[str, Any]]:
    responses = [wrapper.format(answer) for wrapper, answer in itertools.product(WRAPPERS, ANSWERS)]
    return [(r, {"target": t}) for r, t in itertools.product(responses, TARGETS)]


@pytest.mark.parametrize(("score", "format_score"), [(1.0, 0.0), (2.0, 0.1)])
def test_every_response_and_target_scores_as_verl(verl_qa_em: ModuleType, score: float,
                                                 format_score: float) -> None:
    cases = _cases()
    ours = [compute_score("searchR1_nq", r, gt, score=score, format_score=format_score)["score"]
            for r, gt in cases]
    theirs = [float(verl_qa_em.compute_score(r, gt, score=score, format_score=format_score)) for r, gt in cases]
    assert [(r, gt, a, b) for (r, gt), a, b in zip(cases, ours, theirs) if a != b] == []
    assert len(cases) == 1344 and {0.0, format_score, score, score / 4} <= set(ours)


def test_a_bare_list_string_or_json_text_scores_as_verl_given_it_as_target(verl_qa_em: ModuleType) -> None:
    responses = [w.format(a) for w, a in itertools.product(WRAPPERS[:6], ANSWERS[:6])]
    for target in (["Paris", "Lutetia"], "Paris", ["the paris"]):
        shapes = [target, json.dumps(target) if isinstance(target, list) else target]
        for response, shape in itertools.product(responses, shapes):
            theirs = float(verl_qa_em.compute_score(response, {"target": target}))
            assert compute_score("nq", response, shape)["score"] == theirs, (response, shape)


def test_answer_found_and_match_are_reported() -> None:
    assert compute_score("nq", "<answer>Paris</answer>", "paris") == {
        "score": 1.0, "answer_found": True, "match": 1.0}
    assert compute_score("nq", "Paris", "paris") == {"score": 0.0, "answer_found": False, "match": 0.0}


def test_whole_response_scores_the_response_without_tags_or_tag_limit() -> None:
    assert compute_score("nq", "  The Paris.\n", ["Paris"], whole_response=True)["score"] == 1.0
    assert compute_score("nq", "<answer>Paris</answer>", ["Paris"], whole_response=True)["score"] == 0.0


def test_a_ground_truth_without_gold_answers_fails_the_sample() -> None:
    with pytest.raises(ValueError, match="ground_truth holds no gold answer"):
        compute_score("nq", "<answer>Paris</answer>", {"target": []})
