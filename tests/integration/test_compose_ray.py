from __future__ import annotations

import os

import pytest

from verl_rewards import Scorer

pytestmark = pytest.mark.ray

FORMAT = '''
import os
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    return {"score": float(solution_str.startswith("<")), "pid": os.getpid()}
'''


def test_mixed_batch_routed_to_three_rewards_on_ray_workers(ray_session, reward_file):
    cfg = {
        "executor": "ray", "num_workers": 2, "worker_num_cpus": 0, "chunk_size": 3,
        "rewards": {
            "exact": {"plugin": "exact_match", "weight": 1.0},
            "batch": {"plugin": "batch_exact", "weight": 2.0},
            "format": {"path": str(reward_file(FORMAT, "fmt.py")), "weight": 0.5},
        },
        "route": {"gsm8k": ["exact", "format"], "math/*": "batch", "*": "format"},
    }
    rows = [
        ("gsm8k", "<1", "<1"), ("math/boxed", "7", "7"), ("chat", "<hi", ""), ("gsm8k", "2", "3"),
        ("math/x", "1", "2"), ("chat", "no", ""), ("gsm8k", "<5", "<5"),
    ]
    samples = [{"data_source": d, "solution_str": s, "ground_truth": g} for d, s, g in rows]
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score(samples)
    assert result.scores == [1.5, 2.0, 0.5, 0.0, 0.0, 0.0, 1.5]
    assert result.extra_info["exact"] == [1.0, None, None, 0.0, None, None, 1.0]
    assert result.extra_info["batch"] == [None, 1.0, None, None, 0.0, None, None]
    pids = {p for p in result.extra_info["format/pid"] if p is not None}
    assert pids and os.getpid() not in pids
