"""The worker recycling keys: ``worker_max_rss_mb`` and ``worker_max_calls``."""

from __future__ import annotations

import pytest

from verl_rewards.config import load_config
from verl_rewards.errors import ConfigError


def test_recycling_is_off_by_default():
    config = load_config({"plugin": "gsm8k"})
    assert (config.worker_max_rss_mb, config.worker_max_calls) == (None, None)


def test_recycling_keys_are_read_from_overrides():
    config = load_config({"plugin": "gsm8k"}, ["reward.worker_max_rss_mb=1500.5", "reward.worker_max_calls=20"])
    assert (config.worker_max_rss_mb, config.worker_max_calls) == (1500.5, 20)


@pytest.mark.parametrize("key, value, message", [
    ("worker_max_rss_mb", 0, "reward.worker_max_rss_mb must be a positive number, not 0"),
    ("worker_max_rss_mb", "2GB", "reward.worker_max_rss_mb must be a positive number, not '2GB'"),
    ("worker_max_calls", 0, "reward.worker_max_calls must be an integer >= 1, not 0"),
    ("worker_max_calls", 2.5, "reward.worker_max_calls must be an integer >= 1, not 2.5"),
])
def test_invalid_recycling_values_are_config_errors(key, value, message):
    with pytest.raises(ConfigError) as info:
        load_config({"plugin": "gsm8k", key: value})
    assert str(info.value) == message
