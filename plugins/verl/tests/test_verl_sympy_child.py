"""verl_default's SymPy steps run in ``verl_rewards.child`` children: a hostile answer is "not
equal" before the reward call's time runs out, and the plugin needs no other plugin's modules."""

from __future__ import annotations

import ast
import importlib.metadata
import time
from pathlib import Path

import pytest
from pylatexenc import latex2text
from verl_rewards_verl import prm800k, sympy_child
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


MB = 1 << 20


@pytest.mark.parametrize(("data_source", "response"), [
    ("numina_olympiads", "\\" * MB),  # prm800k reads it with pylatexenc: 56 s here before
    ("numina_olympiads", "So the answer is $\\boxed{%s}$." % ("\n" * MB)),  # the whole response: 38 s
    ("hiyouga/geometry3k", "So the answer is $\\boxed{%s}$." % ("\\" * MB)),  # mathruler's reading: 36 s
])
def test_a_megabyte_of_latex_scores_zero_before_the_reward_calls_time_runs_out(data_source: str,
                                                                                response: str) -> None:
    assert sympy_child.ensure_started()
    began = time.monotonic()
    with deadline_of(3.0):
        score = compute_score(data_source, response, "\\frac{1}{2}")
    assert time.monotonic() - began < 3.0
    assert score == 0.0


def test_long_latex_is_read_in_the_child_as_pylatexenc_reads_it_here() -> None:
    answer = " + ".join(f"\\frac{{{i}}}{{\\sqrt{{{i + 1}}}}}" for i in range(200))
    assert len(answer) > prm800k.LOCAL_LATEX_CHARS
    assert sympy_child.ensure_started()
    expected = latex2text.LatexNodes2Text().latex_to_text(answer.replace("\\frac", " \\frac"))
    assert prm800k._parse_latex(answer) == expected.replace("√", "sqrt").strip()
    with pytest.raises(ValueError, match="LaTeX not read: RecursionError"):
        sympy_child.latex_to_text("{" * 3000, 10.0)  # pylatexenc raises there too: verl keeps the LaTeX


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
