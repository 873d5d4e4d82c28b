"""The ``gsm8k`` reward: the response's final number against the reference answer."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Literal

from verl_rewards.metadata import Example, reward

from .numbers import find_numbers, format_number, number_at_start

Method = Literal["strict", "flexible"]
MARKER = "####"


def extract_answer(solution_str: str, method: Method = "strict") -> Decimal | None:
    """The answer a response gives, or None when it gives none.

    ``strict``: the number right after the last ``####`` (GSM8K's own
    convention), currency signs, commas and trailing units or periods allowed.
    ``flexible``: the last number anywhere in the response.
    """
    if method == "strict":
        at = solution_str.rfind(MARKER)
        return None if at < 0 else number_at_start(solution_str[at + len(MARKER) :])
    if method == "flexible":
        numbers = find_numbers(solution_str)
        return numbers[-1] if numbers else None
    raise ValueError(f"method must be 'strict' or 'flexible', not {method!r}")


def reference_answer(ground_truth: str | int | float) -> Decimal:
    """The reference number: after ``####`` in a full GSM8K solution, else the last number."""
    text = str(ground_truth)
    value = extract_answer(text, "strict" if MARKER in text else "flexible")
    if value is None:
        raise ValueError(f"ground truth holds no number: {text[:80]!r}")
    return value


@reward(
    description=(
        "GSM8K: the final number of the response (strict: after '####'; flexible: the last "
        "number) equals the reference; commas, currency, units and trailing periods ignored."
    ),
    data_sources=("openai/gsm8k", "gsm8k"),
    timeout_s=10.0,
    tags=("math",),
    examples=[
        Example(
            solution_str="She sells 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n#### 18",
            ground_truth="18",
            expected=1.0,
        ),
        Example(solution_str="The total is $1,080.\n#### $1,080.", ground_truth="1080", expected=1.0),
        Example(solution_str="So the answer is 72 clips.", ground_truth="72", expected=0.0),
        Example(
            solution_str="So the answer is 72 clips.",
            ground_truth="72",
            expected=1.0,
            kwargs={"method": "flexible"},
        ),
        Example(solution_str="#### 71", ground_truth="72", expected=0.1, kwargs={"format_score": 0.1}),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str | int | float,
    extra_info: Mapping[str, Any] | None = None,
    *,
    method: Method = "strict",
    format_score: float = 0.0,
    score: float = 1.0,
) -> dict[str, Any]:
    """``score`` when the answer is right, ``format_score`` when an answer is
    given but wrong, 0 when none is found. Extra info: ``acc`` and ``pred``."""
    # The reference first: a reference without a number is an error whatever the response.
    reference = reference_answer(ground_truth)
    answer = extract_answer(solution_str, method)
    correct = answer is not None and answer == reference
    value = score if correct else (0.0 if answer is None else format_score)
    return {"score": float(value), "acc": correct, "pred": "" if answer is None else format_number(answer)}
