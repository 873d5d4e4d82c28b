"""What one test runs in the sandbox: its source, its stdin and what proves it passed."""

from __future__ import annotations

import functools
import json
import secrets
from pathlib import Path
from typing import NamedTuple

from .spec import ProgramTest


class PreparedRun(NamedTuple):
    """The sandbox input of one test. ``sentinel`` (assert tests) is the last
    line of stdout only when the harness saw the assertion hold;
    ``helper_processes`` are the harness's own, not counted against the program."""

    source: str
    stdin: str
    sentinel: str | None = None
    helper_processes: int = 0


@functools.lru_cache(maxsize=1)
def harness_source() -> str:
    """The in-sandbox harness of assert tests (``_assert_harness.py``)."""
    return Path(__file__).with_name("_assert_harness.py").read_text(encoding="utf-8")


def prepare(test: ProgramTest, code: str) -> PreparedRun:
    """A stdin/stdout test runs the program as is; an assert test runs the
    harness, which gets the program, then the assertion and a fresh nonce, on
    stdin: two parts, each its length in decimal, a newline and ASCII JSON
    (the harness starts the program's process between reading the two)."""
    if test.assertion is None:
        return PreparedRun(code, test.stdin)
    nonce = f"code_exec-assertion-held-{secrets.token_hex(16)}"
    parts = (json.dumps({"program": code}), json.dumps({"assertion": test.assertion, "nonce": nonce}))
    return PreparedRun(harness_source(), "".join(f"{len(p)}\n{p}" for p in parts), nonce, helper_processes=1)
