"""What one test runs in the sandbox: its source, its stdin and what proves it passed."""

from __future__ import annotations

import functools
import json
import secrets
from pathlib import Path
from typing import Any, NamedTuple

from ._assert_harness import decode_plain, encode_plain
from .sandbox.warm import trust_python
from .spec import ProgramTest


class PreparedRun(NamedTuple):
    """The sandbox input of one test. ``sentinel`` (assert and call tests) is the
    last line of stdout only when the harness saw the assertion hold or the call
    return a plain value; ``helper_processes`` are the harness's own, not
    counted against the program."""

    source: str
    stdin: str
    sentinel: str | None = None
    helper_processes: int = 0


@functools.lru_cache(maxsize=1)
def harness_source() -> str:
    """The in-sandbox harness of assert and call tests (``_assert_harness.py``)."""
    return Path(__file__).with_name("_assert_harness.py").read_text(encoding="utf-8")


# Warm servers load the harness once (it is this package's own code, never a program under test).
trust_python(harness_source())


def prepare(test: ProgramTest, code: str) -> PreparedRun:
    """A stdin/stdout test runs the program as is; an assert or call test runs
    the harness, which gets the program, then the assertion (or the call) and
    a fresh nonce, on stdin: two parts, each its length in decimal, a newline
    and ASCII JSON (the harness starts the program's process between reading
    the two). A call test's program runs as module ``solution`` after the
    evaluators' prelude of imports, as APPS and LiveCodeBench run it."""
    if test.assertion is None and test.call is None:
        return PreparedRun(code, test.stdin)
    nonce = f"code_exec-assertion-held-{secrets.token_hex(16)}"
    if test.call is not None:
        start = {"program": code, "module": "solution", "prelude": True}
        judged: dict[str, Any] = {"call": {"fn_name": test.call.fn_name, "args": encode_plain(test.call.args)}}
    else:
        start, judged = {"program": code}, {"assertion": test.assertion}
    parts = (json.dumps(start), json.dumps({**judged, "nonce": nonce}))
    return PreparedRun(harness_source(), "".join(f"{len(p)}\n{p}" for p in parts), nonce, helper_processes=1)


def call_answer(stdout: str, sentinel: str) -> tuple[bool, Any]:
    """``(True, value)`` when the harness wrote a call's value and then
    ``sentinel`` as the last two lines of ``stdout``; else ``(False, None)``."""
    tail = f"\n{sentinel}\n"
    if not stdout.endswith(tail):
        return False, None
    body = stdout[: -len(tail)]
    try:
        return True, decode_plain(json.loads(body[body.rfind("\n") + 1 :]))
    except (ValueError, TypeError, KeyError, IndexError, RecursionError):
        return False, None
