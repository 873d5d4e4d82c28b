"""The original bug report's scenario: broken the old way, working with a RewardRef."""

from __future__ import annotations

import runpy
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom_module_bug"


@pytest.mark.ray
def test_file_reward_scores_on_ray_task_actor_and_pool_after_the_file_is_deleted(ray_session, capsys):
    module = runpy.run_path(str(EXAMPLE / "run.py"))
    assert module["main"]() == 0
    out = capsys.readouterr().out
    assert "custom_module in any process: False" in out
    assert out.strip().endswith("OK")
    assert "custom_module" not in sys.modules


@pytest.mark.ray
@pytest.mark.slow
def test_the_old_custom_module_loader_really_fails_on_a_ray_worker():
    done = subprocess.run([sys.executable, str(EXAMPLE / "old_way.py")], capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 1
    assert "No module named 'custom_module'" in done.stdout


def test_the_trainer_demos_file_reward_gives_partial_credit_a_policy_can_climb():
    from verl_rewards import Scorer

    rows = [("6604", 1.0), ("6605", 0.8125), ("66045", 0.75), ("66", 0.375), ("", 0.0)]
    with Scorer.from_config({"path": str(EXAMPLE / "copy_reward.py"), "executor": "local"}) as scorer:
        result = scorer.score([{"data_source": "toy_copy", "solution_str": text,
                                "ground_truth": "6604"} for text, _ in rows])
    assert result.scores == [expected for _, expected in rows]
    assert result.provenance.kind == "file"
