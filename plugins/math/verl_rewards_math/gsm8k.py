"""The ``gsm8k`` reward: the response's final number against the reference answer."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from decimal import Decimal
from typing import Any, Literal

from verl_rewards.metadata import Example, reward

from .numbers import format_number, last_number, number_at_start

Method = Literal["strict", "lenient", "flexible"]
NumberReading = Literal["lenient", "flexible"]  # the readings that give a number
MARKER = "####"
# verl's strict reading (verl.utils.reward_score.gsm8k): "#### " then digits,
# dots and commas, searched in the last 300 characters, compared as text.
CLIP_CHARS = 300
_VERL_STRICT = re.compile(r"#### (\-?[0-9\.\,]+)")


def strict_answer(solution_str: str) -> str | None:
    """verl's strict answer: the last ``#### N`` of the last 300 characters, commas removed; None when absent."""
    found = _VERL_STRICT.findall(solution_str[-CLIP_CHARS:])
    return found[-1].replace(",", "") if found else None


def extract_answer(solution_str: str, method: NumberReading = "lenient") -> Decimal | None:
    """The answer a response gives as a number, or None when it gives none.

    ``lenient``: the number right after the last ``####`` (GSM8K's own
    convention), currency signs, commas and trailing units or periods allowed.
    ``flexible``: the last number anywhere in the response. (For verl's
    ``strict`` reading, see :func:`strict_answer`.)
    """
    if method == "lenient":
        at = solution_str.rfind(MARKER)
        return None if at < 0 else number_at_start(solution_str[at + len(MARKER) :])
    if method == "flexible":
        return last_number(solution_str)
    raise ValueError(f"method must be 'lenient' or 'flexible' (for 'strict', see strict_answer), "
                     f"not {method!r}")


def reference_answer(ground_truth: str | int | float) -> Decimal:
    """The reference number: after ``####`` in a full GSM8K solution, else the last number."""
    text = str(ground_truth)
    value = extract_answer(text, "lenient" if MARKER in text else "flexible")
    if value is None:
        raise ValueError(f"ground truth holds no number: {text[:80]!r}")
    return value


@functools.lru_cache(maxsize=4096)
def strict_reference(ground_truth: str) -> str:
    """The reference as verl's strict mode compares it: the text itself (stripped),
    or the ``#### N`` of a full GSM8K solution. A reference without a digit is an error."""
    text = ground_truth.strip()
    if MARKER in text:
        text = strict_answer(text) or ""
    if not any(char.isdigit() for char in text):
        raise ValueError(f"ground truth holds no number: {ground_truth[:80]!r}")
    return text


@reward(
    description=(
        "GSM8K: the final number of the response equals the reference (strict: verl's rule, "
        "'#### N' compared as text; lenient: after '####', commas, currency, units and "
        "trailing periods ignored; flexible: the last number)."
    ),
    data_sources=("openai/gsm8k", "gsm8k"),
    timeout_s=10.0,
    tags=("math",),
    kind="math",
    examples=[
        Example(
            solution_str="She sells 16 - 3 - 4 = 9 eggs, 9 * 2 = 18.\n#### 18",
            ground_truth="18",
            expected=1.0,
        ),
        Example(solution_str="The total is $1,080.\n#### 1,080", ground_truth="1080", expected=1.0),
        Example(
            solution_str="#### $1,080.", ground_truth="1080", expected=1.0, kwargs={"method": "lenient"}
        ),
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
    extra: bool = True,
) -> dict[str, Any] | float:
    """``score`` when the answer is right, ``format_score`` when an answer is
    given but wrong, 0 when none is found. Extra info: ``acc`` and ``pred``.

    ``strict`` (the default) scores exactly as verl's ``gsm8k.compute_score``;
    ``lenient`` and ``flexible`` read numbers and compare their values.
    ``extra=False`` returns the bare score (no extra info), which the
    framework passes on without building per-sample extra-info columns.
    """
    if method == "strict":
        # The hot path: verl's rule, with the reference parsed once per distinct text.
        reference = strict_reference(ground_truth if type(ground_truth) is str else str(ground_truth))
        found = strict_answer(solution_str)
        if not extra:
            return 0.0 if found is None else float(score if found == reference else format_score)
        if found is None:
            return {"score": 0.0, "acc": False, "pred": ""}
        correct = found == reference
        return {"score": float(score if correct else format_score), "acc": correct, "pred": found}
    if method not in ("lenient", "flexible"):
        raise ValueError(f"method must be 'strict', 'lenient' or 'flexible', not {method!r}")
    # The reference first: a reference without a number is an error whatever the response.
    value_reference = reference_answer(ground_truth)
    answer = extract_answer(solution_str, method)
    correct = answer is not None and answer == value_reference
    value = score if correct else (0.0 if answer is None else format_score)
    if not extra:
        return float(value)
    return {"score": float(value), "acc": correct, "pred": "" if answer is None else format_number(answer)}
