"""Judge one test: run the program in the sandbox, then compare its answer or ask the problem's checker."""

from __future__ import annotations

import json
from typing import Any, NamedTuple

from . import checker as checkers
from .outcome import PASS, Compare, Verdict, run_failure, status_of
from .runs import call_answer, prepare
from .sandbox import Limits, Sandbox
from .spec import Checker, ProgramTest


class Judge(NamedTuple):
    """Everything a test's judging needs besides the test: the program and where and how it runs."""

    code: str
    sandbox: Sandbox
    limits: Limits
    checker: Checker | None = None
    checker_timeout_s: float = 10.0
    compare: Compare = "tokens"

    def __call__(self, test: ProgramTest) -> Verdict:
        """The test's verdict; a checker's failure raises :class:`~.checker.CheckerError`."""
        run = prepare(test, self.code)
        result = self.sandbox.run(run.source, run.stdin, self.limits, helper_processes=run.helper_processes)
        if self.checker is None or test.assertion is not None:
            status = status_of(result, test, self.limits, run.sentinel, self.compare)
            return PASS if status == "pass" else Verdict(status)
        failure = run_failure(result, test, self.limits, run.sentinel)
        if failure is not None:
            return Verdict(failure)
        files = _checker_files(test, result.stdout, run.sentinel)
        if files is None:
            return Verdict("fail")  # a call whose value JSON cannot carry
        limits = checkers.checker_limits(self.limits, self.checker_timeout_s, files)
        return _scored(checkers.check(self.checker, self.checker_sandbox, limits, files))

    def prepare(self, seconds_left: float, startup_s: float) -> None:
        """Compile a C++ checker now (once per process), in the time the tests
        leave: its compile counts against the sample's budget, before any test."""
        if self.checker is None or self.checker.language != "cpp":
            return
        spare = seconds_left - self.worst_case_s(startup_s) - startup_s
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
        return program + (self.checker_timeout_s + startup_s if self.checker is not None else 0.0)


def _scored(score: float) -> Verdict:
    if score >= 1.0:
        return PASS
    return Verdict("partial", score) if score > 0.0 else Verdict("fail")


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
