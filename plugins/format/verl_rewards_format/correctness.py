"""Whether a response's answer is right, as open-r1's length rewards decide it (math-verify).

math-verify hands the response to SymPy, which can compute for minutes in one
C call holding the GIL (``\\boxed{9^{9^{9^{9}}}}``), and its own timeouts use
``signal.alarm``, which works only in a main thread (off it, math-verify turns
them off). So the check runs in a child process of
:class:`verl_rewards.child.JsonLineWorker`, on that child's main thread with
math-verify's own timeouts, as open-r1 runs it; the child is killed when the
check overruns ``CHECK_TIMEOUT_S`` or the reward call's time, and the answer
then counts as wrong, with the reason in ``check_error``.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from verl_rewards.child import JsonLineWorker

Correctness = Literal["math_verify", "extra_info"]
CORRECTNESS: tuple[Correctness, ...] = ("math_verify", "extra_info")
CORRECT_KEY = "correct"
MATH_VERIFY_TIMEOUT_S = 5  # math-verify's own default, which open-r1 keeps
# The whole check in the child: math-verify's own limits (two parses and a verify, 5 s
# each) stop Python code; this stops a C call that holds the GIL.
CHECK_TIMEOUT_S = 3 * MATH_VERIFY_TIMEOUT_S + 1.0
MEMORY_BYTES = 2 * 1024**3  # the child's address space


class Verdict(NamedTuple):
    """``correct``; ``gold_parsed`` False when the gold answer has no parseable LaTeX (open-r1
    then skips); ``error`` why the check gave no verdict (late, its child died): then the
    answer counts as wrong, and the gold as parsed."""

    correct: bool
    gold_parsed: bool
    error: str = ""


_worker = JsonLineWorker("verl_rewards_format.correctness:MathVerifyCheck", name="verl-rewards-format's "
                         "math-verify child", memory_bytes=MEMORY_BYTES,
                         spares=1)  # a child killed for a late answer is replaced at once


def ensure_started() -> bool:
    """Have a child ready now (benchmarks, tests: keep its start out of a timing); whether one is."""
    return _worker.start()


def close() -> None:
    """Stop the children (the next answer starts one)."""
    _worker.close()


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


def math_verify_verdict(response: str, gold: str, timeout_s: float = CHECK_TIMEOUT_S) -> Verdict:
    """open-r1's check (``get_cosine_scaled_reward``, ``len_reward``), in the child: see
    :func:`open_r1_check`. Past ``timeout_s`` (or the reward call's time), wrong, with the reason;
    ``ChildError`` when no child could start in time."""
    checked = _worker.evaluate({"response": response, "gold": gold}, timeout_s)
    if checked.cut is not None:
        return Verdict(False, True, checked.why[:300])
    return Verdict(bool(checked.reply["correct"]), bool(checked.reply["gold_parsed"]))


def open_r1_check(response: str, gold: str) -> Verdict:
    """open-r1's check: the gold's first LaTeX answer, the response's first (boxed first,
    no anchor-free fallback), ``verify``, each under math-verify's own 5 s timeout
    (``signal.alarm``: call it in a main thread, as the child does)."""
    parse, verify, gold_config, answer_config = _math_verify()
    _quiet_equations_warning()
    timeout = MATH_VERIFY_TIMEOUT_S
    gold_parsed = parse(gold, extraction_mode="first_match", extraction_config=gold_config,
                        parsing_timeout=timeout)
    if len(gold_parsed) == 0:
        return Verdict(False, False)
    answer_parsed = parse(response, extraction_config=answer_config, extraction_mode="first_match",
                          parsing_timeout=timeout)
    return Verdict(bool(verify(answer_parsed, gold_parsed, timeout_seconds=timeout)), True)


class MathVerifyCheck:
    """The child's handler: math-verify imported and warmed once, then open-r1's check per request."""

    def __init__(self, init: Any = None) -> None:
        open_r1_check("\\boxed{\\frac{63}{400}}", "\\frac{63}{400}")  # first-use costs, before "ready"

    def __call__(self, request: Mapping[str, str]) -> dict[str, bool]:
        """``{"correct", "gold_parsed"}`` for ``{"response", "gold"}``."""
        checked = open_r1_check(request["response"], request["gold"])
        return {"correct": checked.correct, "gold_parsed": checked.gold_parsed}


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
