"""Judge one test: run the program in the sandbox, then compare its answer or ask the problem's checker."""

from __future__ import annotations

import dataclasses
import json
import time
from typing import Any, NamedTuple, Protocol

from . import checker as checkers
from .explain import run_detail
from .outcome import PASS, Compare, Status, Verdict, run_failure, status_of
from .runs import call_answer, prepare
from .sandbox import Limits, RunResult, Sandbox
from .sandbox.launch import STARTUP_GRACE_S
from .spec import Checker, ProgramTest

# The least wall clock a test's program gets when the sample's budget cuts its limit.
MIN_RUN_S = 0.5


class Runs(Protocol):
    """Something that runs a program as :meth:`Sandbox.run` does (a sandbox, or its sessions)."""

    def run(
        self, source: str, stdin: str = "", limits: Limits | None = None, *, helper_processes: int = 0
    ) -> RunResult: ...


class Judge(NamedTuple):
    """Everything a test's judging needs besides the test: the program and where and how it runs.

    ``deadline`` (a ``time.monotonic()`` value): each run's wall-clock limit is
    cut so that it ends by then, the checker's time kept; ``explain``: give each
    test that did not pass its ``detail`` (why); ``runs``: where the program runs
    (the sample's :meth:`~.sandbox.Sandbox.sessions`, so that its tests share a
    sandbox), else ``sandbox`` (a fresh sandbox per test).
    """

    code: str
    sandbox: Sandbox
    limits: Limits
    checker: Checker | None = None
    checker_timeout_s: float = 10.0
    compare: Compare = "tokens"
    deadline: float | None = None
    explain: bool = True
    runs: Runs | None = None

    def __call__(self, test: ProgramTest) -> Verdict:
        """The test's verdict; a checker's failure raises :class:`~.checker.CheckerError`."""
        run = prepare(test, self.code)
        limits = self.run_limits()
        result = (self.runs or self.sandbox).run(run.source, run.stdin, limits, helper_processes=run.helper_processes)
        if self.checker is None or test.assertion is not None:
            status = status_of(result, test, limits, run.sentinel, self.compare)
            return PASS if status == "pass" else self._verdict(status, result, test, limits, run.sentinel)
        failure = run_failure(result, test, limits, run.sentinel)
        if failure is not None:
            return self._verdict(failure, result, test, limits, run.sentinel)
        files = _checker_files(test, result.stdout, run.sentinel)
        if files is None:
            return Verdict("fail", 0.0, "returned a value the checker cannot be given as JSON" if self.explain else None)
        checked = checkers.check(self.checker, self.checker_sandbox, checkers.checker_limits(
            self.limits, self.checker_timeout_s, files), files)
        return _scored(checked, self.explain)

    def _verdict(
        self, status: Status, result: RunResult, test: ProgramTest, limits: Limits, sentinel: str | None
    ) -> Verdict:
        if not self.explain:
            return Verdict(status)
        value = call_answer(result.stdout, sentinel) if test.call is not None and sentinel else (False, None)
        return Verdict(status, 0.0, run_detail(result, test, status, limits, value=value))

    def run_limits(self, now: float | None = None) -> Limits:
        """This test's limits: the program's wall clock cut to what is left before
        ``deadline`` (after its start-up, and the checker's run), never below ``MIN_RUN_S``."""
        if self.deadline is None:
            return self.limits
        now = time.monotonic() if now is None else now
        left = self.deadline - now - STARTUP_GRACE_S - self._checker_s(STARTUP_GRACE_S)
        if left >= self.limits.timeout_s:
            return self.limits
        return dataclasses.replace(self.limits, timeout_s=max(left, MIN_RUN_S))

    def prepare(self, seconds_left: float, startup_s: float) -> None:
        """Compile a C++ checker now (once per process), in the time the tests
        leave: its compile counts against the sample's budget, before any test."""
        if self.checker is None or self.checker.language != "cpp":
            return
        spare = seconds_left - self.min_start_s(startup_s) - startup_s
        if spare <= 0:
            raise ValueError(f"no time is left to compile the problem's C++ checker ({seconds_left:g} s left)")
        checkers.compiled(self.checker.source, self.checker_sandbox, spare)

    @property
    def checker_sandbox(self) -> Sandbox:
        """Where the checker runs: its runner is Python, whatever the program's language."""
        return self.sandbox.for_language("python")

    def worst_case_s(self, startup_s: float) -> float:
        """The longest one test may take: the program's run and the checker's, each with its start-up."""
        program = self.limits.timeout_s + startup_s
        return program + self._checker_s(startup_s)

    def min_start_s(self, startup_s: float) -> float:
        """The least time a test needs to start: ``MIN_RUN_S`` of the program's run (or
        its whole ``timeout_s`` when shorter) and the checker's, each with its start-up."""
        return min(self.limits.timeout_s, MIN_RUN_S) + startup_s + self._checker_s(startup_s)

    def _checker_s(self, startup_s: float) -> float:
        return self.checker_timeout_s + startup_s if self.checker is not None else 0.0


def _scored(score: float, explain: bool) -> Verdict:
    if score >= 1.0:
        return PASS
    detail = f"the problem's checker gave {score:g}" if explain else None
    return Verdict("partial", score, detail) if score > 0.0 else Verdict("fail", 0.0, detail)


def _checker_files(test: ProgramTest, stdout: str, sentinel: str | None) -> dict[str, str] | None:
    """``input.txt``, ``output.txt`` and ``answer.txt`` for the checker: the
    test's stdin, the program's stdout and the expected output; for a call
    test the arguments (a JSON array), the value returned and the expected
    value, as JSON."""
    if test.call is None:
        return {"input.txt": test.stdin, "output.txt": stdout, "answer.txt": test.expected or ""}
    found, value = call_answer(stdout, sentinel or "")
    output = _as_json(value) if found else None
    if output is None:
        return None
    return {
        "input.txt": _as_json(test.call.args) or "null",
        "output.txt": output,
        "answer.txt": _as_json(test.call.expected) or "null",
    }


def _as_json(value: Any) -> str | None:
    """JSON for a plain value (tuples and sets as arrays), None when JSON cannot hold it."""

    def arrays(obj: Any) -> Any:
        if isinstance(obj, (set, frozenset)):
            try:
                return sorted(obj)
            except TypeError:
                return list(obj)
        raise TypeError(f"{type(obj).__name__} is not JSON")

    try:
        return json.dumps(value, default=arrays)
    except (TypeError, ValueError):
        return None
