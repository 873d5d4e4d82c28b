"""The OpenRLHF reward file under OpenRLHF 0.11.2's own code: its argument parser
for the documented command lines, and its rollout actors' file loader and reward call."""

from __future__ import annotations

import argparse
import ast
import asyncio
import importlib.util
import os
import re
import shlex
from datetime import datetime
from pathlib import Path

import pytest
from openrlhf.utils.agent import SingleTurnAgentExecutor

import verl_rewards.integrations.openrlhf_reward as real_module
from verl_rewards.errors import ConfigError, PluginNotFoundError

DOC = Path(__file__).resolve().parents[2] / "docs" / "integrations" / "openrlhf.md"
REWARD_FILE = real_module.__file__
# Found, not imported: the module imports vLLM and DeepSpeed at the top.
TRAIN_PPO_RAY = importlib.util.find_spec("openrlhf.cli.train_ppo_ray").origin


@pytest.fixture(autouse=True)
def _fresh_settings():
    real_module._settings.clear()
    yield
    real_module._settings.clear()


def openrlhf_parser() -> argparse.ArgumentParser:
    """OpenRLHF's own parser: the statements of train_ppo_ray's __main__ block that build
    it, run from its installed source (the module's imports need GPUs we don't have)."""
    tree = ast.parse(Path(TRAIN_PPO_RAY).read_text())
    main = next(node for node in tree.body if isinstance(node, ast.If)
                and "__main__" in ast.unparse(node.test))
    body = []
    for statement in main.body:
        if "parse_args" in ast.unparse(statement):
            break
        body.append(statement)
    namespace: dict[str, object] = {"argparse": argparse, "os": os, "datetime": datetime}
    exec(compile(ast.Module(body, []), TRAIN_PPO_RAY, "exec"), namespace)
    parser = namespace["parser"]
    assert isinstance(parser, argparse.ArgumentParser)
    return parser


def documented_commands() -> list[list[str]]:
    """The train_ppo_ray argument lists of the doc's bash blocks."""
    commands = []
    for block in re.findall(r"```bash\n(.*?)```", DOC.read_text(), re.S):
        text = block.replace("\\\n", " ")
        for line in text.splitlines():
            if "openrlhf.cli.train_ppo_ray" in line:
                words = shlex.split(line.replace('"$REWARD_FILE"', REWARD_FILE))
                commands.append(words[words.index("openrlhf.cli.train_ppo_ray") + 1:])
    return commands


def test_the_docs_command_lines_parse_with_openrlhfs_own_parser():
    commands = documented_commands()
    assert len(commands) == 2
    parser = openrlhf_parser()
    for args in commands:
        parsed = vars(parser.parse_args(args))  # exits (SystemExit) on an unknown flag
        assert parsed["reward.remote_url"] == REWARD_FILE
        assert parsed["data.label_key"] == "answer"
        assert parsed["data.prompt_dataset"] == "my/prompts"


def test_the_old_flag_names_are_refused_by_openrlhf_0_11():
    with pytest.raises(SystemExit):
        openrlhf_parser().parse_args(["--remote_rm_url", REWARD_FILE])


def test_openrlhfs_loader_loads_the_file_and_scores_through_it(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_match")
    executor = SingleTurnAgentExecutor(remote_rm_url=[REWARD_FILE])
    rewards = asyncio.run(executor._fetch_rewards_via_func(
        ["Q: 6*7? 42<|im_end|>", "Q: 1+1? 3"], ["Q: 6*7?", "Q: 1+1?"], ["42", "2"]))
    assert [r["rewards"].tolist() for r in rewards] == [[1.0], [0.0]]
    assert [r["extra_logs"]["reward_failed"].tolist() for r in rewards] == [[0.0], [0.0]]


def test_a_misspelled_plugin_fails_when_openrlhf_loads_the_file(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "exact_mach")
    with pytest.raises(PluginNotFoundError, match="Did you mean 'exact_match'"):
        SingleTurnAgentExecutor(remote_rm_url=[REWARD_FILE])


def test_no_reward_chosen_fails_when_openrlhf_loads_the_file(monkeypatch):
    monkeypatch.delenv("VERL_REWARDS_PLUGIN", raising=False)
    monkeypatch.delenv("VERL_REWARDS_CONFIG", raising=False)
    with pytest.raises(ConfigError, match="needs exactly one of VERL_REWARDS_PLUGIN"):
        SingleTurnAgentExecutor(remote_rm_url=[REWARD_FILE])


def test_a_composite_reward_section_from_verl_rewards_config(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_CONFIG", (
        '{"rewards": {"exact": {"plugin": "exact_match", "weight": 2},'
        ' "bonus": {"plugin": "exact_match", "kwargs": {"bonus": 1}, "weight": 0.5}},'
        ' "route": {"openrlhf": ["exact", "bonus"]}}'))
    executor = SingleTurnAgentExecutor(remote_rm_url=[REWARD_FILE])
    rewards = asyncio.run(executor._fetch_rewards_via_func(["Q 7", "Q 8"], ["Q", "Q"], ["7", "7"]))
    assert [r["rewards"].tolist() for r in rewards] == [[2.0 + 0.5 * 2.0], [0.5 * 1.0]]


def test_a_hung_sample_is_a_failed_sample_within_the_timeout(monkeypatch):
    monkeypatch.setenv("VERL_REWARDS_PLUGIN", "faulty")
    monkeypatch.setenv("VERL_REWARDS_TIMEOUT_S", "0.5")
    executor = SingleTurnAgentExecutor(remote_rm_url=[REWARD_FILE])
    (result,) = asyncio.run(executor._fetch_rewards_via_func(["Qloop"], ["Q"], ["1"]))
    assert result["rewards"].tolist() == [0.0]
    assert result["extra_logs"]["reward_failed"].tolist() == [1.0]
