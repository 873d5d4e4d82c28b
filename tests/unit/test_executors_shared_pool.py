"""shared_pool: the backstop deadline a client puts on one batch sent to the job's pool."""

from __future__ import annotations

from verl_rewards.config import load_config
from verl_rewards.executors.shared_pool import deadline_s


def test_the_deadline_covers_every_round_of_timeouts_plus_ray():
    config = load_config({"plugin": "exact_match", "timeout_s": 3, "num_workers": 2})
    assert deadline_s(config, 8) == 3 * (4 + 2) + 120


def test_no_per_sample_limit_means_no_backstop():
    assert deadline_s(load_config({"plugin": "exact_match", "timeout_s": None}), 8) is None


def test_auto_assumes_a_long_declared_timeout():
    assert deadline_s(load_config({"plugin": "exact_match"}), 1) == 300 * 3 + 120
