"""The TRL adapter, called exactly as TRL's GRPOTrainer calls reward functions."""

from __future__ import annotations

import asyncio
import importlib
import inspect
import logging
import pickle
import time

import pytest
import verl_rewards_testkit.shapes as shapes

import verl_rewards.integrations.trl as adapter
from verl_rewards.errors import ConfigError, PluginNotFoundError, RewardError, RewardKwargsError
from verl_rewards.integrations.trl import (
    AsyncPluginReward,
    PluginReward,
    completion_text,
    reward_func,
)


def trl_call(fn, completions, prompts=None, **columns):
    """GRPOTrainer._calculate_rewards: prompts, completions and completion_ids, every
    dataset column as a list, plus trainer_state, log_extra and log_metric."""
    prompts = prompts or ["Q"] * len(completions)
    extras = {"trainer_state": object(), "log_extra": lambda column, values: None,
              "log_metric": lambda name, value: None}
    kwargs = {**extras, **columns}
    result = fn(prompts=prompts, completions=completions,
                completion_ids=[[1, 2]] * len(completions), **kwargs)
    return asyncio.run(result) if inspect.isawaitable(result) else result


@pytest.fixture(autouse=True)
def _fresh_scorers():
    adapter._scorers.clear()
    yield
    adapter._scorers.clear()


@pytest.fixture
def seen(make_dist):
    """Plugin ``echo``, and the samples the adapter builds for it (as the plugin saw them)."""
    make_dist("probe-rewards", "1.0", "[verl_rewards]\necho = plug_echo:echo\n", {"plug_echo.py": '''
        from verl_rewards import Sample
        SEEN = []

        def echo(data_source, solution_str, ground_truth, extra_info=None):
            SEEN.append(Sample(data_source, solution_str, ground_truth, extra_info))
            return float(solution_str == ground_truth)
    '''})
    return importlib.import_module("plug_echo").SEEN


def test_named_after_the_plugin_and_returns_one_float_per_completion():
    fn = reward_func("exact_match", ground_truth_column="answer", kwargs={"bonus": 0.5})
    assert fn.__name__ == "exact_match" and isinstance(fn, PluginReward)
    assert trl_call(fn, ["42", " 7 ", "x"], answer=["42", "7", "y"]) == [1.5, 1.5, 0.5]


def test_name_can_tell_two_uses_of_one_plugin_apart():
    fns = [reward_func("exact_match"), reward_func("exact_match", name="exact_bonus",
                                                   kwargs={"bonus": 1.0})]
    assert [f.__name__ for f in fns] == ["exact_match", "exact_bonus"]


def test_conversational_completions_use_the_last_assistant_message():
    fn = reward_func("exact_match")
    completions = [[{"role": "assistant", "content": "1"}],
                   [{"role": "assistant", "content": "0"}, {"role": "tool", "content": "x"},
                    {"role": "assistant", "content": "2"}]]
    assert trl_call(fn, completions, ground_truth=["1", "2"]) == [1.0, 1.0]


def test_completion_text_handles_content_parts_and_odd_shapes():
    assert completion_text([{"role": "assistant", "content": [{"type": "text", "text": "a"},
                                                              {"type": "image"}, "b"]}]) == "ab"
    assert completion_text({"role": "assistant", "content": None}) == ""
    assert completion_text([{"role": "user", "content": "u"}]) == "u"
    assert completion_text([]) == ""


def test_columns_map_onto_ground_truth_data_source_and_extra_info(seen):
    fn = reward_func(reward={"plugin": "echo", "executor": "local"}, ground_truth_column="answer")
    trl_call(fn, ["a", "b"], answer=["a", "c"], data_source=["gsm8k", "math"], level=[1, 2])
    assert [(s.data_source, s.ground_truth, s.extra_info) for s in seen] == [
        ("gsm8k", "a", {"level": 1}), ("math", "c", {"level": 2})]


def test_fixed_data_source_and_selected_extra_columns(seen):
    fn = reward_func(reward={"plugin": "echo", "executor": "local"}, data_source="my/set",
                     extra_info_columns=["level"])
    trl_call(fn, ["a"], ground_truth=["a"], data_source=["ignored"], level=[3], other=["x"])
    assert [(s.data_source, s.extra_info) for s in seen] == [("my/set", {"level": 3})]


def test_no_ground_truth_column_passes_an_empty_ground_truth(seen):
    fn = reward_func(reward={"plugin": "echo", "executor": "local"}, ground_truth_column=None)
    trl_call(fn, ["a"], level=[1])
    assert seen[0].ground_truth == "" and seen[0].data_source == ""


def test_a_missing_column_names_it_and_lists_the_batch_columns():
    fn = reward_func("exact_match", ground_truth_column="solution")
    with pytest.raises(ConfigError, match=r"no column 'solution' \(set ground_truth_column=...\); "
                                          r"its columns are: answer, level"):
        trl_call(fn, ["1"], answer=["1"], level=[1])


def test_unknown_plugin_fails_when_the_reward_function_is_built():
    with pytest.raises(PluginNotFoundError, match="Did you mean 'exact_match'"):
        reward_func("exact_mach")


def test_failed_samples_score_error_score_with_a_warning_naming_plugin_and_index(caplog):
    fn = reward_func("faulty", error_score=-1.0)
    with caplog.at_level(logging.WARNING, "verl_rewards.integrations"):
        scores = trl_call(fn, ["1", "raise", "nan"], ground_truth=["1"] * 3)
    assert scores == [1.0, -1.0, -1.0]
    messages = [r.getMessage() for r in caplog.records]
    assert any("reward faulty (verl-rewards-testkit 0.3.1) failed on sample 1: RuntimeError" in m
               for m in messages)
    assert any("failed on sample 2" in m and "nan is not a finite number" in m for m in messages)


def test_a_reward_that_exits_or_interrupts_itself_fails_its_sample_not_the_trainer(
        reward_file, caplog):
    path = reward_file("import sys\n\ndef compute_score(data_source, solution_str, ground_truth, "
                       "extra_info=None):\n    if solution_str == 'exit':\n        sys.exit(0)\n"
                       "    if solution_str == 'interrupt':\n        raise KeyboardInterrupt\n"
                       "    return 1.0\n")
    fn = reward_func(reward={"path": str(path)}, error_score=-1.0)
    with caplog.at_level(logging.WARNING, "verl_rewards.integrations"):
        assert trl_call(fn, ["exit", "interrupt", "1"], ground_truth=["1"] * 3) == [-1.0, -1.0, 1.0]
    messages = [r.getMessage() for r in caplog.records]
    assert any(f"failed on sample 0: SystemExit: 0 (at {path}:5 in compute_score)" in m for m in messages)
    assert any(f"failed on sample 1: KeyboardInterrupt: (at {path}:7 in compute_score)" in m
               for m in messages)


def test_failure_rate_is_logged_through_trls_log_metric():
    logged = []
    fn = reward_func("faulty")
    fn(prompts=["Q"] * 4, completions=["1", "raise", "1", "1"], ground_truth=["1"] * 4,
       log_metric=lambda name, value: logged.append((name, value)))
    assert logged == [("rewards/faulty/failed", 0.25)]


def test_on_error_raise_raises_reward_error():
    fn = reward_func("faulty", on_error="raise")
    with pytest.raises(RewardError, match=r"faulty .*failed on sample 1: RuntimeError"):
        trl_call(fn, ["1", "raise"], ground_truth=["1", "1"])


def test_timeout_fails_the_slow_sample_only():
    fn = reward_func("slow_cpu", timeout_s=0.2, kwargs={"ms": 3000})
    began = time.monotonic()
    assert trl_call(fn, ["1"], ground_truth=["1"]) == [0.0]
    assert time.monotonic() - began < 2


def test_invalid_options_are_config_errors():
    with pytest.raises(ConfigError, match="on_error must be one of score, raise"):
        reward_func("exact_match", on_error="ignore")
    with pytest.raises(ConfigError, match="extra_info_columns must be a list"):
        reward_func("exact_match", extra_info_columns="level")


def test_batch_plugin_gets_the_whole_batch_in_one_call():
    fn = reward_func("batch_exact")
    assert trl_call(fn, ["a", "b", "c"], ground_truth=["a", "x", "c"]) == [1.0, 0.0, 1.0]


def test_async_plugin_gives_an_async_callable_when_trl_awaits_objects(monkeypatch):
    monkeypatch.setattr(adapter, "_trl_version", lambda: (1, 16))
    monkeypatch.setattr(shapes, "_peak", 0)
    fn = reward_func(reward={"plugin": "async_exact", "executor": "local",
                             "kwargs": {"delay_s": 0.2}})
    assert isinstance(fn, AsyncPluginReward) and fn.__name__ == "async_exact"
    assert inspect.iscoroutinefunction(fn.__call__)  # what TRL's is_async_callable checks
    assert trl_call(fn, ["1", "0"] * 5, ground_truth=["1"] * 10) == [1.0, 0.0] * 5
    assert shapes._peak == 10  # the ten calls were all in flight at once


def test_a_reward_stuck_in_c_returns_within_its_timeout_on_the_default_executor():
    fn = reward_func("faulty", timeout_s=1)
    assert trl_call(fn, ["1"], ground_truth=["1"]) == [1.0]  # the worker pool starts here
    began = time.monotonic()
    assert trl_call(fn, ["1", "c_sleep", "0"], ground_truth=["1"] * 3) == [1.0, 0.0, 0.0]
    assert time.monotonic() - began < 1 + 2  # timeout_s + 2 s, the host alive


def test_older_trl_gets_a_sync_callable_and_async_true_is_refused(monkeypatch):
    monkeypatch.setattr(adapter, "_trl_version", lambda: (1, 13))
    fn = reward_func("sleepy", kwargs={"ms": 1})
    assert isinstance(fn, PluginReward)  # TRL 1.0-1.13 would not await an object
    assert trl_call(fn, ["1"], ground_truth=["1"]) == [1.0]
    with pytest.raises(ConfigError, match=r"async_=True needs TRL >= 1.14.*installed: TRL 1.13"):
        reward_func("sleepy", async_=True)


def test_async_can_be_forced_either_way(monkeypatch):
    monkeypatch.setattr(adapter, "_trl_version", lambda: None)  # TRL not installed
    assert isinstance(reward_func("exact_match", async_=True), AsyncPluginReward)
    assert isinstance(reward_func("sleepy", async_=False), PluginReward)


@pytest.mark.parametrize("plugin", ["exact_match", "sleepy"])
def test_reward_function_pickles_and_scores_after_unpickling(plugin):
    fn = reward_func(plugin)
    restored = pickle.loads(pickle.dumps(fn))
    assert type(restored) is type(fn) and restored.__name__ == plugin
    assert trl_call(restored, ["1"], ground_truth=["1"]) == [1.0]


def test_a_composite_reward_section_is_one_trl_function():
    fn = reward_func(reward={
        "rewards": {"exact": {"plugin": "exact_match", "weight": 2.0},
                    "bonus": {"plugin": "exact_match", "kwargs": {"bonus": 1.0}, "weight": 0.5}},
        "route": {"math/*": ["exact", "bonus"], "*": "exact"},
    }, ground_truth_column="answer")
    assert fn.__name__ == "composite"
    scores = trl_call(fn, ["42", "42", "1"], answer=["42", "42", "42"],
                      data_source=["math/a", "chat", "chat"])
    assert scores == [2.0 + 0.5 * 2.0, 2.0, 0.0]
    assert pickle.loads(pickle.dumps(fn)).ref == fn.ref  # TRL may ship it to another process


def test_a_reward_file_section(reward_file):
    path = reward_file('''
        def half(data_source, solution_str, ground_truth, extra_info=None):
            return 0.5
    ''')
    fn = reward_func(reward={"path": str(path), "name": "half"})
    assert trl_call(fn, ["a", "b"], ground_truth=["x", "y"]) == [0.5, 0.5]


def test_plugin_and_reward_together_are_an_error():
    with pytest.raises(ConfigError, match="a plugin name, or a reward section"):
        reward_func("exact_match", reward={"plugin": "exact_match"})


def test_the_plugins_declared_timeout_applies_when_none_is_set(make_dist):
    make_dist("slow-rewards", "1.0", "[verl_rewards]\nslow = plug_slow:slow\n", {"plug_slow.py": '''
        from verl_rewards import reward

        @reward(timeout_s=0.3)
        def slow(data_source, solution_str, ground_truth, extra_info=None):
            while True:  # a Python hang: the in-process watchdog interrupts it
                pass
    '''})
    began = time.monotonic()
    assert reward_func("slow", error_score=-1.0)(["a"], ["a"], ground_truth=["a"]) == [-1.0]
    assert time.monotonic() - began < 3


def test_the_prompt_reaches_a_plugin_that_asks_for_it(reward_file):
    path = reward_file('''
        def judge(data_source, solution_str, ground_truth, extra_info=None, prompt=None):
            return float(prompt in ("Q?", [{"role": "user", "content": "Q?"}]))
    ''')
    fn = reward_func(reward={"path": str(path), "name": "judge"})
    assert fn(prompts=["Q?", "other"], completions=["a", "b"], ground_truth=["", ""]) == [1.0, 0.0]
    chat = [[{"role": "user", "content": "Q?"}]]
    assert fn(prompts=chat, completions=[[{"role": "assistant", "content": "a"}]],
              ground_truth=[""]) == [1.0]


def test_a_class_reward_is_not_built_in_the_callers_process_to_learn_it_is_async(make_dist):
    make_dist("model-rewards", "1.0", "[verl_rewards]\nheavy = plug_heavy:Model\n", {"plug_heavy.py": '''
        BUILT = []

        class Model:
            def __init__(self, scale=1.0):
                BUILT.append(scale)  # a model would load here

            async def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
                return 1.0
    '''})
    fn = reward_func(reward={"plugin": "heavy", "executor": "local", "kwargs": {"scale": 2.0}})
    assert isinstance(fn, AsyncPluginReward)  # async, read from the class's unbound __call__
    assert importlib.import_module("plug_heavy").BUILT == []
    assert trl_call(fn, ["x"], ground_truth=["x"]) == [1.0]  # built where it scores
    assert importlib.import_module("plug_heavy").BUILT == [2.0]


def test_on_error_skip_returns_none_for_a_failed_sample_and_logs_the_failed_fraction():
    metrics = []
    fn = reward_func("faulty", on_error="skip")
    scores = fn(prompts=["Q"] * 3, completions=["1", "raise", "1"], ground_truth=["1"] * 3,
                log_metric=lambda name, value: metrics.append((name, value)))
    assert scores == [1.0, None, 1.0]
    assert metrics == [("rewards/faulty/failed", 1 / 3), ("rewards/faulty/skipped", 1 / 3)]


@pytest.mark.parametrize(("call", "start"), [
    (lambda: reward_func("exact_match", kwargs={"bonsu": 1.0}), "kwargs= 'bonsu' not accepted by reward exact_match"),
    (lambda: reward_func("exact_match", kwargs={"bonus": "x"}), "kwargs= of reward exact_match"),
    (lambda: reward_func(reward={"plugin": "exact_match", "kwargs": {"bonsu": 1}}),
     "reward['kwargs'] 'bonsu' not accepted by reward exact_match"),
    (lambda: reward_func(reward={"rewards": {"em": {"plugin": "exact_match", "kwargs": {"bonsu": 1}}}}),
     "reward['rewards']['em']['kwargs'] 'bonsu' not accepted by reward exact_match"),
])
def test_kwarg_errors_name_reward_funcs_own_arguments(call, start):
    with pytest.raises(RewardKwargsError) as raised:
        call()
    assert str(raised.value).startswith(start) and "reward.kwargs" not in str(raised.value)
