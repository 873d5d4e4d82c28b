"""``on_error: skip`` in the verl manager, driven through verl 0.9.1's own reward loop
(real Ray actors): under verl's v1 trainer a failed sample's reward call raises, which
verl's rollout records as a failed session (the sample is never stored for training);
the legacy trainer and a colocated reward model, which cannot leave one sample out, are
refused when verl builds the manager."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
import ray
import torch
import verl
from hydra import compose, initialize_config_dir
from tensordict import TensorDict
from transformers import PreTrainedTokenizerFast
from verl.experimental.reward_loop.reward_loop import RewardLoopManager
from verl.protocol import DataProto

from verl_rewards.errors import ConfigError, SkippedSample
from verl_rewards.hosts import refusal, verl_leaves_out_failed_sessions

pytestmark = pytest.mark.ray

SKIP = [
    "reward.reward_manager.source=importlib",
    "reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl",
    "reward.reward_manager.name=RewardManager",
    "+reward.verl_rewards.plugin=faulty", "+reward.verl_rewards.on_error=skip",
    "+reward.verl_rewards.error_score=-1", "+reward.verl_rewards.executor=local",
]
ROWS = ["42", "raise", "41", "nan"]  # faulty: exact match against "42", or the named fault


def _config(tokenizer_dir: Path, overrides: list[str]):
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose("ppo_trainer", overrides=[
            f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.num_workers=1", *SKIP,
            *overrides])


def _batch(tokenizer_dir: Path, responses: list[str]) -> DataProto:
    """One-token prompts and one-word responses, as verl's agent loop hands them over."""
    tok = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    n = len(responses)
    ids = torch.tensor([tok.encode(r) for r in responses])  # one token each
    prompts = torch.full((n, 1), tok.convert_tokens_to_ids("hello"), dtype=torch.long)
    tensors = TensorDict({"prompts": prompts, "responses": ids,
                          "attention_mask": torch.ones(n, 2, dtype=torch.long),
                          "input_ids": torch.cat([prompts, ids], dim=1)}, batch_size=n)
    return DataProto(batch=tensors, non_tensor_batch={
        "data_source": np.array(["d"] * n, dtype=object),
        "reward_model": np.array([{"ground_truth": "42"}] * n, dtype=object),
        "extra_info": np.array([{"index": i} for i in range(n)], dtype=object),
    })


def test_verls_default_trainer_is_the_one_that_drops_failed_sessions(tokenizer_dir):
    assert verl_leaves_out_failed_sessions(_config(tokenizer_dir, []))  # trainer.use_v1: true
    assert not verl_leaves_out_failed_sessions(_config(tokenizer_dir, ["trainer.use_v1=false"]))
    colocated_rm = ["reward.reward_model.enable=true", "reward.reward_model.enable_resource_pool=false"]
    assert not verl_leaves_out_failed_sessions(_config(tokenizer_dir, colocated_rm))


def test_v1_a_failed_sample_raises_in_the_rollouts_reward_call_and_the_rest_score(
        ray_session, tokenizer_dir):
    manager = RewardLoopManager(_config(tokenizer_dir, []))
    try:
        worker = manager.reward_loop_worker_handles[0]
        data = _batch(tokenizer_dir, ROWS)
        # The call verl's agent loop makes for each finished session (AgentLoopWorker._compute_score).
        refs = [worker.compute_score.remote(data[i:i + 1]) for i in range(len(data))]
        ok = ray.get([refs[0], refs[2]], timeout=120)
        assert [r["reward_score"] for r in ok] == [1.0, 0.0]
        assert [r["reward_extra_info"]["trainable"] for r in ok] == [1.0, 1.0]
        for ref, cause in ((refs[1], "RuntimeError: the reward raised on purpose"),
                           (refs[3], "RewardValueError")):
            with pytest.raises(ray.exceptions.RayTaskError) as raised:
                ray.get(ref, timeout=120)
            assert isinstance(raised.value.cause, SkippedSample)
            message = str(raised.value.cause)
            assert "faulty (verl-rewards-testkit" in message and cause in message
            assert "left out of training (on_error='skip')" in message
    finally:
        for actor in manager.reward_loop_workers:
            ray.kill(actor)


@pytest.mark.parametrize("overrides", [
    ["trainer.use_v1=false"],
    ["reward.reward_model.enable=true", "reward.reward_model.enable_resource_pool=false"],
])
def test_a_trainer_that_cannot_drop_one_sample_refuses_skip_when_verl_builds_the_manager(
        tokenizer_dir, overrides):
    from verl.trainer.ppo.reward import load_reward_manager  # what each reward-loop actor runs

    tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    with pytest.raises(ConfigError) as refused:
        load_reward_manager(_config(tokenizer_dir, overrides), tokenizer)
    assert str(refused.value) == refusal("verl_legacy")
    assert "Use verl's v1 trainer (trainer.use_v1=true, the default)" in str(refused.value)


def test_the_function_adapter_refuses_skip_and_names_the_manager():
    from verl_rewards.integrations.verl import compute_score

    with pytest.raises(ConfigError, match="Use verl-rewards' RewardManager") as raised:
        compute_score("d", "42", "42", plugin="exact_match", verl_rewards={"on_error": "skip"})
    assert "reward.reward_manager.name=RewardManager" in str(raised.value)


def test_verls_older_batch_call_refuses_skip(tokenizer_dir):
    from verl_rewards.integrations.verl import RewardManager

    config = _config(tokenizer_dir, [])  # v1: per-sample calls raise, the batch call cannot
    tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    manager = RewardManager(config=config, tokenizer=tokenizer, compute_score=None)
    with pytest.raises(ConfigError, match="refused in verl 0.9.1 RewardManager, legacy trainer"):
        manager(_batch(tokenizer_dir, ROWS), return_dict=True)
