"""The OpenRLHF reward file, loaded and called exactly as OpenRLHF does."""

from __future__ import annotations

import asyncio
import importlib.util
import json
import logging
import time

import pytest
import torch

import verl_rewards.integrations.openrlhf_reward as real_module
from verl_rewards.errors import ConfigError, PluginNotFoundError, RewardError
from verl_rewards.integrations.openrlhf_reward import (
    DEFAULT_STRIP,
    overrides_from_env,
    response_of,
    strip_suffixes,
)


@pytest.fixture(autouse=True)
def _clean(monkeypatch):
    for name in real_module.ENV_VARS:
        monkeypatch.delenv(name, raising=False)
    real_module._settings.clear()
    yield
    real_module._settings.clear()


def load_reward_file():
    """OpenRLHF: spec_from_file_location("reward_func", --remote_rm_url) in its driver."""
    spec = importlib.util.spec_from_file_location("reward_func", real_module.__file__)
    reward_module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(reward_module)
    return reward_module.reward_func


@pytest.fixture
def reward_func(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    return load_reward_file()


def single_turn(reward_func, query, prompt, label):
    """OpenRLHF's SingleTurnAgentExecutor (openrlhf/utils/agent.py): one sample per call in
    a thread, then reward/scores/extra_logs as _build_sample_from_output reads them."""
    async def fetch():
        return await asyncio.gather(asyncio.to_thread(reward_func, [query], [prompt], [label]))

    info = asyncio.run(fetch())[0]
    reward = info.get("rewards")
    scores = info.get("scores") or info.get("rewards")
    logs = {k: v.flatten()[0].item() for k, v in info["extra_logs"].items()}
    return torch.tensor([reward]).item(), torch.tensor([scores]).item(), logs


def batched(reward_func, batches):
    """OpenRLHF 0.8's update_samples_with_rewards: torch.cat over batches, key by key."""
    infos = [reward_func(*batch) for batch in batches]
    rewards = torch.cat([i["rewards"] for i in infos], dim=0)
    scores = torch.cat([i["scores"] for i in infos], dim=0)
    logs = {k: torch.cat([i["extra_logs"][k] for i in infos], dim=0) for k in infos[0]["extra_logs"]}
    return rewards.tolist(), scores.tolist(), {k: v.tolist() for k, v in logs.items()}


def test_single_turn_executor_call(reward_func):
    reward, score, logs = single_turn(reward_func, "<bos>Q: 6*7? A: 42<|im_end|>", "<bos>Q: 6*7? A:", "42")
    assert (reward, score, logs) == (1.0, 1.0, {"reward_failed": 0.0})


def test_batched_call_returns_one_dimensional_float_tensors(reward_func):
    info = reward_func(["P1 1</s>", "P2 0</s>"], ["P1", "P2"], ["1", "1"])
    assert set(info) == {"rewards", "scores", "extra_logs"}
    assert info["rewards"].dtype == torch.float32 and info["rewards"].shape == (2,)
    assert batched(reward_func, [(["P1 1</s>", "P2 0</s>"], ["P1", "P2"], ["1", "1"]),
                                 (["P3 3"], ["P3"], ["3"])]) == (
        [1.0, 0.0, 1.0], [1.0, 0.0, 1.0], {"reward_failed": [0.0, 0.0, 0.0]})


def test_plugin_kwargs_come_from_json(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "verl-rewards-testkit:exact_match")
    monkeypatch.setenv("VERL_REWARDS_KWARGS", '{"bonus": 0.5}')
    assert load_reward_file()(["Pa"], ["P"], ["a"])["rewards"].tolist() == [1.5]


def test_extra_log_keys_are_fixed_so_batches_concatenate(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "faulty")
    monkeypatch.setenv("VERL_REWARDS_LOG_KEYS", '["acc"]')
    rewards, _, logs = batched(load_reward_file(), [(["P1"], ["P"], ["1"]),
                                                    (["Praise"], ["P"], ["1"])])
    assert rewards == [1.0, 0.0]
    assert logs == {"reward_failed": [0.0, 1.0], "acc": [0.0, 0.0]}


def test_failed_samples_get_error_score_and_a_warning(monkeypatch, caplog):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "faulty")
    monkeypatch.setenv("VERL_REWARDS_ERROR_SCORE", "-1")
    with caplog.at_level(logging.WARNING, "verl_rewards.integrations"):
        info = load_reward_file()(["P1", "Praise", "Pnan"], ["P"] * 3, ["1"] * 3)
    assert info["rewards"].tolist() == [1.0, -1.0, -1.0]
    assert info["extra_logs"]["reward_failed"].tolist() == [0.0, 1.0, 1.0]
    assert "reward faulty (verl-rewards-testkit 0.3.1) failed on sample 1: RuntimeError" in caplog.text


def test_a_reward_stuck_in_c_is_a_failed_sample_within_its_timeout_by_default(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "faulty")
    monkeypatch.setenv("VERL_REWARDS_TIMEOUT_S", "1")
    reward_func = load_reward_file()  # the worker pool starts as OpenRLHF loads the file
    began = time.monotonic()
    info = reward_func(["P1", "Pc_sleep", "P0"], ["P"] * 3, ["1"] * 3)
    assert time.monotonic() - began < 1 + 2  # timeout_s + 2 s, the host alive
    assert info["rewards"].tolist() == [1.0, 0.0, 0.0]
    assert info["extra_logs"]["reward_failed"].tolist() == [0.0, 1.0, 0.0]


def test_on_error_raise(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "faulty")
    monkeypatch.setenv("VERL_REWARDS_ON_ERROR", "raise")
    with pytest.raises(RewardError, match="failed on sample 0: RuntimeError"):
        load_reward_file()(["Praise"], ["P"], ["1"])


def test_settings_read_at_load_travel_with_the_function(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    reward_func = load_reward_file()  # the driver's environment, captured
    monkeypatch.delenv("VERL_REWARDS_PLUGIN")  # a worker without it
    assert reward_func(["P1"], ["P"], ["1"])["rewards"].tolist() == [1.0]
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "faulty")  # a worker's own setting wins
    assert reward_func(["Praise"], ["P"], ["1"])["extra_logs"]["reward_failed"].tolist() == [1.0]


def test_missing_plugin_variable_fails_the_load_and_says_how_to_set_it_on_a_cluster():
    with pytest.raises(ConfigError, match=r"needs exactly one of VERL_REWARDS_PLUGIN.*"
                                          r"neither is set.*--runtime-env-json"):
        load_reward_file()


@pytest.mark.parametrize(("name", "value", "message"), [
    ("VERL_REWARDS_KWARGS", "{bonus: 1}", "VERL_REWARDS_KWARGS is not valid JSON"),
    ("VERL_REWARDS_KWARGS", "[1]", "VERL_REWARDS_KWARGS must be a JSON object"),
    ("VERL_REWARDS_TIMEOUT_S", "soon", "VERL_REWARDS_TIMEOUT_S must be seconds or 'none'"),
    ("VERL_REWARDS_ON_ERROR", "ignore", "invalid VERL_REWARDS_\\* setting: reward.on_error"),
    ("VERL_REWARDS_STRIP", '"</s>"', "VERL_REWARDS_STRIP must be a JSON list"),
])
def test_bad_settings_are_config_errors_naming_the_variable(monkeypatch, name, value, message):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError, match=message):
        load_reward_file()(["P1"], ["P"], ["1"])


def test_the_option_variables_are_overrides_load_config_reads():
    env = {"VERL_REWARDS_TIMEOUT_S": " none ", "VERL_REWARDS_ON_ERROR": "raise", "VERL_REWARDS_ERROR_SCORE": "-1",
           "VERL_REWARDS_DATA_SOURCE": "elsewhere"}
    assert overrides_from_env(env) == ["reward.timeout_s=null", "reward.on_error=raise", "reward.error_score=-1"]
    assert overrides_from_env({"VERL_REWARDS_TIMEOUT_S": "auto"}) == ["reward.timeout_s=auto"]
    assert overrides_from_env({}) == []


@pytest.mark.parametrize(("name", "value", "config_says", "variable_says"), [
    ("VERL_REWARDS_TIMEOUT_S", "soon", "reward.timeout_s must be a positive number of seconds",
     "VERL_REWARDS_TIMEOUT_S must be seconds or 'none' (no limit), or 'auto', not 'soon'"),
    ("VERL_REWARDS_TIMEOUT_S", "-2", "reward.timeout_s must be a positive number of seconds",
     "VERL_REWARDS_TIMEOUT_S must be seconds or 'none' (no limit), or 'auto', not '-2'"),
    ("VERL_REWARDS_ERROR_SCORE", "high", "reward.error_score must be a finite number, not 'high'",
     "VERL_REWARDS_ERROR_SCORE must be a number, not 'high'"),
    ("VERL_REWARDS_ON_ERROR", "ignore", "reward.on_error must be one of score, raise, skip; got 'ignore'",
     "VERL_REWARDS_ON_ERROR must be 'score' or 'raise', not 'ignore'"),
])
def test_a_bad_option_variable_fails_in_load_configs_words_and_names_the_variable(
        monkeypatch, name, value, config_says, variable_says):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    monkeypatch.setenv(name, value)
    with pytest.raises(ConfigError) as raised:
        load_reward_file()
    message = str(raised.value)
    assert message.startswith(f"invalid VERL_REWARDS_* setting: {config_says}")
    assert message.endswith(variable_says)


def test_unknown_plugin_lists_installed(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_mach")
    with pytest.raises(PluginNotFoundError, match="Did you mean 'exact_match'"):
        load_reward_file()(["P1"], ["P"], ["1"])


def test_mismatched_lengths_are_refused(reward_func):
    with pytest.raises(ValueError, match="2 queries, 1 prompts and 2 labels"):
        reward_func(["a", "b"], ["a"], ["1", "2"])


@pytest.mark.parametrize(("query", "prompt", "response"), [
    ("Q: x? A: 42<|im_end|>", "Q: x? A:", " 42"),
    ("<pad><pad>Q A 7</s><pad>", "Q A", " 7"),  # left padding before the prompt
    ("Q 7<|eot_id|>\n<|end_of_text|>", "Q", " 7"),
    ("garbled Q", "Q?", "garbled Q"),  # prompt not found: the whole query
    ("Q 1", "", "Q 1"),
])
def test_response_is_the_query_after_its_prompt_without_end_markers(query, prompt, response):
    assert response_of(query, prompt, DEFAULT_STRIP) == response


def test_strip_suffixes_can_be_configured(monkeypatch):
    assert strip_suffixes("7<pad></s>", ["</s>", "<pad>"]) == "7"
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    monkeypatch.setenv("VERL_REWARDS_STRIP", '["<pad>", "</s>"]')
    assert load_reward_file()(["Q 7</s><pad>"], ["Q"], ["7"])["rewards"].tolist() == [1.0]


def test_the_plugin_is_resolved_once_in_the_real_module(reward_func, monkeypatch):
    loads = []
    real_load = real_module._load
    monkeypatch.setattr(real_module, "_load", lambda env: (loads.append(env), real_load(env))[1])
    for _ in range(3):
        assert reward_func(["P1"], ["P"], ["1"])["rewards"].tolist() == [1.0]
    assert loads == []  # loaded once already, when OpenRLHF loaded the file
    assert len(real_module._settings._values) == 1


def test_the_prompt_reaches_a_reward_that_asks_for_it(monkeypatch, reward_file):
    path = reward_file('''
        def judge(data_source, solution_str, ground_truth, extra_info=None, prompt=None):
            return float(prompt == "Q:")
    ''')
    monkeypatch.setenv("VERL_REWARDS_CONFIG", json.dumps({"path": str(path), "name": "judge"}))
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    result = load_reward_file()(["Q: 7", "R: 7"], ["Q:", "R:"], ["7", "7"])
    assert result["rewards"].tolist() == [1.0, 0.0]


def test_a_yaml_config_keeps_the_adapters_default_executor_unless_it_sets_one(monkeypatch, tmp_path):
    config = tmp_path / "reward.yaml"
    config.write_text("reward:\n  plugin: exact_match\n  timeout_s: 5\n")
    monkeypatch.setenv("VERL_REWARDS_CONFIG", str(config))
    settings, _ = real_module.prepare()
    # The adapters' default (process, since issue 32; local before), not the trainer's (ray).
    assert (settings.config.executor, settings.config.timeout_s) == ("process", 5)
    assert single_turn(load_reward_file(), "P1", "P", "1")[0] == 1.0
    real_module._settings.clear()
    config.write_text("reward:\n  plugin: exact_match\n  executor: ray\n")
    assert real_module.load_settings({"VERL_REWARDS_CONFIG": str(config)})[0].config.executor == "ray"


# -- one environment reading, one sample builder: the file and serve's /openrlhf --------

BATCH = {  # as OpenRLHF 0.11 sends it: queries decoded with special tokens, prompt first
    "query": ["<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n4</s><pad>",
              "<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n5<|im_end|>",
              "garbled 6"],
    "prompts": ["<|im_start|>user\n2+2?<|im_end|>\n<|im_start|>assistant\n",
                "<|im_start|>user\n3+3?<|im_end|>\n<|im_start|>assistant\n", "6+0?"],
    "labels": ["4", "6", "6"],
}
JUDGE = '''
def judge(data_source, solution_str, ground_truth, extra_info=None, prompt=None):
    """Right only with the clean response, the prompt and the file's extra_info."""
    if solution_str.startswith("5"):
        raise RuntimeError("a verifier crash")
    seen = (extra_info or {}).get("prompt") == prompt and prompt is not None
    return float(solution_str.strip() == ground_truth and seen)
'''


def _served_openrlhf(section, env, body):
    """POST /openrlhf on verl-rewards serve's real app (a local pool) with ``env``."""
    from aiohttp.test_utils import TestClient, TestServer

    from verl_rewards.config import load_config
    from verl_rewards.results import Provenance
    from verl_rewards.scorer import Scorer
    from verl_rewards.serve.app import build_app
    from verl_rewards.serve.metrics import Metrics
    from verl_rewards.serve.pool import PoolKeeper
    from verl_rewards.serve.settings import ServeSettings
    from verl_rewards.spec import score_identity, spec_from_config

    config = load_config({**section, "executor": "local"})
    spec = spec_from_config(config)
    metrics = Metrics()
    keeper = PoolKeeper(lambda: Scorer(spec, config).start(), metrics, "local")
    with pytest.MonkeyPatch.context() as patch:
        for name, value in env.items():
            patch.setenv(name, value)
        app = build_app(ServeSettings(), keeper, metrics, Provenance.of(spec), score_identity(spec, config),
                        config.on_error)

    async def post():
        async with TestClient(TestServer(app)) as client:  # the pool starts and stops with the app
            response = await client.post("/openrlhf", json=body)
            return response.status, await response.json()

    return asyncio.run(post())


def test_the_file_and_the_endpoint_build_the_same_samples_and_scores(monkeypatch, reward_file):
    from verl_rewards.serve.protocols import protocols_for

    section = {"path": str(reward_file(JUDGE)), "name": "judge", "error_score": -1.0}
    env = {"VERL_REWARDS_CONFIG": json.dumps(section), "VERL_REWARDS_STRIP": '["</s>", "<pad>"]'}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings, _ = real_module.prepare()
    file_samples = real_module.samples_for(BATCH["query"], BATCH["prompts"], BATCH["labels"], settings)
    served_samples = protocols_for("score", env)["/openrlhf"].parse(BATCH, None).samples
    assert served_samples == file_samples
    # the strip list replaced the defaults: <|im_end|> stays; a prompt not found: the whole query
    assert [s.solution_str for s in file_samples] == ["4", "5<|im_end|>", "garbled 6"]

    out = load_reward_file()(BATCH["query"], BATCH["prompts"], BATCH["labels"])
    status, answer = _served_openrlhf(section, env, BATCH)
    assert status == 200
    assert answer["rewards"] == out["rewards"].tolist() == [1.0, -1.0, 0.0]
    assert answer["extra_logs"]["reward_failed"] == out["extra_logs"]["reward_failed"].tolist() == [
        0.0, 1.0, 0.0]


def test_skip_is_refused_by_the_file_at_load_and_by_the_endpoint_per_request(monkeypatch):
    from verl_rewards.hosts import refusal

    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    monkeypatch.setenv("VERL_REWARDS_ON_ERROR", "skip")
    with pytest.raises(ConfigError) as refused:
        load_reward_file()
    assert str(refused.value) == refusal("openrlhf")
    status, answer = _served_openrlhf({"plugin": "exact_match", "on_error": "skip"}, {}, BATCH)
    assert (status, answer) == (409, {"error": refusal("serve_openrlhf")})


def test_an_empty_kwargs_variable_beside_a_config_is_unset_as_for_every_adapter(monkeypatch):
    from verl_rewards.integrations._section import section_from_env

    env = {"VERL_REWARDS_CONFIG": '{"plugin": "exact_match"}', "VERL_REWARDS_KWARGS": ""}
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    settings, _ = real_module.prepare()
    assert settings.config.plugin == section_from_env(env)["plugin"] == "exact_match"
    monkeypatch.setenv("VERL_REWARDS_KWARGS", '{"bonus": 1}')
    real_module._settings.clear()
    with pytest.raises(ConfigError, match="VERL_REWARDS_KWARGS goes with VERL_REWARDS_PLUGIN"):
        real_module.prepare()
