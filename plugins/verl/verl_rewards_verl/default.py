"""The ``verl_default`` reward: verl 0.9.1's ``default_compute_score``, without verl."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from verl_rewards.metadata import Example, reward

from . import geo3k, gsm8k, math_dapo, math_reward, prime_code, prime_math, search_r1, verified
from .sources import SOURCES, branch_of
from .verified import MATH_MODES, VERIFIED_BRANCHES, MathMode

_SUB = "```python\na, b = map(int, input().split())\nprint(a - b)\n```"
_TWO_TESTS = json.dumps({"inputs": ["1 2\n", "3 0\n"], "outputs": ["3\n", "3\n"]})

EXAMPLES = [
    Example("Natalia sold 48 clips in April and half as many in May: 48 + 24 = 72.\n#### 72", "72", 1.0,
            data_source="openai/gsm8k"),
    Example("48 + 24 = 72 clips.\n#### 71", "72", 0.0, data_source="openai/gsm8k"),
    Example("So the probability is $\\boxed{\\dfrac{1}{2}}$.", "\\frac12", 1.0, data_source="lighteval/MATH"),
    Example("So the probability is $\\boxed{\\frac{1}{3}}$.", "\\frac12", 0.0, data_source="HuggingFaceH4/MATH-500"),
    Example("The two numbers multiply to 204.\nAnswer: 204", "204", 1.0, data_source="math_dapo"),
    Example("I think it is $\\boxed{205}$.", "204", -1.0, data_source="aime2024"),
    Example("Step 1: $\\sqrt{8}$ simplifies.\nStep 2: The answer is $\\boxed{2\\sqrt{2}}$.", "\\sqrt{8}", 1.0,
            data_source="numina_olympiads"),
    Example("The answer is $\\boxed{3}$.", "4", 0.0, data_source="numina_cn_k12"),
    # One code example (each runs its tests in the sandbox, in every host the conformance kit tries):
    # a program that passes one test of two.
    Example(_SUB, _TWO_TESTS, 0.5, data_source="apps"),
    Example("<think>The angles add up to 180.</think> The angle is $\\boxed{30}$.", "30", 1.0,
            data_source="hiyouga/geometry3k"),
    Example("The angle is $\\boxed{30}$.", "30", 0.9, data_source="hiyouga/geometry3k"),
    Example("<think>The capital of France.</think><answer>Paris</answer>", {"target": ["Paris"]}, 1.0,
            data_source="searchR1_nq"),
    Example("<answer>Lyon</answer>", {"target": ["Paris", "Paris, France"]}, 0.0, data_source="searchR1_triviaqa"),
]


@reward(
    description=(
        "verl 0.9.1's default_compute_score without verl: routes by data_source to gsm8k, MATH (Hendrycks), "
        "math_dapo/aime*, prime_math (numina_*), prime_code's rule run by code_exec (codecontests, apps, "
        "codeforces, taco), geometry3k (mathruler) and search-R1 exact match, with the same score per sample."
    ),
    data_sources=(*(source for sources in SOURCES.values() for source in sources), "aime*"),
    timeout_s=120.0,  # a code sample runs up to 10 tests of 10 s each, as verl's prime_code does
    tags=("math", "code", "qa", "verl"),
    kind="math",
    examples=EXAMPLES,
)
def compute_score(
    data_source: str,
    solution_str: str,
    ground_truth: Any,
    extra_info: Mapping[str, Any] | None = None,
    *,
    code_options: Mapping[str, Any] | None = None,
    sympy_timeout_s: float = prime_math.SYMPY_TIMEOUT_S,
    math: MathMode = "verl",
) -> float | dict[str, Any]:
    """The score verl's ``default_compute_score`` gives this sample: a float, or math_dapo's
    ``{"score", "acc", "pred"}``.

    ``code_options`` are passed to ``code_exec`` for code samples (e.g. ``{"memory_mb": 4096}``);
    ``sympy_timeout_s`` bounds each SymPy comparison (numina_* and geometry3k; verl's is 10 s
    for numina_*, none for geometry3k). ``math="verified"`` judges the MATH, math_dapo/aime*
    and numina_* branches with verl-rewards-math's checker instead of verl's, on verl's score
    scale (``verified.py``). An unknown ``data_source`` raises ``UnknownDataSourceError``.
    """
    if math not in MATH_MODES:
        raise ValueError(f"math must be one of {', '.join(MATH_MODES)}, not {math!r}")
    branch = branch_of(data_source)
    result: Any
    if math == "verified" and branch in VERIFIED_BRANCHES:
        result = verified.score(branch, solution_str, ground_truth, sympy_timeout_s)
    elif branch == "gsm8k":
        result = gsm8k.compute_score(solution_str, ground_truth)
    elif branch == "math":
        result = math_reward.compute_score(solution_str, ground_truth)
    elif branch == "math_dapo":
        result = math_dapo.compute_score(solution_str, ground_truth)
    elif branch == "prime_math":
        result = prime_math.compute_score(solution_str, ground_truth, sympy_timeout_s)
    elif branch == "code":
        result = prime_code.compute_score(solution_str, ground_truth, code_options)
    elif branch == "geo3k":
        result = geo3k.compute_score(solution_str, ground_truth, sympy_timeout_s=sympy_timeout_s)
    else:
        result = search_r1.compute_score(solution_str, ground_truth)
    # verl's conversion: a dict as it is, a number as a float, a tuple by its first item.
    if isinstance(result, dict):
        return result
    if isinstance(result, (int, float, bool)):
        return float(result)
    return float(result[0])
