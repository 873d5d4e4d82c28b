"""The ``tag_count`` reward: open-r1's ``tag_count_reward``, 0.25 per tag placed as its format expects."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward


def tag_count(text: str, think_tag: str = "think", answer_tag: str = "answer") -> float:
    """0.25 for each of ``<think>\\n``, ``\\n</think>\\n``, ``\\n<answer>\\n``, ``\\n</answer>``
    found exactly once in ``text`` (open-r1's count; the tag names configurable)."""
    pieces = (f"<{think_tag}>\n", f"\n</{think_tag}>\n", f"\n<{answer_tag}>\n", f"\n</{answer_tag}>")
    return 0.25 * sum(text.count(piece) == 1 for piece in pieces)


@reward(
    description=(
        "open-r1's tag count: 0.25 for each of '<think>\\n', '\\n</think>\\n', '\\n<answer>\\n', "
        "'\\n</answer>' occurring exactly once (tag names configurable)."
    ),
    timeout_s=5.0,
    tags=("format", "open-r1"),
    kind="format",
    examples=[
        # open-r1's own cases (tests/test_rewards.py)
        Example(solution_str="<think>\nSome reasoning\n</think>\n<answer>\nThe answer\n</answer>",
                ground_truth="", expected=1.0),
        Example(solution_str="Some reasoning\n</think>\n<answer>\nThe answer\n</answer>",
                ground_truth="", expected=0.75),
        Example(solution_str="<think>\nSome reasoning\n<answer>\nThe answer\n</answer>",
                ground_truth="", expected=0.75),
        Example(solution_str="<think>\nSome reasoning\n</think>\n<answer>\nThe answer",
                ground_truth="", expected=0.75),
        Example(solution_str="Some reasoning\nThe answer", ground_truth="", expected=0.0),
        Example(solution_str="<reasoning>\nr\n</reasoning>\n<final>\n4\n</final>", ground_truth="", expected=1.0,
                kwargs={"think_tag": "reasoning", "answer_tag": "final"}),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    think_tag: str = "think",
    answer_tag: str = "answer",
) -> dict[str, Any]:
    """The tag count of one response: 0, 0.25, 0.5, 0.75 or 1."""
    return {"score": tag_count(solution_str, think_tag, answer_tag)}
