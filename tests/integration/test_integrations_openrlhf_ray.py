"""The OpenRLHF reward file on Ray workers, shipped the way OpenRLHF ships it."""

from __future__ import annotations

import importlib.util
import os

import pytest

import verl_rewards.integrations.openrlhf_reward as real_module

pytestmark = pytest.mark.ray


def test_reward_func_shipped_by_value_scores_on_a_worker_without_the_env(ray_session, monkeypatch):
    import ray

    @ray.remote
    def worker_env():
        return os.environ.get("VERL_REWARDS_PLUGIN")

    @ray.remote
    def call_in_worker(fn, queries, prompts, labels):  # OpenRLHF >= 0.9: inside its vLLM actors
        return fn(queries, prompts, labels), os.getpid()

    # Set after Ray started: the workers' environment does not have it.
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    monkeypatch.setenv("VERL_REWARDS_KWARGS", '{"bonus": 0.5}')
    spec = importlib.util.spec_from_file_location("reward_func", real_module.__file__)
    reward_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reward_module)
    assert ray.get(worker_env.remote()) is None

    # OpenRLHF 0.8: self.custom_reward_func = ray.remote(reward_module.reward_func)
    remote_fn = ray.remote(reward_module.reward_func)
    info = ray.get(remote_fn.remote(["Q 1</s>", "Q 2</s>"], ["Q", "Q"], ["1", "1"]))
    assert info["rewards"].tolist() == [1.5, 0.5]

    info, pid = ray.get(call_in_worker.remote(reward_module.reward_func, ["Q 1"], ["Q"], ["1"]))
    assert info["rewards"].tolist() == [1.5] and pid != os.getpid()
