"""The timeout rule: config number, else the reward's declaration, else 30 s; null is no limit."""

from __future__ import annotations

from verl_rewards import load_config
from verl_rewards._inspect import RewardInfo
from verl_rewards.limits import DECLARED, DEFAULT_TIMEOUT_S, Limits, limits_for, longest
from verl_rewards.metadata import RewardMeta

DECLARES_2S = RewardInfo("a", "sample", meta=RewardMeta(timeout_s=2.0))
DECLARES_NOTHING = RewardInfo("b", "sample")


def test_auto_uses_the_declaration_else_the_default():
    limits = limits_for(load_config({"plugin": "p"}))
    assert limits == Limits(DEFAULT_TIMEOUT_S, 32, use_declared=True)
    assert limits.for_reward(DECLARES_2S).timeout_s == 2.0
    assert limits.for_reward(DECLARES_NOTHING).timeout_s == 30.0


def test_a_number_in_the_config_wins_and_null_is_no_limit():
    assert limits_for(load_config({"plugin": "p", "timeout_s": 5})).for_reward(DECLARES_2S).timeout_s == 5
    assert limits_for(load_config({"plugin": "p", "timeout_s": None})).for_reward(DECLARES_2S).timeout_s is None


def test_the_longest_over_several_rewards_and_none_when_any_is_unlimited():
    auto = limits_for(load_config({"plugin": "p"}))
    assert longest(auto, [DECLARES_2S, DECLARES_NOTHING]) == 30.0
    assert longest(auto, [DECLARES_2S]) == 2.0
    assert longest(Limits(None), [DECLARES_2S]) is None


def test_checks_and_show_use_the_declared_rule():
    assert DECLARED.for_reward(DECLARES_2S).timeout_s == 2.0
    assert DECLARED.for_reward(DECLARES_NOTHING).timeout_s == DEFAULT_TIMEOUT_S
