"""verl's RewardLoopManager scoring one batch: verl's naive manager vs verl-rewards' manager.

    python benchmarks/bench_verl_manager.py [--n 2048] [--repeat 3]

The same 2048 responses (about 140 tokens each, a BPE tokenizer trained
in-process, answers written ``#### N``) go through verl 0.9.1's own
``RewardLoopManager.compute_rm_score`` with ``reward.num_workers=2`` reward-loop
actors, three ways:

* baseline: verl's naive manager with verl's own ``gsm8k.compute_score`` (what
  verl does for ``data_source=openai/gsm8k`` with no custom reward);
* verl-rewards' ``RewardManager``, ``gsm8k`` plugin, ``executor: local``
  (each reward-loop actor scores its own share, with timeouts);
* verl-rewards' ``RewardManager``, ``executor: ray`` (one shared pool of two
  reward actors for the job: timeouts that hold in C, crash isolation).

Each prints microseconds per item (best of ``--repeat`` after a warm-up) and
its ratio to the baseline; the three must produce the same ``rm_scores``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np
import ray
import torch
import verl
from hydra import compose, initialize_config_dir
from tensordict import TensorDict
from verl.experimental.reward_loop.reward_loop import RewardLoopManager
from verl.protocol import DataProto

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_token_rewards import build_batch, build_tokenizer

MANAGER = [
    "reward.reward_manager.source=importlib",
    "reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl",
    "reward.reward_manager.name=RewardManager",
    "+reward.verl_rewards.plugin=gsm8k",
    "+reward.verl_rewards.num_workers=2",
    "+reward.verl_rewards.worker_num_cpus=0.5",
]


def verl_config(tokenizer_dir: str, overrides: list[str]):
    config_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=config_dir, version_base=None):
        return compose("ppo_trainer", overrides=[
            f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.num_workers=2", *overrides])


def gsm8k_batch(tokenizer, n: int) -> DataProto:
    p_ids, r_ids, attention, truths = build_batch(tokenizer, n)
    # verl's strict gsm8k reads "#### N": end each response with it.
    for i in range(n):
        valid = int(attention[i, p_ids.shape[1]:].sum())
        tail = tokenizer(f" #### {truths[i] if i % 3 else int(truths[i]) + 1}")["input_ids"]
        start = min(valid, r_ids.shape[1] - len(tail))
        r_ids[i, start: start + len(tail)] = torch.tensor(tail)
        attention[i, p_ids.shape[1] + start: p_ids.shape[1] + start + len(tail)] = 1
    tensors = TensorDict({"prompts": p_ids, "responses": r_ids, "attention_mask": attention,
                          "input_ids": torch.cat([p_ids, r_ids], dim=1)}, batch_size=n)
    non_tensor = {
        "data_source": np.array(["openai/gsm8k"] * n, dtype=object),
        "reward_model": np.array([{"ground_truth": t} for t in truths], dtype=object),
        "extra_info": np.array([{"index": i} for i in range(n)], dtype=object),
    }
    return DataProto(batch=tensors, non_tensor_batch=non_tensor)


def timed(config, data: DataProto, repeat: int) -> tuple[float, torch.Tensor]:
    manager = RewardLoopManager(config)
    try:
        output = manager.compute_rm_score(data)  # warm-up: workers load, pools start
        best = float("inf")
        for _ in range(repeat):
            began = time.perf_counter()
            output = manager.compute_rm_score(data)
            best = min(best, time.perf_counter() - began)
        return best, output.batch["rm_scores"]
    finally:
        for worker in manager.reward_loop_workers:
            ray.kill(worker)


def gsm8k_run(doc: str | None, repeat: int) -> tuple[argparse.Namespace, Any, DataProto]:
    """The command line (``--n`` responses, best of ``--repeat``), the tokenizer, and the
    batch of ``--n`` gsm8k responses (this script's and bench_microbatch.py's)."""
    parser = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--n", type=int, default=2048)
    parser.add_argument("--repeat", type=int, default=repeat)
    args = parser.parse_args()
    tokenizer = build_tokenizer()
    return args, tokenizer, gsm8k_batch(tokenizer, args.n)


def main() -> int:
    args, tokenizer, data = gsm8k_run(__doc__, repeat=3)
    mask = data.batch["attention_mask"][:, data.batch["prompts"].shape[1]:]
    print(f"batch: {args.n} responses, mean {mask.sum(-1).float().mean():.0f} tokens; "
          f"RewardLoopManager with 2 reward-loop actors")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False, configure_logging=False)
    try:
        with tempfile.TemporaryDirectory() as tokenizer_dir:
            tokenizer.save_pretrained(tokenizer_dir)
            runs = {
                "verl naive manager + verl gsm8k": [],
                "verl-rewards manager, executor=local": [*MANAGER, "+reward.verl_rewards.executor=local"],
                "verl-rewards manager, executor=ray (shared pool)": [*MANAGER],
            }
            results = {label: timed(verl_config(tokenizer_dir, o), data, args.repeat)
                       for label, o in runs.items()}
    finally:
        ray.shutdown()
    (base, expected), *_ = results.values()
    for label, (seconds, scores) in results.items():
        same = "same rm_scores" if torch.equal(scores, expected) else "DIFFERENT rm_scores"
        print(f"  {label:50s} {seconds / args.n * 1e6:7.1f} us/item  "
              f"({base / seconds:4.2f}x the baseline's speed; {same})")
    return 0 if all(torch.equal(s, expected) for _, s in results.values()) else 1


if __name__ == "__main__":
    sys.exit(main())
