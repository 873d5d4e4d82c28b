"""math_boxed against math-verify on the peer answer-equivalence cases, in one process.

    python benchmarks/bench_math.py          # every case, each checker timed per case, interleaved

Prints agreement with each source's expected verdicts for ``math_boxed`` and
for math-verify alone (both sides boxed: ``verify(parse(\\boxed{gold}),
parse(\\boxed{pred}))``), and the time per case (median, p95, max) of each.
The symbolic child of math_boxed is started before timing starts; a case
that times out includes the child's restart in the next case's time.
"""

from __future__ import annotations

import argparse
import collections
import logging
import sys
import time
from pathlib import Path

from math_verify import parse, verify
from verl_rewards_math import symbolic
from verl_rewards_math.math_boxed import compute_score

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins" / "math" / "tests"))  # the test suite's own cases
import peer_cases  # noqa: E402


def math_verify_alone(gold: str, pred: str) -> bool:
    """math-verify as users call it, both sides boxed."""
    try:
        return bool(verify(parse(peer_cases.as_response(gold)), parse(peer_cases.as_response(pred))))
    except Exception:  # noqa: BLE001 - a crash is a "no", as in a reward
        return False


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    peer = peer_cases
    cases = peer.load_cases()
    symbolic.ensure_started()
    agree: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0])
    ours_t, theirs_t = [], []
    for case in cases:
        began = time.perf_counter()
        ours = compute_score("peer", peer.as_response(case["pred"]), case["gold"], **case.get("kwargs", {}))["acc"]
        ours_t.append(time.perf_counter() - began)
        began = time.perf_counter()
        theirs = math_verify_alone(case["gold"], case["pred"])
        theirs_t.append(time.perf_counter() - began)
        row = agree[peer.source_repo(case)]
        row[0] += 1
        row[1] += ours == case["expected"]
        row[2] += theirs == case["expected"]
    print(f"{len(cases)} peer cases; agreement with each source's expected verdicts")
    print(f"  {'source':34s} {'cases':>5s}  {'math_boxed':>10s}  {'math-verify':>11s}")
    total = [0, 0, 0]
    for source, (n, ours_ok, theirs_ok) in sorted(agree.items(), key=lambda kv: -kv[1][0]):
        print(f"  {source:34s} {n:5d}  {ours_ok / n:10.1%}  {theirs_ok / n:11.1%}")
        total = [total[0] + n, total[1] + ours_ok, total[2] + theirs_ok]
    print(f"  {'all':34s} {total[0]:5d}  {total[1] / total[0]:10.1%}  {total[2] / total[0]:11.1%}")
    print("time per case (ms)        median      p95      max")
    for label, times in (("math_boxed", ours_t), ("math-verify alone", theirs_t)):
        print(f"  {label:20s} {_percentile(times, 0.5) * 1e3:9.2f} {_percentile(times, 0.95) * 1e3:8.1f}"
              f" {max(times) * 1e3:8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
