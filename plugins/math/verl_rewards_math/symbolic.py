"""Symbolic equality checks with a deadline that always holds.

SymPy can run for minutes (or forever) on adversarial input, in C code that
holds the GIL, and neither a thread nor ``signal.alarm`` (main thread only,
blind to C code) can stop it inside a reward worker. So the checks run in
child processes of :class:`verl_rewards.child.JsonLineWorker` (the handler is
``_symbolic_worker.Checks``), started on first use and reused. A request
gets ``timeout_s`` seconds once a child has it; a child's start (importing
SymPy and math-verify, ~1-2 s) is not counted, so the same answer gets the
same verdict whether or not a child had to (re)start first. An answer's
checks share a :class:`Budget`: seconds of the child's CPU time, which a
loaded machine does not shrink (a 2 s wall-clock deadline cut a 0.7 s
math-verify check on a machine with 7x more work than cores: a verdict that
depended on the load), within a wall-clock bound ``WALL_PER_CPU`` times as
long. Past either, or past the reward call's own time
(:func:`verl_rewards.time_left`), a request is "undecided" and its child is killed; a replacement starts in
the background; a child that cannot start in time fails the sample
(``ChildError``), never the answer. Inputs are also kept short (``latex_expr.MAX_CHARS``) so
that most checks end in milliseconds.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import time
from collections.abc import Callable, Iterator
from contextvars import ContextVar
from typing import Any, TypeVar

from verl_rewards.child import JsonLineWorker

from ._symbolic_worker import MEMORY_BYTES
from .latex_expr import FUNCTIONS

# A child that has not started (imported SymPy) by then is killed and replaced.
STARTUP_TIMEOUT_S = 60.0

_worker = JsonLineWorker(
    "verl_rewards_math._symbolic_worker:Checks", init=sorted(set(FUNCTIONS.values())),
    name="verl-rewards-math's symbolic child", startup_timeout_s=STARTUP_TIMEOUT_S, memory_bytes=MEMORY_BYTES,
    spares=1,  # a child killed for a late answer is replaced at once: the next answer waits for no start
)
T = TypeVar("T")
# An answer's wall-clock bound, per second of its CPU budget: room for a machine with
# this many times more work than cores (a hostile answer on an idle one still ends
# after its CPU budget).
WALL_PER_CPU = 5.0


class Budget:
    """The time one answer's checks share: ``cpu_s`` seconds of the child's CPU time, within
    ``cpu_s * WALL_PER_CPU`` seconds of wall-clock time from now."""

    def __init__(self, cpu_s: float) -> None:
        self.left = cpu_s
        self.wall_by = time.monotonic() + cpu_s * WALL_PER_CPU
        self._used: float | None = None

    def spent(self) -> bool:
        """Whether nothing is left of it."""
        return self.left <= 0 or time.monotonic() >= self.wall_by

    def run(self, check: Callable[[float], T]) -> T:
        """``check(seconds left)``, charged the CPU time of its requests to the child (:func:`ask`
        in the block asks within this budget), or its wall-clock time when it asked none."""
        token = _budget.set(self)
        self._used = None
        began = time.monotonic()
        try:
            return check(self.left)
        finally:
            _budget.reset(token)
            self.left -= time.monotonic() - began if self._used is None else self._used


_budget: ContextVar[Budget | None] = ContextVar("verl_rewards_math_budget", default=None)
# Why checks of the answer in progress were cut short (see :func:`recording_cuts`).
_cuts: ContextVar[list[str] | None] = ContextVar("verl_rewards_math_cuts", default=None)


@contextlib.contextmanager
def recording_cuts() -> Iterator[list[str]]:
    """Within the block, the yielded list collects why a check got no verdict from its
    child (late, or the child died), so an undecided answer can say so."""
    cuts: list[str] = []
    token = _cuts.set(cuts)
    try:
        yield cuts
    finally:
        _cuts.reset(token)


def ensure_started() -> bool:
    """Have a symbolic child ready (waiting at most ``STARTUP_TIMEOUT_S``); whether one is."""
    return _worker.start()


def close() -> None:
    """Stop the symbolic children (the next check starts one)."""
    _worker.close()


def ask(payload: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
    """The symbolic child's answer to ``payload`` within ``timeout_s`` seconds of its CPU time
    (and of wall-clock time; inside :meth:`Budget.run`, within that budget's wall-clock
    bound instead, and charged to it); None when it has none in time (recorded).
    ``ChildError`` when no child could start in time (not the answer's fault)."""
    budget = _budget.get()
    wall_s = timeout_s if budget is None else budget.wall_by - time.monotonic()
    cuts = _cuts.get()
    if min(wall_s, timeout_s) <= 0:
        if cuts is not None:
            cuts.append("late")
        return None
    evaluation, used = _worker.evaluate_on_cpu(payload, timeout_s, wall_s)
    if budget is not None:
        budget._used = (budget._used or 0.0) + used
    if evaluation.cut is not None and cuts is not None:
        cuts.append(evaluation.cut.reason)
    answer: dict[str, Any] | None = evaluation.reply
    return answer


def sympy_equal(a: str, b: str, timeout_s: float) -> bool | None:
    """Whether two SymPy expression strings are equal; None when undecided in time."""
    answer = ask({"op": "sympy", "a": a, "b": b}, timeout_s)
    return None if answer is None else answer.get("equal")


@functools.cache
def math_verify_installed() -> bool:
    """Whether the optional ``math-verify`` package can be imported (without importing it)."""
    return importlib.util.find_spec("math_verify") is not None


def math_verify_equal(pairs: list[tuple[str, str]], timeout_s: float) -> bool | None:
    """Whether math-verify finds any ``(gold, pred)`` pair of LaTeX answers equal; None when undecided in time."""
    boxed = [[f"\\boxed{{{gold}}}", f"\\boxed{{{pred}}}"] for gold, pred in pairs]
    answer = ask({"op": "math_verify", "pairs": boxed}, timeout_s)
    return None if answer is None else answer.get("equal")
