"""The judge's words: the prompt it is sent, and the score read from its reply."""

from __future__ import annotations

import functools
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

_NUM = r"[-+]?(?:\d+(?:\.\d+)?|\.\d+)"
_NUMBER = re.compile(_NUM)
# "7/10", "7 / 10", "3 (out of 10)", "3 out of 10": a value and the top of its scale.
_SCALE = rf"\s*\(?\s*(?:/|out\s+of)\s*(?P<top>{_NUM})\s*\)?"
# The score line the default template asks for ("Score: 7", "**Score**: 7/10", "final score 10").
# What the template asks the judge to write before its score ("as 'Rating: N'"); else "Score".
_ASKED_LABEL = re.compile(r"\b([A-Za-z]\w*)\s*:\s*N\b")  # the word just before ": N"


def score_label(template: str) -> str:
    """The word the template asks the judge to put before its score (``Score`` in ``'Score: N'``,
    ``rating`` in ``Final rating: N``)."""
    found = _ASKED_LABEL.findall(template)
    return found[-1].strip() if found else "Score"


@functools.lru_cache(maxsize=16)
def _score_line(label: str) -> re.Pattern[str]:
    """``LABEL: N`` (also ``**LABEL**: N/10``, ``final LABEL 10``) and what follows on its line."""
    return re.compile(rf"\b{re.escape(label)}\b\W{{0,4}}?(?:is\s+|of\s+)?(?P<value>{_NUM})(?:{_SCALE})?"
                      rf"(?P<rest>[^\n]*)", re.IGNORECASE)
_SENTENCE_END = re.compile(r"[.;!?](?:\s|$)")
_SCALED = re.compile(rf"(?P<value>{_NUM}){_SCALE}", re.IGNORECASE)


__all__ = ["DEFAULT_TEMPLATE", "JudgeReplyError", "check_template", "parse_score", "prompt_text", "render",
           "score_label"]


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
    reply: str, score_range: tuple[float, float], verdicts: Mapping[str, float] | None = None,
    label: str = "Score",
) -> tuple[float, float]:
    """``(score on 0..1, the judge's own value)`` read from ``reply``.

    With ``verdicts`` (word -> score on 0..1), the last verdict word in the reply
    decides. Otherwise the score is, in this order: the reply's ``Score: N`` line
    (``label``: what the template asks for, see :func:`score_label`)
    (``N``, ``N/TOP`` or ``N out of TOP``; several must agree), else its one
    scaled value (``3 (out of 10)``), else its only number. ``TOP`` must be the
    top of ``score_range``; the value must lie in it and is mapped linearly onto
    0..1. A reply that could mean two scores is a :class:`JudgeReplyError`.
    """
    if verdicts:
        words = "|".join(re.escape(w) for w in sorted(verdicts, key=len, reverse=True))
        found = re.findall(rf"(?<!\w)({words})(?!\w)", reply, flags=re.IGNORECASE)
        if found:
            lowered = {w.lower(): v for w, v in verdicts.items()}
            value = float(lowered[found[-1].lower()])
            return value, value
    value = _judged_value(reply, score_range, verdicts, label)
    low, high = score_range
    if not (math.isfinite(value) and low <= value <= high):
        raise JudgeReplyError(f"the judge's score {value:g} is outside [{low:g}, {high:g}]: {_short(reply)}")
    return (value - low) / (high - low), value


def _judged_value(reply: str, score_range: tuple[float, float], verdicts: Mapping[str, float] | None,
                  label: str) -> float:
    """The judge's value on its own scale: its score line, its one scaled value, or its only number."""
    lines = list(_score_line(label).finditer(reply))
    if lines:
        if any(_NUMBER.search(_SENTENCE_END.split(m["rest"], maxsplit=1)[0]) for m in lines):
            raise JudgeReplyError(f"ambiguous score line (another number follows the score): {_short(reply)}")
        values = {_scaled(m, score_range, reply) for m in lines}
        if len(values) > 1:
            raise JudgeReplyError(f"ambiguous: score lines disagree ({', '.join(f'{v:g}' for v in sorted(values))}): "
                                  f"{_short(reply)}")
        return values.pop()
    scaled = {_scaled(m, score_range, reply) for m in _SCALED.finditer(reply)}
    if len(scaled) == 1:
        return scaled.pop()
    numbers = _NUMBER.findall(reply)
    if len(scaled) > 1 or len(set(map(float, numbers))) > 1:
        raise JudgeReplyError(f"ambiguous: several numbers and no '{label}: N' line: {_short(reply)}")
    if not numbers:
        low, high = score_range
        expected = f"a verdict ({', '.join(verdicts)}) or " if verdicts else ""
        raise JudgeReplyError(
            f"no score in the judge's reply (expected {expected}a number in [{low:g}, {high:g}]): {_short(reply)}"
        )
    return float(numbers[0])


def _scaled(match: re.Match[str], score_range: tuple[float, float], reply: str) -> float:
    """The value of ``N`` or ``N/TOP``; ``TOP`` must be the range's top (a 5-point score is no 10-point one)."""
    value = float(match["value"])
    top = match["top"]
    if top is not None and float(top) != score_range[1]:
        raise JudgeReplyError(f"the judge scored out of {float(top):g}, but score_range is "
                              f"[{score_range[0]:g}, {score_range[1]:g}]: {_short(reply)}")
    return value


def _short(text: str, limit: int = 200) -> str:
    return repr(text) if len(text) <= limit else repr(text[: limit - 3] + "...")
