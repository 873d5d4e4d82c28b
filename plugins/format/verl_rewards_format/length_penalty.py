"""The ``length_penalty`` reward: a linear penalty past a target length."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .length import Unit, response_length


def length_penalty(length: int, target_length: int, max_length: int, factor: float) -> float:
    """``-factor * clip((length - target_length) / (max_length - target_length), 0, 1)``.

    0 up to ``target_length``, linear down to ``-factor`` at ``max_length``,
    and ``-factor`` beyond it.
    """
    if not 0 <= target_length < max_length:
        raise ValueError(f"need 0 <= target_length < max_length, got {target_length} and {max_length}")
    excess = min(max((length - target_length) / (max_length - target_length), 0.0), 1.0)
    return -factor * excess if excess else 0.0


@reward(
    description=(
        "Linear length penalty: 0 up to target_length, -factor at max_length and beyond; "
        "length in tokens from extra_info when present, else characters."
    ),
    timeout_s=5.0,
    tags=("format", "length"),
    examples=[
        Example(
            solution_str="x" * 100,
            ground_truth="",
            expected=0.0,
            kwargs={"target_length": 100, "max_length": 200},
        ),
        Example(
            solution_str="x" * 150,
            ground_truth="",
            expected=-0.5,
            kwargs={"target_length": 100, "max_length": 200},
        ),
        Example(
            solution_str="x" * 999,
            ground_truth="",
            expected=-1.0,
            kwargs={"target_length": 100, "max_length": 200},
        ),
        Example(
            solution_str="x",
            ground_truth="",
            expected=-0.1,
            extra_info={"num_tokens": 150},
            kwargs={"target_length": 100, "max_length": 200, "factor": 0.2},
        ),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    target_length: int = 1024,
    max_length: int = 4096,
    factor: float = 1.0,
    unit: Unit = "auto",
) -> dict[str, Any]:
    """The length penalty of one response. Extra info: ``length`` and ``length_unit``."""
    length, measured_in = response_length(solution_str, extra_info, unit)
    return {
        "score": length_penalty(length, target_length, max_length, factor),
        "length": length,
        "length_unit": measured_in,
    }
