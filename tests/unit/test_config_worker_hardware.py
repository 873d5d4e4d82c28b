"""Config keys for the reward workers' hardware and batch calls."""

from __future__ import annotations

import pytest

from verl_rewards.config import load_config
from verl_rewards.errors import ConfigError
from verl_rewards.metadata import metadata_of, reward


def test_hardware_keys_default_to_the_plugins_declaration() -> None:
    cfg = load_config({"plugin": "gsm8k"})
    assert (cfg.worker_num_gpus, dict(cfg.worker_resources), cfg.max_batch_size) == (None, {}, None)


def test_fractional_gpus_custom_resources_and_batch_size_from_overrides() -> None:
    cfg = load_config({"plugin": "gsm8k"}, ["reward.worker_num_gpus=0.25",
                                            "reward.worker_resources.accel=1",
                                            "reward.max_batch_size=16"])
    assert (cfg.worker_num_gpus, dict(cfg.worker_resources), cfg.max_batch_size) == (0.25, {"accel": 1}, 16)


@pytest.mark.parametrize(("override", "message"), [
    ("reward.worker_num_gpus=-1", "reward.worker_num_gpus must be >= 0"),
    ("reward.worker_num_gpus=lots", "reward.worker_num_gpus must be a finite number"),
    ("reward.worker_resources=3", "reward.worker_resources must be a mapping"),
    ("reward.worker_resources.accel=-2", "reward.worker_resources.accel must be >= 0"),
    ("reward.worker_resources.GPU=1", "cannot set 'GPU'; use reward.worker_num_gpus"),
    ("reward.max_batch_size=0", "reward.max_batch_size must be an integer >= 1"),
])
def test_bad_hardware_settings_are_config_errors(override: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        load_config({"plugin": "gsm8k"}, [override])


def test_the_decorator_records_gpu_and_batch_defaults() -> None:
    @reward(num_gpus=0.5, max_batch_size=8)
    def fn(data_sources, solution_strs, ground_truths, extra_infos):  # type: ignore[no-untyped-def]
        return []

    meta = metadata_of(fn)
    assert (meta.num_gpus, meta.max_batch_size) == (0.5, 8)


@pytest.mark.parametrize("kwargs", [{"num_gpus": -1}, {"max_batch_size": 0}, {"max_batch_size": 2.5}])
def test_the_decorator_refuses_impossible_defaults(kwargs) -> None:
    with pytest.raises(ValueError):
        reward(**kwargs)
