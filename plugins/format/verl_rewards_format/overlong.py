"""The ``overlong_penalty`` reward: DAPO's soft overlong punishment."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .length import Unit, response_length


def overlong_penalty(length: int, max_length: int, buffer_length: int, factor: float) -> float:
    """``min(-(length - (max_length - buffer_length)) / buffer_length * factor, 0)``.

    0 up to ``max_length - buffer_length``, then linear down to ``-factor`` at
    ``max_length`` (and on below it for a longer response, which a trainer that
    truncates at ``max_length`` never produces).
    """
    if not 0 < buffer_length <= max_length:
        raise ValueError(f"need 0 < buffer_length <= max_length, got {buffer_length} and {max_length}")
    exceed = length - (max_length - buffer_length)
    return min(-exceed / buffer_length * factor, 0.0)


@reward(
    description=(
        "DAPO overlong penalty: 0 up to max_length - buffer_length, then linear to -factor at "
        "max_length; length in tokens from extra_info when present, else characters."
    ),
    timeout_s=5.0,
    tags=("format", "length"),
    examples=[
        Example(
            solution_str="x" * 700,
            ground_truth="",
            expected=0.0,
            kwargs={"max_length": 1000, "buffer_length": 200},
        ),
        Example(
            solution_str="x" * 900,
            ground_truth="",
            expected=-0.5,
            kwargs={"max_length": 1000, "buffer_length": 200},
        ),
        Example(
            solution_str="x" * 1000,
            ground_truth="",
            expected=-1.0,
            kwargs={"max_length": 1000, "buffer_length": 200},
        ),
        Example(
            solution_str="short text",
            ground_truth="",
            expected=-0.5,
            extra_info={"response_length": 900},
            kwargs={"max_length": 1000, "buffer_length": 200},
        ),
        Example(
            solution_str="x" * 1000,
            ground_truth="",
            expected=-0.25,
            kwargs={"max_length": 1000, "buffer_length": 200, "factor": 0.25},
        ),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    max_length: int = 20480,
    buffer_length: int = 4096,
    factor: float = 1.0,
    unit: Unit = "auto",
) -> dict[str, Any]:
    """The DAPO overlong penalty of one response (defaults: DAPO's 20480/4096/1.0).

    Extra info: ``length`` and ``length_unit`` ("tokens" or "chars").
    """
    length, measured_in = response_length(solution_str, extra_info, unit)
    penalty = overlong_penalty(length, max_length, buffer_length, factor)
    return {"score": penalty, "length": length, "length_unit": measured_in}
