"""Special judges: a problem's own checker decides each test, in the sandbox.

The protocol is testlib's: ``checker input.txt output.txt answer.txt`` (the
test's input, the program's output, the expected answer), run in a fresh
sandbox under limits of its own. The verdict is its exit status:

* 0: accepted, with score 1, or the number it printed on stdout (CMS
  checkers print ``1``/``0``; any number in [0, 1] is a partial score);
* 1 or 2 (testlib's wrong answer and presentation error): score 0;
* 7 (testlib's ``quitp``): the score printed on stdout, or testlib's
  ``points X`` on stderr, in [0, 1].

Anything else (testlib's 3 "checker failed", a crash, a signal, a timeout,
stdout that is not one number, a score outside [0, 1]) is the checker's
failure: :class:`CheckerError`, which fails the sample (never a 0 for the
program).
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import signal
import threading
from dataclasses import replace
from pathlib import Path
from typing import Any

from .compare import is_decimal
from .sandbox import Limits, RunResult, Sandbox
from .spec import Checker

MIB = 1024 * 1024
# testlib's exit codes (and CMS's: 0 with the score on stdout)
_ACCEPTED, _WRONG, _PRESENTATION, _POINTS = 0, 1, 2, 7
_COMPILE_LIMITS = Limits(timeout_s=30.0, memory_mb=2048, max_processes=8, disk_mb=128)
_compile_lock = threading.Lock()


class CheckerError(RuntimeError):
    """The problem's checker failed (it crashed, timed out, or said something
    that is not a verdict): the sample fails; the program is not judged."""


@functools.lru_cache(maxsize=1)
def runner_source() -> str:
    """The in-sandbox checker runner (``_checker_runner.py``)."""
    return Path(__file__).with_name("_checker_runner.py").read_text(encoding="utf-8")


def checker_limits(limits: Limits, timeout_s: float, files: dict[str, str]) -> Limits:
    """The checker's own limits: ``timeout_s``, and room for its three files on
    its disk and under its file size limit."""
    largest = max(len(text.encode("utf-8")) for text in files.values())
    total_mb = sum(len(text.encode("utf-8")) for text in files.values()) // MIB + 1
    return replace(
        limits,
        timeout_s=timeout_s,
        max_output_bytes=max(limits.max_output_bytes, largest + 1),
        disk_mb=max(limits.disk_mb, 2 * total_mb),
    )


def check(checker: Checker, sandbox: Sandbox, limits: Limits, files: dict[str, str]) -> float:
    """The checker's score in [0, 1] for one test (``files``: ``input.txt``,
    ``output.txt``, ``answer.txt``); raises :class:`CheckerError`."""
    request: dict[str, Any] = {"files": files}
    if checker.language == "cpp":
        request["executable"] = compiled(checker.source, sandbox)
    else:
        request["python"] = checker.source
    result = sandbox.run(runner_source(), json.dumps(request), limits)
    return verdict(result, checker.language)


def verdict(result: RunResult, language: str = "python") -> float:
    """The score a checker's run gives (see the module's protocol), or :class:`CheckerError`."""
    who = f"the problem's checker ({language})"
    if result.setup_error is not None:
        raise CheckerError(f"{who} could not run: {result.setup_error}")
    if result.timed_out or result.signal is not None:
        out_of_cpu = result.signal == signal.SIGXCPU  # its CPU-time limit, the same budget as the clock's
        what = "timed out" if result.timed_out or out_of_cpu else f"was killed by signal {result.signal}"
        raise CheckerError(f"{who} {what}{_stderr_tail(result)}")
    if result.output_limit_hit:
        raise CheckerError(f"{who} wrote more than its output limit")
    code = result.exit_code
    if code in (_WRONG, _PRESENTATION):
        return 0.0
    if code == _ACCEPTED:
        return 1.0 if not result.stdout.strip() else _score(result.stdout, who)
    if code == _POINTS:
        if result.stdout.strip():
            return _score(result.stdout, who)
        points = _testlib_points(result.stderr)
        if points is None:
            raise CheckerError(f"{who} exited 7 (partial score) without a score on stdout or 'points X' on stderr")
        return _score(points, who)
    raise CheckerError(f"{who} failed: exit status {code}{_stderr_tail(result)}")


def _score(text: str, who: str) -> float:
    """The one number ``text`` holds, in [0, 1]; read in linear time."""
    tokens = text.split(None, 1)
    token = tokens[0] if tokens else ""
    if len(tokens) != 1 or not is_decimal(token):
        raise CheckerError(f"{who} printed {_excerpt(text)} on stdout: expected nothing or one score in [0, 1]")
    score = float(token)
    if not (math.isfinite(score) and 0.0 <= score <= 1.0):
        raise CheckerError(f"{who} gave the score {token}, outside [0, 1]")
    return score


def _testlib_points(stderr: str) -> str | None:
    """The score of testlib's ``quitp``: its message starts ``points X``."""
    words = stderr.split(None, 2)
    return words[1] if len(words) >= 2 and words[0] == "points" else None


def _stderr_tail(result: RunResult) -> str:
    tail = result.stderr.strip()[-500:]
    return f": {tail}" if tail else ""


def _excerpt(text: str) -> str:
    return repr(text[:80] + ("..." if len(text) > 80 else ""))


def compiled(source: str, sandbox: Sandbox, timeout_s: float | None = None) -> str:
    """A C++ checker compiled in the sandbox (base64), once per process, source
    and sandbox; within ``timeout_s`` (at most 30 s)."""
    key = (hashlib.sha256(source.encode("utf-8")).hexdigest(), sandbox)
    with _compile_lock:
        cached = _COMPILED.get(key)
        if cached is None:
            limits = _COMPILE_LIMITS
            if timeout_s is not None and timeout_s < limits.timeout_s:
                limits = replace(limits, timeout_s=timeout_s)
            cached = _compile(source, sandbox, limits)
            if len(_COMPILED) >= _COMPILED_KEPT:
                del _COMPILED[next(iter(_COMPILED))]
            _COMPILED[key] = cached
    return cached


_COMPILED: dict[tuple[str, Sandbox], str] = {}
_COMPILED_KEPT = 64


def _compile(source: str, sandbox: Sandbox, limits: Limits) -> str:
    result = sandbox.run(runner_source(), json.dumps({"compile": source}), limits)
    if result.ok and result.stdout:
        return result.stdout
    why = "timed out" if result.timed_out else result.setup_error or f"exit status {result.exit_code}"
    raise CheckerError(f"the problem's checker (cpp) did not compile ({why}){_stderr_tail(result)}")
