"""``hf_reward_model`` on a tiny random-init classifier saved to a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from transformers import AutoModelForSequenceClassification, AutoTokenizer
from verl_rewards_models.classifier import HFRewardModel
from verl_rewards_models.tiny import save_tiny_classifier

from verl_rewards import Scorer
from verl_rewards.errors import PluginLoadError

RESPONSES = ["4", "The answer is four, because 2 + 2 = 4.", "five?", "x" * 90]
PROMPTS = ["2+2?", [{"role": "system", "content": "math"}, {"role": "user", "content": "2+2?"}], None, "long"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return save_tiny_classifier(tmp_path_factory.mktemp("rm") / "tiny", seed=3)


def _reference_logit(path: Path, ids: list[int]) -> float:
    """The model alone, one unpadded sequence at a time."""
    model = AutoModelForSequenceClassification.from_pretrained(path, local_files_only=True).eval()
    with torch.inference_mode():
        return float(model(input_ids=torch.tensor([ids])).logits[0, 0])


def _score(rm: HFRewardModel, responses: list[str], prompts: list[object]) -> list[float]:
    n = len(responses)
    return rm([""] * n, responses, [""] * n, [None] * n, prompts)


@pytest.mark.parametrize("batch_size", [1, 3, 8])
def test_batched_scores_equal_each_sequence_scored_alone(tiny: Path, batch_size: int) -> None:
    rm = HFRewardModel(str(tiny), batch_size=batch_size)
    expected = [_reference_logit(tiny, rm.encode(p, r)) for p, r in zip(PROMPTS, RESPONSES)]
    assert _score(rm, RESPONSES, PROMPTS) == pytest.approx(expected, abs=1e-5)
    assert len(set(expected)) == len(expected)  # a random head: the inputs really differ


def test_the_chat_template_formats_user_prompt_and_assistant_response(tiny: Path) -> None:
    rm = HFRewardModel(str(tiny))
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    assert tokenizer.decode(rm.encode("2+2?", "4")) == "<bos>[user]2+2?<eos>[assistant]4<eos>"
    chat = [{"role": "system", "content": "s"}, {"role": "user", "content": "q"}]
    assert tokenizer.decode(rm.encode(chat, "a")) == "<bos>[system]s<eos>[user]q<eos>[assistant]a<eos>"
    assert tokenizer.decode(rm.encode(None, "alone")) == "alone"


def test_without_a_chat_template_prompt_and_response_are_joined_by_a_newline(tmp_path: Path) -> None:
    path = save_tiny_classifier(tmp_path / "plain")
    config = json.loads((path / "tokenizer_config.json").read_text())
    config.pop("chat_template", None)
    (path / "tokenizer_config.json").write_text(json.dumps(config))
    (path / "chat_template.jinja").unlink(missing_ok=True)
    rm = HFRewardModel(str(path))
    assert AutoTokenizer.from_pretrained(path).decode(rm.encode("2+2?", "4")) == "2+2?\n4"


def test_the_prompt_changes_the_score(tiny: Path) -> None:
    rm = HFRewardModel(str(tiny))
    with_a, with_b = _score(rm, ["4", "4"], ["2+2?", "3+3?"])
    assert with_a != with_b


def test_normalize_returns_the_sigmoid_of_the_logit(tiny: Path) -> None:
    raw = _score(HFRewardModel(str(tiny)), RESPONSES, PROMPTS)
    normalised = _score(HFRewardModel(str(tiny), normalize=True), RESPONSES, PROMPTS)
    assert normalised == pytest.approx(torch.sigmoid(torch.tensor(raw)).tolist(), abs=1e-6)


def test_max_length_keeps_the_last_tokens_of_the_response(tiny: Path) -> None:
    rm = HFRewardModel(str(tiny), max_length=8)
    tokenizer = AutoTokenizer.from_pretrained(tiny)
    assert tokenizer.decode(rm.encode("question", "0123456789")) == "3456789<eos>"


def test_a_model_with_several_labels_is_refused(tmp_path: Path) -> None:
    path = save_tiny_classifier(tmp_path / "multi")
    config = json.loads((path / "config.json").read_text())
    config["id2label"] = {"0": "a", "1": "b"}
    config["label2id"] = {"a": 0, "b": 1}
    (path / "config.json").write_text(json.dumps(config))
    with pytest.raises(ValueError, match="has 2 labels; a reward model has exactly one"):
        HFRewardModel(str(path))


def test_a_model_id_missing_from_the_local_cache_fails_at_start_without_downloading() -> None:
    scorer = Scorer.from_config({"plugin": "hf_reward_model", "executor": "local",
                                 "kwargs": {"model_path": "nobody/no-such-reward-model"}})
    with pytest.raises(PluginLoadError, match=r"hf_reward_model \(verl-rewards-models 0\.1\.0\).*HFRewardModel"):
        scorer.start()


def test_scored_by_config_alone_with_prompts_from_the_rows(tiny: Path) -> None:
    rows = [{"data_source": "chat", "solution_str": r, "ground_truth": "", "prompt": p}
            for r, p in zip(RESPONSES, PROMPTS)]
    config = {"plugin": "hf_reward_model", "executor": "local", "max_batch_size": 3,
              "kwargs": {"model_path": str(tiny), "batch_size": 2}}
    with Scorer.from_config(config) as scorer:
        result = scorer.score(rows)
    assert result.errors == [None] * 4
    assert result.scores == pytest.approx(_score(HFRewardModel(str(tiny)), RESPONSES, PROMPTS), abs=1e-5)


def test_a_model_id_is_resolved_through_the_users_own_cache(tiny: Path, tmp_path: Path) -> None:
    # The Hugging Face cache layout: models--ORG--NAME/{refs/main, snapshots/COMMIT/...}
    repo = tmp_path / "hub" / "models--acme--tiny-rm"
    snapshot = repo / "snapshots" / ("0" * 40)
    snapshot.mkdir(parents=True)
    for file in tiny.iterdir():
        (snapshot / file.name).write_bytes(file.read_bytes())
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text("0" * 40)
    script = (
        "import json, sys\n"
        "from verl_rewards_models.classifier import HFRewardModel\n"
        "rm = HFRewardModel(sys.argv[1])\n"
        "print(json.dumps(rm(['d'], ['4'], [''], [None], ['2+2?'])))\n"
    )
    # The cache location is read when huggingface_hub is imported: set it for a fresh process.
    env = {**os.environ, "HF_HUB_CACHE": str(tmp_path / "hub"), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", script, "acme/tiny-rm"], capture_output=True, text=True,
                          env=env, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    by_id = json.loads(done.stdout.strip().splitlines()[-1])
    assert by_id == pytest.approx(_score(HFRewardModel(str(tiny)), ["4"], ["2+2?"]), abs=1e-6)
