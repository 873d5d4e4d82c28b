"""The same reward file, fixed: a :class:`RewardRef` crosses to Ray workers.

The reference carries the file's source and hash; each worker materialises
it under a real, deterministic module name. The file is deleted before any
worker loads it, and no process ever has a ``custom_module``.

Run: ``python examples/custom_module_bug/run.py``
"""

from __future__ import annotations

import shutil
import sys
import tempfile
from pathlib import Path

import ray

from verl_rewards import RewardRef, Scorer

HERE = Path(__file__).resolve().parent
SAMPLES = [
    {"data_source": "openai/gsm8k", "solution_str": "18 + 24 = 42", "ground_truth": "42"},
    {"data_source": "openai/gsm8k", "solution_str": "The answer is 41.", "ground_truth": "42"},
    {"data_source": "openai/gsm8k", "solution_str": "It costs $1,250", "ground_truth": "1250"},
]
# float("forty-two") raises inside my_reward.py: the error names that file and line.
BAD = {"data_source": "openai/gsm8k", "solution_str": "42", "ground_truth": "forty-two"}


@ray.remote
def score_in_task(ref: RewardRef, sample: dict) -> tuple[float, bool]:
    fn = ref.load()  # resolved in this worker, once, by a real module name
    return fn(**sample), "custom_module" in sys.modules


@ray.remote
class Judge:
    def __init__(self, ref: RewardRef) -> None:
        self.fn = ref.load()

    def score(self, sample: dict) -> tuple[float, bool, str]:
        return self.fn(**sample), "custom_module" in sys.modules, self.fn.__module__


def _line_of(text: str) -> int:
    lines = (HERE / "my_reward.py").read_text().splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def main() -> int:
    workdir = Path(tempfile.mkdtemp())
    path = workdir / "my_reward.py"
    shutil.copy(HERE / "my_reward.py", path)
    cfg = {"path": str(path), "kwargs": {"partial_credit": 0.1}, "executor": "ray", "num_workers": 2,
           "worker_num_cpus": 0}
    scorer = Scorer.from_config(cfg)  # validated now; its reference carries the source
    ref = scorer.ref
    shutil.rmtree(workdir)  # no worker can read the file any more
    print(f"reference: {ref.display_name}, module {ref.module_name}")

    started_here = not ray.is_initialized()  # join a running session if there is one
    if started_here:
        ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        task = ray.get([score_in_task.remote(ref, s) for s in SAMPLES])
        judge = Judge.remote(ref)
        actor = ray.get([judge.score.remote(s) for s in SAMPLES])
        with scorer:  # starts 2 reward actors, each resolving the reference once
            result = scorer.score([*SAMPLES, BAD])
    finally:
        if started_here:
            ray.shutdown()
    print("ray task :", [score for score, _ in task])
    print("ray actor:", [score for score, _, _ in actor])
    print("scorer   :", result.scores[:3], f"({result.provenance.display_name})")
    error = result.errors[3] or ""
    print("bad row  :", error)  # located on a worker that never saw the file
    located = error.endswith(f"(at {path}:{_line_of('float(numbers[-1])')} in compute_score)")
    leaked = any(flag for _, flag in task) or any(flag for _, flag, _ in actor) or "custom_module" in sys.modules
    print("custom_module in any process:", leaked)
    expected = [1.0, 0.1, 1.0]
    ok = ([s for s, _ in task] == expected == [s for s, _, _ in actor] == result.scores[:3]
          and not leaked and located)
    print("OK" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
