"""The original bug, reproduced: a reward loaded as ``custom_module`` and sent
to a Ray worker inside a ``functools.partial``.

Run: ``python examples/custom_module_bug/old_way.py`` -> the Ray task fails with
``ModuleNotFoundError: No module named 'custom_module'`` (exit code 1).
"""

from __future__ import annotations

import importlib.util
import sys
from functools import partial
from pathlib import Path

import ray

HERE = Path(__file__).resolve().parent


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):  # verl/trainer/ppo/reward.py
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


def load_custom_reward_fn(path: Path, name: str):
    """What verl did: import the file under the synthetic name ``custom_module``."""
    spec = importlib.util.spec_from_file_location("custom_module", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["custom_module"] = module
    spec.loader.exec_module(module)
    return partial(_call_with_kwargs, getattr(module, name), {"partial_credit": 0.0})


@ray.remote
def score_remotely(reward_fn, solution: str, truth: str) -> float:
    return reward_fn("openai/gsm8k", solution, truth)


def main() -> int:
    reward_fn = load_custom_reward_fn(HERE / "my_reward.py", "compute_score")
    print("driver:", reward_fn("openai/gsm8k", "so 18 + 24 = 42", "42"))
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False)
    try:
        print("worker:", ray.get(score_remotely.remote(reward_fn, "so 18 + 24 = 42", "42")))
    except ray.exceptions.RayError as e:  # RayTaskError wrapping the unpickling failure
        cause = "No module named 'custom_module'" if "custom_module" in str(e) else str(e)
        print(f"worker failed: {type(e).__name__}: ... {cause}")
        return 1
    finally:
        ray.shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
