"""Many tests per sample: stopping at the first failure, the sample's time budget, parallel tests."""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import pytest
from verl_rewards_code.code_exec import (
    RESERVE_S,
    compute_score,
    declared_budget_s,
    default_parallel_tests,
    reserve_s,
)
from verl_rewards_code.outcome import PASS, Verdict
from verl_rewards_code.schedule import OUT_OF_TIME, SKIPPED, run_in_order

from verl_rewards import Scorer
from verl_rewards.limits import deadline_of

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


# ------------------------------------ the budget follows the effective timeout (issue 32)

THREE = truth(3)


def test_the_reserve_is_five_seconds_of_a_long_call_and_a_fifth_of_a_short_one() -> None:
    assert reserve_s(60.0) == RESERVE_S and reserve_s(10.0) == 2.0 and reserve_s(3.0) == pytest.approx(0.6)
    assert reserve_s(1.0) == 0.5


@pytest.mark.parametrize("timeout_s", [3.0, 10.0])
def test_a_sleeping_program_is_timeout_tests_inside_an_ok_sample_for_any_configured_timeout(timeout_s: float) -> None:
    # Issue 32: code_exec budgeted from its declared 60 s, so under reward.timeout_s=10 three
    # sleeping tests (5 s each) overran the call: a `timeout` sample, skipped by on_error: skip.
    sample = {"data_source": "apps", "solution_str": SLEEPER, "ground_truth": THREE}
    config = {"plugin": "code_exec", "executor": "local", "timeout_s": timeout_s, "kwargs": {"parallel_tests": 1}}
    with Scorer.from_config(config) as scorer:
        started = time.monotonic()
        result = scorer.score([sample])
        elapsed = time.monotonic() - started
    assert (result.statuses, result.scores, result.errors) == (["ok"], [0.0], [None])
    assert result.extra_info["test_statuses"] == ["timeout,timeout,timeout"]
    assert elapsed < timeout_s
    # A correct program still passes every test under the same timeout.
    with Scorer.from_config(config) as scorer:
        fast = scorer.score([{**sample, "solution_str": ADD}])
    assert (fast.statuses, fast.extra_info["test_statuses"]) == (["ok"], ["pass,pass,pass"])


def test_the_budget_is_what_the_call_has_left_and_each_test_is_cut_to_it() -> None:
    started = time.monotonic()
    with deadline_of(3.0):
        result = compute_score("apps", SLEEPER, THREE)
    elapsed = time.monotonic() - started
    # 3 s less a 0.6 s reserve: the first test runs for what is left after its start-up (1.4 s),
    # the others never start.
    assert result["test_statuses"] == "timeout,timeout,timeout" and elapsed < 3.0
    assert "1.4 s of wall clock" in result["explanation"]


def test_an_explicit_time_budget_beyond_the_time_left_is_cut_to_it() -> None:
    started = time.monotonic()
    with deadline_of(4.0):
        result = compute_score("apps", SLEEPER, THREE, timeout_s=1.0, time_budget_s=100.0)
    assert result["test_statuses"] == "timeout,timeout,timeout" and time.monotonic() - started < 4.0
    # Called directly (no time left known), the explicit budget is the budget, and too small a one is an error.
    assert compute_score("apps", ADD, truth(2), timeout_s=1.0, time_budget_s=3.0)["score"] == 1.0
