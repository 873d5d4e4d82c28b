"""verl-rewards-verl as published, and its routing table against verl's own source."""

from __future__ import annotations

import ast
import importlib.metadata
import inspect

import pytest
from verl.utils import reward_score
from verl_rewards_verl.sources import DAPO_PREFIX, SOURCES, branch_of

DISTRIBUTION = "verl-rewards-verl"


def test_distribution_declares_verl_default() -> None:
    dist = importlib.metadata.distribution(DISTRIBUTION)
    assert sorted(ep.name for ep in dist.entry_points if ep.group == "verl_rewards") == ["verl_default"]


def test_plugin_passes_check_with_an_example_per_branch(verl_reward_check) -> None:  # type: ignore[no-untyped-def]
    report = verl_reward_check(f"{DISTRIBUTION}:verl_default")
    assert report.shape == "sample, sync function"
    assert report.examples_run == 13


def _verl_table() -> tuple[list[list[str]], str]:
    """The data sources of each branch of verl's default_compute_score, read from its source."""
    tree = ast.parse(inspect.getsource(reward_score.default_compute_score))
    branches: list[list[str]] = []
    prefix = ""
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, (ast.Compare, ast.BoolOp)):
            test = node.test
            compares = [test] if isinstance(test, ast.Compare) else [v for v in test.values if isinstance(v, ast.Compare)]
            names = [c.value for cmp in compares for c in ast.walk(cmp) if isinstance(c, ast.Constant)]
            if any(isinstance(n, str) for n in names) and "data_source" in ast.unparse(test):
                branches.append([n for n in names if isinstance(n, str)])
            for call in ast.walk(test):
                if isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "startswith":
                    prefix = call.args[0].value  # type: ignore[attr-defined]
    return branches, prefix


def test_the_table_is_verls() -> None:
    branches, prefix = _verl_table()
    assert branches == [list(sources) for sources in SOURCES.values()]
    assert prefix == DAPO_PREFIX


@pytest.mark.parametrize(("source", "branch"), [
    ("openai/gsm8k", "gsm8k"), ("HuggingFaceH4/MATH-500", "math"), ("math", "math_dapo"), ("aime", "math_dapo"),
    ("aime2024", "math_dapo"), ("aimeless", "math_dapo"), ("numina_olympiads", "prime_math"), ("taco", "code"),
    ("hiyouga/geometry3k", "geo3k"), ("searchR1_musique", "search_r1"),
])
def test_each_source_selects_verls_branch(source: str, branch: str) -> None:
    assert branch_of(source) == branch
