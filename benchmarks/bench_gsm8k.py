"""gsm8k's cost against verl's own ``gsm8k.compute_score``, on the same batch, in one process.

    python benchmarks/bench_gsm8k.py            # 2048 responses, best of 7
    python benchmarks/bench_gsm8k.py --quick    # best of 3

Prints, per response: verl's scorer called directly (the baseline), our
``gsm8k`` plugin called directly (aim: <= 2x verl), the plugin through a
local ``Scorer`` (with its extra info, and with ``extra=false``: a bare
score), and a trivial plugin through a local ``Scorer`` (what the framework
itself adds; aim: <= 2 us per sample over the direct call). Also checks that
the scores are equal to verl's on every response.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from verl.utils.reward_score import gsm8k as verl_gsm8k
from verl_rewards_math.gsm8k import compute_score

from verl_rewards import Scorer

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins" / "math" / "tests"))  # the test suite's own cases
import gsm8k_batch  # noqa: E402

REWARDS = ROOT / "benchmarks" / "rewards.py"
sys.path.insert(0, str(REWARDS.parent))
from bench_executors import best_of  # noqa: E402  (one timing rule for every benchmark)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--size", type=int, default=2048)
    args = parser.parse_args(argv)
    repeat = 3 if args.quick else 7
    rows = gsm8k_batch.gsm8k_batch(args.size, seed=0)
    n = len(rows)
    samples = [{"data_source": "openai/gsm8k", "solution_str": r.solution_str, "ground_truth": r.ground_truth}
               for r in rows]

    def verl_direct() -> list[float]:
        return [verl_gsm8k.compute_score(r.solution_str, r.ground_truth) for r in rows]

    def ours_direct() -> list[Any]:
        return [compute_score("openai/gsm8k", r.solution_str, r.ground_truth) for r in rows]

    ours = [d["score"] for d in ours_direct()]
    bare = [compute_score("openai/gsm8k", r.solution_str, r.ground_truth, extra=False) for r in rows]
    assert ours == bare, "extra=False changes scores"
    assert ours == [float(s) for s in verl_direct()], "scores differ from verl's"

    figures: list[tuple[str, float]] = [
        ("verl gsm8k.compute_score, direct (baseline)", best_of(verl_direct, repeat) / n),
        ("verl-rewards gsm8k, direct", best_of(ours_direct, repeat) / n),
    ]
    with Scorer.from_config({"plugin": "gsm8k", "executor": "local"}) as scorer:
        scorer.score(samples)
        figures.append(("verl-rewards gsm8k, local Scorer", best_of(lambda: scorer.score(samples), repeat) / n))
    with Scorer.from_config({"plugin": "gsm8k", "executor": "local", "kwargs": {"extra": False}}) as scorer:
        scorer.score(samples)
        figures.append(
            ("verl-rewards gsm8k extra=false, local Scorer", best_of(lambda: scorer.score(samples), repeat) / n)
        )
    trivial_cfg = {"path": str(REWARDS), "name": "trivial", "executor": "local"}
    with Scorer.from_config(trivial_cfg) as scorer:
        scorer.score(samples)
        figures.append(("trivial reward, local Scorer", best_of(lambda: scorer.score(samples), repeat) / n))

    base = figures[0][1]
    print(f"gsm8k, {n} responses of ~140 tokens, best of {repeat}; scores equal to verl's on all {n}")
    for label, seconds in figures:
        print(f"  {label:46s} {seconds * 1e6:7.2f} us/response  {seconds / base:5.2f}x verl")
    framework = figures[2][1] - figures[1][1]
    print(f"  {'framework overhead (local Scorer - direct)':46s} {framework * 1e6:7.2f} us/response")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
