"""The checks of one response stop a margin before the reward call's time runs out."""

from __future__ import annotations

import time

import pytest
from verl_rewards_ifeval import budget

from verl_rewards.limits import deadline_of


def test_outside_a_scored_call_the_checks_are_never_stopped() -> None:
    with budget.checks_bounded():
        budget.check()
    with deadline_of(None), budget.checks_bounded():
        budget.check()


def test_the_checks_stop_once_only_the_margin_is_left() -> None:
    with deadline_of(30.0), budget.checks_bounded():
        budget.check()  # 29 s to go
    with deadline_of(30.0, started=time.monotonic() - 29.8), budget.checks_bounded():
        budget.check()  # 0.2 s left, of which the checks may use 0.15
        time.sleep(0.2)
        with pytest.raises(budget.OutOfTime, match=r"^late: the checks were stopped 0\.05 s before the reward"):
            budget.check()


def test_a_short_call_keeps_three_quarters_of_its_time_for_the_checks() -> None:
    assert [budget.margin_s(s) for s in (0.4, 2.0, 4.0, 30.0)] == [0.1, 0.5, 1.0, 1.0]


def test_the_bound_is_the_calls_in_progress_and_ends_with_the_block() -> None:
    with deadline_of(1.0, started=time.monotonic() - 5.0):
        with budget.checks_bounded():
            with pytest.raises(budget.OutOfTime):
                budget.check()
        budget.check()  # the block ended: unbounded again
