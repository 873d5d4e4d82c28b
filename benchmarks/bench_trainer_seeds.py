"""Does the demo learn for every seed? The default config, seed after seed.

    python benchmarks/bench_trainer_seeds.py                      # seeds 0-19, 250 steps (~50 min: 2.5 min a seed)
    python benchmarks/bench_trainer_seeds.py --steps 500 --seeds 0-4
    python benchmarks/bench_trainer_seeds.py --seeds 4,7 algo.entropy_coef=0.03   # a variant
    python benchmarks/bench_trainer_seeds.py --keep outputs/seeds  # keep each run's metrics.jsonl

Each seed is one in-process ``trainer.main.main`` run, as
``tests/integration/test_trainer_learns.py`` makes it (``reward.executor=local``,
no checkpoint), one at a time. Per seed it prints the first step's reward, the
mean reward of the last 50 steps, the digits copied at their place over the
last 50 steps (``reward_extra/position_acc``), the exact copies over the last 50
(``reward_extra/exact``), the first step where the 10-step moving average of the
reward reaches 0.9 (``-``: never) and the run's wall time; then a summary line.
A policy that only learned to stop after four characters plateaus at about
0.33 with 0.1 of the digits in place; one that copies ends near 1.0.

Two more columns show what the learning test checks, at the test's length
(``--check-at``, 110 steps): the mean reward and the digits copied over its last 20
steps. With the default constant learning rate a run's first N steps are exactly
an N-step run of the same seed, so one 250-step sweep gives both.

Any further ``key=value`` argument is a trainer override applied to every seed.
``--max-fail N`` exits 1 when more than N seeds end below ``--learned`` (last-50
mean; 0.9 unless given).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:  # trainer/ is a top-level folder of the checkout, not installed
    sys.path.insert(0, str(ROOT))

from trainer.main import main as trainer_main  # noqa: E402

WINDOW = 50
AVERAGE = 10
MARK = 0.9
CHECK_AT, CHECK_WINDOW = 110, 20  # tests/integration/test_trainer_learns.py's STEPS and WINDOW


@dataclass(frozen=True)
class SeedRun:
    """What one seed's run reached."""

    seed: int
    first: float
    last: float
    copied: float
    exact: float
    mark_step: int | None
    wall_s: float
    check_reward: float | None  # over the CHECK_WINDOW steps up to check_at (None: run too short)
    check_copied: float | None


def parse_seeds(text: str) -> list[int]:
    """``0-19``, ``0,4,7`` or a mix (``0-3,9``) -> the seeds, in order."""
    seeds: list[int] = []
    for part in text.split(","):
        low, _, high = part.strip().partition("-")
        seeds.extend(range(int(low), int(high or low) + 1))
    return seeds


def first_step_at(rewards: Sequence[float], mark: float = MARK, average: int = AVERAGE) -> int | None:
    """The 1-based step where the ``average``-step moving average first reaches ``mark``."""
    for end in range(average, len(rewards) + 1):
        if sum(rewards[end - average:end]) / average >= mark:
            return end
    return None


def summarise(seed: int, records: Sequence[dict[str, float]], wall_s: float,
              check_at: int = CHECK_AT) -> SeedRun:
    """The figures of one run from its per-step metrics."""
    rewards = [r["reward_mean"] for r in records]
    tail = records[-WINDOW:]
    checked = records[check_at - CHECK_WINDOW:check_at] if len(records) >= check_at else []
    return SeedRun(
        seed=seed,
        first=rewards[0],
        last=statistics.fmean(rewards[-WINDOW:]),
        copied=statistics.fmean(r["reward_extra/position_acc"] for r in tail),
        exact=statistics.fmean(r["reward_extra/exact"] for r in tail),
        mark_step=first_step_at(rewards),
        wall_s=wall_s,
        check_reward=statistics.fmean(r["reward_mean"] for r in checked) if checked else None,
        check_copied=(statistics.fmean(r["reward_extra/position_acc"] for r in checked)
                      if checked else None),
    )


def run_seed(seed: int, steps: int, overrides: Sequence[str], out: Path,
             check_at: int = CHECK_AT) -> SeedRun:
    """Train one seed in this process, as the learning test does; return its figures."""
    began = time.perf_counter()
    with contextlib.redirect_stdout(io.StringIO()):
        code = trainer_main([f"trainer.seed={seed}", f"trainer.total_steps={steps}",
                             f"trainer.log_every={steps}", "reward.executor=local",
                             "trainer.save_checkpoint=false", "trainer.overwrite=true",
                             f"trainer.output_dir={out}", *overrides])
    wall = time.perf_counter() - began
    if code != 0:
        raise SystemExit(f"seed {seed}: the trainer exited {code}")
    lines = (out / "metrics.jsonl").read_text().splitlines()
    return summarise(seed, [json.loads(line) for line in lines], wall, check_at)


def row(run: SeedRun) -> str:
    """One table row, Markdown."""
    mark = "-" if run.mark_step is None else str(run.mark_step)
    check = ("- | -" if run.check_reward is None or run.check_copied is None
             else f"{run.check_reward:.3f} | {run.check_copied:.3f}")
    return (f"| {run.seed} | {run.first:.3f} | {run.last:.3f} | {run.copied:.3f} | "
            f"{run.exact:.3f} | {mark} | {check} | {run.wall_s:.1f} |")


def summary(runs: Sequence[SeedRun], learned: float) -> str:
    """How many seeds learned, the worst seed, and the spread of the 0.9 mark."""
    worst = min(runs, key=lambda r: r.last)
    marks = sorted(r.mark_step for r in runs if r.mark_step is not None)
    reached = (f"0.9 mark reached by {len(marks)}/{len(runs)} at steps {marks[0]}-{marks[-1]} "
               f"(median {statistics.median(marks):g})" if marks
               else f"0.9 mark reached by 0/{len(runs)}")
    checked = [r for r in runs if r.check_reward is not None]
    hardest = sorted(checked, key=lambda r: r.check_reward or 0.0)[:3]
    check = ("; at the test's check, lowest rewards " + ", ".join(
        f"{r.check_reward:.3f} (seed {r.seed}, copied {r.check_copied:.3f})" for r in hardest)
        if hardest else "")
    return (f"summary: {sum(r.last >= learned for r in runs)}/{len(runs)} seeds at last-{WINDOW} "
            f">= {learned}; last-{WINDOW} {worst.last:.3f} (seed {worst.seed}) to "
            f"{max(r.last for r in runs):.3f}; copied >= "
            f"{min(r.copied for r in runs):.3f}; {reached}{check}; "
            f"{sum(r.wall_s for r in runs):.0f} s in all")


def parse_args(argv: Sequence[str] | None) -> tuple[argparse.Namespace, list[str]]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=250,
                        help="steps per run (default 250; the test's check is read at --check-at)")
    parser.add_argument("--seeds", type=parse_seeds, default=list(range(20)),
                        help="e.g. 0-19 (default), 0,4,7")
    parser.add_argument("--keep", type=Path, help="keep each run in DIR/seedN (default: a temp dir)")
    parser.add_argument("--learned", type=float, default=MARK,
                        help="last-50 mean that counts as learned (default 0.9)")
    parser.add_argument("--max-fail", type=int, help="exit 1 if more seeds than this end below it")
    parser.add_argument("--check-at", type=int, default=CHECK_AT,
                        help=f"the learning test's step count (default {CHECK_AT})")
    args, overrides = parser.parse_known_args(argv)
    if bad := [o for o in overrides if "=" not in o]:
        parser.error(f"unrecognised arguments: {' '.join(bad)}")
    return args, overrides


def main(argv: Sequence[str] | None = None) -> int:
    args, overrides = parse_args(argv)
    print(f"{args.steps} steps per seed; overrides: {' '.join(overrides) or '(default config)'}")
    print("| seed | first step | last 50 | digits copied (last 50) | exact (last 50) "
          f"| 10-step avg >= 0.9 at | steps {args.check_at - CHECK_WINDOW + 1}-{args.check_at}: "
          "reward | copied | wall s |")
    print("|---|---|---|---|---|---|---|---|---|", flush=True)
    runs = []
    with tempfile.TemporaryDirectory(prefix="bench_trainer_seeds_") as scratch:
        base = args.keep or Path(scratch)
        for seed in args.seeds:
            runs.append(run_seed(seed, args.steps, overrides, base / f"seed{seed}", args.check_at))
            print(row(runs[-1]), flush=True)
    print(summary(runs, args.learned))
    failed = sum(r.last < args.learned for r in runs)
    return 1 if args.max_fail is not None and failed > args.max_fail else 0


if __name__ == "__main__":
    sys.exit(main())
