"""Peak memory and rate of the streaming ``verl-rewards score``, against baselines run here.

    python benchmarks/bench_score_stream.py            # 200k rows (~120 MB of JSONL)
    python benchmarks/bench_score_stream.py --rows 20000

Each figure is a child process's peak RSS: ``score`` (local executor, the
testkit's ``exact_match``) to JSONL and to Parquet (batches written as part
files, merged on close), a bare import of the CLI, and the least a
hold-everything scorer needs (``json.loads`` of every line into one list).
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HOLD_ALL = """
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1], encoding="utf-8")]
print(len(rows))
"""


def _peak_of(argv: list[str]) -> tuple[float, float]:
    """Run ``argv`` to completion in a fresh child: (peak RSS in MB, seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    began = time.perf_counter()
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    elapsed = time.perf_counter() - began
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    # ru_maxrss of children is a running maximum: run the smallest first.
    return max(peak, before) / 1024, elapsed


def _write_input(path: Path, rows: int) -> float:
    pad = "x" * 250
    with path.open("w", encoding="utf-8") as file:
        for i in range(rows):
            file.write(json.dumps({"id": i, "data_source": "d", "solution_str": f"{pad}{i % 2}",
                                   "ground_truth": f"{pad}1", "extra_info": {"i": i}}) + "\n")
    return path.stat().st_size / 2**20


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=200_000)
    rows = parser.parse_args().rows
    with tempfile.TemporaryDirectory() as tmp:
        source = Path(tmp) / "in.jsonl"
        size = _write_input(source, rows)
        import_only, _ = _peak_of([sys.executable, "-c", "import verl_rewards.cli.cmd_score"])
        runs = {fmt: _peak_of([sys.executable, "-m", "verl_rewards", "score", "--no-progress",
                               "-i", str(source), "-o", str(Path(tmp) / f"out.{fmt}"),
                               "reward.plugin=exact_match", "reward.executor=local"])
                for fmt in ("jsonl", "parquet")}
        hold, _ = _peak_of([sys.executable, "-c", HOLD_ALL, str(source)])
    print(f"input: {rows} rows, {size:.0f} MB of JSONL")
    print(f"{'what':<44}{'peak RSS':>10}")
    print(f"{'import the CLI (floor)':<44}{import_only:>7.0f} MB")
    for fmt, (score, seconds) in runs.items():
        print(f"{f'verl-rewards score to {fmt} (streaming)':<44}{score:>7.0f} MB   "
              f"{rows / seconds:,.0f} rows/s end to end")
    print(f"{'json.loads every row into a list (baseline)':<44}{hold:>7.0f} MB")


if __name__ == "__main__":
    main()
