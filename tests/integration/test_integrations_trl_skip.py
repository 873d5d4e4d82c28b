"""``on_error: skip`` in TRL (a test dependency): the adapter returns ``None`` for a
failed sample, and TRL's own ``GRPOTrainer`` leaves it out of the reward mean and
the advantages while the others train."""

from __future__ import annotations

import math
from types import SimpleNamespace

import pytest

from verl_rewards.integrations.trl import reward_func


@pytest.fixture
def brittle_plugin(make_dist):
    """Plugin ``brittle``: raises on rows whose ``broken`` column is true, else 1.0."""
    make_dist("probe-trl-skip", "1.0", "[verl_rewards]\nbrittle = plug_trl_skip:brittle\n",
              {"plug_trl_skip.py": '''
        def brittle(data_source, solution_str, ground_truth, extra_info=None):
            if extra_info["broken"]:
                raise RuntimeError("verifier crashed on purpose")
            return 1.0
    '''})


def test_skip_returns_none_for_failed_samples_and_logs_the_count():
    fn = reward_func("faulty", on_error="skip", error_score=-1.0)
    metrics: list[tuple[str, float]] = []
    scores = fn(prompts=["Q"] * 4, completions=["1", "raise", "2", "nan"],
                ground_truth=["1"] * 4, log_metric=lambda name, value: metrics.append((name, value)))
    assert scores == [1.0, None, 0.0, None]
    assert metrics == [("rewards/faulty/failed", 0.5), ("rewards/faulty/skipped", 0.5)]


def test_score_still_returns_error_score_and_logs_no_skipped_count():
    fn = reward_func("faulty", on_error="score", error_score=-1.0)
    metrics: list[tuple[str, float]] = []
    scores = fn(prompts=["Q"] * 2, completions=["1", "raise"], ground_truth=["1"] * 2,
                log_metric=lambda name, value: metrics.append((name, value)))
    assert scores == [1.0, -1.0]
    assert metrics == [("rewards/faulty/failed", 0.5)]


def test_grpo_calculate_rewards_turns_a_skipped_sample_into_nan():
    import torch
    from accelerate import PartialState
    from trl import GRPOTrainer

    PartialState()  # TRL warns through accelerate's logger when a row has no reward at all
    fn = reward_func("faulty", on_error="skip")
    trainer = SimpleNamespace(  # the attributes _calculate_rewards reads
        accelerator=SimpleNamespace(device=torch.device("cpu"), is_main_process=True),
        state=SimpleNamespace(global_step=0), args=SimpleNamespace(report_to=[]),
        reward_funcs=[fn], reward_processing_classes=[None], reward_func_names=["faulty"],
        _log_completion_extra=lambda column, values: None, _log_metric=lambda name, value: None,
        environments=None, async_loop=None,
    )
    inputs = [{"prompt": "Q", "ground_truth": "1"}] * 2
    rewards = GRPOTrainer._calculate_rewards(trainer, inputs, ["Q", "Q"], ["1", "raise"], [[1], [2]])
    assert rewards[0].tolist() == [1.0] and math.isnan(rewards[1, 0].item())


def test_grpo_trainer_leaves_skipped_samples_out_of_rewards_and_advantages(brittle_plugin,
                                                                           tiny_llama, tmp_path):
    from datasets import Dataset
    from trl import GRPOConfig, GRPOTrainer

    model, tokenizer = tiny_llama
    # Two prompts x two generations = one batch: the "2+2=" group's verifier crashes.
    dataset = Dataset.from_dict({"prompt": ["1+1=", "2+2="], "answer": ["2", "4"],
                                 "broken": [False, True]})
    args = GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=4, num_generations=2,
                      max_completion_length=4, max_steps=1, logging_steps=1, report_to=[],
                      use_cpu=True, save_strategy="no", log_completions=False)
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=args, train_dataset=dataset,
        reward_funcs=[reward_func("brittle", ground_truth_column="answer", on_error="skip",
                                  error_score=-5.0)],
    )
    trainer.train()
    logged = trainer.state.log_history[0]
    # With error_score counted the mean would be (1 + 1 - 5 - 5) / 4 = -2.
    assert logged["rewards/brittle/mean"] == 1.0 and logged["reward"] == 1.0
    assert logged["rewards/brittle/failed"] == 0.5 and logged["rewards/brittle/skipped"] == 0.5
    assert math.isfinite(logged["loss"])
    rows = list(zip(trainer._logs["prompt"], trainer._logs["rewards"]["brittle"],
                    trainer._logs["advantages"]))
    assert sorted(p for p, _, _ in rows) == ["1+1=", "1+1=", "2+2=", "2+2="]
    for prompt, reward, advantage in rows:
        if prompt == "2+2=":  # skipped: NaN reward, no learning signal
            assert math.isnan(reward) and advantage == 0.0
        else:
            assert reward == 1.0
