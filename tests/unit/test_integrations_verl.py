"""The verl adapter, called exactly as verl's reward managers call it."""

from __future__ import annotations

import asyncio
import functools
import gc
import importlib.util
import inspect
import os
import pickle
import re
import time
import weakref

import numpy as np
import pytest
import verl_rewards_testkit.shapes as shapes
from omegaconf import OmegaConf

import verl_rewards.integrations.verl as adapter
from verl_rewards import discovery
from verl_rewards.errors import (
    ConfigError,
    PluginNotFoundError,
    RewardError,
    RewardKwargsError,
)
from verl_rewards.integrations.verl import compute_score, compute_score_async, compute_score_batch


@pytest.fixture(autouse=True)
def _fresh_adapter_cache(verl_adapter_cache_cleared):
    """Each test here builds its own scorers."""


# For the tests that look inside the scoring process (its pid, its module state): the host's.
LOCAL = {"verl_rewards": {"executor": "local"}}


def _call_with_kwargs(raw_fn, extra_kwargs, *args, **kwargs):
    """verl.trainer.ppo.reward._call_with_kwargs: reward_kwargs win over call kwargs."""
    return raw_fn(*args, **{**kwargs, **extra_kwargs})


def verl_wraps(reward_kwargs, fn=compute_score):
    """What verl's get_custom_reward_fn returns for our function."""
    return functools.partial(_call_with_kwargs, fn, dict(reward_kwargs))


def naive_call(fn, data_source="openai/gsm8k", solution_str="42", ground_truth="42",
               extra_info=None):
    """How verl's NaiveRewardManager calls compute_score: all by keyword."""
    return fn(data_source=data_source, solution_str=solution_str, ground_truth=ground_truth,
              extra_info=extra_info if extra_info is not None else {"index": 0})


def test_keyword_call_returns_the_plugins_dict_validated():
    result = naive_call(verl_wraps({"plugin": "exact_match", "bonus": 0.5, **LOCAL}), solution_str=" 42 ")
    assert result == {"score": 1.5, "pid": os.getpid()}


def test_a_number_comes_back_as_a_float():
    assert naive_call(verl_wraps({"plugin": "faulty"}), solution_str="41") == 0.0
    assert type(naive_call(verl_wraps({"plugin": "faulty"}))) is float


def test_positional_call_as_the_prime_manager_makes_it():
    evaluation_func = verl_wraps({"plugin": "exact_match"})
    task = functools.partial(evaluation_func, "d", "7", "7", {"i": 1})  # prime.py's call
    assert task()["score"] == 1.0


def test_batch_class_and_async_plugins_work_per_sample():
    assert naive_call(verl_wraps({"plugin": "batch_exact"})) == 1.0
    assert naive_call(verl_wraps({"plugin": "async_exact", "delay_s": 0}))["score"] == 1.0
    assert naive_call(verl_wraps({"plugin": "stateful", "scale": 2.0}))["score"] == 2.0


def test_plugin_is_resolved_once_per_selection_and_kwargs(monkeypatch):
    scans = []
    real = discovery.scan
    monkeypatch.setattr(discovery, "scan", lambda: scans.append(1) or real())
    fn = verl_wraps({"plugin": "stateful", "scale": 1.0, **LOCAL})
    first = [naive_call(fn)["instances"] for _ in range(3)]
    other = naive_call(verl_wraps({"plugin": "stateful", "scale": 3.0, **LOCAL}))
    assert first[0] == first[1] == first[2]  # one instance for the three calls
    assert other["instances"] == first[0] + 1 and other["score"] == 3.0
    assert len(scans) == 2


def test_a_reward_holding_the_gil_in_c_scores_error_score_within_its_timeout_by_default():
    fn = verl_wraps({"plugin": "faulty", "verl_rewards": {"timeout_s": 1, "error_score": -1.0}})
    assert naive_call(fn, solution_str="1", ground_truth="1") == 1.0  # the worker pool starts here
    began = time.monotonic()
    assert naive_call(fn, solution_str="gil_sleep", ground_truth="1") == -1.0
    assert time.monotonic() - began < 1 + 2  # timeout_s + 2 s, the host alive
    assert naive_call(fn, solution_str="1", ground_truth="1") == 1.0


def test_nested_omegaconf_kwargs_are_made_plain(reward_file):
    path = reward_file('''
        def compute_score(data_source, solution_str, ground_truth, extra_info=None, weights=None):
            assert type(weights) is dict and type(weights["tags"]) is list
            return weights["correct"] * float(solution_str == ground_truth)
    ''')
    # verl hands over dict(reward_kwargs): plain at the top, omegaconf nodes inside.
    reward_kwargs = dict(OmegaConf.create({"path": str(path),
                                           "weights": {"correct": 2.0, "tags": ["a"]}}))
    assert naive_call(verl_wraps(reward_kwargs)) == 2.0


def test_file_reward_selected_by_path_and_name(reward_file):
    path = reward_file('''
        def other(data_source, solution_str, ground_truth, extra_info=None, scale=1.0):
            return {"score": scale, "source": data_source}
    ''')
    fn = verl_wraps({"path": str(path), "name": "other", "scale": 0.25})
    assert naive_call(fn) == {"score": 0.25, "source": "openai/gsm8k"}


def test_missing_selection_is_a_clear_error_at_the_first_call():
    fn = verl_wraps({"method": "flexible"})  # building the partial is fine, as in verl
    with pytest.raises(ConfigError, match=r"reward_kwargs must set exactly one of 'plugin'.*"
                                          r"sets neither \(keys: \['method'\]\)"):
        naive_call(fn)


def test_plugin_and_path_together_are_an_error(reward_file):
    with pytest.raises(ConfigError, match="sets 'plugin' and 'path'"):
        naive_call(verl_wraps({"plugin": "exact_match", "path": str(reward_file("x = 1\n"))}))


def test_unknown_plugin_suggests_and_lists_installed():
    with pytest.raises(PluginNotFoundError, match="Did you mean 'exact_match'.*verl-rewards list"):
        naive_call(verl_wraps({"plugin": "exact_mach"}))


def test_a_config_error_is_remembered_not_rediscovered(monkeypatch):
    fn = verl_wraps({"plugin": "nope"})
    with pytest.raises(PluginNotFoundError):
        naive_call(fn)
    monkeypatch.setattr(discovery, "scan", lambda: pytest.fail("scanned again"))
    with pytest.raises(PluginNotFoundError):
        naive_call(fn)


def test_a_misspelt_kwarg_is_the_clis_config_error_and_is_remembered(monkeypatch):
    scans = []
    real = discovery.scan
    monkeypatch.setattr(discovery, "scan", lambda: scans.append(1) or real())
    fn = verl_wraps({"plugin": "exact_match", "colour": "red"})
    for _ in range(3):  # verl calls once per sample: the installed plugins are scanned once
        with pytest.raises(RewardKwargsError, match=r"^reward.kwargs 'colour' not accepted by reward "
                                                    r"exact_match \(verl-rewards-testkit .*it accepts: bonus"):
            naive_call(fn)
    assert len(scans) == 1


def test_a_kwarg_of_the_wrong_simple_type_is_refused_naming_the_parameter():
    with pytest.raises(RewardKwargsError, match=r"'bonus' must be float, not 'lots' \(str\)"):
        adapter.reference({"plugin": "exact_match", "bonus": "lots"})


@pytest.mark.parametrize(("text", "message"), [
    ("none", "got NoneType None"), ("nan", "nan is not a finite number"),
    ("no_score", "a dict without a 'score' key"), ("string", "got str '1.0'"),
])
def test_invalid_results_score_error_score_and_warn_naming_the_plugin(text, message, caplog):
    fn = verl_wraps({"plugin": "faulty", "verl_rewards": {"error_score": -1.0}})
    assert naive_call(fn, solution_str=text) == -1.0
    assert re.search(f"reward faulty .*failed on sample 0: RewardValueError: .*{message}", caplog.text)


@pytest.mark.parametrize(("text", "message"), [
    ("nan", "RewardValueError: .*nan is not a finite number"),
    ("raise", "RuntimeError: the reward raised on purpose"),
])
def test_on_error_raise_raises_reward_error_naming_plugin_and_cause(text, message):
    fn = verl_wraps({"plugin": "faulty", "verl_rewards": {"on_error": "raise"}})
    with pytest.raises(RewardError, match=f"reward faulty .*failed on sample 0: {message}"):
        naive_call(fn, solution_str=text)


def test_a_hung_sample_times_out_under_the_section_timeout():
    fn = verl_wraps({"plugin": "faulty", "verl_rewards": {"timeout_s": 0.5, "error_score": -2.0}})
    began = time.monotonic()
    assert naive_call(fn, solution_str="loop") == -2.0
    assert time.monotonic() - began < 3


def test_a_composite_selected_by_rewards_and_route():
    fn = verl_wraps({
        "rewards": {"exact": {"plugin": "exact_match", "weight": 2.0},
                    "bonus": {"plugin": "exact_match", "kwargs": {"bonus": 1.0}, "weight": 0.5}},
        "route": {"math/*": ["exact", "bonus"], "*": "exact"},
    })
    assert naive_call(fn, data_source="math/x")["score"] == 2.0 + 0.5 * 2.0
    assert naive_call(fn, data_source="other")["score"] == 2.0
    assert naive_call(fn, data_source="other", solution_str="1")["score"] == 0.0


def test_section_options_must_not_choose_the_reward():
    with pytest.raises(ConfigError, match=r"verl_rewards sets \['plugin'\]"):
        naive_call(verl_wraps({"plugin": "exact_match", "verl_rewards": {"plugin": "faulty"}}))


def test_a_composite_takes_no_loose_kwargs():
    with pytest.raises(ConfigError, match=r"takes kwargs per reward .*\['bonus'\]"):
        naive_call(verl_wraps({"rewards": {"a": {"plugin": "exact_match"}}, "bonus": 1}))


def test_reward_router_kwargs_reach_only_plugins_that_take_them(reward_file):
    path = reward_file('''
        def judge(data_source, solution_str, ground_truth, extra_info=None,
                  reward_router_address=None, reward_model_tokenizer=None):
            return {"score": 1.0, "router": reward_router_address}
    ''')
    host = {"reward_router_address": "10.0.0.1:8000", "reward_model_tokenizer": object()}
    # verl's reward loop: compute_score(..., **extra_reward_kwargs) under the partial.
    judge = verl_wraps({"path": str(path), "name": "judge"})
    assert naive_call(functools.partial(judge, **host))["router"] == "10.0.0.1:8000"
    plain = verl_wraps({"plugin": "exact_match"})
    assert naive_call(functools.partial(plain, **host))["score"] == 1.0


HOST_JUDGE = '''
    def judge(data_source, solution_str, ground_truth, extra_info=None,
              reward_router_address=None, reward_model_tokenizer=None):
        return {"score": 1.0, "router": reward_router_address,
                "tokenizer": getattr(reward_model_tokenizer, "name", None)}
'''


class Tokenizer:
    """What verl passes as reward_model_tokenizer: an object hashed by identity."""

    def __init__(self, name):
        self.name = name


class UnhashableTokenizer(Tokenizer):
    __hash__ = None  # type: ignore[assignment]

    def __eq__(self, other):
        return isinstance(other, Tokenizer) and other.name == self.name


def test_equal_host_values_share_one_scorer_whatever_object_carries_them(reward_file, monkeypatch):
    builds = []
    real = adapter._build
    monkeypatch.setattr(adapter, "_build", lambda options, host: builds.append(dict(host)) or real(options, host))
    judge = verl_wraps({"path": str(reward_file(HOST_JUDGE)), "name": "judge"})
    for _ in range(3):  # a fresh, equal address string on each call
        address = "".join(("10.0.0.1", ":8000"))
        assert naive_call(functools.partial(judge, reward_router_address=address))["router"] == "10.0.0.1:8000"
    assert builds == [{}, {"reward_router_address": "10.0.0.1:8000"}]


@pytest.mark.parametrize("kind", [Tokenizer, UnhashableTokenizer])
def test_a_host_object_is_held_by_its_key_so_no_other_object_can_take_its_address(kind):
    tokenizer = kind("first")
    alive, address = weakref.ref(tokenizer), id(tokenizer)
    key = adapter._host_key(tokenizer)
    del tokenizer
    gc.collect()
    assert alive() is not None and id(alive()) == address  # the key keeps it: no other object is there
    assert key == adapter._host_key(alive()) and key != adapter._host_key(kind("first"))
    del key
    gc.collect()
    assert alive() is None  # the key alone held it


@pytest.mark.parametrize("kind", [Tokenizer, UnhashableTokenizer])
def test_each_host_object_is_scored_with_its_own_scorer_after_the_first_is_dropped(reward_file, kind):
    # Scored in this process: a class of this test module cannot be imported by a worker process.
    judge = verl_wraps({"path": str(reward_file(HOST_JUDGE)), "name": "judge", **LOCAL})
    first = kind("first")
    address = id(first)
    assert naive_call(functools.partial(judge, reward_model_tokenizer=first))["tokenizer"] == "first"
    del first
    gc.collect()
    others = [kind(f"t{i}") for i in range(2000)]  # objects of its size, made after it was dropped
    assert address not in {id(o) for o in others}
    assert [naive_call(functools.partial(judge, reward_model_tokenizer=o))["tokenizer"]
            for o in others[-3:]] == ["t1997", "t1998", "t1999"]


def test_compute_score_pickles_by_reference():
    assert pickle.loads(pickle.dumps(compute_score)) is compute_score
    restored = pickle.loads(pickle.dumps(verl_wraps({"plugin": "exact_match"})))
    assert naive_call(restored)["score"] == 1.0


def load_extern_object(module_path, object_name):
    """verl.utils.import_utils.load_extern_object / load_module, as verl resolves
    reward.custom_reward_function.path and .name."""
    if module_path.startswith("pkg://"):
        module = importlib.import_module(module_path[len("pkg://"):].replace("/", "."))
    else:
        module_path = module_path.removeprefix("file://")
        spec = importlib.util.spec_from_file_location(
            f"custom_module_{hash(os.path.abspath(module_path))}", module_path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)  # not registered in sys.modules
    return getattr(module, object_name)


@pytest.mark.parametrize("path", ["pkg://verl_rewards.integrations.verl",
                                  "pkg://verl_rewards/integrations/verl", "FILE"])
@pytest.mark.parametrize("name", ["compute_score", "compute_score_batch", "compute_score_async"])
def test_verl_resolves_the_path_to_the_real_functions(path, name):
    raw_fn = load_extern_object(adapter.__file__ if path == "FILE" else path, name)
    assert raw_fn is getattr(adapter, name)
    assert pickle.loads(pickle.dumps(raw_fn)) is raw_fn  # standard pickle, by reference


def test_old_verl_loading_the_file_as_custom_module_gets_the_real_function():
    # verl before pkg:// paths: spec_from_file_location("custom_module", path).
    spec = importlib.util.spec_from_file_location("custom_module", adapter.__file__)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.compute_score is compute_score


def test_batch_entry_called_as_the_batch_reward_manager_calls_it():
    # verl's BatchRewardManager: numpy arrays from non_tensor_batch, all by keyword.
    fn = verl_wraps({"plugin": "exact_match"}, compute_score_batch)
    scores = fn(data_sources=np.array(["d", "d", "d"], dtype=object),
                solution_strs=["1", "2", "3"], ground_truths=["1", "0", "3"],
                extra_infos=np.array([{}, {}, {}], dtype=object))
    assert [s["score"] for s in scores] == [1.0, 0.0, 1.0]


def test_batch_entry_calls_a_batch_plugin_once():
    fn = verl_wraps({"plugin": "batch_exact"}, compute_score_batch)
    assert fn(data_sources=["d"] * 2, solution_strs=["a", "b"], ground_truths=["a", "a"],
              extra_infos=[None, None]) == [1.0, 0.0]


def test_batch_entry_raises_naming_the_failed_sample_with_on_error_raise():
    fn = verl_wraps({"plugin": "faulty", "verl_rewards": {"on_error": "raise"}}, compute_score_batch)
    with pytest.raises(RewardError, match=r"faulty .*failed on sample 1: RuntimeError"):
        fn(data_sources=["d"] * 3, solution_strs=["1", "raise", "1"], ground_truths=["1"] * 3,
           extra_infos=None)


def test_async_entry_is_awaited_by_verl_and_runs_an_async_plugin_concurrently(monkeypatch):
    assert inspect.iscoroutinefunction(compute_score_async)  # verl's reward loop checks this
    assert not inspect.iscoroutinefunction(compute_score)
    fn = verl_wraps({"plugin": "async_exact", "delay_s": 0.2, **LOCAL}, compute_score_async)

    async def batch():
        return await asyncio.gather(*(naive_call(fn, solution_str=str(i % 2), ground_truth="1")
                                      for i in range(10)))

    asyncio.run(batch())  # resolve first: the first call imports the plugin in a thread
    monkeypatch.setattr(shapes, "_peak", 0)
    results = asyncio.run(batch())
    assert [r["score"] for r in results] == [0.0, 1.0] * 5
    assert shapes._peak == 10  # the ten calls were all in flight at once, on verl's loop


def test_async_entry_runs_a_sync_plugin_in_a_thread():
    fn = verl_wraps({"plugin": "exact_match"}, compute_score_async)
    assert asyncio.run(naive_call(fn))["score"] == 1.0


def test_once_the_reward_returned_extra_keys_a_failed_sample_carries_them_too(reward_file):
    path = reward_file('''
        def compute_score(data_source, solution_str, ground_truth, extra_info=None):
            if solution_str == "raise":
                raise ValueError("no")
            return {"score": 1.0, "acc": 1.0}
    ''')
    fn = verl_wraps({"path": str(path)})
    assert naive_call(fn) == {"score": 1.0, "acc": 1.0}
    # verl builds its arrays from the first sample's keys: a bare float here would crash it
    assert naive_call(fn, solution_str="raise") == {"score": 0.0, "acc": None}


# -- reward-section options misplaced beside the reward's kwargs (issue 26.6) ---------

KWARGS_REWARD = '''
def compute_score(data_source, solution_str, ground_truth, extra_info=None, **kwargs):
    if solution_str == "raise":
        raise RuntimeError("the reward raised on purpose")
    return 1.0
'''


def verls_own_function(reward_kwargs):
    """verl 0.9.1's get_custom_reward_fn on a config naming this adapter (its real loading
    and its reward_kwargs merge)."""
    from verl.trainer.ppo.reward import get_custom_reward_fn

    config = OmegaConf.create({"reward": {"custom_reward_function": {
        "path": "pkg://verl_rewards.integrations.verl", "name": "compute_score",
        "reward_kwargs": reward_kwargs}}})
    return get_custom_reward_fn(config)


@pytest.mark.parametrize(("option", "value"), [
    ("on_error", "raise"), ("timeout_s", 1), ("error_score", -1.0), ("on_error", "skip"),
    ("executor", "ray"), ("max_concurrency", 4),
])
def test_a_section_option_beside_the_kwargs_is_a_config_error_naming_its_place(
        reward_file, option, value):
    path = reward_file(KWARGS_REWARD)  # a **kwargs reward: it would take anything
    fn = verls_own_function({"path": str(path), option: value})
    with pytest.raises(ConfigError) as refused:
        naive_call(fn, solution_str="raise")
    where = "reward.custom_reward_function.reward_kwargs"
    assert str(refused.value).startswith(
        f"{where} sets the verl-rewards option(s) ['{option}'] beside the reward's kwargs, where "
        f"they would reach the reward as plain kwargs and not apply. Move them: {where}.{option} "
        f"-> {where}.verl_rewards.{option}")


def test_the_same_option_in_its_place_applies(reward_file):
    path = reward_file(KWARGS_REWARD)
    fn = verls_own_function({"path": str(path), "verl_rewards": {"on_error": "raise"}})
    with pytest.raises(RewardError, match="the reward raised on purpose"):
        naive_call(fn, solution_str="raise")
    assert naive_call(fn, solution_str="x") == 1.0


def test_a_misplaced_option_is_refused_for_a_plugin_too():
    with pytest.raises(ConfigError, match=r"\['timeout_s', 'on_error'\]"):
        naive_call(verl_wraps({"plugin": "exact_match", "timeout_s": 5, "on_error": "raise"}))
