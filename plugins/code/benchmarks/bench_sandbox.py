"""code_exec throughput: tasks per second per core on a fixed mix of small tasks.

    python plugins/code/benchmarks/bench_sandbox.py [--rounds N] [--isolation auto] [--budget-cost RUNS]

A task is one sample: a response's program scored against its problem's
tests (3 tests each). The mix is fixed: 4 stdin/stdout problems and 4
assert problems, each with a correct solution. The figure per core is tasks
per CPU second (this process and every sandbox process it waited for), so
it does not depend on how many other jobs share the machine; wall-clock
tasks/s is printed too. To measure another checkout of the plugin, put its
``plugins/code`` first on ``PYTHONPATH``; the script prints which it imported.

Published figures on 64-core nodes (Python tasks, each with many more and
heavier tests): SandboxFusion ~0.23 tasks/s a core, verl's local process
pool 0.39, ScaleBox 0.61.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import resource
import statistics
import sys
import time

import verl_rewards_code
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.sandbox import Limits, isolation_for, launch

STDIO = [
    ("a, b = map(int, input().split())\nprint(a + b)\n", ["1 2\n", "10 20\n", "-5 5\n"], ["3\n", "30\n", "0\n"]),
    ("print(input()[::-1])\n", ["abc\n", "x\n", "racecar\n"], ["cba\n", "x\n", "racecar\n"]),
    (
        "n = int(input())\nprint(sum(map(int, input().split())))\n",
        ["3\n1 2 3\n", "1\n7\n", "4\n1 1 1 1\n"],
        ["6\n", "7\n", "4\n"],
    ),
    (
        "n = int(input())\na, b = 0, 1\nfor _ in range(n):\n    a, b = b, a + b\nprint(a)\n",
        ["10\n", "1\n", "30\n"],
        ["55\n", "1\n", "832040\n"],
    ),
]
ASSERTS = [
    ("def add(a, b):\n    return a + b\n", ["assert add(1, 2) == 3", "assert add(-1, 1) == 0", "assert add(0, 0) == 0"]),
    (
        "def is_palindrome(s):\n    return s == s[::-1]\n",
        ["assert is_palindrome('aba')", "assert not is_palindrome('ab')", "assert is_palindrome('')"],
    ),
    (
        "def primes(n):\n    return [p for p in range(2, n) if all(p % d for d in range(2, p))]\n",
        ["assert primes(10) == [2, 3, 5, 7]", "assert primes(2) == []", "assert len(primes(30)) == 10"],
    ),
    (
        "class Stack:\n    def __init__(self):\n        self.items = []\n"
        "    def push(self, x):\n        self.items.append(x)\n    def pop(self):\n        return self.items.pop()\n",
        ["s = Stack()\ns.push(1)\nassert s.pop() == 1", "assert Stack().items == []", "s = Stack()\ns.push(2)\ns.push(3)\nassert s.pop() == 3"],
    ),
]


def tasks() -> list[tuple[str, str]]:
    """(response, ground truth) of each task in the mix."""
    mix = [(f"```python\n{code}```", json.dumps({"inputs": i, "outputs": o})) for code, i, o in STDIO]
    mix += [(f"```python\n{code}```", json.dumps({"asserts": a})) for code, a in ASSERTS]
    return mix


def cpu_seconds() -> float:
    """CPU time of this process and of every child it has waited for."""
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def budget_cost(runs: int) -> None:
    """CPU ms of one sandboxed ``print(1)`` with the run's cgroup and seccomp
    filter, and without them (same code, same interpreter, interleaved)."""
    full = isolation_for("auto", sys.executable)
    variants = {"with cgroup + seccomp": full, "without": dataclasses.replace(full, cgroups=None, seccomp=False)}
    spent: dict[str, list[float]] = {name: [] for name in variants}
    for _ in range(runs):
        for name, isolation in variants.items():
            began = cpu_seconds()
            assert launch.execute(isolation, "print(1)", "", Limits(), sys.executable).ok
            spent[name].append(cpu_seconds() - began)
    medians = {name: statistics.median(values) * 1000 for name, values in spent.items()}
    print(f"{full.level}, cgroups: {full.cgroups is not None}, seccomp: {full.seccomp}")
    for name, ms in medians.items():
        print(f"  {name:22s} {ms:6.1f} CPU ms a run")
    print(f"  the budgets cost {medians['with cgroup + seccomp'] / medians['without'] - 1:+.1%}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--isolation", default="auto")
    parser.add_argument("--budget-cost", type=int, default=0, metavar="RUNS",
                        help="instead: the CPU cost of the cgroup and seccomp budgets over RUNS runs")
    args = parser.parse_args()
    if args.budget_cost:
        budget_cost(args.budget_cost)
        return
    mix = tasks()
    for response, truth in mix:  # warm: the isolation probe, page cache; and check the mix
        result = compute_score("bench", response, truth, isolation=args.isolation)
        assert result["score"] == 1.0, result
    cpu, wall = cpu_seconds(), time.perf_counter()
    for _ in range(args.rounds):
        for response, truth in mix:
            compute_score("bench", response, truth, isolation=args.isolation)
    cpu, wall = cpu_seconds() - cpu, time.perf_counter() - wall
    n = args.rounds * len(mix)
    print(f"verl_rewards_code from {verl_rewards_code.__file__}")
    print(f"isolation={result['isolation']}: {n} tasks ({3 * n} sandboxed runs)")
    print(f"{n / cpu:.2f} tasks/s per core ({cpu / n * 1000:.0f} CPU ms a task); {n / wall:.2f} tasks/s wall clock")


if __name__ == "__main__":
    main()
