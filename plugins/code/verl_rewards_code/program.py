"""A response's program for ``code_exec``: its language, the sandbox that runs it, and its compile step."""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Mapping
from typing import Any, NamedTuple

from .extract import extract
from .sandbox import COMPILE_LIMITS, LANGUAGES, Limits, Mode, Sandbox

# Test forms that only a Python program can take: the harness runs Python.
PYTHON_ONLY = {"asserts": "assert tests", "fn_name": "call-based tests"}
_SHOWN_TAG_CHARS = 40
_NOTED_TAGS = 32  # tags a process notes in its log, at most (responses may hold any)
_noted: set[str] = set()
_noted_lock = threading.Lock()
logger = logging.getLogger("verl_rewards_code")


class Program(NamedTuple):
    """The program to score, its language and the sandbox (for that language) that runs
    it; ``unrunnable``: why it is not run (its block is tagged with a language the
    sandbox does not run; ``language`` is then that tag)."""

    code: str
    language: str
    sandbox: Sandbox
    unrunnable: str | None = None


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
    code, chosen, _ = extracted = extract(solution_str, language)
    tag = extracted.unrunnable_tag if language is None else None
    if tag is not None:
        return Program(code, tag[:_SHOWN_TAG_CHARS], Sandbox.resolve(isolation, python), _unrunnable(tag))
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


def _unrunnable(tag: str) -> str:
    """Why a program tagged ``tag`` is not run; noted once per tag in this process's log."""
    shown = repr(tag[:_SHOWN_TAG_CHARS]) + ("..." if len(tag) > _SHOWN_TAG_CHARS else "")
    why = (f"the response's program is tagged {shown}, a language code_exec does not run (it runs "
           f"{', '.join(LANGUAGES)}): not run, every test is compile_error")
    key = tag[:_SHOWN_TAG_CHARS]
    with _noted_lock:
        new = key not in _noted and len(_noted) < _NOTED_TAGS
        if new:
            _noted.add(key)
    if new:
        logger.warning("code_exec: %s (the language kwarg runs every response in one language)", why)
    return why


def _spec(ground_truth: str | bytes | Mapping[str, Any]) -> Mapping[str, Any]:
    if isinstance(ground_truth, Mapping):
        return ground_truth
    try:
        loaded = json.loads(ground_truth)
    except ValueError:
        return {}  # parse_tests reports it
    return loaded if isinstance(loaded, Mapping) else {}
