"""``on_error: skip`` is refused when OpenRLHF loads the reward file: OpenRLHF 0.11
cannot leave one sample out of training (docs/skip.md)."""

from __future__ import annotations

import pytest
from openrlhf.utils.agent import SingleTurnAgentExecutor

import verl_rewards.integrations.openrlhf_reward as real_module
from verl_rewards.errors import ConfigError
from verl_rewards.hosts import refusal


@pytest.fixture(autouse=True)
def _fresh_settings():
    real_module._settings.clear()
    yield
    real_module._settings.clear()


@pytest.mark.parametrize("env", [
    {"VERL_REWARDS_PLUGIN": "exact_match", "VERL_REWARDS_ON_ERROR": "skip"},
    {"VERL_REWARDS_CONFIG": '{"plugin": "exact_match", "on_error": "skip"}'},
])
def test_skip_fails_when_openrlhf_loads_the_file_and_says_what_to_use(monkeypatch, env):
    for name in ("VERL_REWARDS_PLUGIN", "VERL_REWARDS_CONFIG", "VERL_REWARDS_ON_ERROR"):
        monkeypatch.delenv(name, raising=False)
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as raised:
        SingleTurnAgentExecutor(remote_rm_url=[real_module.__file__])
    assert str(raised.value) == refusal("openrlhf")
    assert "OpenRLHF has no per-sample drop" in str(raised.value)
    assert "Use VERL_REWARDS_ON_ERROR=score" in str(raised.value)
