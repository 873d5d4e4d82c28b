"""The ``think_answer_format`` reward: ``<think>...</think><answer>...</answer>``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, NamedTuple

from verl_rewards.metadata import Example, reward


class TagCheck(NamedTuple):
    """What the response holds: one well-formed think block, one non-empty answer block."""

    has_think: bool
    has_answer: bool
    well_formed: bool


def check_tags(
    text: str, think_tag: str = "think", answer_tag: str = "answer", strict: bool = True
) -> TagCheck:
    """Check the think/answer structure of ``text``.

    Each tag must occur exactly once, the think block before the answer block,
    and the answer must not be blank. ``strict`` also forbids any text before
    the think block, between the blocks and after the answer block.
    """
    t_open, t_close, a_open, a_close = (
        f"<{think_tag}>",
        f"</{think_tag}>",
        f"<{answer_tag}>",
        f"</{answer_tag}>",
    )
    once = {tag: text.count(tag) == 1 for tag in (t_open, t_close, a_open, a_close)}
    has_think = once[t_open] and once[t_close] and text.index(t_open) < text.index(t_close)
    has_answer = (
        once[a_open]
        and once[a_close]
        and text.index(a_open) < text.index(a_close)
        and text[text.index(a_open) + len(a_open) : text.index(a_close)].strip() != ""
    )
    if not (has_think and has_answer):
        return TagCheck(has_think, has_answer, False)
    t_open_q, t_close_q, a_open_q, a_close_q = (re.escape(t) for t in (t_open, t_close, a_open, a_close))
    gap = r"\s*" if strict else r".*?"
    pattern = f"{gap}{t_open_q}.*?{t_close_q}{gap}{a_open_q}.*?{a_close_q}{gap}"
    return TagCheck(True, True, re.fullmatch(pattern, text, re.DOTALL) is not None)


@reward(
    description=(
        "1 when the response is <think>...</think> then <answer>...</answer> (tags configurable), "
        "each tag exactly once and a non-empty answer; strict mode allows nothing else around them."
    ),
    timeout_s=5.0,
    tags=("format",),
    examples=[
        Example(solution_str="<think>2+2 is 4</think>\n<answer>4</answer>", ground_truth="", expected=1.0),
        Example(solution_str="<answer>4</answer><think>late</think>", ground_truth="", expected=0.0),
        Example(solution_str="Sure! <think>hm</think><answer>4</answer>", ground_truth="", expected=0.0),
        Example(
            solution_str="Sure! <think>hm</think><answer>4</answer>",
            ground_truth="",
            expected=1.0,
            kwargs={"strict": False},
        ),
        Example(
            solution_str="reasoning...</think> <answer>4</answer>",
            ground_truth="",
            expected=1.0,
            kwargs={"think_in_prompt": True},
        ),
        Example(
            solution_str="<reasoning>r</reasoning><final>4</final>",
            ground_truth="",
            expected=1.0,
            kwargs={"think_tag": "reasoning", "answer_tag": "final"},
        ),
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
    strict: bool = True,
    think_in_prompt: bool = False,
    score: float = 1.0,
) -> dict[str, Any]:
    """``score`` for a well-formed response, else 0.

    ``think_in_prompt``: the prompt already ends with the opening think tag
    (as in DeepSeek-R1 templates), so the response starts inside the think
    block. Extra info: ``has_think`` and ``has_answer``.
    """
    text = f"<{think_tag}>{solution_str}" if think_in_prompt else solution_str
    check = check_tags(text, think_tag, answer_tag, strict)
    return {
        "score": score if check.well_formed else 0.0,
        "has_think": check.has_think,
        "has_answer": check.has_answer,
    }
