"""verl's own data files, as verl 0.9.1's code writes and reads them, score and train with no flags.

The file is made the way verl makes it: a preprocessing step in the layout of verl's
``examples/data_preprocess/gsm8k.py`` (a ``datasets.Dataset.map`` to ``data_source``,
chat ``prompt``, ``ability``, struct ``reward_model: {style, ground_truth}`` and struct
``extra_info``, written by ``Dataset.to_parquet``), then verl's generation step
(``verl/trainer/main_generation_server.py``: ``pd.read_parquet``, a ``responses`` column of
n responses per prompt, ``DataFrame.to_parquet``). verl's own ``RLHFDataset`` reads it
back, which shows it is verl's layout; the expected scores are verl's own
``default_compute_score``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest

from trainer.data import load_prompts
from trainer.main import main as train

pytestmark = pytest.mark.slow

INSTRUCTION = 'Let\'s think step by step and output the final answer after "####".'
QUESTIONS = [("What is 2 + 3?", "2 + 3 = 5\n#### 5"), ("What is 10 - 4?", "10 - 4 = 6\n#### 6"),
             ("What is 3 * 3?", "3 * 3 = 9\n#### 9")]
RESPONSES = [["So #### 5", "I think #### 6", "5"], ["#### 6", "#### 6.0", "#### 7"],
             ["#### 9", "nine", "#### 3"]]


def _preprocess(path: Path) -> None:
    """verl's preprocessing step (gsm8k's row layout), through HF datasets as verl does."""
    import datasets

    raw = datasets.Dataset.from_dict({"question": [q for q, _ in QUESTIONS], "answer": [a for _, a in QUESTIONS]})

    def process(example: dict[str, Any], idx: int) -> dict[str, Any]:
        question_raw = example.pop("question")
        answer_raw = example.pop("answer")
        return {
            "data_source": "openai/gsm8k",
            "prompt": [{"role": "user", "content": question_raw + " " + INSTRUCTION}],
            "ability": "math",
            "reward_model": {"style": "rule", "ground_truth": answer_raw.split("#### ")[1]},
            "extra_info": {"split": "test", "index": idx, "answer": answer_raw, "question": question_raw},
        }

    raw.map(function=process, with_indices=True).to_parquet(str(path))


def _generate(source: Path, target: Path) -> None:
    """verl's generation step: n responses per prompt in a list column ``responses``."""
    import pandas as pd

    dataset = pd.read_parquet(source)
    dataset["responses"] = RESPONSES
    dataset.to_parquet(target)


@pytest.fixture(scope="module")
def verl_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """(verl's preprocessed dataset, the same after verl's generation step)."""
    folder = tmp_path_factory.mktemp("verl_data")
    dataset, generated = folder / "test.parquet", folder / "generated.parquet"
    _preprocess(dataset)
    _generate(dataset, generated)
    return dataset, generated


def _verl_rows(path: Path) -> list[dict[str, Any]]:
    """The rows as verl's own dataset class gives them to its trainer."""
    from omegaconf import OmegaConf
    from verl.utils.dataset.rl_dataset import RLHFDataset

    config = OmegaConf.create({"filter_overlong_prompts": False, "cache_dir": str(path.parent / "cache")})
    dataset = RLHFDataset(str(path), tokenizer=None, config=config)
    return [dataset[i] for i in range(len(dataset))]


def test_the_file_has_verls_schema(verl_files):
    import pyarrow as pa

    schema = pq.read_schema(verl_files[1])
    message = pa.struct([("role", pa.string()), ("content", pa.string())])
    assert schema.field("reward_model").type == pa.struct([("style", pa.string()), ("ground_truth", pa.string())])
    assert schema.field("prompt").type in (pa.list_(message), pa.list_(pa.struct(list(reversed(message)))))
    assert schema.field("responses").type == pa.list_(pa.string())
    assert sorted(f.name for f in schema.field("extra_info").type) == ["answer", "index", "question", "split"]


def test_score_reads_verls_file_with_no_flags_one_row_per_response(verl_files, tmp_path):
    """The command as a user types it: the console script, the default (Ray) executor."""
    from verl.utils.reward_score import default_compute_score

    out = tmp_path / "scored.parquet"
    ray_dir = tempfile.mkdtemp(prefix="ray", dir="/tmp")  # its own local Ray session, never a test's
    try:
        run = subprocess.run([str(Path(sys.executable).parent / "verl-rewards"), "score", "-i", str(verl_files[1]),
                              "-o", str(out), "reward.plugin=verl_default", "reward.num_workers=1"],
                             capture_output=True, text=True, timeout=240,
                             env={**{k: v for k, v in os.environ.items() if k != "RAY_ADDRESS"}, "RAY_TMPDIR": ray_dir})
    finally:
        shutil.rmtree(ray_dir, ignore_errors=True)
    assert run.returncode == 0, run.stderr
    assert "scored 9 samples with verl_default" in run.stdout
    rows = pq.read_table(out).to_pylist()
    assert [(r["row_index"], r["response_index"]) for r in rows] == [(i, j) for i in range(3) for j in range(3)]
    assert [r["solution_str"] for r in rows] == [t for texts in RESPONSES for t in texts]
    expected = [float(default_compute_score("openai/gsm8k", t, answer.split("#### ")[1]))
                for (_, answer), texts in zip(QUESTIONS, RESPONSES) for t in texts]
    assert [r["score"] for r in rows] == expected and 0 < sum(expected) < 9
    assert {r["status"] for r in rows} == {"ok"}
    assert rows[4]["reward_model"] == {"ground_truth": "6", "style": "rule"}  # the input columns stay
    assert rows[4]["extra_info"]["index"] == 1 and "responses" not in rows[0]


def test_the_trainer_reads_verls_file_as_verls_own_dataset_does(verl_files):
    for path in verl_files:
        verl_rows = _verl_rows(path)
        records = load_prompts(path)
        assert [(r.prompt, r.data_source, r.ground_truth, r.extra_info) for r in records] == [
            (row["raw_prompt"][0]["content"], row["data_source"], row["reward_model"]["ground_truth"],
             row["extra_info"]) for row in verl_rows]


def test_the_trainer_trains_on_verls_file_with_verl_default(verl_files, tmp_path, capsys):
    out = tmp_path / "run"
    assert train(["model.hidden_size=32", "model.num_heads=2", "model.num_layers=1",
                  "model.intermediate_size=64", "model.max_position_embeddings=160",
                  "data.prompts_per_step=3", "rollout.n=2", "rollout.max_new_tokens=8",
                  f"data.path={verl_files[1]}", "trainer.total_steps=2", f"trainer.output_dir={out}",
                  "trainer.save_checkpoint=false", "reward.plugin=verl_default", "reward.executor=local"]) == 0
    assert "done: 2 steps" in capsys.readouterr().out
    metrics = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [(m["step"], m["reward_failed"]) for m in metrics] == [(1, 0), (2, 0)]
