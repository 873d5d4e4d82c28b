"""The reward section the verifiers, SkyRL, AReaL and slime adapters are given."""

from __future__ import annotations

import pytest

from verl_rewards.errors import ConfigError
from verl_rewards.integrations._section import numeric, section_from_env, section_of


def test_a_plugin_name_or_a_section_takes_the_options_on_top():
    assert section_of("gsm8k", {"timeout_s": 2}) == {"plugin": "gsm8k", "timeout_s": 2}
    assert section_of({"path": "r.py", "timeout_s": 5}, {"timeout_s": 2}) == {"path": "r.py", "timeout_s": 2}


@pytest.mark.parametrize("reward", ["", "  ", 3, None])
def test_anything_else_is_refused(reward):
    with pytest.raises(ConfigError, match="plugin name"):
        section_of(reward, {})


def test_the_environment_gives_a_plugin_with_kwargs_or_a_json_section():
    assert section_from_env({"VERL_REWARDS_PLUGIN": "gsm8k", "VERL_REWARDS_KWARGS": '{"method": "flexible"}'}) == {
        "plugin": "gsm8k", "kwargs": {"method": "flexible"}}
    assert section_from_env({"VERL_REWARDS_CONFIG": '{"plugin": "gsm8k", "timeout_s": 2}'}) == {
        "plugin": "gsm8k", "timeout_s": 2}


def test_the_environment_gives_a_yaml_files_reward_section(tmp_path):
    path = tmp_path / "train.yaml"
    path.write_text("trainer:\n  total_steps: 3\nreward:\n  plugin: gsm8k\n  timeout_s: 2\n")
    # only the file's keys: what it leaves out (executor) keeps the adapters' defaults
    assert section_from_env({"VERL_REWARDS_CONFIG": str(path)}) == {"plugin": "gsm8k", "timeout_s": 2}


@pytest.mark.parametrize(("env", "message"), [
    ({}, "neither is set"),
    ({"VERL_REWARDS_PLUGIN": "a", "VERL_REWARDS_CONFIG": "{}"}, "both are set"),
    ({"VERL_REWARDS_CONFIG": '{"plugin": "a"}', "VERL_REWARDS_KWARGS": "{}"}, "goes with VERL_REWARDS_PLUGIN"),
    ({"VERL_REWARDS_PLUGIN": "a", "VERL_REWARDS_KWARGS": "[1]"}, "VERL_REWARDS_KWARGS must be a JSON object"),
    ({"VERL_REWARDS_CONFIG": "{plugin"}, "VERL_REWARDS_CONFIG is not valid JSON"),
    ({"VERL_REWARDS_CONFIG": "/no/such/reward.yaml"}, "config file not found"),
])
def test_a_bad_environment_names_the_variable(env, message):
    with pytest.raises(ConfigError, match=message):
        section_from_env(env)


def test_only_finite_numbers_are_loggable():
    assert numeric({"acc": 1, "ok": True, "nan": float("nan"), "text": "x", "list": [1]}) == {
        "acc": 1.0, "ok": 1.0}
