"""A response's program for ``code_exec``: its language, the sandbox that runs it, and its compile step."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, NamedTuple

from .extract import extract_program
from .sandbox import COMPILE_LIMITS, Limits, Mode, Sandbox

# Test forms that only a Python program can take: the harness runs Python.
PYTHON_ONLY = {"asserts": "assert tests", "fn_name": "call-based tests"}


class Program(NamedTuple):
    """The program to score, its language and the sandbox (for that language) that runs it."""

    code: str
    language: str
    sandbox: Sandbox


def program_for(
    solution_str: str,
    ground_truth: str | bytes | Mapping[str, Any],
    *,
    language: str | None,
    isolation: Mode,
    python: str | None,
    compile_timeout_s: float,
    compile_memory_mb: int,
) -> Program:
    """The response's program (its fence tag or ``language`` chooses the language)
    and a sandbox for it. Raises ``ValueError`` when the tests need Python and the
    program is not, and ``ToolchainMissing`` naming a compiler this machine lacks."""
    code, chosen = extract_program(solution_str, language)
    if chosen != "python":
        forms = [name for key, name in PYTHON_ONLY.items() if _spec(ground_truth).get(key)]
        if forms:
            raise ValueError(
                f"the program is {chosen} but the ground truth has {' and '.join(forms)}, which run "
                "Python programs only; use stdin/stdout tests ('inputs'/'outputs') for other languages"
            )
    compile_limits = Limits(
        timeout_s=compile_timeout_s,
        memory_mb=compile_memory_mb,
        max_output_bytes=COMPILE_LIMITS.max_output_bytes,
        max_processes=COMPILE_LIMITS.max_processes,
        disk_mb=COMPILE_LIMITS.disk_mb,
    )
    sandbox = Sandbox.resolve(isolation, python).for_language(chosen, compile_limits)
    return Program(code, chosen, sandbox)


def _spec(ground_truth: str | bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(ground_truth, Mapping):
        return ground_truth
    try:
        loaded = json.loads(ground_truth)
    except ValueError:
        return {}  # parse_tests reports it
    return loaded if isinstance(loaded, Mapping) else {}
