"""Every first-party plugin scores a hostile answer (a megabyte of its own syntax, a power
tower, a factorial) as a wrong answer, status ``ok``, within the reward's time limit, on the
local and the process executor (issue 32): never a hang, never a timeout that
``on_error: skip`` would drop.

Each plugin gets the shapes that hit its costly steps (the full sweep, every shape of
``hostile_answers.py`` against every case, is ``benchmarks/bench_hostile_answers.py``).
A right answer is scored first, so a child's start is not what is timed.
"""

from __future__ import annotations

import time
import warnings

import pytest

from tests.integration.hostile_answers import CASES, SHAPES, reward_config
from verl_rewards import Scorer

TIMEOUT_S = 3.0

TOWER = "\\boxed{9^{9^{9^{9}}}}"
# case -> (shape, placed where the plugin reads its answer?) pairs. Few per plugin: a shape
# that runs into a deadline costs the test that deadline.
SWEEP: dict[str, list[tuple[str, bool]]] = {
    "gsm8k flexible": [("'1,' (thousands)", False), ("digits", True)],
    "gsm8k": [("'#### 1,' (thousands)", False)],
    "math_boxed": [(TOWER, False), ("many \\boxed{1}", False)],
    "math_boxed last_math": [("factorial(10**9)", True)],
    "cosine_length": [(TOWER, False)],
    "think_answer_format": [("unclosed <answer>", False), ("<think> tags", True)],
    "repetition_penalty": [("prose", False)],
    "code_exec": [("deep parentheses", True)],
    "ifeval strict": [("'. ' (a sentence boundary every 2 chars)", False)],
    "qa_em": [("many <answer>1</answer>", True)],
    "verl_default numina_olympiads": [("backslashes", False)],
    "verl_default hiyouga/geometry3k": [("backslashes", True)],
    "verl_default math_dapo": [("'Answer: '", False)],
    "verl_default verified lighteval/MATH": [(TOWER, False)],
    "reasoning_gym countdown": [("9**9**9**9", True)],
    "llm_judge": [("no space", False)],
}
# A longer call for a child that takes seconds to start (importing reasoning-gym), the
# answer then bounded by the plugin's own limit: (reward.timeout_s, kwargs).
LIMITS = {"reasoning_gym countdown": (10.0, {"answer_timeout_s": 2.0})}
# On the process executor too (the default of the adapters and of audit).
PROCESS = ("math_boxed", "reasoning_gym countdown")


def _runs() -> list[tuple[str, str]]:
    return [(name, "local") for name in SWEEP] + [(name, "process") for name in PROCESS]


@pytest.mark.parametrize(("name", "executor"), _runs())
def test_a_hostile_answer_is_a_wrong_answers_score_within_the_time_limit(name: str, executor: str) -> None:
    case = CASES[name]
    shapes = SWEEP[name] if executor == "local" else SWEEP[name][:1]
    timeout_s, kwargs = LIMITS.get(name, (TIMEOUT_S, {}))
    warnings.simplefilter("ignore")
    with reward_config(case, timeout_s) as config:
        config["executor"] = executor
        config["kwargs"].update(kwargs)
        with Scorer.from_config(config) as scorer:
            if case.warm:
                warm = scorer.score([case.sample(case.warm)])
                assert warm.statuses == ["ok"], warm.errors
            for shape, in_place in shapes:
                text = SHAPES[shape]
                if in_place:
                    assert case.wrap is not None, name
                    text = case.wrap(text)
                began = time.monotonic()
                result = scorer.score([case.sample(text)])
                seconds = time.monotonic() - began
                assert result.statuses == ["ok"], (shape, result.errors)
                assert case.wrong is None or result.scores == [case.wrong], (shape, result.scores)
                assert seconds < timeout_s, (shape, seconds)


def test_the_sweep_names_only_shapes_and_cases_that_exist() -> None:
    assert set(SWEEP) <= set(CASES) and set(PROCESS) <= set(SWEEP) and set(LIMITS) <= set(SWEEP)
    assert {shape for pairs in SWEEP.values() for shape, _ in pairs} <= set(SHAPES)
    plugins = {CASES[name].plugin for name in SWEEP}
    assert plugins >= {"gsm8k", "math_boxed", "cosine_length", "think_answer_format", "code_exec", "ifeval",
                       "qa_em", "verl_default", "reasoning_gym", "llm_judge"}
