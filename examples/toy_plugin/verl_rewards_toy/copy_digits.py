"""``copy_digits``: partial credit for echoing the prompt's digits, then stopping.

A task a tiny random-init model learns with GRPO in a minute or two on CPU:
every correct character at its place earns credit, and stopping at the right
length earns the rest, so a random policy already scores a little and each
improvement is rewarded.
"""

from __future__ import annotations

from typing import Any

from verl_rewards.metadata import Example, reward


@reward(
    description=(
        "Partial credit for copying ground_truth: the share of its characters "
        "reproduced at their position, plus a length term for stopping on time."
    ),
    data_sources=["toy_copy"],
    examples=[
        Example(solution_str="4721", ground_truth="4721", expected=1.0),
        Example(solution_str="4720", ground_truth="4721", expected=0.8125),
        Example(solution_str="47215555", ground_truth="4721", expected=0.75),
        Example(solution_str="", ground_truth="4721", expected=0.0),
    ],
    tags=["toy", "example"],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: dict[str, Any] | None = None,
    length_weight: float = 0.25,
) -> dict[str, float]:
    """``(1 - w) * position_acc + w * length_score``, with ``w = length_weight``.

    ``position_acc`` is the fraction of target characters the response has at
    the same index; ``length_score`` is ``1 - |len(response) - len(target)| /
    len(target)``, floored at 0.
    """
    target = str(ground_truth)
    if not target:
        raise ValueError("ground_truth is empty: there is nothing to copy")
    if not 0.0 <= length_weight <= 1.0:
        raise ValueError(f"length_weight must be in [0, 1], got {length_weight}")
    position_acc = sum(a == b for a, b in zip(solution_str, target)) / len(target)
    length_score = max(0.0, 1.0 - abs(len(solution_str) - len(target)) / len(target))
    return {
        "score": (1.0 - length_weight) * position_acc + length_weight * length_score,
        "position_acc": position_acc,
        "exact": float(solution_str == target),
    }
