"""Classify one run of one test into a status."""

from __future__ import annotations

import signal
from typing import Any, Literal, NamedTuple

from .compare import outputs_match, returns_match
from .compare_prime import prime_code_match, prime_code_returns_match
from .runs import call_answer
from .sandbox import Limits, RunResult
from .spec import Call, ProgramTest

Status = Literal[
    "pass", "partial", "fail", "error", "timeout", "memory", "output_limit", "sandbox_error", "skipped",
    "compile_error",
]


class Verdict(NamedTuple):
    """A test's status and its score: 1.0 for ``pass``, a checker's partial score, else 0;
    ``detail``: why it did not pass (a short excerpt of its run, see :mod:`.explain`)."""

    status: Status
    score: float = 0.0
    detail: str | None = None


PASS = Verdict("pass", 1.0)

# How answers are compared: code_exec's own rules, or verl's prime_code's.
Compare = Literal["tokens", "prime_code"]
_OUTPUT_RULES = {"tokens": outputs_match, "prime_code": prime_code_match}


def status_of(
    result: RunResult, test: ProgramTest, limits: Limits, sentinel: str | None = None, compare: Compare = "tokens"
) -> Status:
    """``pass`` only when the program exited 0 and printed the expected output,
    for an assertion test when the harness printed ``sentinel`` (the run's
    nonce) as the last line (the assertion ran and held), for a call test when
    the value the harness wrote before ``sentinel`` matches. A failing
    assertion, or an exit 0 before the harness got there, is ``fail``."""
    failure = run_failure(result, test, limits, sentinel)
    if failure is not None:
        return failure
    if test.call is not None and sentinel is not None:
        found, value = call_answer(result.stdout, sentinel)
        return "pass" if found and _returns_match(compare, value, test.call) else "fail"
    if test.assertion is not None:
        return "pass"
    return "pass" if _OUTPUT_RULES[compare](result.stdout, test.expected or "") else "fail"


def _returns_match(compare: Compare, value: Any, call: Call) -> bool:
    if compare == "prime_code":
        return prime_code_returns_match(value, call.expected)
    return returns_match(value, call.expected, wrapped=call.wrapped)


def run_failure(result: RunResult, test: ProgramTest, limits: Limits, sentinel: str | None = None) -> Status | None:
    """Why the run produced no answer to judge (a crash, a limit, a harness
    that never got to its verdict), or None when it did."""
    if result.setup_error is not None:
        return "sandbox_error"
    if result.timed_out or _out_of_cpu(result, limits):
        return "timeout"
    if result.output_limit_hit:
        return "output_limit"
    if result.exit_code != 0:
        return _failure_kind(result, test)
    if _harnessed(test) and (sentinel is None or not result.stdout.endswith(f"\n{sentinel}\n")):
        return "fail"
    return None


def _harnessed(test: ProgramTest) -> bool:
    return test.assertion is not None or test.call is not None


def _out_of_cpu(result: RunResult, limits: Limits) -> bool:
    if result.signal == signal.SIGXCPU:
        return True
    # A program that ignores SIGXCPU meets SIGKILL at the hard limit.
    return result.signal == signal.SIGKILL and (result.cpu_time_s or 0.0) >= limits.cpu_s


def _failure_kind(result: RunResult, test: ProgramTest) -> Status:
    last_line = result.stderr.strip().rsplit("\n", 1)[-1]
    if result.memory_limit_hit or last_line.startswith("MemoryError"):
        return "memory"
    # A failed assertion (or a call that returned an object, not a value) is a wrong answer, not a crash.
    if _harnessed(test) and last_line.startswith("AssertionError"):
        return "fail"
    return "error"
