"""The ``code_exec`` reward: the fraction of a problem's tests a response's program passes."""

from __future__ import annotations

import dataclasses
import json
import math
import os
import time
from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from verl_rewards.limits import DECLARED, time_left
from verl_rewards.metadata import Example, RewardMeta, metadata_of, reward

from .explain import EXPLAIN, Explain, explain_sample
from .judge import Judge
from .outcome import Compare, Status, Verdict
from .program import program_for
from .sandbox import Limits, Mode, Sandbox, languages
from .sandbox.launch import STARTUP_GRACE_S
from .schedule import run_in_order
from .spec import ProgramTest, parse_problem

# The `language` kwarg's values: a language's name or fence tag (``languages.TAGS``), so a
# misspelt one is refused when the config is read, before any sample runs.
Language = Literal["python", "py", "python3", "py3", "c", "cpp", "c++", "java", "javascript", "js", "rust", "rs"]

_ADD = "```python\na, b = map(int, input().split())\nprint(a + b)\n```"
_SUB = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
_TWO_TESTS = json.dumps({"inputs": ["1 2\n", "3 0\n"], "outputs": ["3\n", "3\n"]})


@reward(
    description=(
        "Run the response's last fenced code block against APPS/TACO/LiveCodeBench-style tests "
        "(stdin/stdout pairs, function calls, assert lines; a special judge) in a sandbox; score the "
        "fraction passed. Languages on this machine: "
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
    checker_timeout_s: float = 10.0,
    time_budget_s: float | None = None,
    parallel_tests: int | None = None,
    compare: Compare = "tokens",
    language: Language | None = None,
    compile_timeout_s: float = 30.0,
    compile_memory_mb: int = 2048,
    explain: Explain = "first",
) -> dict[str, Any]:
    """Score = tests passed / tests, each test one sandboxed run of the program.

    Limits apply to each run as a whole (see ``Limits``: ``memory_mb`` is
    shared by the run's processes and its ``disk_mb`` working directory). ``stop_on_first_failure`` skips the
    remaining tests after a failure; ``all_or_nothing`` scores 1.0 only when
    every test passes (and stops at the first failure too). A problem's
    checker runs under ``checker_timeout_s``. The tests of a sample run within
    ``time_budget_s`` (default: the time the scored call has left, as
    ``verl_rewards.time_left()`` says, less a reserve; called directly, the
    reward's declared timeout less ``RESERVE_S``; never more than the call has
    left), a compiled program's compile included; a test's wall clock is cut to
    what the budget has left, and the tests left when it is spent are
    ``timeout``. Up to ``parallel_tests`` tests run at once (default: from the
    cores, see :func:`default_parallel_tests`).
    ``compare`` chooses how answers are compared: ``tokens`` (code_exec's rules) or
    ``prime_code`` (verl's prime_code's, for stdin/stdout and call-based tests).
    ``language`` (else the code block's fence tag) chooses the language; a
    compiled one compiles once, within ``compile_timeout_s`` (and what the
    budget leaves) and ``compile_memory_mb``. Extra info: ``tests_passed``,
    ``tests_total``, ``test_statuses`` (comma-separated, in test order),
    ``isolation``, ``language``, when the program did not compile (or is in a
    language the sandbox does not run) ``compile_error``, and, when a test did
    not pass, ``explanation``: why, for the ``first`` such test (``explain``:
    ``all`` of them, or ``none``).
    """
    started = time.monotonic()
    left = time_left()
    limits = Limits(
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        max_output_bytes=max_output_bytes,
        max_processes=max_processes,
        disk_mb=disk_mb,
    )
    if compare not in ("tokens", "prime_code"):
        raise ValueError(f"compare must be 'tokens' or 'prime_code', not {compare!r}")
    if explain not in EXPLAIN:
        raise ValueError(f"explain must be one of {', '.join(map(repr, EXPLAIN))}, not {explain!r}")
    program = program_for(
        solution_str, ground_truth, language=language, isolation=isolation, python=python,
        compile_timeout_s=compile_timeout_s, compile_memory_mb=compile_memory_mb,
    )
    problem = parse_problem(ground_truth)
    judge = Judge(program.code, program.sandbox, limits, problem.checker, checker_timeout_s, compare,
                  explain=explain != "none")
    deadline = started + _budget_s(time_budget_s, judge, left)
    judge = judge._replace(deadline=deadline if math.isfinite(deadline) else None)
    compile_error = program.unrunnable or _compile(judge, deadline)
    if compile_error is None:
        judge.prepare(deadline - time.monotonic(), STARTUP_GRACE_S)
        # The tests run the same program: each thread runs its share in one sandbox.
        with program.sandbox.sessions() as sessions:
            verdicts = judge_tests(
                judge._replace(runs=sessions),
                problem.tests,
                stop_on_first_failure=stop_on_first_failure or all_or_nothing,
                deadline=deadline,
                parallel_tests=_parallel(parallel_tests),
            )
    else:
        verdicts = [Verdict("compile_error")] * len(problem.tests)
    statuses = [v.status for v in verdicts]
    passed = statuses.count("pass")
    score = sum(v.score for v in verdicts) / len(verdicts)
    if all_or_nothing:
        score = float(passed == len(verdicts))
    explanation = explain_sample(verdicts, explain, compile_error)
    return {
        "score": score,
        "tests_passed": passed,
        "tests_total": len(verdicts),
        "test_statuses": ",".join(statuses),
        "isolation": program.sandbox.isolation.level,
        "language": program.language,
        **({"compile_error": compile_error} if compile_error is not None else {}),
        **languages.extra_info(program.language, program.code),
        **({"explanation": explanation} if explanation is not None else {}),
    }


# Time kept back from the declared timeout: scoring, and a last run's teardown.
RESERVE_S = 5.0
# Kept back from a shorter effective timeout: this share of it, at least MIN_RESERVE_S.
RESERVE_SHARE, MIN_RESERVE_S = 0.2, 0.5


def reserve_s(left_s: float) -> float:
    """What a sample keeps back for scoring and a last run's teardown when its call has
    ``left_s`` seconds: ``RESERVE_S`` of a long call, a fifth of a short one (0.6 s of 3 s)."""
    return min(RESERVE_S, max(MIN_RESERVE_S, RESERVE_SHARE * left_s))


class _Declared(NamedTuple):
    meta: RewardMeta


def declared_budget_s() -> float | None:
    """The time a sample's tests may take by default: the timeout ``code_exec``
    declares (read by the core's rule), less ``RESERVE_S``; None: no limit."""
    timeout = DECLARED.for_reward(_Declared(metadata_of(compute_score))).timeout_s
    return None if timeout is None else timeout - RESERVE_S


def _compile(judge: Judge, deadline: float) -> str | None:
    """Compile the program (cached per worker) within what the budget leaves once the
    least time a test needs is kept back; None when it compiled or needs no compiling."""
    sandbox = judge.sandbox
    if sandbox.language not in languages.COMPILED:
        return None
    spare = deadline - time.monotonic() - judge.min_start_s(STARTUP_GRACE_S)
    if spare <= 0:
        raise ValueError(f"no time is left to compile the {sandbox.language} program within the sample's budget")
    limits = dataclasses.replace(sandbox.compile_limits, timeout_s=min(sandbox.compile_limits.timeout_s, spare))
    return sandbox.for_language(sandbox.language, limits).compile(judge.code)


def _budget_s(time_budget_s: float | None, judge: Judge, left: float | None) -> float:
    """The sample's time budget: ``time_budget_s`` (which must hold one test's worst
    case), else the declared one when the call's time left is unknown; never more
    than the time ``left`` less :func:`reserve_s`."""
    if time_budget_s is not None:
        worst = judge.worst_case_s(STARTUP_GRACE_S)
        if not worst <= time_budget_s:
            raise ValueError(
                f"one test may take {worst:g} s (timeout_s={judge.limits.timeout_s:g} plus {STARTUP_GRACE_S:g} s "
                f"of start-up{', plus the checker' if judge.checker is not None else ''}), more than the sample's "
                f"time budget of {time_budget_s:g} s: lower timeout_s, or raise time_budget_s (and reward.timeout_s "
                f"above it)"
            )
        budget: float | None = time_budget_s
    else:
        budget = declared_budget_s() if left is None else None
    if left is not None:
        within = left - reserve_s(left)
        budget = within if budget is None else min(budget, within)
    return math.inf if budget is None else budget


def _parallel(parallel_tests: int | None) -> int:
    if parallel_tests is None:
        return default_parallel_tests()
    if parallel_tests < 1:
        raise ValueError(f"parallel_tests must be at least 1, not {parallel_tests!r}")
    return parallel_tests


def default_parallel_tests() -> int:
    """Tests run at once in one sample: a quarter of this process's cores, 1 to 4
    (a scorer's other workers need the rest)."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    return max(1, min(4, cores // 4))


def judge_tests(
    judge: Judge,
    tests: list[ProgramTest],
    *,
    stop_on_first_failure: bool = False,
    deadline: float | None = None,
    parallel_tests: int = 1,
) -> list[Verdict]:
    """The verdict of each test, in order (see :mod:`.schedule` for which run)."""
    return run_in_order(
        len(tests),
        lambda index: judge(tests[index]),
        workers=parallel_tests,
        stop_at_failure=stop_on_first_failure,
        deadline=deadline,
        worst_case_s=judge.min_start_s(STARTUP_GRACE_S),
    )


def run_tests(
    code: str,
    tests: list[ProgramTest],
    limits: Limits,
    sandbox: Sandbox,
    stop_on_first_failure: bool = False,
) -> list[Status]:
    """The status of each test, in order, running ``code`` once per test in ``sandbox``."""
    verdicts = judge_tests(Judge(code, sandbox, limits), tests, stop_on_first_failure=stop_on_first_failure)
    return [v.status for v in verdicts]
