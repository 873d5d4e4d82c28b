"""Throughput with 1% of samples segfaulting their Ray worker, against a clean
run of the same batch in this same process.

    python benchmarks/bench_crash_isolation.py            # 10,000 samples
    python benchmarks/bench_crash_isolation.py --n 2000   # quicker

Prints the clean time, the faulty time, the worker deaths it took (two per
culprit at the default max_sample_crashes=2), the measured cost of one worker
restart, and the aim: within 3x of clean plus the restart cost of each death.
A Ray worker's start-up is ~0.6 s of CPU on a 2-core machine, so restarts,
not scoring, set the faulty run's time.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

from verl_rewards import Scorer

REWARD = Path(__file__).resolve().parent / "crash_rewards.py"


def rows(n: int, every: int | None) -> list[dict]:
    """``n`` samples; every ``every``-th one segfaults (None: none do)."""
    return [{"data_source": "bench", "ground_truth": "1",
             "solution_str": "segfault" if every and i % every == every // 2 else str(i % 2)}
            for i in range(n)]


def timed(scorer: Scorer, batch: list[dict]) -> tuple[float, dict[str, float], int]:
    began = time.perf_counter()
    result = scorer.score(batch)
    return time.perf_counter() - began, result.metrics, result.n_failed


def restart_cost(scorer: Scorer, repeat: int = 3) -> float:
    """Seconds from a worker's death to its replacement scoring again: a lone
    culprit (two deaths), then one clean sample that waits for the new worker."""
    began = time.perf_counter()
    deaths = 0.0
    for _ in range(repeat):
        deaths += scorer.score(rows(1, 1)).metrics["worker_restarts"]
        scorer.score(rows(2, None))
    return (time.perf_counter() - began) / deaths


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=10_000)
    args = parser.parse_args()
    cfg = {"path": str(REWARD), "name": "segfault_on_request", "executor": "ray", "num_workers": 2,
           "worker_num_cpus": 0, "timeout_s": 30}
    with Scorer.from_config({**cfg, "num_workers": 1}) as scorer:
        scorer.score(rows(2, None))
        restart_s = restart_cost(scorer)
    with Scorer.from_config(cfg) as scorer:
        scorer.score(rows(16, None))  # warm: workers resolved
        clean_s, _, _ = min(timed(scorer, rows(args.n, None)) for _ in range(3))
        faulty_s, metrics, failed = timed(scorer, rows(args.n, 100))
    deaths = metrics["worker_restarts"]
    aim = 3 * clean_s + deaths * restart_s
    print(f"{'clean run':<44}{clean_s:>10.2f} s   ({args.n} samples, 2 workers)")
    print(f"{'1% segfaults':<44}{faulty_s:>10.2f} s   ({failed} failed, {deaths:.0f} worker deaths)")
    print(f"{'one worker restart (measured)':<44}{restart_s:>10.2f} s")
    print(f"{'aim: 3 x clean + deaths x restart':<44}{aim:>10.2f} s")
    print(f"{'faulty / aim':<44}{faulty_s / aim:>10.2f}")


if __name__ == "__main__":
    main()
