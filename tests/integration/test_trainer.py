"""The reference trainer end to end: real model, real GRPO steps, rewards via verl_rewards.

Runs go in process through ``trainer.main.main(argv)`` so they join the
session's shared Ray instance; one subprocess checks the real command line.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

from trainer.main import main
from trainer.settings import DEFAULT_CONFIG, PROJECT_ROOT
from verl_rewards.cli.main import main as cli

TINY = [
    "model.hidden_size=32", "model.num_heads=2", "model.num_layers=1",
    "model.intermediate_size=64", "data.prompts_per_step=4", "rollout.n=4",
    "rollout.max_new_tokens=6", "trainer.log_every=1",
]
# Shared with other tests' actors on a 2-CPU session: do not reserve a CPU.
RAY = ["reward.executor=ray", "reward.num_workers=1", "reward.worker_num_cpus=0"]
STEP_KEYS = {
    "step", "reward_mean", "reward_std", "reward_failed", "reward_timed_out",
    "reward_latency_s", "reward_hidden_s", "reward_hidden_frac", "tokens_per_s",
    "loss", "kl", "response_length", "elapsed_s",
}

FILE_REWARD = """
import os

def compute_score(data_source, solution_str, ground_truth, extra_info=None, fail=False):
    if fail and extra_info["sample_index"] == 0:
        raise RuntimeError("first sample of every group fails")
    return {"score": len(solution_str) / 6, "pid": os.getpid()}
"""


def _line_of(source: str, text: str) -> int:
    """The line of a reward file written from ``source`` (dedented) that holds ``text``."""
    lines = textwrap.dedent(source).splitlines()
    return next(n for n, line in enumerate(lines, 1) if text in line)


def _metrics(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]


def test_installed_plugin_on_ray_writes_metrics_curve_and_a_reloadable_checkpoint(
    ray_session, tmp_path, capsys, monkeypatch
):
    out = tmp_path / "run"
    assert main([*TINY, *RAY, "trainer.total_steps=3", f"trainer.output_dir={out}"]) == 0
    stdout = capsys.readouterr().out
    assert "reward: copy_digits (verl-rewards-toy 0.1.0) on executor 'ray'" in stdout
    assert "done: 3 steps" in stdout

    records = _metrics(out)
    assert [r["step"] for r in records] == [1, 2, 3]
    for record in records:
        assert STEP_KEYS <= set(record)
        assert 0.0 <= record["reward_mean"] <= 1.0 and record["reward_failed"] == 0
        assert record["reward_latency_s"] > 0 and record["tokens_per_s"] > 0
        assert 0.0 <= record["reward_hidden_s"] <= record["reward_latency_s"]
        assert 0.0 <= record["reward_hidden_frac"] <= 1.0
        assert 0.0 <= record["reward_extra/exact"] <= 1.0
    assert (out / "reward_curve.png").read_bytes()[:4] == b"\x89PNG"
    assert {"config.json", "model.safetensors", "tokenizer.json"} <= {
        p.name for p in (out / "checkpoint").iterdir()}

    import torch
    from transformers import AutoModelForCausalLM

    import trainer.loop

    built, real = [], trainer.loop.build_policy  # the resumed run's policy, before any update

    def build_policy(*args, **kwargs):
        model = real(*args, **kwargs)
        built.append({k: v.detach().clone() for k, v in model.state_dict().items()})
        return model

    monkeypatch.setattr(trainer.loop, "build_policy", build_policy)
    again = tmp_path / "resumed"
    assert main([*TINY, "reward.executor=local", "trainer.total_steps=1",
                 f"model.path={out / 'checkpoint'}", f"trainer.output_dir={again}"]) == 0
    assert "policy: " in capsys.readouterr().out
    assert len(_metrics(again)) == 1
    saved = AutoModelForCausalLM.from_pretrained(out / "checkpoint", local_files_only=True,
                                                 dtype=torch.float32).state_dict()
    [initial] = built
    assert initial.keys() == saved.keys()
    assert all(torch.equal(initial[k], saved[k]) for k in saved)


def test_file_reward_runs_on_ray_workers_and_failures_are_counted_not_fatal(
    ray_session, tmp_path, reward_file, capsys
):
    out = tmp_path / "run"
    path = reward_file(FILE_REWARD)
    argv = [*TINY, *RAY, "trainer.total_steps=2", f"trainer.output_dir={out}",
            f"reward.path={path}", "reward.kwargs.fail=true"]
    assert main(argv) == 0
    records = _metrics(out)
    assert [r["reward_failed"] for r in records] == [4, 4]  # one per group of 4
    assert records[0]["reward_errors"] == [
        "RuntimeError: first sample of every group fails "
        f"(at {path}:{_line_of(FILE_REWARD, 'first sample of every')} in compute_score)"]
    assert records[0]["reward_extra/pid"] != os.getpid()  # scored in a Ray worker
    assert records[0]["reward_mean"] is not None
    stdout = capsys.readouterr().out
    assert "reward error: RuntimeError: first sample of every group fails" in stdout
    assert f"reward: compute_score (file {path}, sha256 " in stdout


def _skip_run(tmp_path, path, name: str, error_score: float) -> list[dict]:
    out = tmp_path / name
    assert main([*TINY, "reward.executor=local", "reward.on_error=skip", "trainer.total_steps=3",
                 f"reward.error_score={error_score}", f"reward.path={path}",
                 "reward.kwargs.fail=true", "trainer.save_checkpoint=false",
                 f"trainer.output_dir={out}"]) == 0
    return _metrics(out)


def test_on_error_skip_trains_without_the_failed_samples_and_counts_them(
        tmp_path, reward_file, capsys):
    path = reward_file(FILE_REWARD)  # the first sample of every group of 4 fails
    records = _skip_run(tmp_path, path, "zero", error_score=0.0)
    assert [(r["reward_skipped"], r["reward_failed"]) for r in records] == [(4, 4)] * 3
    assert "skipped 4" in capsys.readouterr().out
    # Left out, not trained on as a score: a wild error_score changes nothing at all.
    wild = _skip_run(tmp_path, path, "wild", error_score=-1000.0)
    keys = ("reward_mean", "loss", "pg_loss", "kl", "entropy", "grad_norm")
    assert [[r[k] for k in keys] for r in wild] == [[r[k] for k in keys] for r in records]
    assert all(r["reward_min"] >= 0.0 and abs(r["loss"]) < 10 for r in wild)


def test_on_error_raise_stops_the_run_with_exit_1(tmp_path, reward_file, capsys):
    argv = [*TINY, "reward.executor=local", "reward.on_error=raise", "trainer.total_steps=2",
            f"trainer.output_dir={tmp_path / 'run'}", f"reward.path={reward_file(FILE_REWARD)}",
            "reward.kwargs.fail=true"]
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert err.startswith("trainer: reward failed: ")
    assert "first sample of every group fails" in err and "Traceback" not in err


def test_unknown_plugin_fails_before_any_model_is_built(tmp_path, capsys, monkeypatch):
    import trainer.loop

    def no_model(*args, **kwargs):
        raise AssertionError("a model was built despite a bad reward config")

    monkeypatch.setattr(trainer.loop, "build_policy", no_model)
    out = tmp_path / "run"
    assert main([*TINY, "reward.plugin=copy_digitz", f"trainer.output_dir={out}"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("trainer: reward config error: no reward plugin named "
                                   "'copy_digitz' is installed. Did you mean 'copy_digits'?")
    assert "Traceback" not in captured.err and captured.out == ""
    assert not out.exists()


@pytest.mark.parametrize("override, message", [
    ("trainer.total_stepz=1", "trainer: config error: unknown key 'trainer.total_stepz'. Did you mean 'trainer.total_steps'?"),
    ("data.path=nowhere.jsonl", "trainer: config error: cannot read prompt file nowhere.jsonl"),
    ("model.path=nowhere", "trainer: config error: model.path 'nowhere' is not a directory"),
])
def test_trainer_config_errors_exit_2(tmp_path, capsys, override, message):
    assert main([override, f"trainer.output_dir={tmp_path / 'run'}"]) == 2
    assert capsys.readouterr().err.startswith(message)


def test_same_seed_same_run(tmp_path):
    runs = []
    for name in ("a", "b"):
        out = tmp_path / name
        assert main([*TINY, "reward.executor=local", "trainer.total_steps=3",
                     "trainer.save_checkpoint=false", f"trainer.output_dir={out}"]) == 0
        runs.append([(r["reward_mean"], r["loss"], r["kl"]) for r in _metrics(out)])
    assert runs[0] == runs[1]


def test_command_line_bad_reward_key_exits_2_without_a_traceback(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "trainer.main", "reward.not_a_key=1", f"trainer.output_dir={out}"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=60,
    )
    assert proc.returncode == 2
    assert proc.stderr.startswith("trainer: reward config error: unknown key 'reward.not_a_key'")
    assert "Traceback" not in proc.stderr and not out.exists()


def test_config_yaml_holds_the_effective_reward_section_and_reads_back(
        tmp_path, reward_file):
    from trainer.settings import load_config
    from verl_rewards import Scorer
    from verl_rewards.config import KEYS

    out = tmp_path / "run"
    path = reward_file(FILE_REWARD)
    overrides = [f"reward.path={path}", "reward.kwargs.fail=false", "reward.executor=local"]
    assert main([*TINY, *overrides, "trainer.total_steps=1", f"trainer.output_dir={out}",
                 "trainer.save_checkpoint=false"]) == 0
    text = (out / "config.yaml").read_text()
    assert text.startswith(f"# reward: compute_score (file {path}, sha256 ")
    section = yaml.safe_load(text)["reward"]
    assert set(section) == set(KEYS)  # every key, defaults filled in
    assert section["plugin"] is None and section["path"] == str(path)  # the file's choice replaced
    assert section["kwargs"] == {"fail": False} and section["executor"] == "local"
    assert section["num_workers"] == 1 and section["on_error"] == "score"
    assert section["timeout_s"] == 30.0  # `auto`, resolved: the file declares no timeout
    saved = load_config([], out / "config.yaml")
    again = Scorer.from_config(saved.reward, saved.reward_overrides).config
    assert again == Scorer.from_config(section).config
    assert again.path == str(path) and dict(again.kwargs) == {"fail": False}


def test_the_command_line_hides_rays_start_up_banners(tmp_path):
    out = tmp_path / "run"
    proc = subprocess.run(
        [sys.executable, "-m", "trainer.main", *TINY, "reward.executor=ray",
         "reward.num_workers=1", "reward.worker_num_cpus=0", "trainer.total_steps=1",
         "trainer.save_checkpoint=false", f"trainer.output_dir={out}"],
        cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600,
        env={k: v for k, v in os.environ.items() if k not in ("RAY_ADDRESS", "RAY_LOGGER_LEVEL")},
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "done: 1 steps" in proc.stdout
    assert "Started a local Ray instance" not in proc.stderr + proc.stdout
    assert " INFO " not in proc.stderr, proc.stderr[-3000:]


def test_score_command_takes_the_trainer_config_and_a_reward_chosen_by_override(
    tmp_path, reward_file, capsys
):
    rows = tmp_path / "in.jsonl"
    rows.write_text(json.dumps({"data_source": "d", "solution_str": "abc", "ground_truth": ""}) + "\n")
    out = tmp_path / "out.jsonl"
    assert cli(["score", "--config", str(DEFAULT_CONFIG), "-i", str(rows), "-o", str(out),
                f"reward.path={reward_file(FILE_REWARD)}", "reward.executor=local"]) == 0
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["score"] == pytest.approx(0.5) and row["error"] is None  # len("abc") / 6
    assert "with compute_score (file " in capsys.readouterr().out  # not the file's plugin


def test_help_exits_0(capsys):
    assert main(["--help"]) == 0
    assert "usage: python -m trainer.main" in capsys.readouterr().out


def test_weighted_rewards_from_config_alone(ray_session, tmp_path, reward_file):
    out = tmp_path / "run"
    path = reward_file(FILE_REWARD)
    argv = [*TINY, *RAY, "trainer.total_steps=1", f"trainer.output_dir={out}",
            "reward.rewards.toy.plugin=copy_digits", f"reward.rewards.length.path={path}",
            "reward.rewards.length.weight=0"]
    assert main(argv) == 0
    [record] = _metrics(out)
    assert record["reward_failed"] == 0
    # Each component is logged under its name; the weight-0 one does not count.
    assert record["reward_mean"] == pytest.approx(record["reward_extra/toy"])
    assert "reward_extra/length" in record and "reward_extra/toy/position_acc" in record
