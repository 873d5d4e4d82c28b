"""verl-rewards-reasoning-gym as published: its entry point passes `check`; `show` lists the tasks."""

from __future__ import annotations

import importlib.metadata
import json

import pytest

from verl_rewards.cli.main import main

DISTRIBUTION = "verl-rewards-reasoning-gym"


def test_distribution_declares_the_reasoning_gym_entry_point() -> None:
    dist = importlib.metadata.distribution(DISTRIBUTION)
    assert [ep.name for ep in dist.entry_points if ep.group == "verl_rewards"] == ["reasoning_gym"]


def test_plugin_passes_check_with_its_self_test_examples(verl_reward_check) -> None:
    report = verl_reward_check(f"{DISTRIBUTION}:reasoning_gym")
    assert report.shape == "sample, sync function"
    assert report.examples_run == 8


def test_show_lists_every_task_as_a_data_source(capsys: pytest.CaptureFixture[str]) -> None:
    from reasoning_gym.factory import DATASETS

    assert main(["show", "reasoning_gym", "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["data_sources"] == [f"reasoning_gym/{task}" for task in sorted(DATASETS)]
    assert len(shown["data_sources"]) == 106 and shown["timeout_s"] == 30.0
