"""The judge's words: the prompt it is sent, and the score read from its reply."""

from __future__ import annotations

import math
import re
import string
from collections.abc import Mapping
from typing import Any

from .prompts import prompt_text

FIELDS = frozenset({"prompt", "response", "ground_truth"})

DEFAULT_TEMPLATE = (
    "Rate how well the response answers the prompt, from 0 (wrong or useless) to 10 (perfect).\n\n"
    "Prompt:\n{prompt}\n\n"
    "Reference answer (may be empty):\n{ground_truth}\n\n"
    "Response:\n{response}\n\n"
    "Give a one-sentence justification, then the score on the last line as 'Score: N'."
)

_NUMBER = re.compile(r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)")


__all__ = ["DEFAULT_TEMPLATE", "JudgeReplyError", "check_template", "parse_score", "prompt_text", "render"]


class JudgeReplyError(ValueError):
    """The judge's reply holds no usable score."""


def check_template(template: str) -> str:
    """``template`` if it only uses ``{prompt}``, ``{response}`` and ``{ground_truth}``."""
    try:
        used = {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}
    except ValueError as e:
        raise ValueError(f"llm_judge: template is not a valid str.format template: {e}") from None
    unknown = used - FIELDS
    if unknown or "" in used:
        raise ValueError(
            f"llm_judge: template uses {sorted(unknown or {'{}'})}; "
            f"it may only use {{prompt}}, {{response}} and {{ground_truth}}"
        )
    return template


def render(template: str, prompt: Any, response: str, ground_truth: Any) -> str:
    """The user message for one sample."""
    truth = "" if ground_truth is None else str(ground_truth)
    return template.format(prompt=prompt_text(prompt), response=response, ground_truth=truth)


def parse_score(
    reply: str, score_range: tuple[float, float], verdicts: Mapping[str, float] | None = None
) -> tuple[float, float]:
    """``(score on 0..1, the judge's own value)`` read from ``reply``.

    With ``verdicts`` (word -> score on 0..1), the last verdict word in the reply
    decides; otherwise, or when none appears, the last number in the reply,
    which must lie in ``score_range`` and is mapped linearly onto 0..1.
    """
    if verdicts:
        words = "|".join(re.escape(w) for w in sorted(verdicts, key=len, reverse=True))
        found = re.findall(rf"(?<!\w)({words})(?!\w)", reply, flags=re.IGNORECASE)
        if found:
            lowered = {w.lower(): v for w, v in verdicts.items()}
            value = float(lowered[found[-1].lower()])
            return value, value
    numbers = _NUMBER.findall(reply)
    low, high = score_range
    if not numbers:
        expected = f"a verdict ({', '.join(verdicts)}) or " if verdicts else ""
        raise JudgeReplyError(
            f"no score in the judge's reply (expected {expected}a number in [{low:g}, {high:g}]): {_short(reply)}"
        )
    value = float(numbers[-1])
    if not (math.isfinite(value) and low <= value <= high):
        raise JudgeReplyError(f"the judge's score {value:g} is outside [{low:g}, {high:g}]: {_short(reply)}")
    return (value - low) / (high - low), value


def _short(text: str, limit: int = 200) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 3] + "...")
