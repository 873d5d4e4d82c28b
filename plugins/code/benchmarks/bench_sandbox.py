"""Cost of one sandboxed run, against a bare interpreter started in this same process.

    python plugins/code/benchmarks/bench_sandbox.py [--runs N]

Prints the median wall time of: a bare ``python -I -c`` subprocess (the
baseline), a run under ``rlimits`` and under ``namespaces`` (the minimal
root), and one ``code_exec`` assert test (the harness on top).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import time
from collections.abc import Callable

from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.sandbox import Sandbox


def medians_ms(cases: dict[str, Callable[[], object]], runs: int) -> dict[str, float]:
    """Median wall time of each case, interleaved (one of each per round), so
    that load from other processes drifts onto all cases alike."""
    times: dict[str, list[float]] = {name: [] for name in cases}
    for fn in cases.values():
        fn()  # warm: the isolation probe, page cache
    for _ in range(runs):
        for name, fn in cases.items():
            began = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - began)
    return {name: statistics.median(t) * 1000 for name, t in times.items()}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=20)
    runs = parser.parse_args().runs
    program = "print(sum(range(1000)))"
    truth = json.dumps({"asserts": ["assert add(1, 2) == 3"]})
    baseline = "bare python -I subprocess (baseline)"
    cases: dict[str, Callable[[], object]] = {
        baseline: lambda: subprocess.run([sys.executable, "-I", "-c", program], check=True, capture_output=True)
    }
    for mode in ("rlimits", "namespaces"):
        sandbox = Sandbox.resolve(mode)  # type: ignore[arg-type]
        cases[f"sandbox, isolation={mode}"] = lambda s=sandbox: s.run(program)
    cases["code_exec, one assert test"] = lambda: compute_score("x", "def add(a, b):\n    return a + b\n", truth)
    medians = medians_ms(cases, runs)
    for name, ms in medians.items():
        print(f"{name:40s} {ms:7.1f} ms  ({ms / medians[baseline]:4.1f}x baseline)")


if __name__ == "__main__":
    main()
