"""The TRL adapter under TRL's own calling code (TRL is a test dependency),
and in a spawned process, where TRL's async GRPO sends reward functions."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from verl_rewards.integrations.trl import reward_func

TRL_AWAITS_OBJECTS = "1.14"  # the first TRL that awaits async callable objects


def test_reward_function_runs_in_a_spawned_process():
    fn = reward_func("exact_match", ground_truth_column="answer")
    with ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn")) as pool:
        scores = pool.submit(fn, prompts=["Q", "Q"], completions=["1", "2"],
                             answer=["1", "1"]).result(timeout=60)
    assert scores == [1.0, 0.0]


@pytest.fixture
def trl():
    # TRL is a test dependency (the `peers` extra): a missing or old TRL fails here.
    import trl
    import trl.trainer.utils
    from packaging.version import Version

    assert Version(trl.__version__) >= Version(TRL_AWAITS_OBJECTS), trl.__version__
    return trl


@pytest.fixture
def level_plugin(make_dist):
    """Plugin ``level_ok``: 1.0 when the row's answer column and level column agree."""
    make_dist("probe-trl", "1.0", "[verl_rewards]\nlevel_ok = plug_trl_probe:level_ok\n",
              {"plug_trl_probe.py": '''
        def level_ok(data_source, solution_str, ground_truth, extra_info=None):
            return float(ground_truth == str(2 * extra_info["level"]) and data_source == "arith")
    '''})


def test_trl_names_and_classifies_the_reward_functions(trl):
    from trl.trainer.utils import get_callable_name, is_async_callable

    sync, async_ = reward_func("exact_match"), reward_func("sleepy")
    assert [get_callable_name(f) for f in (sync, async_)] == ["exact_match", "sleepy"]
    assert (is_async_callable(sync), is_async_callable(async_)) == (False, True)


def test_grpo_calculate_rewards_scores_sync_and_async_plugins(trl):
    import torch
    from trl import GRPOTrainer
    from trl.trainer.utils import (
        get_callable_name,
        shutdown_event_loop_in_daemon,
        start_event_loop_in_daemon,
    )

    def plain_trl_reward(completions, **kwargs):
        return [float(len(c)) for c in completions]

    funcs = [reward_func("exact_match", ground_truth_column="answer"),
             reward_func("sleepy", ground_truth_column="answer", kwargs={"ms": 5}),
             plain_trl_reward]
    thread, loop, ready = start_event_loop_in_daemon(name="test-async-rewards")
    ready.wait()
    metrics = []
    trainer = SimpleNamespace(  # the attributes _calculate_rewards reads
        accelerator=SimpleNamespace(device=torch.device("cpu"), is_main_process=True),
        state=SimpleNamespace(global_step=0), args=SimpleNamespace(report_to=[]),
        reward_funcs=funcs, reward_processing_classes=[None] * 3,
        reward_func_names=[get_callable_name(f) for f in funcs],
        _log_completion_extra=lambda column, values: None,
        _log_metric=lambda name, value: metrics.append((name, value)),
        environments=None, async_loop=loop,
    )
    inputs = [{"prompt": "1+1=", "answer": "2"}, {"prompt": "2+2=", "answer": "4"}]
    try:
        rewards = GRPOTrainer._calculate_rewards(trainer, inputs, ["1+1=", "2+2="], ["2", "5"],
                                                 [[1], [2]])
    finally:
        shutdown_event_loop_in_daemon(thread, loop)
    assert rewards.tolist() == [[1.0, 1.0, 1.0], [0.0, 0.0, 1.0]]
    assert ("rewards/exact_match/failed", 0.0) in metrics


LEVELED_ROWS = {"prompt": ["1+1=", "2+2=", "3+3=", "4+4="], "answer": ["2", "4", "6", "8"],
                "level": [1, 2, 3, 4]}


def _one_step(tmp_path: Path, batch_size: int) -> Any:
    """GRPOConfig for one CPU step of two generations per prompt, logged, nothing saved."""
    from trl import GRPOConfig

    return GRPOConfig(output_dir=str(tmp_path), per_device_train_batch_size=batch_size,
                      num_generations=2, max_completion_length=4, max_steps=1, logging_steps=1,
                      report_to=[], use_cpu=True, save_strategy="no")


def test_grpo_trainer_trains_a_step_with_plugin_rewards(trl, level_plugin, tiny_llama, tmp_path):
    from datasets import Dataset
    from trl import GRPOTrainer

    model, tokenizer = tiny_llama
    dataset = Dataset.from_dict(LEVELED_ROWS)
    args = _one_step(tmp_path, batch_size=4)
    trainer = GRPOTrainer(
        model=model, processing_class=tokenizer, args=args, train_dataset=dataset,
        reward_funcs=[reward_func("level_ok", ground_truth_column="answer", data_source="arith"),
                      reward_func("sleepy", ground_truth_column="answer", kwargs={"ms": 5})],
    )
    assert trainer.reward_func_names == ["level_ok", "sleepy"]
    trainer.train()
    logged = trainer.state.log_history[0]
    assert logged["rewards/level_ok/mean"] == 1.0  # every row's columns reached the plugin
    assert logged["rewards/level_ok/failed"] == 0.0 and "rewards/sleepy/mean" in logged


def test_grpo_trainer_leaves_skipped_samples_out_of_the_reward_mean_and_the_advantages(trl, make_dist,
                                                                                      tiny_llama, tmp_path):
    import math

    from datasets import Dataset
    from trl import GRPOTrainer

    make_dist("probe-trl-skip", "1.0", "[verl_rewards]\neven_ok = plug_trl_skip:even_ok\n",
              {"plug_trl_skip.py": '''
        def even_ok(data_source, solution_str, ground_truth, extra_info=None):
            if extra_info["level"] % 2:
                raise ValueError("the verifier failed")  # not a wrong answer: no score at all
            return 1.0
    '''})
    model, tokenizer = tiny_llama
    dataset = Dataset.from_dict(LEVELED_ROWS)
    args = _one_step(tmp_path, batch_size=8)
    reward = reward_func(reward={"plugin": "even_ok", "on_error": "skip"}, ground_truth_column="answer")
    trainer = GRPOTrainer(model=model, processing_class=tokenizer, args=args, train_dataset=dataset,
                          reward_funcs=[reward])
    seen = []
    real = trainer._generate_and_score_completions

    def spy(inputs):
        out = real(inputs)
        seen.append((out["advantages"].tolist(), [row["level"] for row in inputs]))
        return out

    trainer._generate_and_score_completions = spy
    trainer.train()
    logged = trainer.state.log_history[0]
    # Half the samples failed: scored as 0.0 the mean would be 0.5; skipped, they are left out.
    assert logged["rewards/even_ok/mean"] == 1.0 and logged["reward"] == 1.0
    assert logged["rewards/even_ok/failed"] == 0.5
    assert math.isfinite(logged["loss"])
    (advantages, levels), = seen
    assert sorted(levels) == [1, 1, 2, 2, 3, 3, 4, 4]
    assert [a for a, level in zip(advantages, levels) if level % 2] == [0.0] * 4  # no learning signal
