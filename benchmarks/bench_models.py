"""Model rewards: the judge's throughput and the classifier's samples per second.

    python benchmarks/bench_models.py            # full run (~1-2 minutes)
    python benchmarks/bench_models.py --quick    # fewer samples

1. ``llm_judge`` through a local ``Scorer`` against a chat-completions server on
   127.0.0.1 whose every reply takes 50 ms, at several ``reward.max_concurrency``;
   compared with the ideal ``max_concurrency / 0.05`` per second and with the
   bare ``AsyncOpenAI`` client under the same semaphore (no verl-rewards).
2. ``hf_reward_model`` (a small random-init Llama classifier built in code, CPU)
   through a local ``Scorer`` at several ``batch_size``; compared with the bare
   model's forward passes over the same token ids.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from openai import AsyncOpenAI
from verl_rewards_models.classifier import HFRewardModel
from verl_rewards_models.tiny import save_tiny_classifier

from verl_rewards import Scorer

LATENCY_S = 0.05
REPEAT = 3
SERVER = """
import sys, time
from verl_rewards_models.testing import ChatServer
with ChatServer(latency_s=float(sys.argv[1]), max_requests=10**6, lifetime_s=900) as server:
    print(server.base_url, flush=True)
    sys.stdin.read()  # serve until the benchmark closes our stdin
"""


@contextlib.contextmanager
def server_process(latency_s: float) -> Iterator[str]:
    """The test chat server in its own process (no GIL shared with the client); its URL."""
    proc = subprocess.Popen([sys.executable, "-c", SERVER, str(latency_s)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        yield proc.stdout.readline().strip()
    finally:
        assert proc.stdin is not None
        proc.stdin.close()
        proc.wait(timeout=30)


def best(fn: Callable[[], float], repeat: int = REPEAT) -> float:
    """The best of ``repeat`` throughputs (the machine is shared: the best is the least disturbed)."""
    return max(fn() for _ in range(repeat))


def judge_rows(n: int, tag: str) -> list[dict]:
    return [{"data_source": "bench", "solution_str": f"score={i % 11} #{tag}{i}", "ground_truth": "",
             "prompt": "Rate this."} for i in range(n)]


def judge_via_scorer(url: str, concurrency: int, n: int) -> float:
    config = {"plugin": "llm_judge", "executor": "local", "max_concurrency": concurrency, "timeout_s": 30,
              "kwargs": {"base_url": url, "model": "judge", "template": "{response}"}}
    with Scorer.from_config(config) as scorer:
        scorer.score(judge_rows(concurrency, "warm"))  # connections opened
        began = time.perf_counter()
        result = scorer.score(judge_rows(n, f"c{concurrency}-"))
        elapsed = time.perf_counter() - began
    assert result.n_ok == n, result.errors[:3]
    return n / elapsed


def judge_bare_client(url: str, concurrency: int, n: int) -> float:
    async def run() -> float:
        client = AsyncOpenAI(base_url=url, api_key="none", max_retries=0)
        gate = asyncio.Semaphore(concurrency)

        async def one(text: str) -> str:
            async with gate:
                reply = await client.chat.completions.create(
                    model="judge", messages=[{"role": "user", "content": text}], max_tokens=256)
                return reply.choices[0].message.content or ""

        await asyncio.gather(*(one(f"warm {i}") for i in range(concurrency)))
        began = time.perf_counter()
        await asyncio.gather(*(one(f"score={i % 11} bare{concurrency}-{i}") for i in range(n)))
        elapsed = time.perf_counter() - began
        await client.close()
        return n / elapsed

    return asyncio.run(run())


def bench_judge(n: int, concurrencies: list[int]) -> None:
    print(f"llm_judge, {n} samples, server latency {LATENCY_S * 1000:.0f} ms (samples/s)")
    print(f"{'max_concurrency':>16} {'ideal':>8} {'bare client':>12} {'Scorer':>8} {'of ideal':>9}")
    with server_process(LATENCY_S) as url:
        for c in concurrencies:
            ideal = c / LATENCY_S
            bare = best(functools.partial(judge_bare_client, url, c, n))
            ours = best(functools.partial(judge_via_scorer, url, c, n))
            print(f"{c:>16} {ideal:>8.0f} {bare:>12.0f} {ours:>8.0f} {ours / ideal:>9.0%}")


def classifier_bare(rm: HFRewardModel, ids: list[list[int]], size: int) -> float:
    """The model alone over pre-tokenised inputs, ``size`` at a time: samples/s."""
    import torch

    began = time.perf_counter()
    for start in range(0, len(ids), size):
        batch = rm.tokenizer.pad({"input_ids": ids[start : start + size]}, return_tensors="pt")
        with torch.inference_mode():
            rm.model(**batch)
    return len(ids) / (time.perf_counter() - began)


def classifier_via_scorer(scorer: Scorer, rows: list[dict]) -> float:
    """The plugin through a local Scorer (formatting and tokenising included): samples/s."""
    began = time.perf_counter()
    result = scorer.score(rows)
    assert result.n_ok == len(rows), result.errors[:3]
    return len(rows) / (time.perf_counter() - began)


def bench_classifier(n: int, batch_sizes: list[int], folder: Path) -> None:
    import torch

    path = save_tiny_classifier(folder / "rm", hidden_size=64, layers=2)
    responses = [f"The answer is {i} because " + "step " * 30 for i in range(n)]
    rows = [{"data_source": "bench", "solution_str": r, "ground_truth": "", "prompt": "What is it?"}
            for r in responses]
    print(f"\nhf_reward_model, {n} samples of ~{len(responses[0])} characters, "
          f"Llama 2 x 64 on CPU, {torch.get_num_threads()} torch threads (samples/s)")
    print(f"{'batch_size':>11} {'bare model':>11} {'Scorer':>8} {'extra time':>11}")
    for size in batch_sizes:
        rm = HFRewardModel(str(path), batch_size=size)
        ids = [rm.encode(r["prompt"], r["solution_str"]) for r in rows]
        config = {"plugin": "hf_reward_model", "executor": "local", "timeout_s": 60,
                  "kwargs": {"model_path": str(path), "batch_size": size}}
        with Scorer.from_config(config) as scorer:
            scorer.score(rows[:size])
            bare = best(functools.partial(classifier_bare, rm, ids, size))
            ours = best(functools.partial(classifier_via_scorer, scorer, rows))
        print(f"{size:>11} {bare:>11.0f} {ours:>8.0f} {bare / ours - 1:>11.0%}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer samples")
    args = parser.parse_args()
    bench_judge(200 if args.quick else 640, [8, 32] if args.quick else [8, 32, 64])
    with tempfile.TemporaryDirectory() as folder:
        bench_classifier(128 if args.quick else 512, [1, 8, 32], Path(folder))


if __name__ == "__main__":
    main()
