"""verl_default's SymPy steps run in ``verl_rewards.child`` children: a hostile answer is "not
equal" before the reward call's time runs out, and the plugin needs no other plugin's modules."""

from __future__ import annotations

import subprocess
import sys
import time

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


def test_the_plugin_imports_no_other_plugins_modules() -> None:
    code = ("import sys, verl_rewards_verl.default, verl_rewards_verl.sympy_child; "
            "print(sorted(m for m in sys.modules if m.startswith('verl_rewards_math')))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert done.stdout.strip() == "[]", done.stderr
