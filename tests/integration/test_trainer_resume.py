"""The trainer stops when every sample keeps failing, keeps its periodic checkpoint, and
trainer.resume=true continues from it exactly as an uninterrupted run would."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from trainer.main import main

TINY = [
    "model.hidden_size=32", "model.num_heads=2", "model.num_layers=1",
    "model.intermediate_size=64", "data.prompts_per_step=4", "rollout.n=4",
    "rollout.max_new_tokens=6", "trainer.log_every=1", "reward.executor=local",
]

# Fails every sample from call `fail_after` on (16 samples a step), counting in this process.
FAILS_LATER = """
calls = 0

def compute_score(data_source, solution_str, ground_truth, extra_info=None, fail_after=-1):
    global calls
    calls += 1
    if 0 <= fail_after < calls:
        raise ConnectionError("judge unreachable")
    return float(solution_str.strip() == ground_truth) + len(solution_str) / 100
"""


def _metrics(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def _curve(records: list[dict]) -> list[float]:
    return [value for r in records for value in (r["reward_mean"], r["loss"])]


def test_stop_on_failing_steps_then_resume_matches_an_uninterrupted_run(
        tmp_path, capsys, reward_file):
    path = reward_file(FAILS_LATER)
    common = [*TINY, f"reward.path={path}", "trainer.checkpoint_every=2"]
    broken = tmp_path / "broken"
    assert main([*common, "trainer.total_steps=6", f"trainer.output_dir={broken}",
                 "reward.kwargs.fail_after=32", "trainer.max_failed_steps=2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("trainer: stopped: every sample failed for 2 steps in a row (steps "
                          "3-4; trainer.max_failed_steps=2): 32 failed samples; most common "
                          f"error (32 of 32 samples): ConnectionError: judge unreachable (at {path}:")
    assert [r["step"] for r in _metrics(broken)] == [1, 2, 3, 4]
    assert (broken / "reward_curve.png").is_file()
    state = broken / "checkpoint" / "trainer_state.pt"
    import torch

    assert torch.load(state, weights_only=False)["step"] == 2  # the failing steps saved nothing

    assert main([*common, "trainer.total_steps=5", f"trainer.output_dir={broken}",
                 "trainer.resume=true"]) == 0
    assert "resumed from step 2" in capsys.readouterr().out
    resumed = _metrics(broken)
    assert [r["step"] for r in resumed] == [1, 2, 3, 4, 5]  # each step once

    straight = tmp_path / "straight"
    assert main([*common, "trainer.total_steps=5", f"trainer.output_dir={straight}"]) == 0
    assert _curve(resumed) == pytest.approx(_curve(_metrics(straight)), abs=1e-6)


# Every sample fails with its own message, as a reward quoting its input does.
FAILS_EACH_ITS_OWN_WAY = """
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    raise ValueError(f"row {extra_info['prompt_index']} sample {extra_info['sample_index']}")
"""


def test_the_stop_message_counts_failed_samples_not_distinct_error_texts(
        tmp_path, capsys, reward_file):
    path = reward_file(FAILS_EACH_ITS_OWN_WAY)
    assert main([*TINY, f"reward.path={path}", "trainer.total_steps=5",
                 f"trainer.output_dir={tmp_path / 'run'}", "trainer.max_failed_steps=2"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("trainer: stopped: every sample failed for 2 steps in a row (steps "
                          "1-2; trainer.max_failed_steps=2): 32 failed samples, 32 distinct "
                          "errors; most common error (1 of 32 samples): ValueError: row "), err


def test_overwrite_replaces_an_earlier_run(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TINY, "trainer.total_steps=2", f"trainer.output_dir={out}"]) == 0
    assert main([*TINY, "trainer.total_steps=1", f"trainer.output_dir={out}"]) == 2
    assert main([*TINY, "trainer.total_steps=1", f"trainer.output_dir={out}",
                 "trainer.overwrite=true"]) == 0
    assert [r["step"] for r in _metrics(out)] == [1]
