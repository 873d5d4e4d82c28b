"""A batch reward receives its samples in calls of at most ``max_batch_size``."""

from __future__ import annotations

import pytest

from verl_rewards import RewardRef
from verl_rewards.resolve import resolve
from verl_rewards.samples import Sample
from verl_rewards.scoring import Limits, score_samples

REWARDS = '''
from verl_rewards import reward

def sizes(data_sources, solution_strs, ground_truths, extra_infos):
    return [{"score": float(len(solution_strs)), "first": solution_strs[0]} for _ in solution_strs]

@reward(max_batch_size=3)
def declared(data_sources, solution_strs, ground_truths, extra_infos):
    return [float(len(solution_strs))] * len(solution_strs)

def fails_on_b(data_sources, solution_strs, ground_truths, extra_infos):
    if "b" in solution_strs:
        raise ValueError("no b")
    return [1.0] * len(solution_strs)
'''

SAMPLES = [Sample("d", s, "") for s in "abcdefg"]


@pytest.fixture
def load(reward_file):
    path = reward_file(REWARDS, "batched.py")
    return lambda name: resolve(RewardRef.from_file(path, name))


def test_without_a_limit_the_whole_chunk_is_one_call(load) -> None:
    outcomes = score_samples(load("sizes"), SAMPLES, Limits(timeout_s=5))
    assert [o.score for o in outcomes] == [7.0] * 7


def test_the_configured_limit_splits_the_chunk_into_calls_in_order(load) -> None:
    outcomes = score_samples(load("sizes"), SAMPLES, Limits(timeout_s=5, max_batch_size=3))
    assert [o.score for o in outcomes] == [3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 1.0]
    assert [o.extra["first"] for o in outcomes] == list("aaadddg")


def test_the_plugins_declared_limit_applies_unless_configured(load) -> None:
    assert [o.score for o in score_samples(load("declared"), SAMPLES, Limits(timeout_s=5))] == [3.0] * 6 + [1.0]
    configured = score_samples(load("declared"), SAMPLES, Limits(timeout_s=5, max_batch_size=5))
    assert [o.score for o in configured] == [5.0] * 5 + [2.0] * 2


def test_a_failing_call_fails_only_its_own_part(load) -> None:
    outcomes = score_samples(load("fails_on_b"), SAMPLES, Limits(timeout_s=5, max_batch_size=2))
    assert [o.status for o in outcomes] == ["failed", "failed"] + ["ok"] * 5
    assert outcomes[0].error.startswith("ValueError: no b (at ")
    assert outcomes[0].error.endswith("batched.py:13 in fails_on_b)")
