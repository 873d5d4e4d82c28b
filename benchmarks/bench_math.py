"""math_boxed against math-verify on the peer answer-equivalence cases, in one process.

    python benchmarks/bench_math.py          # every case, each checker timed per case, interleaved

Prints agreement with each source's expected verdicts on every case (the answer
pairs of ``peer_cases.jsonl`` and Math-Verify's extraction cases of
``peer_extraction_cases.jsonl``) for ``math_boxed`` with ``extract=boxed`` (a
prediction without a box boxed whole, since that mode reads the box), with
``extract=last_math`` (each prediction as written) and for math-verify alone
(``verify(parse(gold), parse(pred))``, both as written), and the time per case
(median, p95, max) of each. The symbolic child of math_boxed is started before
timing starts; a case that times out includes the child's restart in the next
case's time.
"""

from __future__ import annotations

import argparse
import collections
import logging
import sys
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path

from math_verify import parse, verify
from verl_rewards_math import symbolic
from verl_rewards_math.math_boxed import compute_score

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "plugins" / "math" / "tests"))  # the test suite's own cases
import peer_cases  # noqa: E402


def math_verify_alone(gold: str, pred: str) -> bool:
    """math-verify as users call it on a response, both sides as written."""
    try:
        return bool(verify(parse(gold), parse(pred)))
    except Exception:  # noqa: BLE001 - a crash is a "no", as in a reward
        return False


def _timed(check: Callable[[], object]) -> tuple[bool, float]:
    began = time.perf_counter()
    verdict = bool(check())
    return verdict, time.perf_counter() - began


def _percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main(argv: list[str] | None = None) -> int:
    argparse.ArgumentParser(description=__doc__.splitlines()[0]).parse_args(argv)
    logging.getLogger("math_verify").setLevel(logging.CRITICAL)
    peer = peer_cases
    cases = peer.load_all_cases()
    symbolic.ensure_started()
    labels = ("extract=boxed", "extract=last_math", "math-verify alone")
    agree: dict[str, list[int]] = collections.defaultdict(lambda: [0, 0, 0, 0])
    times: list[list[float]] = [[], [], []]
    for case in cases:
        gold, pred, kwargs = case["gold"], case["pred"], case.get("kwargs", {})
        checks = (
            partial(lambda g, p, k: compute_score("peer", peer.as_response(p), g, **k)["acc"], gold, pred, kwargs),
            partial(lambda g, p, k: compute_score("peer", p, g, extract="last_math", **k)["acc"], gold, pred, kwargs),
            partial(math_verify_alone, gold, pred),
        )
        row = agree[peer.source_repo(case)]
        row[0] += 1
        for i, check in enumerate(checks):
            verdict, seconds = _timed(check)
            times[i].append(seconds)
            row[i + 1] += verdict == case["expected"]
    print(f"{len(cases)} peer cases; agreement with each source's expected verdicts")
    print(f"  {'source':34s} {'cases':>5s}  " + "  ".join(f"{label:>17s}" for label in labels))
    total = [0, 0, 0, 0]
    for source, counts in sorted(agree.items(), key=lambda kv: -kv[1][0]):
        print(f"  {source:34s} {counts[0]:5d}  " + "  ".join(f"{ok / counts[0]:17.1%}" for ok in counts[1:]))
        total = [t + c for t, c in zip(total, counts)]
    print(f"  {'all':34s} {total[0]:5d}  " + "  ".join(f"{ok / total[0]:17.1%}" for ok in total[1:]))
    print("time per case (ms)        median      p95      max")
    for label, seconds in zip(labels, times):
        print(f"  {label:20s} {_percentile(seconds, 0.5) * 1e3:9.2f} {_percentile(seconds, 0.95) * 1e3:8.1f}"
              f" {max(seconds) * 1e3:8.0f}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
