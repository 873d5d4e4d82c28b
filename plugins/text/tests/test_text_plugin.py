"""verl-rewards-text as published: its entry points, each passing `verl-rewards check`."""

from __future__ import annotations

import importlib.metadata

import pytest

DISTRIBUTION = "verl-rewards-text"
NAMES = ("qa_em", "qa_f1")


def test_distribution_declares_exactly_the_contract_names() -> None:
    dist = importlib.metadata.distribution(DISTRIBUTION)
    assert sorted(ep.name for ep in dist.entry_points if ep.group == "verl_rewards") == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_plugin_passes_check_with_its_self_test_examples(verl_reward_check, name: str) -> None:
    report = verl_reward_check(f"{DISTRIBUTION}:{name}")
    assert report.shape == "sample, sync function"
    assert report.examples_run == 6
