"""The ``think_answer_format`` reward: ``<think>...</think><answer>...</answer>``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

from verl_rewards.metadata import Example, reward

# Characters that show nothing but survive str.strip(): zero-width space, non-joiner and
# joiner, word joiner, BOM, soft hyphen. A tag holding only these is empty.
_INVISIBLE = dict.fromkeys(map(ord, "\u200b\u200c\u200d\u2060\ufeff\u00ad"))


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
    tags = (f"<{think_tag}>", f"</{think_tag}>", f"<{answer_tag}>", f"</{answer_tag}>")
    # Where each tag starts, -1 unless it occurs exactly once; and where it ends.
    starts = [text.find(tag) if text.count(tag) == 1 else -1 for tag in tags]
    ends = [start + len(tag) for start, tag in zip(starts, tags)]
    t_open, t_close, a_open, a_close = starts
    has_think = -1 < t_open < t_close
    has_answer = -1 < a_open < a_close and not is_blank(text[ends[2] : a_close])
    if not (has_think and has_answer):
        return TagCheck(has_think, has_answer, False)
    in_order = ends[0] <= t_close and ends[1] <= a_open and ends[2] <= a_close
    gaps = (text[:t_open], text[ends[1] : a_open], text[ends[3] :])
    return TagCheck(True, True, in_order and (not strict or all(not gap.strip() for gap in gaps)))


def is_blank(text: str) -> bool:
    """Whether ``text`` shows nothing: only whitespace and invisible characters."""
    return not text.translate(_INVISIBLE).strip()


@reward(
    description=(
        "1 when the response is <think>...</think> then <answer>...</answer> (tags configurable), "
        "each tag exactly once and a non-empty answer; strict mode allows nothing else around them."
    ),
    timeout_s=5.0,
    tags=("format",),
    kind="format",
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
