"""Classify one run of one test into a status."""

from __future__ import annotations

import signal
from typing import Literal

from .compare import outputs_match
from .sandbox import Limits, RunResult
from .spec import ProgramTest

Status = Literal[
    "pass", "fail", "error", "timeout", "memory", "output_limit", "sandbox_error", "skipped", "compile_error"
]


def status_of(result: RunResult, test: ProgramTest, limits: Limits, sentinel: str | None = None) -> Status:
    """``pass`` only when the program exited 0 and printed the expected output,
    or, for an assertion test, when the harness printed ``sentinel`` (the
    run's nonce) as the last line: the assertion ran and held. A failing
    assertion, or an exit 0 before the harness got there, is ``fail``."""
    if result.setup_error is not None:
        return "sandbox_error"
    if result.timed_out or _out_of_cpu(result, limits):
        return "timeout"
    if result.output_limit_hit:
        return "output_limit"
    if result.exit_code != 0:
        return _failure_kind(result, test)
    if test.assertion is not None:
        held = sentinel is not None and result.stdout.endswith(f"\n{sentinel}\n")
        return "pass" if held else "fail"
    return "pass" if outputs_match(result.stdout, test.expected or "") else "fail"


def _out_of_cpu(result: RunResult, limits: Limits) -> bool:
    if result.signal == signal.SIGXCPU:
        return True
    # A program that ignores SIGXCPU meets SIGKILL at the hard limit.
    return result.signal == signal.SIGKILL and (result.cpu_time_s or 0.0) >= limits.cpu_s


def _failure_kind(result: RunResult, test: ProgramTest) -> Status:
    last_line = result.stderr.strip().rsplit("\n", 1)[-1]
    if result.memory_limit_hit or last_line.startswith("MemoryError"):
        return "memory"
    # A failed assertion is a wrong answer, not a crash.
    if test.assertion is not None and last_line.startswith("AssertionError"):
        return "fail"
    return "error"
