"""verl-rewards-models as published: the contract's entry points, each passing `verl-rewards check`
offline (no network, no downloaded weights)."""

from __future__ import annotations

import importlib.metadata

import pytest

DISTRIBUTION = "verl-rewards-models"
SHAPES = {"llm_judge": "sample, async class", "hf_reward_model": "batch, sync class"}


def test_distribution_declares_exactly_the_contract_names() -> None:
    dist = importlib.metadata.distribution(DISTRIBUTION)
    declared = sorted(ep.name for ep in dist.entry_points if ep.group == "verl_rewards")
    assert declared == sorted(SHAPES)


@pytest.mark.parametrize("name", sorted(SHAPES))
def test_plugin_passes_check_with_its_offline_self_test_examples(verl_reward_check, name: str,
                                                                 monkeypatch) -> None:
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    report = verl_reward_check(f"{DISTRIBUTION}:{name}")
    assert report.shape == SHAPES[name]
    assert report.examples_run == 2
