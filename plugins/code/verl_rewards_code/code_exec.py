"""The ``code_exec`` reward: the fraction of a problem's tests a response's program passes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .outcome import Status, status_of
from .program import program_for
from .runs import prepare
from .sandbox import Limits, Mode, Sandbox, languages
from .spec import ProgramTest, parse_tests

_ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
_SUB = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
_TWO_TESTS = json.dumps({"inputs": ["1 2\n", "3 0\n"], "outputs": ["3\n", "3\n"]})


@reward(
    description=(
        "Run the response's last fenced code block against APPS/TACO-style tests "
        "(stdin/stdout pairs and assert lines) in a sandbox; score the fraction passed. "
        "Languages on this machine: "
        + "; ".join(f"{name} ({how})" for name, how in languages.available().items())
    ),
    data_sources=("codecontests", "apps", "codeforces", "taco"),
    timeout_s=60.0,
    tags=("code", "sandbox"),
    kind="code",
    examples=[
        Example(solution_str=_ADD, ground_truth=_TWO_TESTS, expected=1.0),
        Example(solution_str=_SUB, ground_truth=_TWO_TESTS, expected=0.5),
        Example(
            solution_str="def add(a, b):\n    return a + b\n",
            ground_truth=json.dumps({"asserts": ["assert add(1, 2) == 3", "assert add(2, 2) == 5"]}),
            expected=0.5,
        ),
        Example(solution_str=_SUB, ground_truth=_TWO_TESTS, expected=0.0, kwargs={"all_or_nothing": True}),
        Example(
            solution_str="```python\nwhile True:\n    pass\n```",
            ground_truth=_TWO_TESTS,
            expected=0.0,
            kwargs={"timeout_s": 0.5, "stop_on_first_failure": True},
        ),
    ],
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: str | Mapping[str, Any],
    extra_info: Mapping[str, Any] | None = None,
    *,
    timeout_s: float = 5.0,
    memory_mb: int = 1024,
    max_output_bytes: int = 4 * 1024 * 1024,
    max_processes: int = 4,
    disk_mb: int = 64,
    isolation: Mode = "auto",
    python: str | None = None,
    stop_on_first_failure: bool = False,
    all_or_nothing: bool = False,
    language: str | None = None,
    compile_timeout_s: float = 60.0,
    compile_memory_mb: int = 2048,
) -> dict[str, Any]:
    """Score = tests passed / tests, each test one sandboxed run of the program.

    Limits apply to each run as a whole (see ``Limits``: ``memory_mb`` is
    shared by the run's processes and its ``disk_mb`` working directory). ``stop_on_first_failure`` skips the
    remaining tests after a failure; ``all_or_nothing`` scores 1.0 only when
    every test passes. ``language`` (else the code block's fence tag) chooses
    the language; a compiled one compiles once, within ``compile_timeout_s``
    and ``compile_memory_mb``. Extra info: ``tests_passed``, ``tests_total``,
    ``test_statuses`` (comma-separated, in test order), ``isolation``,
    ``language`` and, when the program did not compile, ``compile_error``.
    """
    limits = Limits(
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        max_output_bytes=max_output_bytes,
        max_processes=max_processes,
        disk_mb=disk_mb,
    )
    code, lang, sandbox = program_for(
        solution_str, ground_truth, language=language, isolation=isolation, python=python,
        compile_timeout_s=compile_timeout_s, compile_memory_mb=compile_memory_mb,
    )
    tests = parse_tests(ground_truth)
    compile_error = sandbox.compile(code)
    if compile_error is None:
        statuses = run_tests(code, tests, limits, sandbox, stop_on_first_failure)
    else:
        statuses = ["compile_error"] * len(tests)
    passed = statuses.count("pass")
    score = passed / len(tests)
    if all_or_nothing:
        score = float(passed == len(tests))
    return {
        "score": score,
        "tests_passed": passed,
        "tests_total": len(tests),
        "test_statuses": ",".join(statuses),
        "isolation": sandbox.isolation.level,
        "language": lang,
        **({"compile_error": compile_error} if compile_error is not None else {}),
    }


def run_tests(
    code: str,
    tests: list[ProgramTest],
    limits: Limits,
    sandbox: Sandbox,
    stop_on_first_failure: bool = False,
) -> list[Status]:
    """The status of each test, in order, running ``code`` once per test in ``sandbox``."""
    statuses: list[Status] = []
    for test in tests:
        if stop_on_first_failure and statuses and statuses[-1] != "pass":
            statuses.append("skipped")
            continue
        run = prepare(test, code)
        result = sandbox.run(run.source, run.stdin, limits, helper_processes=run.helper_processes)
        statuses.append(status_of(result, test, limits, run.sentinel))
    return statuses
