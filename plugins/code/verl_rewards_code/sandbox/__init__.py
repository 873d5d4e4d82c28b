"""A process sandbox for untrusted programs (Python, C, C++, Java, JavaScript, Rust): namespaces plus rlimits."""

from __future__ import annotations

from .isolation import Mode, SandboxUnavailable, isolation_for
from .languages import LANGUAGES, ToolchainMissing, language_of
from .records import Isolation, Job, Limits, RunResult
from .run import COMPILE_LIMITS, Sandbox, run_program

__all__ = [
    "COMPILE_LIMITS",
    "LANGUAGES",
    "Isolation",
    "Job",
    "Limits",
    "Mode",
    "RunResult",
    "Sandbox",
    "SandboxUnavailable",
    "ToolchainMissing",
    "isolation_for",
    "language_of",
    "run_program",
]
