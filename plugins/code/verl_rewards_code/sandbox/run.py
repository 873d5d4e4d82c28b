"""The sandbox's entry points: choose the isolation once, then run programs with it."""

from __future__ import annotations

import sys
from dataclasses import dataclass

from .isolation import Mode, isolation_for
from .launch import execute
from .records import Isolation, Limits, RunResult


@dataclass(frozen=True)
class Sandbox:
    """An isolation level resolved for one interpreter, ready to run programs."""

    isolation: Isolation
    python: str

    @classmethod
    def resolve(cls, mode: Mode = "auto", python: str | None = None) -> Sandbox:
        """The isolation for ``mode`` (probed once per process) and ``python``
        (default: this interpreter, so programs see the same installed packages)."""
        interpreter = python or sys.executable
        return cls(isolation_for(mode, interpreter), interpreter)

    def run(
        self, source: str, stdin: str = "", limits: Limits | None = None, *, helper_processes: int = 0
    ) -> RunResult:
        """Run Python ``source`` once with ``stdin``, under ``limits``.

        ``helper_processes`` are processes ``source`` starts for its own
        machinery (the assert harness's program process) on top of
        ``limits.max_processes``. The program's faults (exceptions, signals,
        limits, timeouts) come back in the :class:`RunResult`.
        """
        return execute(self.isolation, source, stdin, limits or Limits(), self.python, helper_processes)


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
    return Sandbox.resolve(isolation, python).run(source, stdin, limits)
