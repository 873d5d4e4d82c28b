"""The ``code_exec`` reward: the fraction of a problem's tests a response's program passes."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from .extract import extract_code
from .outcome import Compare, Status, status_of
from .runs import prepare
from .sandbox import Limits, Mode, Sandbox
from .spec import ProgramTest, parse_tests

_ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
_SUB = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
_TWO_TESTS = json.dumps({"inputs": ["1 2\n", "3 0\n"], "outputs": ["3\n", "3\n"]})


@reward(
    description=(
        "Run the response's last fenced code block against APPS/TACO-style tests "
        "(stdin/stdout pairs and assert lines) in a sandbox; score the fraction passed."
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
    compare: Compare = "tokens",
) -> dict[str, Any]:
    """Score = tests passed / tests, each test one sandboxed run of the program.

    Limits apply to each run as a whole (see ``Limits``: ``memory_mb`` is
    shared by the run's processes and its ``disk_mb`` working directory). ``stop_on_first_failure`` skips the
    remaining tests after a failure; ``all_or_nothing`` scores 1.0 only when
    every test passes. ``compare`` is the stdin/stdout rule: ``tokens`` (ours) or
    ``prime_code`` (verl's). Extra info: ``tests_passed``, ``tests_total``,
    ``test_statuses`` (comma-separated, in test order) and ``isolation``.
    """
    limits = Limits(
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        max_output_bytes=max_output_bytes,
        max_processes=max_processes,
        disk_mb=disk_mb,
    )
    tests = parse_tests(ground_truth)
    code = extract_code(solution_str)
    sandbox = Sandbox.resolve(isolation, python)
    if compare not in ("tokens", "prime_code"):
        raise ValueError(f"compare must be 'tokens' or 'prime_code', not {compare!r}")
    statuses = run_tests(code, tests, limits, sandbox, stop_on_first_failure, compare)
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
    }


def run_tests(
    code: str,
    tests: list[ProgramTest],
    limits: Limits,
    sandbox: Sandbox,
    stop_on_first_failure: bool = False,
    compare: Compare = "tokens",
) -> list[Status]:
    """The status of each test, in order, running ``code`` once per test in ``sandbox``."""
    statuses: list[Status] = []
    for test in tests:
        if stop_on_first_failure and statuses and statuses[-1] != "pass":
            statuses.append("skipped")
            continue
        run = prepare(test, code)
        result = sandbox.run(run.source, run.stdin, limits, helper_processes=run.helper_processes)
        statuses.append(status_of(result, test, limits, run.sentinel, compare))
    return statuses
