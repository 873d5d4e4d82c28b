"""docs/integrations/verl.md's "Coming from custom_reward_function.path", followed as written:
a verl reward file (examples/custom_module_bug/verl_reward.py: its own dataset, the rest handed
to verl's default_compute_score) scores the same in verl 0.9.1's own reward-loop worker before
(``custom_reward_function.path``) and after (published as a plugin with `verl-rewards new`,
routed beside ``verl_default``, the doc's config file for verl's trainer).

The one change to the doc's commands: ``pip install ./my_reward`` installs into a directory
this test puts on the path (``--target``), not into the environment every test shares."""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import verl
from hydra import compose, initialize_config_dir

ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.slow
DOC = (ROOT / "docs" / "integrations" / "verl.md").read_text()
WORDS = ["so", "42", "41", "####", "\\boxed{42}", "\\boxed{41}", "hello"]
# (data_source, response, ground truth): the file's own dataset, and two that verl's table scores
ROWS = [("my_dataset", "so 42", "42"), ("my_dataset", "so 41", "42"), ("openai/gsm8k", "#### 42", "42"),
        ("openai/gsm8k", "42", "42"), ("lighteval/MATH", "\\boxed{42}", "42"), ("lighteval/MATH", "\\boxed{41}", "42")]


def _section() -> str:
    return DOC[DOC.index("## Coming from `custom_reward_function.path`"):DOC.index("## Installing verl")]


def _blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", _section(), flags=re.S)


@pytest.fixture(scope="module")
def tokenizer_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    vocab = {w: i for i, w in enumerate(["<pad>", "<eos>", "<unk>", *WORDS])}
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
    core.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    fast = PreTrainedTokenizerFast(tokenizer_object=core, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
    path = tmp_path_factory.mktemp("tokenizer")
    fast.save_pretrained(path)
    return path


def _batch(tokenizer_dir: Path):  # type: ignore[no-untyped-def]
    """verl's batch for ROWS: a one-token prompt, right-padded responses."""
    from tensordict import TensorDict
    from transformers import PreTrainedTokenizerFast
    from verl.protocol import DataProto

    tok = PreTrainedTokenizerFast.from_pretrained(tokenizer_dir)
    responses = torch.zeros(len(ROWS), 3, dtype=torch.long)
    mask = torch.zeros(len(ROWS), 4, dtype=torch.long)
    for i, (_, response, _) in enumerate(ROWS):
        ids = tok.encode(response)
        responses[i, : len(ids)] = torch.tensor(ids)
        mask[i, 0] = 1
        mask[i, 1: 1 + len(ids)] = 1
    prompts = torch.full((len(ROWS), 1), tok.convert_tokens_to_ids("hello"), dtype=torch.long)
    tensors = TensorDict({"prompts": prompts, "responses": responses, "attention_mask": mask,
                          "input_ids": torch.cat([prompts, responses], dim=1)}, batch_size=len(ROWS))
    return DataProto(batch=tensors, non_tensor_batch={
        "data_source": np.array([r[0] for r in ROWS], dtype=object),
        "reward_model": np.array([{"ground_truth": r[2]} for r in ROWS], dtype=object),
        "extra_info": np.array([{"index": i} for i in range(len(ROWS))], dtype=object)})


def _scores(config, data) -> list[float]:  # type: ignore[no-untyped-def]
    """Each sample's score from verl's own reward-loop worker (its Ray actor's class, here in
    this process), one call per sample as verl's agent loop makes them."""
    from verl.experimental.reward_loop.reward_loop import RewardLoopWorker

    async def agent_loop() -> list[dict]:
        worker = RewardLoopWorker(config)
        return await asyncio.gather(*(worker.compute_score(data[i:i + 1]) for i in range(len(data))))

    return [float(r["reward_score"]) for r in asyncio.run(agent_loop())]


def _follow_step_one(work: Path, target: Path) -> subprocess.CompletedProcess[str]:
    [commands] = [b for b in _blocks("bash") if "verl-rewards new my_reward" in b]
    assert "pip install ./my_reward\n" in commands
    script = commands.replace("pip install ./my_reward\n",
                              f"pip install --quiet --no-deps --no-build-isolation --target {target} ./my_reward\n")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
           "PYTHONPATH": str(target)}
    return subprocess.run(["bash", "-euo", "pipefail", "-c", script], cwd=work, env=env, capture_output=True,
                          text=True, timeout=300)


def test_the_migration_section_as_written_gives_the_same_scores(tmp_path, tokenizer_dir, monkeypatch):
    work, target = tmp_path / "job", tmp_path / "site"
    work.mkdir()
    shutil.copy(ROOT / "examples" / "custom_module_bug" / "verl_reward.py", work / "my_reward.py")
    data = _batch(tokenizer_dir)
    verl_dir = os.path.join(os.path.dirname(verl.__file__), "trainer", "config")
    with initialize_config_dir(config_dir=verl_dir, version_base=None):
        before = compose("ppo_trainer", overrides=[
            f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.num_workers=1",
            f"reward.custom_reward_function.path={work / 'my_reward.py'}",
            "reward.custom_reward_function.name=compute_score"])
    old = _scores(before, data)
    assert old == [1.0, 0.0, 1.0, 0.0, 1.0, 0.0]

    done = _follow_step_one(work, target)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "ok   my_reward (my-reward 0.1.0)" in done.stdout

    [config_file] = [b for b in _blocks("yaml") if b.startswith("# my_ppo.yaml")]
    (work / "my_ppo.yaml").write_text(config_file)
    [run] = [b for b in _blocks("bash") if "verl.trainer.main_ppo" in b]
    assert '--config-path="$PWD" --config-name=my_ppo' in run
    monkeypatch.syspath_prepend(str(target))  # where step 1 installed the plugin
    with initialize_config_dir(config_dir=str(work), version_base=None):  # as main_ppo's @hydra.main reads it
        after = compose("my_ppo", overrides=[
            f"actor_rollout_ref.model.path={tokenizer_dir}", "reward.num_workers=1",
            "+reward.verl_rewards.executor=local"])  # score in this process: no Ray pool for one test
    assert after.reward.custom_reward_function.path is None
    assert _scores(after, data) == old
