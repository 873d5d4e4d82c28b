"""The verl reward manager inside verl 0.9.1's own RewardLoopManager (real Ray actors), and
it and ``compute_score_async`` inside verl's own reward-loop worker, run in this process."""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path

import numpy as np
import pytest
import ray
import torch
import verl
from hydra import compose, initialize_config_dir
from omegaconf import OmegaConf
from tensordict import TensorDict
from transformers import PreTrainedTokenizerFast
from verl.experimental.reward_loop.reward_loop import RewardLoopManager, RewardLoopWorker
from verl.protocol import DataProto

pytestmark = pytest.mark.ray

RESPONSE_LEN = 4
PROMPT_LEN = 3
MANAGER = [
    "reward.reward_manager.source=importlib",
    "reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl",
    "reward.reward_manager.name=RewardManager",
]


def verl_config(tokenizer_dir: Path, overrides: list[str], loop_actors: int = 1):
    """verl's own ppo_trainer config (hydra), as its trainer composes it, with ``loop_actors``
    reward-loop actors (each imports verl, the costly part of these tests: two only where a
    test is about how verl splits a batch between them)."""
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose("ppo_trainer", overrides=[
            f"actor_rollout_ref.model.path={tokenizer_dir}", f"reward.num_workers={loop_actors}",
            *overrides])


def batch(tokenizer_dir: Path, rows: list[tuple[str, str, str]]) -> DataProto:
    """A verl batch: left-padded prompts, right-padded one-word responses."""
    tok = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    responses = torch.zeros(len(rows), RESPONSE_LEN, dtype=torch.long)
    mask = torch.zeros(len(rows), PROMPT_LEN + RESPONSE_LEN, dtype=torch.long)
    for i, (_, response, _) in enumerate(rows):
        ids = tok.encode(response)
        responses[i, : len(ids)] = torch.tensor(ids)
        mask[i, PROMPT_LEN - 1:] = 0
        mask[i, PROMPT_LEN - 1] = 1  # a one-token prompt
        mask[i, PROMPT_LEN: PROMPT_LEN + len(ids)] = 1
    prompts = torch.full((len(rows), PROMPT_LEN), tok.pad_token_id, dtype=torch.long)
    prompts[:, -1] = tok.convert_tokens_to_ids("hello")
    tensors = TensorDict({"prompts": prompts, "responses": responses, "attention_mask": mask,
                          "input_ids": torch.cat([prompts, responses], dim=1)},
                         batch_size=len(rows))
    non_tensor = {
        "data_source": np.array([r[0] for r in rows], dtype=object),
        "reward_model": np.array([{"ground_truth": r[2]} for r in rows], dtype=object),
        "extra_info": np.array([{"index": i} for i in range(len(rows))], dtype=object),
    }
    return DataProto(batch=tensors, non_tensor_batch=non_tensor)


def score_with(config, per_sample: bool = False) -> tuple[DataProto, float]:
    manager = RewardLoopManager(config)
    try:
        began = time.monotonic()
        output = manager.compute_rm_score(run_batch.data)
        elapsed = time.monotonic() - began
        if per_sample:  # as verl's agent loop does: one compute_score call per sample, at once
            workers = manager.reward_loop_worker_handles
            data = run_batch.data
            run_batch.per_sample = ray.get([workers[i % len(workers)].compute_score.remote(data[i:i + 1])
                                            for i in range(len(data))], timeout=120)
        run_batch.pools = [a for a in ray.util.list_named_actors(all_namespaces=True)
                           if a["name"].startswith("verl_rewards_pool_")]
        return output, elapsed
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)


class run_batch:
    data: DataProto
    pools: list[dict[str, str]]
    per_sample: list[dict]


def last_token_scores(output: DataProto, data: DataProto) -> list[float]:
    valid = data.batch["attention_mask"][:, PROMPT_LEN:].sum(dim=1)
    return [float(output.batch["rm_scores"][i, valid[i] - 1]) for i in range(len(valid))]


def test_a_plugin_by_name_gives_the_same_rm_scores_as_verls_naive_manager(ray_session, tokenizer_dir):
    rows = [("d", "42", "42"), ("d", "41", "42"), ("d", "7 7", "7"), ("d", "7", "7")] * 3
    run_batch.data = batch(tokenizer_dir, rows)
    ours, _ = score_with(verl_config(tokenizer_dir, [
        *MANAGER, "+reward.verl_rewards.plugin=exact_match", "+reward.verl_rewards.num_workers=2",
        "+reward.verl_rewards.worker_num_cpus=0.5"]))
    naive, _ = score_with(verl_config(tokenizer_dir, [
        "reward.custom_reward_function.path=pkg://verl_rewards.integrations.verl",
        "reward.custom_reward_function.name=compute_score",
        "+reward.custom_reward_function.reward_kwargs.plugin=exact_match"]))
    assert torch.equal(ours.batch["rm_scores"], naive.batch["rm_scores"])
    assert last_token_scores(ours, run_batch.data) == [1.0, 0.0, 0.0, 1.0] * 3
    assert list(ours.non_tensor_batch["error"]) == [None] * 12
    assert "error" in ours.meta_info["reward_extra_keys"]


def test_every_reward_loop_actor_shares_one_pool(ray_session, tokenizer_dir):
    run_batch.data = batch(tokenizer_dir, [("d", "42", "42"), ("d", "41", "42")] * 16)
    output, _ = score_with(verl_config(tokenizer_dir, [
        *MANAGER, "+reward.verl_rewards.plugin=exact_match", "+reward.verl_rewards.num_workers=2",
        "+reward.verl_rewards.worker_num_cpus=0.5", "+reward.verl_rewards.chunk_size=4",
        "+reward.verl_rewards.extra_keys=[pid]"], loop_actors=2),
        per_sample=True)
    assert len(run_batch.pools) == 1  # two reward-loop actors, one named pool
    assert [r["reward_score"] for r in run_batch.per_sample] == [1.0, 0.0] * 16
    assert {r["reward_extra_info"]["error"] for r in run_batch.per_sample} == {None}
    pids = set(output.non_tensor_batch["pid"])
    assert len(pids) == 2 and os.getpid() not in pids  # the pool's two reward actors scored
    # The pool is owned by a reward-loop actor: it goes when they go.
    deadline = time.monotonic() + 20
    while [a for a in ray.util.list_named_actors(all_namespaces=True)
           if a["name"].startswith("verl_rewards_pool_")]:
        assert time.monotonic() < deadline, "the pool outlived the reward-loop actors"
        time.sleep(0.2)


def test_on_error_raise_fails_only_the_call_of_the_sample_that_failed(tokenizer_dir):
    from verl_rewards.errors import RewardError

    config = verl_config(tokenizer_dir, [
        *MANAGER, "+reward.verl_rewards.plugin=faulty", "+reward.verl_rewards.executor=local",
        "+reward.verl_rewards.on_error=raise"])
    data = batch(tokenizer_dir, [("d", "42", "42"), ("d", "raise", "42"), ("d", "41", "42"), ("d", "nan", "42")])

    async def agent_loop() -> list[object]:
        # verl's own reward-loop worker (its Ray actor's class), here on this loop: one
        # compute_score call per finished session, all at once (AgentLoopWorker._compute_score)
        worker = RewardLoopWorker(config)
        return await asyncio.gather(*(worker.compute_score(data[i:i + 1]) for i in range(len(data))),
                                    return_exceptions=True)

    ok, raised, wrong, nan = asyncio.run(agent_loop())
    assert [ok["reward_score"], wrong["reward_score"]] == [1.0, 0.0]
    assert ok["reward_extra_info"] == wrong["reward_extra_info"] == {"error": None}
    assert isinstance(raised, RewardError) and isinstance(nan, RewardError)
    assert (raised.index, nan.index) == (0, 0)  # each call's batch is its one sample
    assert str(raised).startswith("reward faulty (verl-rewards-testkit ")
    assert raised.cause.startswith("RuntimeError: the reward raised on purpose")
    assert nan.cause.startswith("RewardValueError")


def test_compute_score_async_under_raise_fails_only_the_call_of_the_sample_that_failed(tokenizer_dir,
                                                                                      verl_adapter_cache_cleared):
    from verl_rewards.errors import RewardError

    config = verl_config(tokenizer_dir, [  # verl's naive reward-loop manager awaits the function
        "reward.custom_reward_function.path=pkg://verl_rewards.integrations.verl",
        "reward.custom_reward_function.name=compute_score_async",
        "+reward.custom_reward_function.reward_kwargs.plugin=faulty",
        "+reward.custom_reward_function.reward_kwargs.verl_rewards.on_error=raise"])
    data = batch(tokenizer_dir, [("d", r, "42") for r in ("42", "raise", "41", "nan")] * 2)

    async def agent_loop() -> list[object]:
        worker = RewardLoopWorker(config)
        await worker.compute_score(data[:1])  # the first call imports the reward
        return await asyncio.gather(*(worker.compute_score(data[i:i + 1]) for i in range(len(data))),
                                    return_exceptions=True)

    results = asyncio.run(agent_loop())
    assert [r["reward_score"] for r in results[0::2]] == [1.0, 0.0] * 2
    assert all(isinstance(r, RewardError) and r.index == 0 for r in results[1::2])
    assert [r.cause.split(":")[0] for r in results[1::2]] == ["RuntimeError", "RewardValueError"] * 2


def test_verls_older_call_returns_the_token_level_tensor_and_extra_info(tokenizer_dir):
    from verl_rewards.integrations.verl import RewardManager

    data = batch(tokenizer_dir, [("d", "42", "42"), ("d", "raise", "42")])
    config = verl_config(tokenizer_dir, [
        *MANAGER, "+reward.verl_rewards.plugin=faulty", "+reward.verl_rewards.executor=local"])
    tokenizer = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    manager = RewardManager(config=config, tokenizer=tokenizer, compute_score=None)
    result = manager(data, return_dict=True)
    assert torch.equal(result["reward_tensor"], manager(data))
    assert result["reward_tensor"].sum().item() == 1.0
    assert result["reward_extra_info"]["error"][0] is None
    assert "RuntimeError" in result["reward_extra_info"]["error"][1]


def test_a_missing_section_says_how_to_add_it(tokenizer_dir):
    from verl_rewards.errors import ConfigError
    from verl_rewards.integrations.verl import RewardManager

    config = verl_config(tokenizer_dir, MANAGER)
    with pytest.raises(ConfigError, match=r"under reward.verl_rewards, e.g. \+reward.verl_rewards.plugin=gsm8k"):
        RewardManager(config=config, tokenizer=None, compute_score=None)


def test_a_routed_composite(ray_session, tokenizer_dir):
    rows = [("math/a", "42", "42"), ("chat", "42", "42"), ("math/b", "41", "42")]
    run_batch.data = batch(tokenizer_dir, rows)
    config = verl_config(tokenizer_dir, [
        *MANAGER,
        "+reward.verl_rewards.rewards.exact.plugin=exact_match",
        "+reward.verl_rewards.rewards.exact.weight=2",
        "+reward.verl_rewards.rewards.bonus.plugin=exact_match",
        "+reward.verl_rewards.rewards.bonus.kwargs.bonus=1",
        "+reward.verl_rewards.rewards.bonus.weight=0.5",
        "+reward.verl_rewards.executor=local"])
    # A glob route as a YAML file would give it (hydra's override grammar cannot spell "math/*").
    OmegaConf.update(config, "reward.verl_rewards.route",
                     {"math/*": ["exact", "bonus"], "*": "exact"}, force_add=True)
    output, _ = score_with(config)
    assert last_token_scores(output, run_batch.data) == [2.0 + 0.5 * 2.0, 2.0, 0.0 + 0.5 * 1.0]
    assert list(output.non_tensor_batch["bonus"]) == [2.0, None, 1.0]


def test_hangs_crashes_raises_and_nan_fail_only_themselves(ray_session, tokenizer_dir):
    faults = ["loop", "c_sleep", "exit", "raise", "nan"]
    rows = [("d", "42", "42"), *[("d", f, "42") for f in faults], ("d", "41", "42"), ("d", "42", "42")]
    run_batch.data = batch(tokenizer_dir, rows)
    output, elapsed = score_with(verl_config(tokenizer_dir, [
        *MANAGER, "+reward.verl_rewards.plugin=faulty", "+reward.verl_rewards.timeout_s=3",
        "+reward.verl_rewards.error_score=-1", "+reward.verl_rewards.num_workers=2",
        "+reward.verl_rewards.worker_num_cpus=0.5"]))
    assert last_token_scores(output, run_batch.data) == [1.0, -1.0, -1.0, -1.0, -1.0, -1.0, 0.0, 1.0]
    errors = list(output.non_tensor_batch["error"])
    assert errors[0] is None and errors[-2:] == [None, None]
    assert errors[1].startswith("SampleTimeout") and errors[2].startswith("SampleTimeout")
    assert errors[3].startswith("WorkerDied")
    assert "RuntimeError: the reward raised on purpose" in errors[4]
    assert errors[5].startswith("RewardValueError")
    assert elapsed < 120  # a hang check (each fault is bounded by timeout_s=3), not a speed test


def test_the_prompt_reaches_a_reward_that_asks_for_it(ray_session, tokenizer_dir, tmp_path):
    reward = tmp_path / "judge.py"
    reward.write_text(
        "def judge(data_source, solution_str, ground_truth, extra_info=None, prompt=None):\n"
        "    return {'score': float(solution_str == ground_truth), 'prompt': prompt}\n")
    run_batch.data = batch(tokenizer_dir, [("d", "42", "42"), ("d", "41", "42")])
    with_raw = batch(tokenizer_dir, [("d", "7", "7")])
    output, _ = score_with(verl_config(tokenizer_dir, [
        *MANAGER, f"+reward.verl_rewards.path={reward}", "+reward.verl_rewards.name=judge",
        "+reward.verl_rewards.executor=local", "+reward.verl_rewards.extra_keys=[prompt]"]))
    assert list(output.non_tensor_batch["prompt"]) == ["hello", "hello"]  # decoded prompt ids
    chat = [{"role": "user", "content": "say 7"}]
    with_raw.non_tensor_batch["raw_prompt"] = np.array([chat], dtype=object)
    run_batch.data = with_raw
    output, _ = score_with(verl_config(tokenizer_dir, [
        *MANAGER, f"+reward.verl_rewards.path={reward}", "+reward.verl_rewards.name=judge",
        "+reward.verl_rewards.executor=local", "+reward.verl_rewards.extra_keys=[prompt]"]))
    # verl's raw chat messages: a list, so it reaches verl as JSON text (see stackable)
    assert [json.loads(p) for p in output.non_tensor_batch["prompt"]] == [chat]


def test_a_reward_loop_actor_whose_chunk_all_failed_keeps_every_column(ray_session, tokenizer_dir, tmp_path):
    reward = tmp_path / "acc.py"
    reward.write_text(
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    if solution_str == 'raise':\n"
        "        raise ValueError('no')\n"
        "    return {'score': 1.0, 'acc': 1.0, 'unlisted': 3}\n")
    # verl splits the batch in two: actor 0 gets the raising half, actor 1 the good one.
    run_batch.data = batch(tokenizer_dir, [("d", "raise", "42")] * 4 + [("d", "42", "42")] * 4)
    output, _ = score_with(verl_config(tokenizer_dir, [
        *MANAGER, f"+reward.verl_rewards.path={reward}", "+reward.verl_rewards.executor=local",
        "+reward.verl_rewards.extra_keys=[acc]"], loop_actors=2))
    assert output.meta_info["reward_extra_keys"] == ["acc", "error"]
    assert list(output.non_tensor_batch["acc"]) == [None] * 4 + [1.0] * 4
    assert [e is None for e in output.non_tensor_batch["error"]] == [False] * 4 + [True] * 4


def test_a_list_valued_extra_key_and_a_failed_sample_do_not_crash_verls_step(ray_session, tokenizer_dir,
                                                                            tmp_path):
    reward = tmp_path / "steps.py"
    reward.write_text(
        "import numpy, torch\n"
        "def compute_score(data_source, solution_str, ground_truth, extra_info=None):\n"
        "    if solution_str == 'raise':\n"
        "        raise ValueError('no')\n"
        "    steps = [1.0] * len(solution_str)  # ragged across samples too\n"
        "    score = torch.tensor(1.0) if solution_str == '42' else numpy.array(0.5)  # 0-d, as verl takes\n"
        "    return {'score': score, 'steps': steps, 'shape': numpy.array(len(steps))}\n")
    run_batch.data = batch(tokenizer_dir, [("d", "42", "42"), ("d", "raise", "42"), ("d", "7", "7"),
                                           ("d", "42", "42")])
    output, _ = score_with(verl_config(tokenizer_dir, [
        *MANAGER, f"+reward.verl_rewards.path={reward}", "+reward.verl_rewards.executor=local",
        "+reward.verl_rewards.extra_keys=[steps,shape]"]))
    assert last_token_scores(output, run_batch.data) == [1.0, 0.0, 0.5, 1.0]
    assert output.non_tensor_batch["steps"].shape == (4,)  # one element per sample
    assert list(output.non_tensor_batch["steps"]) == ["[1.0, 1.0]", None, "[1.0]", "[1.0, 1.0]"]
    assert list(output.non_tensor_batch["shape"]) == [2, None, 1, 2]
    assert output.non_tensor_batch["error"][1].startswith("ValueError: no")


def test_on_error_skip_under_the_legacy_trainer_is_refused_naming_the_v1_trainer(tokenizer_dir):
    from verl_rewards.errors import ConfigError
    from verl_rewards.hosts import refusal
    from verl_rewards.integrations.verl import RewardManager

    config = verl_config(tokenizer_dir, [
        *MANAGER, "+reward.verl_rewards.plugin=faulty", "+reward.verl_rewards.executor=local",
        "+reward.verl_rewards.on_error=skip", "+reward.verl_rewards.error_score=-1",
        "trainer.use_v1=false"])
    with pytest.raises(ConfigError) as refused:  # it would train on error_score
        RewardManager(config=config, tokenizer=PreTrainedTokenizerFast.from_pretrained(tokenizer_dir),
                      compute_score=None)
    assert str(refused.value) == refusal("verl_legacy")


def test_a_pool_the_cluster_cannot_place_is_refused_when_the_manager_is_built(ray_session, tokenizer_dir):
    from verl_rewards.errors import ConfigError
    from verl_rewards.integrations.verl import RewardManager

    config = verl_config(tokenizer_dir, [
        *MANAGER, "+reward.verl_rewards.plugin=exact_match", "+reward.verl_rewards.num_workers=64"])
    with pytest.raises(ConfigError, match=r"cannot be placed on this Ray cluster: 64 worker\(s\) x 1 CPU = 64 "
                                          r"but the cluster has 2\. Lower reward\.verl_rewards\.num_workers, "
                                          r"reward\.verl_rewards\.worker_num_cpus"):
        RewardManager(config=config, tokenizer=None, compute_score=None)


def test_a_sequence_valued_extra_is_the_wires_json_text_nan_as_null():
    from verl_rewards.integrations.verl_manager import stackable

    assert stackable("k", [1.0, float("nan")]) == "[1.0, null]"
    assert stackable("k", np.array([1.5, np.nan])) == "[1.5, null]"
    assert stackable("k", (torch.tensor([1, 2]), {"x": np.int64(3)})) == '[[1, 2], {"x": 3}]'
    assert stackable("k", np.float64(0.5)) == 0.5  # a 0-d value stays a number
