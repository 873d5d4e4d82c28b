"""The slime adapter, called as slime calls ``--custom-rm-path`` (slime is not on the
package index: its ``Sample`` fields and calling convention are taken from its
``slime/utils/types.py`` and ``slime/rollout/rm_hub/__init__.py``)."""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import time
from argparse import Namespace
from dataclasses import dataclass, field
from typing import Any

import pytest

from verl_rewards.errors import ConfigError, RewardError
from verl_rewards.integrations.slime import METADATA_KEY

CUSTOM_RM_PATH = "verl_rewards.integrations.slime.reward"
FAULTY = {"plugin": "faulty", "timeout_s": 2, "error_score": -1.0}


@dataclass
class Sample:
    """slime's ``Sample``: the fields a reward reads, with slime's defaults."""

    group_index: int | None = None
    index: int | None = None
    prompt: str | list[dict[str, str]] = ""
    tokens: list[int] = field(default_factory=list)
    response: str = ""
    response_length: int = 0
    label: str | None = None
    reward: float | dict[str, Any] | None = None
    remove_sample: bool = False
    metadata: dict = field(default_factory=dict)


def load_function(path: str) -> Any:
    """slime's ``load_function``: ``pkg.module.attr``."""
    module_path, _, attr = path.rpartition(".")
    return getattr(importlib.import_module(module_path), attr)


def _args(group_rm: bool = False) -> Namespace:
    return Namespace(custom_rm_path=CUSTOM_RM_PATH, group_rm=group_rm, rm_type=None, reward_key=None)


async def _async_rm(args: Namespace, sample: Sample) -> Any:
    """slime's ``async_rm`` for a custom reward: ``await rm_function(args, sample)``."""
    return await load_function(args.custom_rm_path)(args, sample)


async def _batched_async_rm(args: Namespace, samples: list[Sample]) -> Any:
    """slime's ``batched_async_rm`` with ``--group-rm``: the whole group at once."""
    return await load_function(args.custom_rm_path)(args, samples)


def test_one_sample_gets_a_float_and_its_status_and_extra_keys_in_metadata(monkeypatch):
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)  # scored here: its pid is ours
    monkeypatch.setenv("VERL_REWARDS_CONFIG", json.dumps({"plugin": "exact_match", "executor": "local"}))
    sample = Sample(prompt="What is 6 x 7?", response=" 42 ", label="42", metadata={"split": "test"})
    assert asyncio.run(_async_rm(_args(), sample)) == 1.0
    assert sample.metadata[METADATA_KEY] == {"status": "ok", "error": None, "pid": os.getpid()}
    assert sample.metadata["split"] == "test"


def test_a_list_gets_a_list_in_order_with_faults_isolated_and_bounded(monkeypatch):
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.setenv("VERL_REWARDS_CONFIG", json.dumps(FAULTY))
    group = [Sample(response=r, label="42") for r in ("42", "raise", "loop", "41")]
    began = time.monotonic()
    rewards = asyncio.run(_batched_async_rm(_args(group_rm=True), group))
    assert time.monotonic() - began < 15  # slime has no reward timeout of its own
    assert rewards == [1.0, -1.0, -1.0, 0.0]
    statuses = [s.metadata[METADATA_KEY]["status"] for s in group]
    assert statuses == ["ok", "failed", "timeout", "ok"]
    assert group[1].metadata[METADATA_KEY]["error"].startswith("RuntimeError: the reward raised on purpose")


def test_a_sample_stuck_in_c_is_bounded_by_the_default_executor(monkeypatch):
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.setenv("VERL_REWARDS_CONFIG", json.dumps({**FAULTY, "timeout_s": 1}))
    assert asyncio.run(_async_rm(_args(), Sample(response="42", label="42"))) == 1.0  # pool starts
    group = [Sample(response=r, label="42") for r in ("42", "c_sleep", "41")]
    began = time.monotonic()
    rewards = asyncio.run(_batched_async_rm(_args(group_rm=True), group))
    assert time.monotonic() - began < 1 + 2  # timeout_s + 2 s, the host alive
    assert rewards == [1.0, -1.0, 0.0]
    assert group[1].metadata[METADATA_KEY]["status"] == "timeout"


def test_the_samples_data_source_prompt_and_metadata_reach_the_plugin():
    from verl_rewards.integrations.slime import sample_of

    chat = [{"role": "user", "content": "What is 6 x 7?"}]
    sample = sample_of(Sample(prompt=chat, response="42", label="42",
                              metadata={"data_source": "gsm8k", "level": 2}))
    assert (sample.data_source, sample.solution_str, sample.ground_truth, sample.prompt) == (
        "gsm8k", "42", "42", chat)
    assert sample.extra_info == {"data_source": "gsm8k", "level": 2}
    assert sample_of(Sample(response="x")).data_source == "slime"


def test_on_error_skip_removes_the_failed_samples_from_training(monkeypatch):
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.setenv("VERL_REWARDS_CONFIG", json.dumps({**FAULTY, "on_error": "skip"}))
    group = [Sample(response=r, label="42") for r in ("42", "raise", "41")]
    assert asyncio.run(_batched_async_rm(_args(group_rm=True), group)) == [1.0, -1.0, 0.0]
    assert [s.remove_sample for s in group] == [False, True, False]


def test_on_error_raise_reaches_slime(monkeypatch):
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.setenv("VERL_REWARDS_CONFIG", json.dumps({**FAULTY, "on_error": "raise"}))
    with pytest.raises(RewardError, match="faulty"):
        asyncio.run(_async_rm(_args(), Sample(response="raise", label="42")))


def test_no_reward_in_the_environment_is_a_config_error_naming_both_variables(monkeypatch):
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.delenv("VERL_REWARDS_CONFIG", raising=False)
    with pytest.raises(ConfigError, match="VERL_REWARDS_PLUGIN.*VERL_REWARDS_CONFIG"):
        asyncio.run(_async_rm(_args(), Sample(response="42", label="42")))


def test_the_docs_example_prints_what_it_says(run_docs_example, monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "")  # restored after the example sets it
    monkeypatch.delenv("VERL_REWARDS_CONFIG", raising=False)
    printed, claims = run_docs_example("slime")
    assert printed == claims
