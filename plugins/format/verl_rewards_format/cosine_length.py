"""The ``cosine_length`` reward: open-r1's cosine-scaled length reward (``get_cosine_scaled_reward``)."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .correctness import Correctness, verdict
from .length import Unit, response_length


def cosine_scaled(length: int, correct: bool, *, min_value_wrong: float, max_value_wrong: float,
                  min_value_correct: float, max_value_correct: float, max_len: int, clip: bool = False) -> float:
    """open-r1's formula: ``lo + (hi - lo) * (1 + cos(pi * length / max_len)) / 2``.

    ``lo, hi`` = ``min_value_correct, max_value_correct`` for a right answer, and
    ``max_value_wrong, min_value_wrong`` (swapped) for a wrong one: a short right
    answer earns ``max_value_correct``, a short wrong one ``min_value_wrong``,
    both reach ``lo`` at ``max_len``. Past ``max_len`` the cosine turns back up
    (period ``2 * max_len``), as in open-r1; ``clip`` holds it at ``max_len``.
    """
    if max_len <= 0:
        raise ValueError(f"max_len must be positive, not {max_len}")
    progress = min(length / max_len, 1.0) if clip else length / max_len
    cosine = math.cos(progress * math.pi)
    lo, hi = (min_value_correct, max_value_correct) if correct else (max_value_wrong, min_value_wrong)
    return lo + 0.5 * (hi - lo) * (1.0 + cosine)


_GOLD = "\\frac{63}{400}"
_RIGHT, _WRONG = "\\boxed{\\frac{63}{400}}", "\\boxed{\\frac{64}{400}}"  # 22 characters each


def _half_cosine(length: int, max_len: int) -> float:
    """``(1 + cos(pi * length / max_len)) / 2``: 1 at length 0, 0 at ``max_len``."""
    return 0.5 * (1.0 + math.cos(math.pi * length / max_len))


@reward(
    description=(
        "open-r1's cosine-scaled length reward: a right answer (math-verify against the ground truth, "
        "as open-r1) earns 1.0 when short down to 0.5 at max_len, a wrong one -1.0 when short up to "
        "-0.5; length in characters (open-r1's) unless unit says tokens."
    ),
    timeout_s=20.0,
    tags=("format", "length", "open-r1"),
    kind="math",
    examples=[
        # open-r1's own cases (tests/test_rewards.py, max_len 100): 0.943, 0.547, -0.942, -0.547;
        # padded with dots, not open-r1's spaces, which some hosts strip (verifiers' last_reply)
        Example(solution_str=_RIGHT, ground_truth=_GOLD, expected=0.5 + 0.5 * _half_cosine(22, 100),
                kwargs={"max_len": 100}),
        Example(solution_str=_RIGHT + "." * 58, ground_truth=_GOLD, expected=0.5 + 0.5 * _half_cosine(80, 100),
                kwargs={"max_len": 100}),
        Example(solution_str=_WRONG, ground_truth=_GOLD, expected=-0.5 - 0.5 * _half_cosine(22, 100),
                kwargs={"max_len": 100}),
        Example(solution_str=_WRONG + "." * 58, ground_truth=_GOLD, expected=-0.5 - 0.5 * _half_cosine(80, 100),
                kwargs={"max_len": 100}),
        Example(solution_str=f"So the answer is {_RIGHT}.", ground_truth=_GOLD,
                expected=0.5 + 0.5 * _half_cosine(40, 1000)),
        Example(solution_str="I give up.", ground_truth=_GOLD, expected=-0.5 - 0.5 * _half_cosine(10, 1000)),
        Example(solution_str="x" * 500, ground_truth="", expected=0.75, extra_info={"correct": True},
                kwargs={"correctness": "extra_info"}),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    min_value_wrong: float = -1.0,
    max_value_wrong: float = -0.5,
    min_value_correct: float = 0.5,
    max_value_correct: float = 1.0,
    max_len: int = 1000,
    unit: Unit = "chars",
    correctness: Correctness = "math_verify",
    clip: bool = False,
) -> dict[str, Any]:
    """The cosine-scaled length reward of one response (open-r1's defaults).

    Correctness: ``math_verify`` (open-r1's check against ``ground_truth``; a
    gold answer math-verify cannot parse scores 1.0, open-r1's "skip"; a check
    cut short, its child late or dead, counts as a wrong answer) or
    ``extra_info`` (``extra_info["correct"]``). Extra info: ``correct``,
    ``gold_parsed``, ``length``, ``length_unit``, ``check_error`` (why the check
    was cut short, else empty).
    """
    length, measured_in = response_length(solution_str, extra_info, unit)
    checked = verdict(solution_str, ground_truth, extra_info, correctness)
    score = 1.0 if not checked.gold_parsed else cosine_scaled(
        length, checked.correct, min_value_wrong=min_value_wrong, max_value_wrong=max_value_wrong,
        min_value_correct=min_value_correct, max_value_correct=max_value_correct, max_len=max_len, clip=clip)
    return {"score": score, "correct": checked.correct, "gold_parsed": checked.gold_parsed,
            "length": length, "length_unit": measured_in, "check_error": checked.error}
