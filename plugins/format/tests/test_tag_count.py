"""tag_count: open-r1's tag_count_reward, 0.25 per tag placed as its format expects."""

from __future__ import annotations

import pytest
from verl_rewards_format.tag_count import compute_score, tag_count


@pytest.mark.parametrize(
    ("text", "expected"),
    [  # open-r1 tests/test_rewards.py::test_tag_count_rewards_*
        ("<think>\nSome reasoning\n</think>\n<answer>\nThe answer\n</answer>", 1.0),
        ("Some reasoning\n</think>\n<answer>\nThe answer\n</answer>", 0.75),
        ("<think>\nSome reasoning\n<answer>\nThe answer\n</answer>", 0.75),
        ("<think>\nSome reasoning\n</think>\nThe answer\n</answer>", 0.75),
        ("<think>\nSome reasoning\n</think>\n<answer>\nThe answer", 0.75),
        ("Some reasoning\nThe answer", 0.0),
        # by hand: the newlines are part of each counted piece, and each must occur exactly once
        ("<think>r</think><answer>a</answer>", 0.0),
        ("<think>\nr\n</think>\n<answer>\na\n</answer>\n</answer>", 0.75),
        ("<think>\n<think>\nr\n</think>\n<answer>\na\n</answer>", 0.75),
        ("<think>\n\n</think>\n<answer>\n\n</answer>", 1.0),  # empty blocks count: tags only
    ],
)
def test_each_well_placed_tag_earns_a_quarter(text: str, expected: float) -> None:
    assert tag_count(text) == expected


def test_tag_names_are_configurable() -> None:
    text = "<reasoning>\nr\n</reasoning>\n<final>\n4\n</final>"
    assert compute_score("", text, "", think_tag="reasoning", answer_tag="final") == {"score": 1.0}
    assert compute_score("", text, "") == {"score": 0.0}
