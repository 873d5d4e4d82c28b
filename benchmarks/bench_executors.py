"""Executor overhead and scaling, against baselines run in this same process.

    python benchmarks/bench_executors.py            # full run (~1 minute)
    python benchmarks/bench_executors.py --quick    # smaller batches

Prints one table: per-sample overhead of each executor over a bare loop (local,
process and Ray, batched, in this one run; the process executor's per-sample
time against the local executor's), the cost of a one-sample call on the local
and process executors (a hand-off to their own thread, or a round trip to a
worker process), a CPU-bound reward on 2 process and 2 Ray workers vs one
process (and vs a plain ProcessPoolExecutor), and an async I/O-bound reward vs
its sequential time.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import os
import sys
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import ray

from verl_rewards import Scorer

REWARDS = Path(__file__).resolve().parent / "rewards.py"
sys.path.insert(0, str(REWARDS.parent))
import rewards  # noqa: E402  (the same functions, for the baselines)


def best_of(fn: Callable[[], object], repeat: int) -> float:
    """Best wall time of ``repeat`` runs, in seconds."""
    times = []
    for _ in range(repeat):
        began = time.perf_counter()
        fn()
        times.append(time.perf_counter() - began)
    return min(times)


def rows(n: int) -> list[dict]:
    return [{"data_source": "bench", "solution_str": str(i % 2), "ground_truth": "1"} for i in range(n)]


def verl_style_loop(fn: Callable, batch: list[dict]) -> list[float]:
    """verl's NaiveRewardManager scoring loop: a partial with kwargs, one call per item."""
    call = functools.partial(fn, **{})
    return [call(data_source=r["data_source"], solution_str=r["solution_str"],
                 ground_truth=r["ground_truth"], extra_info=None) for r in batch]


def cfg(name: str, executor: str, **extra: object) -> dict:
    return {"path": str(REWARDS), "name": name, "executor": executor, "num_workers": 2, **extra}


def overhead(n: int, repeat: int, executors: tuple[str, ...]) -> tuple[list[tuple[str, str]], dict[str, float]]:
    """The table's rows, and each executor's time per sample (seconds)."""
    batch = rows(n)
    bare = best_of(lambda: verl_style_loop(rewards.trivial, batch), repeat) / n
    out = [("bare verl-style loop, trivial reward", f"{bare * 1e6:.2f} us/sample")]
    per_sample: dict[str, float] = {}
    for executor in executors:
        with Scorer.from_config(cfg("trivial", executor)) as scorer:
            scorer.score(batch[:10])
            took = per_sample[executor] = best_of(lambda: scorer.score(batch), repeat) / n
        out.append((f"{executor} executor overhead over bare loop (n={n})",
                    f"{(took - bare) * 1e6:.2f} us/sample  ({took * 1e6:.2f} us/sample in all)"))
    return out, per_sample


def versus_local(per_sample: dict[str, float]) -> list[tuple[str, str]]:
    """The process executor's time per batched sample against the local executor's."""
    local, process = per_sample["local"], per_sample["process"]
    return [("  process vs local executor, per batched sample", f"{process / local:.2f}x  (aim: <= 3x)")]


def single_sample_calls(calls: int, repeat: int) -> list[tuple[str, str]]:
    """What one ``score()`` of one sample costs on the local and process executors
    (per-sample hosts: verl's ``compute_score``, skyrl-gym, AReaL), against the same
    scoring done in the caller's thread (``score_spec`` + ``assemble``, with no hand-off
    to the executor's thread or worker)."""
    from verl_rewards.dispatch import resolve_spec, score_spec
    from verl_rewards.limits import limits_for
    from verl_rewards.results import assemble
    from verl_rewards.samples import as_samples

    one = rows(1)
    with Scorer.from_config(cfg("trivial", "local")) as scorer:
        for _ in range(100):
            scorer.score(one)
        through = best_of(lambda: [scorer.score(one) for _ in range(calls)], repeat) / calls
        loaded, limits = resolve_spec(scorer.ref), limits_for(scorer.config)

        def inline() -> None:
            samples = as_samples(one)
            assemble(score_spec(loaded, samples, limits), scorer.provenance, 0.0, {})

        here = best_of(lambda: [inline() for _ in range(calls)], repeat) / calls
    with Scorer.from_config(cfg("trivial", "process")) as scorer:
        for _ in range(100):
            scorer.score(one)
        pooled = best_of(lambda: [scorer.score(one) for _ in range(calls)], repeat) / calls
    return [
        ("one-sample score() on the local executor", f"{through * 1e6:.1f} us/call"),
        ("  the same scoring in the caller's thread", f"{here * 1e6:.1f} us/call  "
                                                      f"(hand-off: {(through - here) * 1e6:.1f} us/call)"),
        ("one-sample score() on the process executor", f"{pooled * 1e6:.1f} us/call  "
                                                       f"({pooled / through:.2f}x local)"),
    ]


def cpu_scaling(n: int, ms: float) -> list[tuple[str, str]]:
    batch = rows(n)
    with Scorer.from_config(cfg("cpu_3ms", "local", kwargs={"ms": ms})) as scorer:
        local = best_of(lambda: scorer.score(batch), 1)
    with Scorer.from_config(cfg("cpu_3ms", "process", kwargs={"ms": ms})) as scorer:
        scorer.score(batch[:4])
        on_processes = best_of(lambda: scorer.score(batch), 2)
    with Scorer.from_config(cfg("cpu_3ms", "ray", kwargs={"ms": ms})) as scorer:
        scorer.score(batch[:4])
        on_ray = best_of(lambda: scorer.score(batch), 2)
    with ProcessPoolExecutor(2) as pool:
        list(pool.map(rewards.cpu_3ms, ["b"] * 4, ["1"] * 4, ["1"] * 4))
        args = ([r["data_source"] for r in batch], [r["solution_str"] for r in batch],
                [r["ground_truth"] for r in batch])
        pooled = best_of(lambda: list(pool.map(rewards.cpu_3ms, *args, chunksize=max(1, n // 8))), 1)
    return [
        (f"{ms:g} ms CPU reward x {n}: local executor", f"{local:.2f} s"),
        ("  process executor, 2 workers", f"{on_processes:.2f} s  ({local / on_processes:.2f}x local)"),
        ("  ray executor, 2 workers", f"{on_ray:.2f} s  ({local / on_ray:.2f}x local)"),
        ("  plain ProcessPoolExecutor(2)", f"{pooled:.2f} s  ({local / pooled:.2f}x local)"),
    ]


def async_concurrency(n: int, ms: float, concurrency: int) -> list[tuple[str, str]]:
    batch = rows(n)

    async def sequential() -> None:
        for r in batch:
            await rewards.io_50ms(r["data_source"], r["solution_str"], r["ground_truth"], ms=ms)

    seq = best_of(lambda: asyncio.run(sequential()), 1)
    out = [(f"{ms:g} ms async reward x {n}: sequential awaits", f"{seq:.2f} s")]
    for executor in ("local", "process", "ray"):
        extra = {"kwargs": {"ms": ms}, "max_concurrency": concurrency, "num_workers": 1}
        with Scorer.from_config(cfg("io_50ms", executor, **extra)) as scorer:
            scorer.score(batch[:2])
            took = best_of(lambda: scorer.score(batch), 2)
        out.append((f"  {executor} executor, max_concurrency={concurrency}",
                    f"{took:.2f} s  ({seq / took:.1f}x sequential)"))
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="smaller batches")
    args = parser.parse_args()
    scale = 4 if args.quick else 1
    # Before Ray's threads exist in this process.
    table, per_sample = overhead(20_000 // scale, 3, ("local", "process"))
    table += versus_local(per_sample)
    table += single_sample_calls(2_000 // scale, 5)
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        table += overhead(20_000 // scale, 3, ("ray",))[0][1:]
        table += cpu_scaling(800 // scale, 3.0)
        table += async_concurrency(128 // scale, 50.0, 32)
    finally:
        ray.shutdown()
    width = max(len(k) for k, _ in table)
    print(f"\nverl-rewards executors on {os.cpu_count()} CPU(s), Python {sys.version.split()[0]}, "
          f"Ray {ray.__version__}")
    for key, value in table:
        print(f"  {key:<{width}}  {value}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
