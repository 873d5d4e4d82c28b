"""Per-sample cost of the microbatched host paths: N concurrent per-sample calls on one
event loop, gathered into one batch (``integrations/_batching.Microbatcher``).

    python benchmarks/bench_microbatch.py [--n 2048] [--repeat 5]

In one process, no Ray (``executor: local``, the ``gsm8k`` plugin), on the same
gsm8k-style responses (about 140 tokens, a BPE tokenizer trained in-process):

* baseline: one ``Scorer.score`` call on the N samples (the scoring itself);
* ``Scorer.score_together`` with one part per sample: the same call, each sample its own
  caller with its own result (what the Microbatcher does: the rule's own cost);
* verl's ``compute_score_async``: N calls at once, as verl's reward loop awaits them;
* verl's own ``RewardLoopWorker.compute_score_batch`` (one task per sample), run in
  this process, with verl-rewards' ``RewardManager`` (each ``run_single`` call one
  caller), and for reference with verl's naive manager and verl's own gsm8k.

Each prints microseconds per item (best of ``--repeat`` after a warm-up) and what
it adds per item over the baseline.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_verl_manager import MANAGER, gsm8k_run, verl_config

from verl_rewards import Sample, Scorer
from verl_rewards.integrations.verl import compute_score_async

LOCAL = [*MANAGER, "+reward.verl_rewards.executor=local"]


def best_of(repeat: int, run: Callable[[], Any]) -> float:
    run()  # warm-up: the reward is imported, caches fill
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - began)
    return best


def new_loop() -> asyncio.AbstractEventLoop:
    loop = asyncio.new_event_loop()
    asyncio.set_event_loop(loop)  # verl's reward managers take the loop current when built
    return loop


def on(loop: asyncio.AbstractEventLoop, make: Callable[[], Awaitable[Any]]) -> Callable[[], Any]:
    return lambda: loop.run_until_complete(make())


def main() -> int:
    args, tokenizer, data = gsm8k_run(__doc__, repeat=5)
    prompt_len = data.batch["prompts"].shape[1]
    texts = [tokenizer.decode(data.batch["responses"][i][: int(data.batch["attention_mask"][i, prompt_len:].sum())],
                              skip_special_tokens=True) for i in range(args.n)]
    samples = [Sample("openai/gsm8k", t, data.non_tensor_batch["reward_model"][i]["ground_truth"], {"index": i})
               for i, t in enumerate(texts)]
    print(f"{args.n} gsm8k responses; one process, executor=local; load average "
          f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

    results: dict[str, float] = {}
    with Scorer.from_config({"plugin": "gsm8k", "executor": "local"}) as scorer:
        results["baseline: one Scorer.score call"] = best_of(args.repeat, lambda: scorer.score(samples))
        parts = [(s,) for s in samples]
        results["Scorer.score_together, one part per sample"] = best_of(
            args.repeat, lambda: scorer.score_together(parts))

    async def async_calls() -> list[Any]:
        return await asyncio.gather(*(compute_score_async(s.data_source, s.solution_str, s.ground_truth,
                                                          s.extra_info, plugin="gsm8k") for s in samples))

    results["compute_score_async x N at once"] = best_of(args.repeat, on(new_loop(), async_calls))

    with tempfile.TemporaryDirectory() as tokenizer_dir:
        tokenizer.save_pretrained(tokenizer_dir)
        for label, overrides in (("RewardLoopWorker + verl-rewards RewardManager", LOCAL),
                                 ("RewardLoopWorker + verl naive manager + verl gsm8k", [])):
            loop = new_loop()
            worker = RewardLoopWorker(verl_config(tokenizer_dir, overrides))
            results[label] = best_of(args.repeat, on(loop, lambda w=worker: w.compute_score_batch(data)))

    base = results["baseline: one Scorer.score call"]
    for label, seconds in results.items():
        print(f"  {label:52s} {seconds / args.n * 1e6:7.1f} us/item  "
              f"(+{(seconds - base) / args.n * 1e6:6.1f} us/item over the baseline)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
