"""verl_default's SymPy steps run in ``verl_rewards.child`` children: a hostile answer is "not
equal" before the reward call's time runs out, and the plugin needs no other plugin's modules."""

from __future__ import annotations

import ast
import importlib.metadata
import time
from pathlib import Path

import pytest
from verl_rewards_verl import sympy_child
from verl_rewards_verl.default import compute_score

from verl_rewards.limits import deadline_of


@pytest.mark.parametrize(("data_source", "answer"), [
    ("hiyouga/geometry3k", "9**9**9*x"),  # mathruler's SymPy step: no deadline in verl
    ("numina_olympiads", "(9**9**9)*x"),  # prime_math's: verl's 10 s, here the call's time too
    ("hiyouga/geometry3k", "x*10**(10**10)"),
])
def test_a_hostile_answer_scores_zero_before_the_reward_calls_time_runs_out(data_source: str, answer: str) -> None:
    assert sympy_child.ensure_started()
    began = time.monotonic()
    with deadline_of(3.0):
        score = compute_score(data_source, f"\\boxed{{{answer}}}", "x", sympy_timeout_s=600.0)
    assert time.monotonic() - began < 3.0
    assert score == 0.0


def test_the_plugin_imports_no_private_module_of_another_plugin() -> None:
    """Only verl-rewards-math's entry-point modules (its public faces), never its machinery."""
    public = {ep.value.split(":")[0] for ep in importlib.metadata.entry_points(group="verl_rewards")
              if ep.dist is not None and ep.dist.name == "verl-rewards-math"}
    imported = set()
    for path in Path(sympy_child.__file__).parent.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                imported.add(node.module)
            elif isinstance(node, ast.Import):
                imported.update(alias.name for alias in node.names)
    others = {m for m in imported if m.split(".")[0].startswith("verl_rewards_") and
              m.split(".")[0] != "verl_rewards_verl"}
    assert {m for m in others if m.startswith("verl_rewards_math")} <= public
    assert "verl_rewards_math.math_boxed" in public
