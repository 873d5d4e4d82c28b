"""Many tests per sample: stopping at the first failure, the sample's time budget, parallel tests."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from verl_rewards_code.code_exec import RESERVE_S, compute_score, declared_budget_s, default_parallel_tests
from verl_rewards_code.outcome import PASS, Verdict
from verl_rewards_code.schedule import OUT_OF_TIME, SKIPPED, run_in_order

from verl_rewards import Scorer

FAIL = Verdict("fail")


def judge_from(statuses: str) -> Any:
    verdicts = [PASS if s == "p" else FAIL for s in statuses]
    judged: list[int] = []

    def judge(index: int) -> Verdict:
        judged.append(index)
        return verdicts[index]

    judge.judged = judged  # type: ignore[attr-defined]
    return judge


# ------------------------------------------------------------- the policy


def test_every_test_runs_in_order_by_default() -> None:
    judge = judge_from("pfp")
    assert run_in_order(3, judge) == [PASS, FAIL, PASS]
    assert judge.judged == [0, 1, 2]


def test_stop_at_failure_skips_the_rest_without_running_them() -> None:
    judge = judge_from("pfpp")
    assert run_in_order(4, judge, stop_at_failure=True) == [PASS, FAIL, SKIPPED, SKIPPED]
    assert judge.judged == [0, 1]


def test_tests_that_no_longer_fit_the_deadline_do_not_start_and_are_timeouts() -> None:
    now = [0.0]

    def judge(index: int) -> Verdict:
        now[0] += 4.0  # each test takes 4 s of the fake clock
        return PASS

    verdicts = run_in_order(5, judge, deadline=10.0, worst_case_s=3.0, clock=lambda: now[0])
    # Started at 0, 4 (4 + 3 <= 10); at 8, 8 + 3 > 10: the rest never start.
    assert verdicts == [PASS, PASS, OUT_OF_TIME, OUT_OF_TIME, OUT_OF_TIME]


def test_a_failure_before_the_deadline_still_skips_under_stop_at_failure() -> None:
    now = [0.0]

    def judge(index: int) -> Verdict:
        now[0] += 4.0
        return FAIL if index == 0 else PASS

    assert run_in_order(3, judge, stop_at_failure=True, deadline=5.0, worst_case_s=3.0, clock=lambda: now[0]) == [
        FAIL, SKIPPED, SKIPPED]


def test_parallel_tests_run_at_once() -> None:
    # Two tests that each wait for the other: only concurrent runs get through.
    barrier = threading.Barrier(2, timeout=10)

    def judge(index: int) -> Verdict:
        barrier.wait()
        return PASS

    assert run_in_order(2, judge, workers=2) == [PASS, PASS]


def test_parallel_statuses_under_stop_at_failure_are_those_of_a_sequential_run() -> None:
    # Test 1 fails only after test 2 has already passed on another thread: 2 is still "skipped".
    two_done = threading.Event()

    def judge(index: int) -> Verdict:
        if index == 1:
            assert two_done.wait(10)
            return FAIL
        if index == 2:
            two_done.set()
        return PASS

    verdicts = run_in_order(4, judge, workers=3, stop_at_failure=True)
    assert verdicts == [PASS, FAIL, SKIPPED, SKIPPED] == run_in_order(4, judge_from("pfpp"), stop_at_failure=True)


def test_a_judges_exception_stops_new_tests_and_is_raised_after_the_others_finish() -> None:
    started: list[int] = []
    finished = threading.Event()

    def judge(index: int) -> Verdict:
        started.append(index)
        if index == 0:
            time.sleep(0.2)
            finished.set()
            return PASS
        raise RuntimeError("the checker failed")

    with pytest.raises(RuntimeError, match="the checker failed"):
        run_in_order(10, judge, workers=2)
    assert finished.is_set() and sorted(started) == [0, 1]


def test_the_default_budget_is_the_declared_timeout_less_the_reserve() -> None:
    assert declared_budget_s() == 60.0 - RESERVE_S
    assert 1 <= default_parallel_tests() <= 4


# ------------------------------------------------------- end to end, real runs

SLEEPER = "import time\ntime.sleep(3600)\n"
ADD = "a, b = map(int, input().split())\nprint(a + b)\n"


def truth(count: int) -> str:
    return json.dumps({"inputs": [f"{i} 1\n" for i in range(count)], "outputs": [f"{i + 1}\n" for i in range(count)]})


def test_all_or_nothing_stops_at_the_first_failure() -> None:
    program = "a, b = map(int, input().split())\nprint(a + b if a < 1 else 0)\n"
    result = compute_score("apps", program, truth(4), all_or_nothing=True)
    assert (result["score"], result["test_statuses"]) == (0.0, "pass,fail,skipped,skipped")


def test_a_spent_budget_leaves_the_remaining_tests_as_timeouts_in_a_sample_that_scored() -> None:
    started = time.monotonic()
    result = compute_score("apps", SLEEPER, truth(10), timeout_s=0.5, time_budget_s=4.0)
    elapsed = time.monotonic() - started
    statuses = result["test_statuses"].split(",")
    assert result["score"] == 0.0 and statuses == ["timeout"] * 10 and elapsed < 4.0 + 2.0
    # A test starts only while its worst case (0.5 s + 1 s of start-up) fits: a fast program gets through.
    assert compute_score("apps", ADD, truth(4), timeout_s=0.5, time_budget_s=15.0, parallel_tests=1)["score"] == 1.0


def test_a_budget_too_small_for_one_test_is_an_error() -> None:
    with pytest.raises(ValueError, match=r"one test may take 11 s \(timeout_s=10 plus 1 s of start-up\), more than "
                                         r"the sample's time budget of 5 s"):
        compute_score("apps", ADD, truth(1), timeout_s=10.0, time_budget_s=5.0)


def test_parallel_tests_give_the_statuses_of_a_sequential_run() -> None:
    program = "a, b = map(int, input().split())\nprint(a + b if a % 3 else 0)\n"
    for stop in (False, True):
        sequential = compute_score("apps", program, truth(6), parallel_tests=1, stop_on_first_failure=stop)
        parallel = compute_score("apps", program, truth(6), parallel_tests=3, stop_on_first_failure=stop)
        assert parallel == sequential
    assert sequential["test_statuses"] == "fail,skipped,skipped,skipped,skipped,skipped"


@pytest.mark.slow
def test_ten_sleeping_tests_of_five_seconds_stay_inside_the_declared_timeout() -> None:
    # Issue 26, item 9: 10 tests x (5 s + start-up) of a program that sleeps
    # passed the declared 60 s, so the sample became a reward timeout (and was
    # skipped under on_error: skip). Now the tests stop at the budget and the
    # sample scores 0, as a wrong answer, through the framework's own timeout.
    sample = {"data_source": "apps", "solution_str": SLEEPER, "ground_truth": truth(10)}
    started = time.monotonic()
    with Scorer.from_config({"plugin": "code_exec", "executor": "local", "kwargs": {"parallel_tests": 1}}) as scorer:
        result = scorer.score([sample])
    elapsed = time.monotonic() - started
    assert result.statuses == ["ok"] and result.scores == [0.0] and result.errors == [None]
    assert result.extra_info["test_statuses"] == [",".join(["timeout"] * 10)]
    assert elapsed < 60.0
