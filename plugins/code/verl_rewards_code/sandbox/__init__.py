"""A process sandbox for untrusted Python programs: namespaces plus rlimits."""

from __future__ import annotations

from .isolation import Mode, SandboxUnavailable, isolation_for
from .records import Isolation, Limits, RunResult
from .run import Sandbox, run_program

__all__ = [
    "Isolation",
    "Limits",
    "Mode",
    "RunResult",
    "Sandbox",
    "SandboxUnavailable",
    "isolation_for",
    "run_program",
]
