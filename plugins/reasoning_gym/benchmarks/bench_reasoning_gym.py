"""reasoning_gym against reasoning-gym's own extract_answer + score_answer: time per sample.

    python plugins/reasoning_gym/benchmarks/bench_reasoning_gym.py [--rounds N]

One generated entry per task (seed 1, default config), each scored with the
entry's own answer and with a wrong one, warm (every scorer built first; the
build, once per task and process, is printed separately). Then hostile
responses (unclosed answer tags) through both extractions.
"""

from __future__ import annotations

import argparse
import time
import warnings
from typing import Any

from reasoning_gym.factory import create_dataset
from reasoning_gym.utils import extract_answer as rg_extract_answer
from verl_rewards_reasoning_gym.extract import extract_answer
from verl_rewards_reasoning_gym.reward import compute_score
from verl_rewards_reasoning_gym.tasks import COMPOSITE, TASKS


def rows() -> list[tuple[str, Any, dict[str, Any], str]]:
    out = []
    for task in TASKS:
        if task == COMPOSITE:
            continue
        dataset = create_dataset(task, seed=1, size=1)
        entry = dataset[0]
        right = entry["answer"] if isinstance(entry["answer"], str) else ""
        for answer in (right, "zzz"):
            out.append((task, dataset, entry, f"<think>Work.</think>\n<answer>{answer}</answer>"))
    return out


def ours(samples: list[tuple[str, Any, dict[str, Any], str]]) -> None:
    for task, _, entry, response in samples:
        compute_score(f"reasoning_gym/{task}", response, "", {"entry": entry})


def theirs(samples: list[tuple[str, Any, dict[str, Any], str]]) -> None:
    for _, dataset, entry, response in samples:
        try:
            dataset.score_answer(rg_extract_answer(response), entry)
        except Exception:  # noqa: BLE001 - boxnet, prime_factorization on "zzz"
            pass


def best(fn: Any, samples: list[Any], rounds: int) -> float:
    times = []
    for _ in range(rounds):
        began = time.perf_counter()
        fn(samples)
        times.append(time.perf_counter() - began)
    return min(times) / len(samples) * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    warnings.simplefilter("ignore")
    samples = rows()
    began = time.perf_counter()
    ours(samples)  # builds every task's scorer once
    print(f"{len(samples)} samples over {len(samples) // 2} tasks; first pass (builds every scorer): "
          f"{time.perf_counter() - began:.1f} s")
    t_ours, t_theirs = best(ours, samples, args.rounds), best(theirs, samples, args.rounds)
    print(f"reasoning_gym {t_ours:.1f} us/sample, reasoning-gym direct {t_theirs:.1f} "
          f"(ratio {t_ours / t_theirs:.2f}x)")
    for size in (8_000, 16_000, 32_000, 1_000_000):
        hostile = "<answer>" * (size // 8)
        began = time.perf_counter()
        extract_answer(hostile)
        mine = time.perf_counter() - began
        theirs_s = "-"
        if size <= 32_000:
            began = time.perf_counter()
            rg_extract_answer(hostile)
            theirs_s = f"{time.perf_counter() - began:.2f} s"
        print(f"{size // 8:>7} unclosed <answer> tags: ours {mine * 1e3:.2f} ms, reasoning-gym {theirs_s}")


if __name__ == "__main__":
    main()
