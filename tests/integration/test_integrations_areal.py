"""The AReaL adapter inside AReaL 1.0.4's own ``AsyncRewardWrapper`` (a process pool)."""

from __future__ import annotations

import asyncio
import pickle
import time
from collections.abc import Iterator

import pytest
from areal.api.reward_api import AsyncRewardWrapper

from verl_rewards.errors import ConfigError, RewardError, SkippedSample
from verl_rewards.integrations.areal import ArealReward, reward_fn

FAULTY = {"plugin": "faulty", "timeout_s": 2, "error_score": -1.0}
AREAL_TIMEOUT_S = 15.0  # AsyncRewardWrapper's default timeout_seconds


@pytest.fixture
def wrap() -> Iterator[type[AsyncRewardWrapper]]:
    """AReaL's wrapper; its shared process pools are shut down after the test."""
    yield AsyncRewardWrapper
    AsyncRewardWrapper._atexit_shutdown_all()


def _call(wrapper: AsyncRewardWrapper, completion: str, **row: object) -> float:
    """One call as AReaL's RLVR workflow makes it."""
    return asyncio.run(wrapper("What is 6 x 7?", completion, [1, 2, 3], [4, 5], **row))


def test_the_reward_pickles_as_a_small_reference_to_its_section():
    fn = reward_fn("exact_match", kwargs={"bonus": 0.5})
    data = pickle.dumps(fn)
    assert len(data) < 600
    assert b"verl_rewards_testkit" not in data  # no plugin code, only the section
    copy = pickle.loads(data)
    assert isinstance(copy, ArealReward) and copy.section == fn.section and copy.__name__ == "exact_match"


def test_a_plugin_by_name_scores_in_areals_process_pool(wrap):
    wrapper = wrap(reward_fn("exact_match"), timeout_seconds=AREAL_TIMEOUT_S, max_workers=1)
    assert _call(wrapper, " 42 ", answer="42", data_source="gsm8k") == 1.0
    assert _call(wrapper, "41", answer="42") == 0.0


def test_a_raising_sample_scores_error_score_at_once_instead_of_failing_the_episode(wrap):
    wrapper = wrap(reward_fn(FAULTY), timeout_seconds=AREAL_TIMEOUT_S, max_workers=1)
    assert _call(wrapper, "raise", answer="42") == -1.0
    assert _call(wrapper, "42", answer="42") == 1.0  # the same pool process goes on


def test_a_hanging_sample_is_bounded_by_our_timeout_well_under_areals(wrap):
    wrapper = wrap(reward_fn(FAULTY), timeout_seconds=AREAL_TIMEOUT_S, max_workers=1)
    began = time.monotonic()
    assert _call(wrapper, "loop", answer="42") == -1.0  # not AReaL's 0 for an abandoned call
    assert time.monotonic() - began < AREAL_TIMEOUT_S / 2
    assert _call(wrapper, "42", answer="42") == 1.0  # the worker is free again


def test_a_sample_stuck_in_c_is_bounded_in_areals_pool_by_the_default_executor(wrap):
    section = {**FAULTY, "timeout_s": 1}
    wrapper = wrap(reward_fn(section), timeout_seconds=AREAL_TIMEOUT_S, max_workers=1)
    assert _call(wrapper, "42", answer="42") == 1.0  # the pool process starts its workers
    began = time.monotonic()
    assert _call(wrapper, "c_sleep", answer="42") == -1.0
    assert time.monotonic() - began < 1 + 2  # timeout_s + 2 s; AReaL's own pool process lives
    assert _call(wrapper, "42", answer="42") == 1.0


def test_on_error_raise_reaches_areal_which_retries_and_reraises(wrap):
    wrapper = wrap(reward_fn({**FAULTY, "on_error": "raise"}), timeout_seconds=AREAL_TIMEOUT_S,
                   max_workers=1, max_retries=1)
    with pytest.raises(RewardError, match="faulty"):
        _call(wrapper, "raise", answer="42")


def test_on_error_skip_raises_for_the_failed_sample_so_areal_rejects_its_episode(wrap):
    # AReaL's WorkflowExecutor rejects an episode whose workflow raises (never trained on);
    # its wrapper retries the reward first, and re-raises.
    wrapper = wrap(reward_fn({**FAULTY, "on_error": "skip"}), timeout_seconds=AREAL_TIMEOUT_S,
                   max_workers=1, max_retries=1)
    with pytest.raises(SkippedSample) as skipped:
        _call(wrapper, "raise", answer="42")
    assert skipped.value.plugin.startswith("faulty (verl-rewards-testkit")
    assert skipped.value.cause.startswith("RuntimeError: the reward raised on purpose")
    assert _call(wrapper, "42", answer="42") == 1.0  # the others score


def test_row_keys_are_configurable(wrap):
    fn = reward_fn("exact_match", answer_key="solution", data_source_key="source")
    sample = fn.sample("p", "yes", {"solution": "yes", "source": "qa", "extra_info": {"k": 1}})
    assert (sample.ground_truth, sample.data_source, sample.extra_info, sample.prompt) == (
        "yes", "qa", {"k": 1}, "p")
    wrapper = wrap(fn, timeout_seconds=AREAL_TIMEOUT_S, max_workers=1)
    assert _call(wrapper, "yes", solution="yes") == 1.0


def test_the_import_string_reward_takes_its_section_from_the_environment(wrap, monkeypatch):
    from areal.utils.dynamic_import import import_from_string

    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.setenv("VERL_REWARDS_CONFIG", '{"plugin": "faulty", "timeout_s": 2, "error_score": -1}')
    fn = import_from_string("verl_rewards.integrations.areal.reward")  # as RLVRWorkflow loads it
    wrapper = wrap(fn, timeout_seconds=AREAL_TIMEOUT_S, max_workers=1)
    assert [_call(wrapper, r, answer="42") for r in ("42", "raise")] == [1.0, -1.0]


def test_a_wrong_plugin_name_fails_in_the_driver():
    with pytest.raises(ConfigError, match="exact_match"):
        reward_fn("exact_mach")


def test_the_docs_example_prints_what_it_says(run_docs_example):
    printed, claims = run_docs_example("areal")
    assert printed == claims
