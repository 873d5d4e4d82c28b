"""serve.admission: the bytes of requests held at once, reserved before a body is read."""

from __future__ import annotations

import pytest

from verl_rewards.errors import QueueFull, VerlRewardsError
from verl_rewards.serve.admission import ByteBudget
from verl_rewards.serve.metrics import Metrics


def _gauge(metrics: Metrics) -> float:
    return metrics.registry.get_sample_value("verl_rewards_queue_bytes")


def test_requests_are_admitted_until_their_bytes_would_pass_the_limit():
    metrics = Metrics()
    budget = ByteBudget(100, metrics)
    first = budget.hold(60)
    second = budget.hold(40)
    with pytest.raises(QueueFull) as refused:
        budget.hold(1)
    assert str(refused.value) == ("the scoring queue is full: 100 bytes waiting or scoring, "
                                  "limit 100 (--max-queue-mb); retry later")
    assert isinstance(refused.value, VerlRewardsError)
    assert (budget.held, _gauge(metrics)) == (100, 100)
    first.release()
    second.release()
    assert (budget.held, _gauge(metrics)) == (0, 0)


def test_a_reservation_shrinks_to_the_body_read_and_is_released_on_exit():
    budget = ByteBudget(100, Metrics())
    with budget.hold(100) as held:  # a body of unknown size reserves the body limit
        held.resize(30)
        assert budget.held == 30
        with budget.hold(70):
            assert budget.held == 100
    assert budget.held == 0


def test_a_reservation_is_released_when_the_request_fails():
    budget = ByteBudget(100, Metrics())
    with pytest.raises(RuntimeError), budget.hold(50):
        raise RuntimeError("the handler failed")
    assert budget.held == 0
