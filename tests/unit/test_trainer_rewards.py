"""trainer.rewards and trainer.metrics: samples, overlap timing, step metrics, outputs."""

from __future__ import annotations

import json
import math
import threading
import time
from concurrent.futures import Future

import pytest
import torch

from trainer import rewards
from trainer.data import PromptRecord
from trainer.metrics import MetricsLog, console_line, moving_average, plot_reward_curve, read_metrics
from trainer.rollout import Rollout
from verl_rewards.results import BatchResult, Provenance, assemble
from verl_rewards.scoring import Outcome


def _result(*outcomes: Outcome, error_score: float = 0.0) -> BatchResult:
    """A batch result as the scorer assembles it."""
    return assemble(outcomes, Provenance("file", "r", "r (file r.py)"), error_score)


def _ok(score: float, **extra) -> Outcome:
    return Outcome(score, extra or None, None, "ok")


def _failed(error: str, status: str = "failed") -> Outcome:
    return Outcome(None, None, error, status)


def test_samples_carry_the_prompt_fields_and_response_lengths():
    records = [PromptRecord(7, "12:", "toy", "12", {"digits": 2})] * 2
    rollout = Rollout(records=records, input_ids=torch.tensor([[1, 4, 5, 9, 2, 0], [1, 4, 5, 9, 9, 9]]),
                      attention_mask=torch.ones(2, 6, dtype=torch.long),
                      response_mask=torch.tensor([[1.0, 1.0, 0.0], [1.0, 1.0, 1.0]]),
                      prompt_length=3, texts=["1", "111"], group_size=2)
    assert rewards.build_samples(rollout) == [
        {"data_source": "toy", "solution_str": "1", "ground_truth": "12", "prompt": "12:",
         "extra_info": {"digits": 2, "prompt_index": 7, "sample_index": 0, "response_length": 2}},
        {"data_source": "toy", "solution_str": "111", "ground_truth": "12", "prompt": "12:",
         "extra_info": {"digits": 2, "prompt_index": 7, "sample_index": 1, "response_length": 3}},
    ]


@pytest.mark.parametrize("finished, overlapped_until, latency, hidden", [
    (2.0, 5.0, 1.0, 1.0),   # reward done before the log-probs: fully hidden
    (5.0, 2.0, 4.0, 1.0),   # the trainer waited 3 s of 4
    (1.0, 0.5, 0.0, 0.0),   # instant result
])
def test_overlap_timing(finished, overlapped_until, latency, hidden):
    timing = rewards.RewardTiming.measure(1.0, finished, overlapped_until)
    assert (timing.latency_s, timing.hidden_s) == (latency, hidden)
    assert timing.hidden_frac == (hidden / latency if latency else 1.0)


def test_launch_stamps_completion_while_the_trainer_is_busy():
    future: Future = Future()

    class Scorer:
        def submit(self, samples):
            threading.Timer(0.05, future.set_result, ["done"]).start()
            return future

    pending = rewards.launch(Scorer(), [])
    time.sleep(1.0)  # "log-prob work" far outlasting the reward
    result, timing = pending.wait(overlapped_until=time.perf_counter())
    assert result == "done"
    # Stamped when the result came (~0.05 s), not when the trainer looked (1 s).
    assert 0.04 < timing.latency_s < 0.5 and timing.hidden_frac == 1.0


def test_reward_metrics_leave_failed_samples_out_of_the_mean():
    result = _result(_ok(1.0, exact=1.0, note="a"), _failed("ValueError: x"),
                     _ok(0.5, exact=0.0, note="b"), _failed("SampleTimeout: y", "timeout"),
                     error_score=-1.0)
    metrics = rewards.reward_metrics(result, rewards.RewardTiming(0.2, 0.1))
    assert metrics == {
        "reward_mean": 0.75, "reward_std": 0.25, "reward_min": 0.5, "reward_max": 1.0,
        "reward_failed": 1, "reward_timed_out": 1, "reward_latency_s": 0.2,
        "reward_hidden_s": 0.1, "reward_hidden_frac": 0.5, "reward_extra/exact": 0.5,
    }
    assert rewards.score_tensor(result).tolist() == [1.0, -1.0, 0.5, -1.0]  # error_score
    assert rewards.first_errors(result) == ["ValueError: x", "SampleTimeout: y"]


def test_all_failed_gives_no_mean_rather_than_a_fake_zero():
    metrics = rewards.reward_metrics(_result(_failed("E: a"), _failed("E: a")),
                                     rewards.RewardTiming(0.1, 0.1))
    assert metrics["reward_mean"] is None and metrics["reward_failed"] == 2


def test_metrics_log_writes_one_json_object_per_step(tmp_path):
    path = tmp_path / "out" / "metrics.jsonl"
    with MetricsLog(path) as log:
        log.write({"step": 1, "reward_mean": 0.5, "kl": math.nan})
        log.write({"step": 2, "reward_mean": None})
    assert read_metrics(path) == [{"step": 1, "reward_mean": 0.5, "kl": None},
                                  {"step": 2, "reward_mean": None}]
    assert [json.loads(line)["step"] for line in path.read_text().splitlines()] == [1, 2]


def test_console_line_shows_what_is_there():
    line = console_line({"step": 3, "reward_mean": 0.25, "reward_failed": 2,
                         "reward_hidden_frac": 0.5}, total_steps=100)
    assert line == "step   3/100  reward 0.250  failed 2  hidden 50%"


def test_moving_average_is_trailing():
    assert moving_average([1.0, 3.0, 5.0, 7.0], 2) == [1.0, 2.0, 4.0, 6.0]


def test_reward_curve_is_a_png_even_without_scores(tmp_path):
    records = [{"step": i, "reward_mean": i / 10, "reward_std": 0.1} for i in range(1, 11)]
    plot_reward_curve(records, tmp_path / "a.png", "t")
    plot_reward_curve([{"step": 1, "reward_mean": None}], tmp_path / "b.png", "t")
    for name in ("a.png", "b.png"):
        assert (tmp_path / name).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
