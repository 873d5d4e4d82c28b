from __future__ import annotations

import re
import time

import pytest

from verl_rewards import RewardRef
from verl_rewards.errors import RewardError, RewardValueError
from verl_rewards.resolve import resolve
from verl_rewards.samples import Sample
from verl_rewards.scoring import Limits, score_samples, validate

REWARDS = '''
import asyncio, math, time

def by_text(data_source, solution_str, ground_truth, extra_info=None):
    table = {"nan": math.nan, "inf": math.inf, "-inf": -math.inf, "none": None,
             "string": "0.5", "list": [1.0], "no_score": {"acc": 1}, "bool": True,
             "dict": {"score": 0.25, "acc": 1, "why": "partial"}}
    if solution_str == "raise":
        raise KeyError("missing thing")
    if solution_str == "loop":
        while True:
            pass
    if solution_str == "swallow":   # a reward that catches everything still times out
        while True:
            try:
                time.sleep(0.01)
            except Exception:
                pass
    return table.get(solution_str, float(solution_str == ground_truth))

in_flight = 0
peak = 0

async def concurrent(data_source, solution_str, ground_truth, extra_info=None):
    global in_flight, peak
    in_flight += 1
    peak = max(peak, in_flight)
    await asyncio.sleep(0.05 if solution_str != "hang" else 60)
    in_flight -= 1
    return float(peak)

def bad_batch(data_sources, solution_strs, ground_truths, extra_infos):
    return [1.0] * (len(solution_strs) - 1)

def good_batch(data_sources, solution_strs, ground_truths, extra_infos):
    return [float("nan") if s == "nan" else 1.0 for s in solution_strs]
'''


@pytest.fixture
def loaded(reward_file):
    path = reward_file(REWARDS, "rewards.py")
    return lambda name: resolve(RewardRef.from_file(path, name))


def _samples(*texts: str, truth: str = "ok") -> list[Sample]:
    return [Sample("src", t, truth) for t in texts]


@pytest.mark.parametrize(
    ("text", "needle"),
    [("nan", "nan is not a finite number"), ("inf", "inf is not a finite number"),
     ("-inf", "-inf is not a finite number"), ("none", "expected a number, got NoneType"),
     ("string", "expected a number, got str '0.5'"), ("list", "expected a number, got list"),
     ("no_score", "a dict without a 'score' key")],
)
def test_each_bad_return_value_fails_the_sample_naming_plugin_and_index(loaded, text, needle):
    reward = loaded("by_text")
    outcomes = score_samples(reward, _samples("ok", text))
    assert outcomes[0].status == "ok"
    assert outcomes[1].status == "failed"
    assert outcomes[1].error.startswith("RewardValueError: reward by_text (file ")
    assert "for sample 1" in outcomes[1].error and needle in outcomes[1].error


def test_validate_raises_reward_value_error():
    with pytest.raises(RewardValueError) as info:
        validate(float("nan"), "p (d 1)", 7)
    assert (info.value.plugin, info.value.index) == ("p (d 1)", 7)


def test_dict_result_splits_score_and_extra_keys(loaded):
    [outcome] = score_samples(loaded("by_text"), _samples("dict"))
    assert outcome.score == 0.25
    assert outcome.extra == {"acc": 1, "why": "partial"}


def test_bool_counts_as_a_number(loaded):
    assert score_samples(loaded("by_text"), _samples("bool"))[0].score == 1.0


def test_exception_becomes_a_failed_sample_and_the_rest_keep_their_scores(loaded):
    outcomes = score_samples(loaded("by_text"), _samples("ok", "raise", "ok"))
    assert [o.status for o in outcomes] == ["ok", "failed", "ok"]
    assert re.fullmatch(r"KeyError: 'missing thing' \(at .+/rewards\.py:\d+ in by_text\)",
                        outcomes[1].error)


def test_python_loop_is_interrupted_at_timeout(loaded):
    began = time.monotonic()
    outcomes = score_samples(loaded("by_text"), _samples("ok", "loop", "ok"), Limits(timeout_s=0.3))
    assert time.monotonic() - began < 2
    assert [o.status for o in outcomes] == ["ok", "timeout", "ok"]
    assert outcomes[1].error == "SampleTimeout: exceeded timeout_s=0.3"


def test_timeout_cannot_be_swallowed_by_except_exception(loaded):
    outcomes = score_samples(loaded("by_text"), _samples("swallow", "ok"), Limits(timeout_s=0.2))
    assert [o.status for o in outcomes] == ["timeout", "ok"]


def test_on_error_raise_stops_with_reward_error_naming_sample_and_cause(loaded):
    with pytest.raises(RewardError) as info:
        score_samples(loaded("by_text"), _samples("ok", "raise", "ok"), stop_on_error=True, first_index=10)
    assert info.value.index == 11
    assert "failed on sample 11: KeyError: 'missing thing'" in str(info.value)
    assert "by_text (file " in str(info.value)


def test_async_reward_runs_concurrently_up_to_the_limit(loaded):
    began = time.monotonic()
    outcomes = score_samples(loaded("concurrent"), _samples(*["x"] * 12), Limits(max_concurrency=4))
    assert max(o.score for o in outcomes) == 4.0
    assert time.monotonic() - began < 0.05 * 12 * 0.6  # well under sequential time


def test_async_reward_times_out_per_sample(loaded):
    outcomes = score_samples(loaded("concurrent"), _samples("x", "hang"), Limits(timeout_s=0.3))
    assert [o.status for o in outcomes] == ["ok", "timeout"]


def test_batch_reward_returning_wrong_length_fails_every_sample(loaded):
    outcomes = score_samples(loaded("bad_batch"), _samples("a", "b", "c"))
    assert {o.status for o in outcomes} == {"failed"}
    assert "returned 2 values for 3 samples" in outcomes[0].error


def test_batch_reward_values_are_validated_one_by_one(loaded):
    outcomes = score_samples(loaded("good_batch"), _samples("a", "nan"), first_index=4)
    assert [o.status for o in outcomes] == ["ok", "failed"]
    assert "for sample 5" in outcomes[1].error


def test_async_reward_keeps_one_event_loop_across_batches(reward_file):
    path = reward_file('''
import asyncio

class LoopBound:
    """Like an aiohttp session: created on first use, bound to that loop."""
    def __init__(self):
        self.loop = None
    async def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        if self.loop is None:
            self.loop = asyncio.get_running_loop()
        return float(asyncio.get_running_loop() is self.loop)
''', "loop_bound.py")
    reward = resolve(RewardRef.from_file(path, "LoopBound"))
    first = score_samples(reward, _samples("a", "b"))
    second = score_samples(reward, _samples("c"))
    assert [o.score for o in first + second] == [1.0, 1.0, 1.0]
