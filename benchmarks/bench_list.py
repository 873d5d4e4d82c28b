"""`verl-rewards list` against a bare entry-point scan, in this same run.

    python benchmarks/bench_list.py              # 30 runs of each (~10 s)
    python benchmarks/bench_list.py --repeat 60 --max-ratio 1.5

Two comparisons, each timed interleaved so both sides see the same machine:

* in-process: ``main(["list"])`` (parse arguments, discover, format the
  table) vs ``importlib.metadata.entry_points(group="verl_rewards")``;
* a fresh process: the ``verl-rewards list`` console script vs
  ``python -c "import importlib.metadata as m; m.entry_points(group=...)"``
  (``python -c pass`` is shown for scale: interpreter start-up alone).

Prints medians and ratios. The aim is ``list`` within 1.5x of the bare scan;
``--max-ratio`` makes exceeding it exit 1.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import shutil
import statistics
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from importlib import metadata
from pathlib import Path

from verl_rewards.cli.main import main as cli_main

GROUP = "verl_rewards"
BARE_SCAN = f"import importlib.metadata as m; m.entry_points(group={GROUP!r})"


def timed(fn: Callable[[], object]) -> float:
    """Wall time of one call, in seconds."""
    began = time.perf_counter()
    fn()
    return time.perf_counter() - began


def interleaved(cases: dict[str, Callable[[], object]], repeat: int) -> dict[str, list[float]]:
    """Time every case ``repeat`` times, round-robin, after one warm-up round."""
    for fn in cases.values():
        fn()
    times: dict[str, list[float]] = {name: [] for name in cases}
    for _ in range(repeat):
        for name, fn in cases.items():
            times[name].append(timed(fn))
    return times


def list_in_process(*args: str) -> Callable[[], object]:
    def run() -> object:
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli_main(["list", *args])
        assert code == 0, code
        return code

    return run


def bare_scan() -> object:
    return metadata.entry_points(group=GROUP)


def in_subprocess(argv: Sequence[str]) -> Callable[[], object]:
    def run() -> object:
        return subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)

    return run


def console_script() -> str:
    """The ``verl-rewards`` script installed next to this interpreter."""
    script = Path(sys.executable).with_name("verl-rewards")
    found = str(script) if script.exists() else shutil.which("verl-rewards")
    if found is None:
        raise SystemExit("the verl-rewards console script is not installed")
    return found


def report(title: str, times: dict[str, list[float]], baseline: str) -> float:
    """Print medians (ms) and each case's ratio to ``baseline``; return the worst ratio."""
    base = statistics.median(times[baseline])
    print(f"\n{title}")
    worst = 0.0
    for name, samples in times.items():
        median = statistics.median(samples)
        ratio = median / base
        if name != baseline and "pass" not in name:
            worst = max(worst, ratio)
        print(f"  {name:<44} median {median * 1e3:7.2f} ms  min {min(samples) * 1e3:7.2f} ms"
              f"  {ratio:5.2f}x")
    return worst


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--max-ratio", type=float, default=None,
                        help="exit 1 when `list` is slower than this many bare scans")
    args = parser.parse_args()

    plugins = len(metadata.entry_points(group=GROUP))
    dists = sum(1 for _ in metadata.distributions())
    print(f"{plugins} plugins among {dists} installed distributions; python {sys.version.split()[0]}")

    in_proc = interleaved({
        "bare entry_points(group=...)": bare_scan,
        "main(['list'])": list_in_process(),
        "main(['list', '--json'])": list_in_process("--json"),
    }, args.repeat)
    script = console_script()
    fresh = interleaved({
        "python -c <bare entry_points scan>": in_subprocess([sys.executable, "-c", BARE_SCAN]),
        "verl-rewards list (console script)": in_subprocess([script, "list"]),
        "python -m verl_rewards list": in_subprocess([sys.executable, "-m", "verl_rewards", "list"]),
        "python -c pass": in_subprocess([sys.executable, "-c", "pass"]),
    }, args.repeat)

    worst = max(report("in-process", in_proc, "bare entry_points(group=...)"),
                report("fresh process", fresh, "python -c <bare entry_points scan>"))
    print(f"\nworst ratio of `list` to the bare scan: {worst:.2f}x (aim: <= 1.5x)")
    if args.max_ratio is not None and worst > args.max_ratio:
        print(f"FAIL: above --max-ratio {args.max_ratio}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
