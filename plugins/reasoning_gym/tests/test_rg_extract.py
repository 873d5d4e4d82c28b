"""The answer a response gives: what reasoning-gym's extract_answer returns, in linear time."""

from __future__ import annotations

import itertools
import time

import pytest
from reasoning_gym.utils import extract_answer as rg_extract_answer
from verl_rewards_reasoning_gym.extract import extract_answer


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("<think>x</think><answer> 42 </answer>", "42"),
        ("<answer>1</answer><answer>2</answer>", "2"),
        ("<answer>1</answer><answer>2", "1"),
        ("<answer><answer>3</answer>", "<answer>3"),
        ("<answer>\u2003\n</answer>", ""),
        ("no tag", None),
    ],
)
def test_the_last_closed_answer_block_stripped(response: str, expected: str | None) -> None:
    assert extract_answer(response) == expected


def test_every_arrangement_of_tags_and_text_gives_reasoning_gyms_answer() -> None:
    pieces = ["<answer>", "</answer>", "x", " ", "\n", "\u2003", "<answer", "/answer>"]
    checked = 0
    for n in range(1, 6):
        for combo in itertools.product(pieces, repeat=n):
            text = "".join(combo)
            assert extract_answer(text) == rg_extract_answer(text), repr(text)
            checked += 1
    assert checked == sum(8**n for n in range(1, 6))


@pytest.mark.parametrize("response", ["<answer>" * 200_000, "<answer> " + "x" * 2_000_000,
                                      ("<answer>\n" + "</answer" * 3) * 50_000])
def test_extraction_is_linear_on_many_unclosed_tags(response: str) -> None:
    # reasoning-gym's regex takes 10 s on 8,000 unclosed tags (64 kB), quadratic;
    # these are 1.6-2 MB. 2 s is generous for a linear scan.
    started = time.perf_counter()
    extract_answer(response)
    assert time.perf_counter() - started < 2.0
