"""Model rewards (``verl-rewards-models``) by config alone: Scorer on Ray, the CLI, the trainer.

The judge talks to a real chat-completions server on 127.0.0.1; the reward
model is a tiny random-init classifier saved to a temporary folder.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from verl_rewards_models.classifier import HFRewardModel
from verl_rewards_models.testing import ChatServer
from verl_rewards_models.tiny import save_tiny_classifier

from trainer.main import main as train
from verl_rewards import Scorer
from verl_rewards.cli.main import main as cli

pytestmark = pytest.mark.ray

RAY = {"executor": "ray", "num_workers": 2, "worker_num_cpus": 0}
TINY_TRAINER = ["model.hidden_size=32", "model.num_heads=2", "model.num_layers=1",
                "model.intermediate_size=64", "data.prompts_per_step=4", "rollout.n=4",
                "rollout.max_new_tokens=6", "trainer.log_every=1"]
ROWS = [{"data_source": "chat", "solution_str": f"score={i}", "ground_truth": str(i), "prompt": f"question {i}"}
        for i in range(10)]


@pytest.fixture
def server() -> Iterator[ChatServer]:
    with ChatServer() as running:
        yield running


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_classifier(tmp_path_factory.mktemp("rm") / "tiny", seed=1)


def _judge(server: ChatServer) -> dict[str, object]:
    return {"base_url": server.base_url, "model": "judge", "template": "{prompt}|{response}"}


def test_llm_judge_scores_on_ray_workers_with_each_samples_prompt(ray_session, server: ChatServer) -> None:
    with Scorer.from_config({"plugin": "llm_judge", **RAY, "kwargs": _judge(server)}) as scorer:
        result = scorer.score(ROWS)
    assert result.errors == [None] * 10
    assert result.scores == pytest.approx([i / 10 for i in range(10)])
    assert sorted(m[-1]["content"] for _, m in server.requests) == sorted(
        f"question {i}|score={i}" for i in range(10))


def test_hf_reward_model_on_ray_workers_matches_the_model_in_process(ray_session, tiny: Path) -> None:
    config = {"plugin": "hf_reward_model", **RAY, "kwargs": {"model_path": str(tiny), "batch_size": 4}}
    with Scorer.from_config(config) as scorer:
        result = scorer.score(ROWS)
    expected = HFRewardModel(str(tiny))([r["data_source"] for r in ROWS], [r["solution_str"] for r in ROWS],
                                        [None] * 10, [None] * 10, [r["prompt"] for r in ROWS])
    assert result.errors == [None] * 10
    assert result.scores == pytest.approx(expected, abs=1e-5)


def test_cli_score_passes_a_prompt_column_to_the_judge(server: ChatServer, tmp_path: Path, capsys) -> None:
    source, target = tmp_path / "in.jsonl", tmp_path / "out.jsonl"
    source.write_text("".join(json.dumps(r) + "\n" for r in ROWS[:3]))
    argv = ["score", "-i", str(source), "-o", str(target), "reward.plugin=llm_judge",
            "reward.executor=local", f"reward.kwargs.base_url={server.base_url}",
            "reward.kwargs.model=judge", "reward.kwargs.template='{prompt}|{response}'"]  # quoted: YAML
    assert cli(argv) == 0
    rows = [json.loads(line) for line in target.read_text().splitlines()]
    assert [(r["prompt"], r["score"], r["judge_value"]) for r in rows] == [
        ("question 0", 0.0, 0.0), ("question 1", 0.1, 1.0), ("question 2", 0.2, 2.0)]
    assert sorted(m[-1]["content"] for _, m in server.requests) == [f"question {i}|score={i}" for i in range(3)]


def test_the_trainer_runs_with_the_classifier_reward_on_ray(ray_session, tiny: Path, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [*TINY_TRAINER, "reward.executor=ray", "reward.num_workers=1", "reward.worker_num_cpus=0",
            "reward.plugin=hf_reward_model", f"reward.kwargs.model_path={tiny}", "reward.max_batch_size=8",
            "trainer.total_steps=2", f"trainer.output_dir={out}"]
    assert train(argv) == 0
    records = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2]
    assert all(r["reward_failed"] == 0 and r["reward_mean"] != 0.0 for r in records)


def test_the_trainers_prompts_reach_the_judge(server: ChatServer, tmp_path: Path) -> None:
    out = tmp_path / "run"
    argv = [*TINY_TRAINER, "reward.executor=local", "reward.plugin=llm_judge",
            f"reward.kwargs.base_url={server.base_url}", "reward.kwargs.model=judge",
            "reward.kwargs.template=<{prompt}>", "trainer.total_steps=1", f"trainer.output_dir={out}"]
    assert train(argv) == 0
    data = Path(__file__).resolve().parents[2] / "examples" / "data" / "toy_copy.jsonl"
    prompts = {json.loads(line)["prompt"] for line in data.read_text().splitlines() if line.strip()}
    seen = [m[-1]["content"] for _, m in server.requests]
    assert len(seen) == 16  # 4 prompts x 4 responses, each judged once
    assert {s[1:-1] for s in seen} <= prompts and len(set(seen)) == 4
    [record] = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert record["reward_mean"] == pytest.approx(0.5)  # the server's default "Score: 5"
