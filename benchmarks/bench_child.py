"""verl_rewards.child: what one request to a warm child costs, against the same call in-process.

    python benchmarks/bench_child.py [--requests N] [--rounds R]

Prints the start of a child (a trivial handler: the interpreter and the
module), the per-request time of a trivial handler through ``JsonLineWorker``
(a pipe round trip, JSON both ways) and of the same handler called in this
process, best of R rounds of N requests, with the load average (the figures
move with it on a shared machine). A plugin's per-sample figures are in its
own benchmark (benchmarks/bench_math.py, plugins/*/benchmarks/).
"""

from __future__ import annotations

import argparse
import os
import time
from typing import Any

from verl_rewards.child import JsonLineWorker


class Echo:
    """The handler: returns its request (the child imports this module by name)."""

    def __init__(self, init: Any = None) -> None:
        self.init = init

    def __call__(self, request: Any) -> Any:
        return request


def per_request_us(call: Any, requests: int, rounds: int) -> float:
    best = float("inf")
    for _ in range(rounds):
        began = time.perf_counter()
        for i in range(requests):
            call({"op": "echo", "i": i, "text": "\\boxed{\\frac{63}{400}}"})
        best = min(best, time.perf_counter() - began)
    return best / requests * 1e6


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--requests", type=int, default=500)
    parser.add_argument("--rounds", type=int, default=5)
    args = parser.parse_args()
    print("load average at start: {:.1f}, {:.1f}, {:.1f} on {} cores".format(*os.getloadavg(), os.cpu_count()))
    worker = JsonLineWorker("bench_child:Echo", name="bench child")
    try:
        began = time.perf_counter()
        worker.start()
        print(f"start of a child (interpreter + handler module): {(time.perf_counter() - began) * 1e3:.0f} ms")
        inside = Echo()
        local = per_request_us(inside, args.requests, args.rounds)
        remote = per_request_us(lambda r: worker.request(r, 30.0), args.requests, args.rounds)
        print(f"per request, best of {args.rounds} x {args.requests}: in-process {local:.1f} us, "
              f"through the child {remote:.1f} us (+{remote - local:.0f} us)")
    finally:
        worker.close()


if __name__ == "__main__":
    main()
