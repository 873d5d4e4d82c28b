"""Hostile answers against every first-party plugin: status and seconds per answer.

    python benchmarks/bench_hostile_answers.py [--timeout-s 5] [--case NAME ...] [--shape TEXT]

Scores each shape of ``tests/integration/hostile_answers.py`` (about a megabyte of a
plugin's own syntax, bare and where the plugin reads its answer) with each plugin
case there, one sample per call, on the local executor with ``reward.timeout_s``
set to ``--timeout-s``; prints one line per answer: case, shape, status, score,
seconds. The rule (issue 32): every line ``ok``, a wrong answer's score, within the
limit. Each case runs in a process of its own, killed (and reported ``hang``) when
an answer has not come back ``--hang-s`` seconds after its limit. A right answer is
scored before each hostile one, so the children a plugin keeps are started and not
what is measured.
"""

from __future__ import annotations

import argparse
import json
import os
import selectors
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "tests" / "integration"))  # the test suite's own inputs

from hostile_answers import CASES, reward_config  # noqa: E402


def run_case(name: str, timeout_s: float, shape: str, skip: set[str]) -> None:
    """Score the case's samples in this process; one JSON line each on stdout."""
    import warnings

    from verl_rewards import Scorer

    warnings.simplefilter("ignore")
    case = CASES[name]
    with reward_config(case, timeout_s) as config, Scorer.from_config(config) as scorer:
        for label, sample in case.samples():
            if shape not in label or label in skip:
                continue
            if case.warm:
                scorer.score([case.sample(case.warm)])
            began = time.monotonic()
            result = scorer.score([sample])
            seconds = time.monotonic() - began
            print(json.dumps({"case": name, "shape": label, "status": result.statuses[0],
                              "score": result.scores[0], "seconds": round(seconds, 3),
                              "error": (result.errors[0] or "")[:120]}), flush=True)


def supervise(name: str, timeout_s: float, hang_s: float, shape: str) -> list[dict[str, object]]:
    """Run one case in a child process, killed when an answer is ``hang_s`` past its limit."""
    done: list[dict[str, object]] = []
    skip: set[str] = set()
    while True:
        proc = subprocess.Popen([sys.executable, __file__, "--worker", name, "--timeout-s", str(timeout_s),
                                 "--shape", shape, *[arg for s in skip for arg in ("--skip", s)]],
                                stdout=subprocess.PIPE, text=True)
        assert proc.stdout is not None
        selector = selectors.DefaultSelector()
        selector.register(proc.stdout, selectors.EVENT_READ)
        began = time.monotonic()
        hung = None
        while True:
            if not selector.select(timeout=max(0.0, began + 60 + timeout_s + hang_s - time.monotonic())):
                hung = time.monotonic() - began
                proc.kill()
                break
            line = proc.stdout.readline()
            if not line:
                break
            row = json.loads(line)
            done.append(row)
            skip.add(str(row["shape"]))
            print(f"{row['case']:38} {row['shape'][:58]:58} {row['status']:8} {row['score']:8.3f} "
                  f"{row['seconds']:7.2f} s  {row['error']}", flush=True)
            began = time.monotonic()
        proc.wait()
        if hung is None:
            return done
        print(f"{name:38} (next shape) hang: killed after {hung:.0f} s without an answer", flush=True)
        done.append({"case": name, "status": "hang"})
        skip.add(_next_shape(name, skip, shape))


def _next_shape(name: str, skip: set[str], shape: str) -> str:
    for label, _ in CASES[name].samples():
        if shape in label and label not in skip:
            return label
    return ""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--timeout-s", type=float, default=5.0)
    parser.add_argument("--hang-s", type=float, default=60.0)
    parser.add_argument("--case", action="append", help="a case of hostile_answers.CASES (default: all)")
    parser.add_argument("--shape", default="", help="only shapes whose label holds this text")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--skip", action="append", default=[], help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        run_case(args.worker, args.timeout_s, args.shape, set(args.skip))
        return
    print("load average at start: {:.1f}, {:.1f}, {:.1f} on {} cores".format(*os.getloadavg(), os.cpu_count()))
    rows = []
    for name in args.case or list(CASES):
        rows += supervise(name, args.timeout_s, args.hang_s, args.shape)
    bad = [r for r in rows if r["status"] != "ok" or float(str(r.get("seconds", 0))) > args.timeout_s]
    print(f"{len(rows)} answers, {len(bad)} not ok within {args.timeout_s:g} s")

if __name__ == "__main__":
    main()
