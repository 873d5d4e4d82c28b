"""verl-rewards-ifeval as published: its entry point passes `verl-rewards check`."""

from __future__ import annotations

import importlib.metadata

DISTRIBUTION = "verl-rewards-ifeval"


def test_distribution_declares_the_ifeval_entry_point() -> None:
    dist = importlib.metadata.distribution(DISTRIBUTION)
    declared = sorted(ep.name for ep in dist.entry_points if ep.group == "verl_rewards")
    assert declared == ["ifeval"]


def test_plugin_passes_check_with_its_self_test_examples(verl_reward_check) -> None:
    report = verl_reward_check(f"{DISTRIBUTION}:ifeval")
    assert report.shape == "sample, sync function"
    assert report.examples_run == 5
