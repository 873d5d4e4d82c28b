"""serve.pool: the scorer starts in the background, a failed pool is replaced, a pool
that cannot start is reported (and requests are refused, not left waiting)."""

from __future__ import annotations

import time

import pytest

from verl_rewards import Scorer
from verl_rewards.config import load_config
from verl_rewards.samples import as_samples
from verl_rewards.serve.metrics import Metrics
from verl_rewards.serve.pool import PoolKeeper, PoolUnavailable
from verl_rewards.spec import spec_from_config

SAMPLES = as_samples([{"data_source": "d", "solution_str": "1", "ground_truth": "1"}])


def _keeper(cfg: dict, metrics: Metrics) -> tuple[PoolKeeper, list[Scorer]]:
    config = load_config(cfg)
    spec = spec_from_config(config)
    built: list[Scorer] = []

    def build() -> Scorer:
        built.append(Scorer(spec, config).start())
        return built[-1]

    return PoolKeeper(build, metrics, "test pool"), built


def _wait_for(keeper: PoolKeeper, state: str, timeout_s: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout_s
    while keeper.status()["state"] != state and time.monotonic() < deadline:
        time.sleep(0.02)
    return keeper.status()


def test_the_pool_starts_in_the_background_and_scores():
    metrics = Metrics()
    keeper, _ = _keeper({"plugin": "exact_match", "executor": "local"}, metrics)
    assert keeper.status()["state"] == "starting"
    keeper.start()
    try:
        assert _wait_for(keeper, "ready")["ready"] is True
        assert keeper.score_together([SAMPLES], wait_s=30)[0].scores == [1.0]
        assert metrics.ready._value.get() == 1.0
    finally:
        keeper.close()
    assert keeper.status()["state"] == "closed" and metrics.ready._value.get() == 0.0


def test_a_pool_that_fails_as_a_whole_is_replaced_and_the_batch_scored_on_the_new_one():
    metrics = Metrics()
    keeper, built = _keeper({"plugin": "exact_match", "executor": "local"}, metrics)
    keeper.start()
    try:
        _wait_for(keeper, "ready")
        built[0].close()  # a real failure: its executor is gone, every call raises
        (result,) = keeper.score_together([SAMPLES], wait_s=30)
        status = keeper.status()
    finally:
        keeper.close()
    assert result.scores == [1.0] and len(built) == 2
    assert status["restarts"] == 1 and status["state"] == "ready"
    assert "ExecutorError" in status["last_error"] and "closed" in status["last_error"]
    assert metrics.restarts._value.get() == 1.0


def test_a_pool_that_cannot_start_is_reported_and_requests_are_refused_at_once():
    metrics = Metrics()
    # A class reward that refuses the kwargs (the Scorer's preflight finds it as the pool
    # starts; a model that fails to load on the pool is the same failure at start).
    keeper, _ = _keeper({"plugin": "stateful", "executor": "local", "kwargs": {"nope": 1}}, metrics)
    keeper.start()
    try:
        status = _wait_for(keeper, "failed")
        began = time.monotonic()
        with pytest.raises(PoolUnavailable, match="the reward pool is failed .*'nope' not accepted"):
            keeper.score_together([SAMPLES], wait_s=30)
        refused_in = time.monotonic() - began
    finally:
        keeper.close()
    assert status["ready"] is False
    assert "RewardKwargsError: reward.kwargs 'nope' not accepted" in status["last_error"]
    assert refused_in < 5
