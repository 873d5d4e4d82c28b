"""The SkyRL adapter through skyrl-gym 0.4's own ``make`` and ``step``."""

from __future__ import annotations

import pickle
import time

import pytest
import skyrl_gym
from omegaconf import OmegaConf
from skyrl_gym.envs.base_text_env import BaseTextEnv

from verl_rewards.errors import ConfigError, RewardError
from verl_rewards.hosts import refusal
from verl_rewards.integrations import skyrl as adapter

FAULTY = {"plugin": "faulty", "timeout_s": 2, "error_score": -1.0}


def _row(ground_truth: str, **extra: object) -> dict[str, object]:
    return {"reward_spec": {"method": "rule", "ground_truth": ground_truth}, **extra}


def _step(env_config: object, response: str, ground_truth: str = "42", **extra: object) -> dict:
    env = skyrl_gym.make(adapter.register(), env_config=env_config, extras=_row(ground_truth, **extra))
    prompt, _ = env.init([{"role": "user", "content": "What is 6 x 7?"}])
    assert prompt == [{"role": "user", "content": "What is 6 x 7?"}]
    out = env.step(response)
    env.close()
    return dict(out)


def test_register_is_idempotent_and_names_the_env_by_import_path():
    assert adapter.register() == adapter.register() == "verl_rewards"
    assert skyrl_gym.spec("verl_rewards").entry_point == "verl_rewards.integrations.skyrl:RewardEnv"
    assert adapter.register("verl_rewards_math") == "verl_rewards_math"


def test_a_plugin_by_name_steps_to_its_score_with_extra_keys_in_metadata():
    right = _step("exact_match", " 42 ")
    wrong = _step("exact_match", "41")
    assert (right["reward"], right["done"], wrong["reward"]) == (1.0, True, 0.0)
    assert right["observations"] == []
    assert right["metadata"]["pid"] > 0
    assert right["metadata"]["error"] is None and right["metadata"]["status"] == "ok"


def test_a_section_with_kwargs_and_the_rows_data_source_reach_the_plugin():
    out = _step({"plugin": "exact_match", "kwargs": {"bonus": 0.5}}, "42", data_source="qa")
    assert out["reward"] == 1.5
    env = skyrl_gym.make(adapter.register(), env_config="exact_match",
                         extras=_row("7", data_source="qa", extra_info={"split": "train"}))
    assert (env.row.data_source, env.row.ground_truth, env.row.extra_info) == ("qa", "7", {"split": "train"})


def test_a_raising_sample_steps_to_error_score_with_the_error_in_metadata():
    out = _step(FAULTY, "raise")
    assert (out["reward"], out["done"]) == (-1.0, True)
    assert out["metadata"]["status"] == "failed"
    assert out["metadata"]["error"].startswith("RuntimeError: the reward raised on purpose")


def test_a_hanging_sample_is_bounded_by_timeout_s():
    began = time.monotonic()
    out = _step(FAULTY, "loop")
    assert time.monotonic() - began < 15  # SkyRL has no reward timeout of its own
    assert (out["reward"], out["metadata"]["status"]) == (-1.0, "timeout")


def test_a_sample_holding_the_gil_in_c_is_bounded_by_the_default_executor():
    section = {**FAULTY, "timeout_s": 1}
    assert _step(section, "42")["reward"] == 1.0  # the worker pool starts here
    began = time.monotonic()
    out = _step(section, "gil_sleep")
    assert time.monotonic() - began < 1 + 2  # timeout_s + 2 s, the host alive
    assert (out["reward"], out["metadata"]["status"]) == (-1.0, "timeout")


def test_episode_metrics_count_failures_and_skyrl_averages_them():
    from skyrl_gym.metrics import aggregate_for_environment

    metrics = []
    for response in ("42", "raise"):
        env = skyrl_gym.make(adapter.register(), env_config=FAULTY, extras=_row("42"))
        env.step(response)
        metrics.append(env.get_metrics())
    assert metrics == [{"failed": 0.0}, {"failed": 1.0}]
    assert aggregate_for_environment("verl_rewards", metrics) == {"failed": 0.5}


def test_on_error_raise_raises_out_of_step():
    with pytest.raises(RewardError, match="faulty"):
        _step({**FAULTY, "on_error": "raise"}, "raise")


def test_on_error_skip_is_refused_when_the_environment_is_made():
    # skyrl-gym's step returns a reward SkyRL trains on: no way to leave the sample out
    with pytest.raises(ConfigError) as refused:
        skyrl_gym.make(adapter.register(), env_config={**FAULTY, "on_error": "skip"},
                       extras=_row("42"))
    assert str(refused.value) == refusal("skyrl")
    assert "Use on_error: score" in str(refused.value)


def test_make_refuses_a_row_without_ground_truth_and_an_unknown_plugin():
    with pytest.raises(ConfigError, match=r"extras\['reward_spec'\]\['ground_truth'\]"):
        skyrl_gym.make(adapter.register(), env_config="exact_match", extras={"answer": "42"})
    with pytest.raises(ConfigError, match="exact_match"):
        skyrl_gym.make(adapter.register(), env_config="exact_mach", extras=_row("42"))
    with pytest.raises(ConfigError, match=r"environment\.skyrl_gym\.verl_rewards\.plugin"):
        skyrl_gym.make(adapter.register(), env_config=OmegaConf.create({}), extras=_row("42"))


def test_the_env_class_is_a_skyrl_text_env_that_pickles_by_reference():
    assert issubclass(adapter.RewardEnv, BaseTextEnv)
    assert pickle.loads(pickle.dumps(adapter.RewardEnv)) is adapter.RewardEnv


def test_the_docs_example_prints_what_it_says(run_docs_example):
    printed, claims = run_docs_example("skyrl")
    assert printed == claims
