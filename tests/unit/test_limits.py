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


TIME_LEFT = '''
import asyncio
from verl_rewards import time_left

def sample(data_source, solution_str, ground_truth, extra_info=None):
    left = time_left()
    return {"score": 1.0, "left": -1.0 if left is None else left}

def batch(data_sources, solution_strs, ground_truths, extra_infos):
    left = time_left()
    return [{"score": 1.0, "left": -1.0 if left is None else left} for _ in solution_strs]

async def concurrent(data_source, solution_str, ground_truth, extra_info=None):
    await asyncio.sleep(0)
    left = time_left()
    return {"score": 1.0, "left": -1.0 if left is None else left}
'''


def _left_seen(reward_file, name: str, limits: Limits, n: int = 3) -> list[float]:
    from verl_rewards import RewardRef
    from verl_rewards.resolve import resolve
    from verl_rewards.samples import Sample
    from verl_rewards.scoring import score_samples

    loaded = resolve(RewardRef.from_file(reward_file(TIME_LEFT, "time_left_rewards.py"), name))
    outcomes = score_samples(loaded, [Sample("d", "x", "x")] * n, limits)
    return [o.extra["left"] for o in outcomes]  # type: ignore[index]


def test_time_left_counts_down_each_sample_calls_own_limit(reward_file):
    for left in _left_seen(reward_file, "sample", Limits(7.0)):
        assert 6.5 < left <= 7.0
    for left in _left_seen(reward_file, "concurrent", Limits(7.0)):
        assert 6.5 < left <= 7.0


def test_time_left_of_a_batch_call_is_the_batch_allowance(reward_file):
    for left in _left_seen(reward_file, "batch", Limits(2.0), n=3):
        assert 5.5 < left <= 6.0


def test_time_left_is_none_without_a_limit_or_outside_a_call(reward_file):
    from verl_rewards import time_left

    assert _left_seen(reward_file, "sample", Limits(None)) == [-1.0] * 3
    assert time_left() is None
