"""``math: verified``: verl's math branches judged by verl-rewards-math's checker, on verl's score scale.

verl's own scorers (``math: verl``, the default) are kept for parity, false
negatives included: a reference with a unit, ``%``, a degree sign or ``\\$``,
a mixed number, ``900,\\!000``, ``\\dfrac`` against ``\\frac``, an answer
outside the last 300 (math_dapo) characters. Here each branch reads the answer
where verl's reads it, over the whole response, and ``math_boxed``
(verl-rewards-math's public entry point) decides whether it equals the
reference:

* ``math`` (MATH, MATH-500): the box, as ``math_boxed`` reads it
  (``extract="boxed"``); 1.0 or 0.0;
* ``math_dapo`` (and ``aime*``): the last ``Answer:`` line (DAPO's format),
  else the box; ``{"score": 1.0 or -1.0, "acc", "pred"}``;
* ``prime_math`` (``numina_*``): PRIME reads answer phrases and boxes, so
  ``extract="last_math"`` (the box, else the answer after a final-answer
  phrase, ...); 1.0 or 0.0.
"""

from __future__ import annotations

import re
from typing import Any, Literal

from verl_rewards_math.math_boxed import compute_score as math_boxed

from .math_dapo import MINERVA_ANSWER

MathMode = Literal["verl", "verified"]
MATH_MODES: tuple[MathMode, ...] = ("verl", "verified")
VERIFIED_BRANCHES = frozenset({"math", "math_dapo", "prime_math"})
NO_ANSWER = "[INVALID]"  # verl's math_dapo pred when it reads no answer

_ANSWER_LINE = re.compile(MINERVA_ANSWER)


def score(branch: str, solution_str: str, ground_truth: Any, timeout_s: float) -> float | dict[str, Any]:
    """The verified score of one sample of a math ``branch``, on that branch's scale."""
    reference = str(ground_truth)
    if branch == "math_dapo":
        return _math_dapo(solution_str, reference, timeout_s)
    extract = "boxed" if branch == "math" else "last_math"
    return 1.0 if _judge(solution_str, reference, extract, timeout_s)["acc"] else 0.0


def _math_dapo(solution_str: str, reference: str, timeout_s: float) -> dict[str, Any]:
    lines = _ANSWER_LINE.findall(solution_str)
    judged = _judge(lines[-1], reference, "last_math", timeout_s) if lines else \
        _judge(solution_str, reference, "boxed", timeout_s)
    pred = judged["pred"] or (NO_ANSWER if not lines else "")
    return {"score": 1.0 if judged["acc"] else -1.0, "acc": bool(judged["acc"]), "pred": pred}


def _judge(response: str, reference: str, extract: str, timeout_s: float) -> dict[str, Any]:
    return math_boxed("verl_default", response, reference, extract=extract, timeout_s=timeout_s)
