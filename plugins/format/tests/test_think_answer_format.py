"""think_answer_format: the <think>...</think><answer>...</answer> shape."""

from __future__ import annotations

from typing import Any

import pytest
from verl_rewards_format.tags import TagCheck, check_tags, compute_score


def score(response: str, **kwargs: Any) -> float:
    return float(compute_score("any", response, "", None, **kwargs)["score"])


@pytest.mark.parametrize(
    "response",
    [
        "<think>2 + 2 = 4</think><answer>4</answer>",
        "<think>\nmulti\nline\n</think>\n\n<answer>\n4\n</answer>\n",
        "  <think></think> <answer>4</answer>",
    ],
)
def test_well_formed_responses_score_one(response: str) -> None:
    assert score(response) == 1.0


@pytest.mark.parametrize(
    ("response", "why"),
    [
        ("<answer>4</answer><think>late</think>", "answer before think"),
        ("<think>a</think>", "no answer"),
        ("<answer>4</answer>", "no think"),
        ("<think>a</think><answer>  </answer>", "blank answer"),
        ("<think>a</think><answer>4", "unclosed answer"),
        ("<think>a<think>b</think><answer>4</answer>", "think opened twice"),
        ("<think>a</think><answer>4</answer><answer>5</answer>", "two answers"),
        ("Sure! <think>a</think><answer>4</answer>", "text before (strict)"),
        ("<think>a</think>so<answer>4</answer>", "text between (strict)"),
        ("<think>a</think><answer>4</answer> Hope it helps", "text after (strict)"),
        ("", "empty"),
    ],
)
def test_malformed_responses_score_zero(response: str, why: str) -> None:
    assert score(response) == 0.0, why


def test_loose_mode_allows_text_around_the_blocks() -> None:
    response = "Sure! <think>a</think> so <answer>4</answer> Hope it helps"
    assert score(response, strict=False) == 1.0
    assert score("<answer>4</answer><think>a</think>", strict=False) == 0.0


def test_tags_are_configurable() -> None:
    assert score("<reasoning>r</reasoning><final>4</final>", think_tag="reasoning", answer_tag="final") == 1.0
    assert score("<think>r</think><answer>4</answer>", think_tag="reasoning", answer_tag="final") == 0.0


def test_think_in_prompt_expects_the_response_to_start_inside_the_think_block() -> None:
    assert score("I reason...</think><answer>4</answer>", think_in_prompt=True) == 1.0
    assert score("<think>again</think><answer>4</answer>", think_in_prompt=True) == 0.0


def test_custom_score() -> None:
    assert score("<think>a</think><answer>4</answer>", score=0.2) == 0.2


def test_extra_info_says_which_blocks_were_found() -> None:
    assert compute_score("any", "<think>a</think> no answer", "") == {
        "score": 0.0,
        "has_think": True,
        "has_answer": False,
    }
    assert check_tags("<answer>4</answer>") == TagCheck(has_think=False, has_answer=True, well_formed=False)


@pytest.mark.parametrize("blank", ["\u200b", "\u2060\ufeff", " \u200c\u200d ", "\u00ad"])
def test_an_answer_of_only_invisible_characters_is_blank(blank: str) -> None:
    assert score(f"<think>hm</think><answer>{blank}</answer>") == 0.0
    assert score(f"<think>hm</think><answer>{blank}4{blank}</answer>") == 1.0
