"""Whether a response's answer is right, as open-r1's length rewards decide it (math-verify)."""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

Correctness = Literal["math_verify", "extra_info"]
CORRECTNESS: tuple[Correctness, ...] = ("math_verify", "extra_info")
CORRECT_KEY = "correct"
MATH_VERIFY_TIMEOUT_S = 5  # math-verify's own default, which open-r1 keeps


class Verdict(NamedTuple):
    """``correct``; ``gold_parsed`` False when the gold answer has no parseable LaTeX (open-r1 then skips)."""

    correct: bool
    gold_parsed: bool


def verdict(response: str, ground_truth: Any, extra_info: Mapping[str, Any] | None,
            correctness: Correctness) -> Verdict:
    """Whether ``response`` is right: by math-verify against ``ground_truth``, or from ``extra_info["correct"]``."""
    if correctness == "math_verify":
        return math_verify_verdict(response, str(ground_truth))
    if correctness != "extra_info":
        raise ValueError(f"correctness must be one of {CORRECTNESS}, not {correctness!r}")
    value = (extra_info or {}).get(CORRECT_KEY)
    if value in (True, False, 0, 1) and not isinstance(value, float):
        return Verdict(bool(value), True)
    raise ValueError(f"correctness='extra_info' needs extra_info[{CORRECT_KEY!r}] to be true or false, "
                     f"not {value!r}")


def math_verify_verdict(response: str, gold: str) -> Verdict:
    """open-r1's check (``get_cosine_scaled_reward``, ``len_reward``): the gold's first LaTeX
    answer, the response's first (boxed first, no anchor-free fallback), ``verify``.

    math-verify's 5 s timeouts use ``signal.alarm``, which works only in the main
    thread (elsewhere math-verify raises): they are kept there, as open-r1 runs,
    and off in other threads, where the reward's own ``timeout_s`` bounds a call.
    """
    parse, verify, gold_config, answer_config = _math_verify()
    _quiet_equations_warning()
    timeout = MATH_VERIFY_TIMEOUT_S if threading.current_thread() is threading.main_thread() else None
    gold_parsed = parse(gold, extraction_mode="first_match", extraction_config=gold_config,
                        parsing_timeout=timeout)
    if len(gold_parsed) == 0:
        return Verdict(False, False)
    answer_parsed = parse(response, extraction_config=answer_config, extraction_mode="first_match",
                          parsing_timeout=timeout)
    return Verdict(bool(verify(answer_parsed, gold_parsed, timeout_seconds=timeout)), True)


class _DropDeprecatedEquations(logging.Filter):
    """Drop latex2sympy2_extended's warning that ``equations=True`` is deprecated, logged on every
    parse: open-r1 sets it, and it still changes the result (an equation keeps its last side)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not record.getMessage().startswith("equations=True in NormalizationConfig is deprecated")


_DROP_EQUATIONS = _DropDeprecatedEquations()


def _quiet_equations_warning() -> None:
    """Put the filter on the module's own logger, checked on each call: a host that resets or
    swaps logging's loggers (several do) would otherwise bring the warning back."""
    from latex2sympy2_extended import math_normalization

    logger = getattr(math_normalization, "logger", None)
    if isinstance(logger, logging.Logger) and _DROP_EQUATIONS not in logger.filters:
        logger.addFilter(_DROP_EQUATIONS)


@functools.cache
def _math_verify() -> tuple[Any, Any, list[Any], list[Any]]:
    """math-verify's functions and open-r1's extraction configs, imported on first use (~1.3 s)."""
    from latex2sympy2_extended import NormalizationConfig
    from math_verify import LatexExtractionConfig, parse, verify

    normalization = NormalizationConfig(nits=False, malformed_operators=False, basic_latex=True,
                                        equations=True, boxed=True, units=True)
    answer = LatexExtractionConfig(normalization_config=normalization, boxed_match_priority=0,
                                   try_extract_without_anchor=False)
    return parse, verify, [LatexExtractionConfig()], [answer]
