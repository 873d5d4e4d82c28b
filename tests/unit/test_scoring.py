from __future__ import annotations

import re
import threading
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


# -- whatever the reward raises is its sample's failure (issue 26, item 1) ------------------

EXITS = '''
import asyncio, sys

def sample(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "exit":
        sys.exit(0)
    if solution_str == "interrupt":
        raise KeyboardInterrupt("the reward's own")
    if solution_str == "generator_exit":
        raise GeneratorExit("closed")
    return 1.0

def batch(data_sources, solution_strs, ground_truths, extra_infos):
    if "exit" in solution_strs:
        sys.exit(3)
    return [1.0] * len(solution_strs)

async def async_sample(data_source, solution_str, ground_truth, extra_info=None):
    await asyncio.sleep(0)
    if solution_str == "cancelled":
        raise asyncio.CancelledError("its own")
    return sample(data_source, solution_str, ground_truth, extra_info)  # its exits, raised in the coroutine
'''


def _line(source: str, needle: str) -> int:
    return next(i for i, text in enumerate(source.splitlines(), 1) if needle in text)


@pytest.fixture
def exits(reward_file):
    path = reward_file(EXITS, "exits.py")
    return path, lambda name: resolve(RewardRef.from_file(path, name))


def test_system_exit_and_generator_exit_fail_only_their_sample(exits):
    path, loaded = exits
    outcomes = score_samples(loaded("sample"), _samples("ok", "exit", "generator_exit", "ok"))
    assert [o.status for o in outcomes] == ["ok", "failed", "failed", "ok"]
    assert outcomes[1].error == f"SystemExit: 0 (at {path}:{_line(EXITS, 'sys.exit(0)')} in sample)"
    assert outcomes[2].error == (f"GeneratorExit: closed (at {path}:"
                                 f"{_line(EXITS, 'GeneratorExit(')} in sample)")


def test_a_keyboard_interrupt_is_the_rewards_own_off_the_main_thread_and_the_users_on_it(exits):
    _, loaded = exits
    reward = loaded("sample")
    with pytest.raises(KeyboardInterrupt):  # where a real Ctrl-C lands: the caller's
        score_samples(reward, _samples("interrupt"))
    outcomes = []
    worker = threading.Thread(target=lambda: outcomes.extend(score_samples(reward, _samples("interrupt", "ok"))))
    worker.start()
    worker.join(30)
    assert [o.status for o in outcomes] == ["failed", "ok"]
    assert outcomes[0].error.startswith("KeyboardInterrupt: the reward's own (at ")


def test_a_batch_reward_that_exits_fails_its_batch(exits):
    path, loaded = exits
    outcomes = score_samples(loaded("batch"), _samples("a", "exit"))
    assert [o.error for o in outcomes] == [f"SystemExit: 3 (at {path}:{_line(EXITS, 'sys.exit(3)')} in batch)"] * 2


@pytest.mark.timeout(60)
def test_an_async_reward_that_exits_fails_its_sample_and_the_loop_goes_on(exits):
    _, loaded = exits
    reward = loaded("async_sample")
    texts = ("ok", "exit", "interrupt", "generator_exit", "cancelled")
    outcomes = score_samples(reward, _samples(*texts), Limits(timeout_s=5))
    assert [o.status for o in outcomes] == ["ok", "failed", "failed", "failed", "failed"]
    assert [o.error.split(" (at ")[0] for o in outcomes[1:]] == [
        "SystemExit: 0", "KeyboardInterrupt: the reward's own", "GeneratorExit: closed",
        "CancelledError: its own"]
    assert [o.score for o in score_samples(reward, _samples("ok"))] == [1.0]  # the loop lives


# -- a reward that catches the timeout (issue 26, item 10) ------------------------------------

CATCHES_ALL = '''
import time

def _spin(seconds):
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass

def sample(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "retry":      # three attempts, each swallowing whatever stops it
        for _ in range(3):
            try:
                _spin(3)
            except:  # noqa: E722
                pass
        return 1.0
    if solution_str == "return_zero":
        try:
            _spin(30)
        except:  # noqa: E722
            return 0.0
    if solution_str == "loop":
        _spin(30)
    return 1.0

def batch(data_sources, solution_strs, ground_truths, extra_infos):
    for _ in range(3):
        try:
            _spin(3)
        except:  # noqa: E722
            pass
    return [1.0] * len(solution_strs)
'''


@pytest.mark.timeout(60)
def test_a_timeout_the_reward_catches_is_raised_again_and_the_sample_is_a_timeout(reward_file):
    reward = resolve(RewardRef.from_file(reward_file(CATCHES_ALL, "catches.py"), "sample"))
    outcomes = score_samples(reward, _samples("retry", "return_zero", "loop", "ok"), Limits(timeout_s=0.2))
    assert [o.status for o in outcomes] == ["timeout", "timeout", "timeout", "ok"]
    caught = "SampleTimeout: exceeded timeout_s=0.2 (the reward caught the timeout and returned later)"
    assert [o.error for o in outcomes[:2]] == [caught, caught]
    assert outcomes[2].error == "SampleTimeout: exceeded timeout_s=0.2"  # the next call is timed too


@pytest.mark.timeout(60)
def test_a_batch_call_that_catches_its_timeout_is_a_timeout_for_every_sample(reward_file):
    reward = resolve(RewardRef.from_file(reward_file(CATCHES_ALL, "catches.py"), "batch"))
    outcomes = score_samples(reward, _samples("a", "b"), Limits(timeout_s=0.1))
    assert [o.status for o in outcomes] == ["timeout", "timeout"]
