"""SymPy steps (and pylatexenc on long text) with a deadline that holds: run in a child process,
killed when late.

verl runs prime_math's SymPy comparison in a forked process per call (10 s
timeout) and mathruler's (geometry3k) in the reward's own process with no
timeout; SymPy can run for minutes in C code that holds the GIL, which no
signal interrupts; prm800k reads an answer's LaTeX with pylatexenc, pure
Python at 10-25 us a character (a megabyte of backslashes: a minute). Here
these run in reused child processes
(:class:`verl_rewards.child.JsonLineWorker` running ``_sympy_worker.SympyOps``):
started on first use (a start, importing SymPy, is not charged to any answer),
killed when an answer is late, or when the reward call's own time
(:func:`verl_rewards.time_left`) runs out, and replaced in the background. A
late, failed or refused step is "not equal", as in verl (the reason is logged
at debug level, logger ``verl_rewards.child``: verl's scores carry no extra
keys to put it in); a child that
cannot start in time fails the sample (``ChildError``), not the answer.
"""

from __future__ import annotations

import re
from typing import Any

from verl_rewards.child import JsonLineWorker

from ._sympy_worker import MEMORY_BYTES

TIMEOUT_S = 10.0
# Canonical integers: SymPy's verdict on their difference is their equality.
_INTEGER = re.compile(r"0|-?[1-9][0-9]{0,99}")
# A matrix of numbers only (no names: parse_expr evaluates what it reads).
_NUMERIC_MATRIX = re.compile(r"Matrix\(\s*\[[0-9\s.,+\-*/()\[\]]*\]\s*\)")

_worker = JsonLineWorker("verl_rewards_verl._sympy_worker:SympyOps", name="verl_default's SymPy child",
                         memory_bytes=MEMORY_BYTES,
                         spares=1)  # a child killed for a late answer is replaced at once


def _ask(payload: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
    reply: dict[str, Any] | None = _worker.evaluate(payload, timeout_s).reply  # None: cut short (logged)
    return reply


def difference_is_zero(a: str, b: str, timeout_s: float) -> bool:
    """Whether SymPy simplifies ``(a)-(b)`` to 0 within ``timeout_s`` (verl's ``are_equal_under_sympy`` step)."""
    if _INTEGER.fullmatch(a) and _INTEGER.fullmatch(b):
        return a == b
    reply = _ask({"op": "difference", "a": a, "b": b}, timeout_s)
    return bool(reply is not None and reply.get("equal") is True)


def matrix_entries(text: str, timeout_s: float) -> list[str]:
    """The entries of ``Matrix(...)`` written with numbers only, as SymPy prints them.

    Raises ``ValueError`` for anything else, and when SymPy fails or is late
    (verl's caller catches the error and moves on).
    """
    if not _NUMERIC_MATRIX.fullmatch(text):
        raise ValueError("not a matrix of numbers: not parsed")
    reply = _ask({"op": "matrix", "text": text}, timeout_s)
    if reply is None or not isinstance(reply.get("entries"), list):
        raise ValueError(f"matrix not parsed: {'timed out' if reply is None else reply.get('error')}")
    return [str(entry) for entry in reply["entries"]]


def latex_to_text(text: str, timeout_s: float) -> str | None:
    """pylatexenc's plain text of ``text`` (prm800k's ``_parse_latex`` step); None when it was
    cut short. Raises ``ValueError`` when pylatexenc raised (verl's caller keeps the LaTeX)."""
    reply = _ask({"op": "latex_to_text", "text": text}, timeout_s)
    if reply is None:
        return None
    if not isinstance(reply.get("text"), str):
        raise ValueError(f"LaTeX not read: {reply.get('error')}")
    return str(reply["text"])


def ensure_started() -> bool:
    """Have a child ready now (benchmarks: keep its start out of the timings); whether one is."""
    return _worker.start()
