"""The sandbox's one entry point: run a program once, isolated and limited."""

from __future__ import annotations

import sys

from .isolation import Mode, isolation_for
from .launch import execute
from .records import Limits, RunResult


def run_program(
    source: str,
    stdin: str = "",
    limits: Limits | None = None,
    *,
    isolation: Mode = "auto",
    python: str | None = None,
) -> RunResult:
    """Run Python ``source`` once with ``stdin``, in a sandbox, under ``limits``.

    The program's faults (exceptions, signals, limits, timeouts) come back in
    the :class:`RunResult`; only an unusable sandbox raises
    (:class:`~verl_rewards_code.sandbox.isolation.SandboxUnavailable`).
    """
    interpreter = python or sys.executable
    chosen = isolation_for(isolation, interpreter)
    return execute(chosen, source, stdin, limits or Limits(), interpreter)
