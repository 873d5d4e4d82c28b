"""``verl_default(math="verified")``: verl's math branches judged by verl-rewards-math, on verl's scale.

The changes against ``math="verl"`` (the default, parity with verl 0.9.1) are
counted by ``verified_report.py`` on the parity samples (each change with its
reason) and on hand-labelled model-style responses; README.md's tables are
these counts.
"""

from __future__ import annotations

import collections
from types import ModuleType
from typing import Any

import pytest
from verl_rewards_verl.default import compute_score

# README.md, "math: verified": (parity samples, changed, to right, to wrong) per branch.
PARITY_CHANGES = {"math": (784, 16, 16, 0), "math_dapo": (186, 16, 12, 4), "prime_math": (384, 10, 7, 3)}
# README.md: per branch, of 29 hand-labelled model-style responses, how many each mode gets right.
MODEL_RIGHT = {"math": (23, 29), "math_dapo": (18, 29), "prime_math": (27, 29)}


@pytest.fixture(scope="module")
def parity(report: ModuleType) -> tuple[dict[str, int], list[Any]]:
    return report.parity_changes()


@pytest.fixture(scope="module")
def model_rows(report: ModuleType) -> list[tuple[str, Any, bool, bool]]:
    return report.model_verdicts()


@pytest.mark.parametrize(("data_source", "response", "reference"), [
    ("HuggingFaceH4/MATH-500", "The population is $\\boxed{900000}$.", "900,\\!000"),
    ("lighteval/MATH", "She arrives at $\\boxed{16:30}$.", "4:30 \\text{ p.m.}"),
    ("lighteval/MATH", "So $x = \\boxed{\\frac{5}{2}}$.", "2\\frac{1}{2}"),
    ("math_dapo", "So it is $\\boxed{\\dfrac{3}{4}}$.\nAnswer: \\dfrac{3}{4}", "\\frac{3}{4}"),
    ("aime2024", "Answer: 25", "25\\%"),
    ("math_dapo", "The answer is $\\boxed{42}$." + "\nI checked it twice." * 30, "42"),
    ("numina_olympiads", "Thus the time is \\boxed{16:30}.", "4:30 \\text{ p.m.}"),
])
def test_verified_mode_accepts_right_answers_that_verl_rejects(data_source: str, response: str,
                                                                  reference: str) -> None:
    wrong = compute_score(data_source, response, reference)
    right = compute_score(data_source, response, reference, math="verified")
    low, high = (-1.0, 1.0) if isinstance(wrong, dict) else (0.0, 1.0)
    assert (wrong["score"] if isinstance(wrong, dict) else wrong) == low
    assert (right["score"] if isinstance(right, dict) else right) == high


def test_verified_mode_keeps_verls_score_scale_and_extra_keys() -> None:
    dapo_right = compute_score("math_dapo", "Answer: 204", "204", math="verified")
    dapo_wrong = compute_score("aime2025", "Answer: 205", "204", math="verified")
    dapo_none = compute_score("math_dapo", "I do not know.", "204", math="verified")
    assert dapo_right == {"score": 1.0, "acc": True, "pred": "204"}
    assert dapo_wrong == {"score": -1.0, "acc": False, "pred": "205"}
    assert dapo_none == {"score": -1.0, "acc": False, "pred": "[INVALID]"}
    assert compute_score("lighteval/MATH", "$\\boxed{5}$", "5", math="verified") == 1.0
    assert compute_score("lighteval/MATH", "The answer is 5.", "5", math="verified") == 0.0  # MATH needs a box
    assert compute_score("numina_cn_k12", "The answer is 5.", "5", math="verified") == 1.0
    assert compute_score("numina_cn_k12", "The answer is 6.", "5", math="verified") == 0.0


@pytest.mark.parametrize("branch", ["gsm8k", "geo3k", "search_r1"])
def test_the_other_branches_score_as_verl_in_both_modes(cases: ModuleType, branch: str) -> None:
    for case in cases.BRANCHES[branch]():
        args = (case.data_source, case.solution_str, case.ground_truth)
        assert compute_score(*args, math="verified") == compute_score(*args)


def test_an_unknown_math_mode_is_an_error_naming_the_modes() -> None:
    with pytest.raises(ValueError, match="math must be one of verl, verified, not 'sympy'"):
        compute_score("lighteval/MATH", "\\boxed{5}", "5", math="sympy")


def test_every_change_on_the_parity_samples_has_its_reason(
    report: ModuleType, parity: tuple[dict[str, int], list[Any]]
) -> None:
    counts, changes = parity
    assert [c for c in changes if c.why == "unexplained"] == []
    for branch, (samples, changed, up, down) in PARITY_CHANGES.items():
        mine = [c for c in changes if c.branch == branch]
        assert (counts[branch], len(mine), sum(c.verified > c.verl for c in mine),
                sum(c.verified < c.verl for c in mine)) == (samples, changed, up, down)
    used = collections.Counter((c.branch, c.why) for c in changes)
    assert len(used) == len(report.REASONS)  # every reason listed is still seen


def test_model_style_responses_are_all_judged_right_in_verified_mode(
    report: ModuleType, model_rows: list[tuple[str, Any, bool, bool]]
) -> None:
    assert [(b, c.shape, c.answer, c.reference) for b, c, _, verified in model_rows if verified != c.right] == []
    table = report.model_table(model_rows)
    assert {b: (row.get("verl right", 0), row["verified right"]) for b, row in table.items()} == MODEL_RIGHT
    assert all(row.get("new error", 0) == 0 for row in table.values())
    shapes = {case.shape for case in report.MODEL_CASES}
    assert shapes == {"unit", "percent", "degree", "dollar", "mixed number", "thousands", "dfrac", "far box", "clock"}
