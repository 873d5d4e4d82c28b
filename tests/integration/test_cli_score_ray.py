"""`verl-rewards score` on the Ray executor (the trainer's default)."""

from __future__ import annotations

import importlib
import json
import os

import pytest

from verl_rewards.cli.main import main

pytestmark = pytest.mark.ray


def test_score_on_ray_workers_keeps_order_and_reports(ray_session, tmp_path, capsys):
    texts = [str(i % 3) for i in range(40)] + ["raise"]
    source = tmp_path / "in.jsonl"
    source.write_text("".join(json.dumps({"data_source": "d", "solution_str": t,
                                          "ground_truth": "1", "n": i}) + "\n"
                              for i, t in enumerate(texts)))
    target = tmp_path / "out.jsonl"
    assert main(["score", "-i", str(source), "-o", str(target), "--batch-size", "16",
                 "reward.plugin=faulty", "reward.executor=ray", "reward.num_workers=2",
                 "reward.worker_num_cpus=0"]) == 0
    out = [json.loads(line) for line in target.read_text().splitlines()]
    assert [r["n"] for r in out] == list(range(41))
    assert [r["score"] for r in out] == [float(t == "1") for t in texts]
    faults = importlib.import_module("verl_rewards_testkit.faults").__file__
    # located on the worker, in the plugin's own code
    assert out[-1]["error"] == f"RuntimeError: the reward raised on purpose (at {faults}:25 in faulty)"
    summary = capsys.readouterr().out
    assert "on the ray executor" in summary and "ok 40, failed 1, timed out 0" in summary


def test_plugin_runs_in_ray_workers_not_the_cli(ray_session, tmp_path):
    source = tmp_path / "in.jsonl"
    source.write_text('{"data_source": "d", "solution_str": "1", "ground_truth": "1"}\n')
    target = tmp_path / "out.jsonl"
    assert main(["score", "-i", str(source), "-o", str(target), "reward.plugin=exact_match",
                 "reward.executor=ray", "reward.num_workers=1", "reward.worker_num_cpus=0"]) == 0
    (row,) = [json.loads(line) for line in target.read_text().splitlines()]
    assert row["score"] == 1.0 and row["pid"] != os.getpid()
