"""verl-rewards-format as published: the contract's entry points, each passing `verl-rewards check`.

Uses the pytest plugin verl-rewards ships for reward authors (`verl_reward_check`),
which loads each plugin the way every worker does and runs its self-test examples.
"""

from __future__ import annotations

import importlib.metadata

import pytest

DISTRIBUTION = "verl-rewards-format"
NAMES = (
    "think_answer_format", "length_penalty", "overlong_penalty",
    "cosine_length", "repetition_penalty", "tag_count", "reasoning_steps",
)


def test_distribution_declares_exactly_the_contract_names() -> None:
    dist = importlib.metadata.distribution(DISTRIBUTION)
    declared = sorted(ep.name for ep in dist.entry_points if ep.group == "verl_rewards")
    assert declared == sorted(NAMES)


@pytest.mark.parametrize("name", NAMES)
def test_plugin_passes_check_with_its_self_test_examples(verl_reward_check, name: str) -> None:
    report = verl_reward_check(f"{DISTRIBUTION}:{name}")
    assert report.shape == "sample, sync function"
    assert 4 <= report.examples_run <= 7
