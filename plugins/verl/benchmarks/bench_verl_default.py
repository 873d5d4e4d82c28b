"""verl_default against verl 0.9.1's default_compute_score: time per sample, per branch, same samples.

    python plugins/verl/benchmarks/bench_verl_default.py            # every branch
    python plugins/verl/benchmarks/bench_verl_default.py --branches gsm8k math --rounds 5

The samples are the parity tests' (plugins/verl/tests/cases.py). Both sides run
in this process, one after the other per branch, best of ``--rounds``: verl as
users run it (its prime_math forks a process per SymPy comparison, its
prime_code a Manager and a process per check), ours as the plugin runs (one
reused SymPy child, code_exec's sandbox per test). Start-up costs are paid
before timing (SymPy child, sandbox probe, imports). It also checks the scores
agree. Needs verl (and mathruler, for geometry3k) installed.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib.util
import os
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

CASES = Path(__file__).resolve().parents[1] / "tests" / "cases.py"


def load_cases() -> Any:
    spec = importlib.util.spec_from_file_location("verl_default_cases", CASES)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(score: Callable[..., Any], samples: Sequence[Any]) -> tuple[float, list[Any]]:
    """Seconds to score ``samples`` one by one, and the results. What a scorer prints (verl's
    print some samples) goes to /dev/null: still formatted and written, not shown."""
    results = []
    with open(os.devnull, "w") as devnull, contextlib.redirect_stdout(devnull):
        began = time.perf_counter()
        for s in samples:
            try:
                results.append(score(s.data_source, s.solution_str, s.ground_truth))
            except Exception as e:  # noqa: BLE001 - a raised error is a result to compare
                results.append(f"raised {type(e).__name__}")
        seconds = time.perf_counter() - began
    return seconds, results


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--branches", nargs="*", default=None, help="branches to time (default: all)")
    parser.add_argument("--rounds", type=int, default=3, help="best of this many runs per side")
    args = parser.parse_args(argv)

    cases = load_cases()
    from verl.utils.reward_score import default_compute_score
    from verl_rewards_verl import sympy_child
    from verl_rewards_verl.default import compute_score

    sympy_child.ensure_started()
    first = cases.code_cases()[0]
    compute_score(first.data_source, first.solution_str, first.ground_truth)  # the sandbox probe

    print(f"load average at start: {', '.join(f'{x:.1f}' for x in os.getloadavg())} "
          f"on {os.cpu_count()} cores (figures move with it)")
    print(f"{'branch':<12}{'samples':>8}{'verl ms/sample':>16}{'ours ms/sample':>16}{'ours/verl':>11}  agree")
    for branch, make in cases.BRANCHES.items():
        if args.branches and branch not in args.branches:
            continue
        samples = make()
        verl_times, our_times = [], []
        for _ in range(args.rounds):  # interleaved: load changes hit both sides alike
            seconds, theirs = run(default_compute_score, samples)
            verl_times.append(seconds)
            seconds, ours = run(compute_score, samples)
            our_times.append(seconds)
        agree = sum(a == b for a, b in zip(ours, theirs))
        verl_ms, our_ms = min(verl_times) / len(samples) * 1e3, min(our_times) / len(samples) * 1e3
        print(f"{branch:<12}{len(samples):>8}{verl_ms:>16.3f}{our_ms:>16.3f}{our_ms / verl_ms:>10.2f}x  "
              f"{agree}/{len(samples)}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
