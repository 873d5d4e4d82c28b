"""SymPy steps with a deadline that holds: run in a child process, killed when late.

verl runs prime_math's SymPy comparison in a forked process per call (10 s
timeout) and mathruler's (geometry3k) in the reward's own process with no
timeout; SymPy can run for minutes in C code that no signal interrupts. Here
both run in one reused child (``_sympy_worker.py``) behind verl-rewards-math's
``SymbolicWorker``: started on first use (its start, importing SymPy, is not
charged to any answer), one request at a time, killed and restarted when an
answer is late. A late, failed or refused step is "not equal", as in verl.
"""

from __future__ import annotations

import atexit
import json
import re
import sys

from verl_rewards_math.symbolic import SymbolicWorker

TIMEOUT_S = 10.0
# Canonical integers: SymPy's verdict on their difference is their equality.
_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,99}")
# A matrix of numbers only (no names: parse_expr evaluates what it reads).
_NUMERIC_MATRIX = re.compile(r"Matrix\(\s*\[[0-9\s.,+\-*/()\[\]]*\]\s*\)")
_BOOT = (
    "import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
    "from verl_rewards_verl._sympy_worker import main; sys.exit(main())"
)


def _command() -> list[str]:
    return [sys.executable, "-c", _BOOT, json.dumps(sys.path)]


_worker = SymbolicWorker(command=_command)
atexit.register(_worker.close)


def difference_is_zero(a: str, b: str, timeout_s: float) -> bool:
    """Whether SymPy simplifies ``(a)-(b)`` to 0 within ``timeout_s`` (verl's ``are_equal_under_sympy`` step)."""
    if _INTEGER.fullmatch(a) and _INTEGER.fullmatch(b):
        return a == b
    reply = _worker.request({"op": "difference", "a": a, "b": b}, timeout_s)
    return bool(reply is not None and reply.get("equal") is True)


def matrix_entries(text: str, timeout_s: float) -> list[str]:
    """The entries of ``Matrix(...)`` written with numbers only, as SymPy prints them.

    Raises ``ValueError`` for anything else, and when SymPy fails or is late
    (verl's caller catches the error and moves on).
    """
    if not _NUMERIC_MATRIX.fullmatch(text):
        raise ValueError("not a matrix of numbers: not parsed")
    reply = _worker.request({"op": "matrix", "text": text}, timeout_s)
    if reply is None or not isinstance(reply.get("entries"), list):
        raise ValueError(f"matrix not parsed: {'timed out' if reply is None else reply.get('error')}")
    return [str(entry) for entry in reply["entries"]]


def ensure_started() -> bool:
    """Start the child now (benchmarks: keep its start out of the timings); whether it is ready."""
    started: bool = _worker.start()
    return started
