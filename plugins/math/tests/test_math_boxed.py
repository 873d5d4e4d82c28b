"""math_boxed: final answers written the way model outputs write them."""

from __future__ import annotations

import pytest
from verl_rewards_math import symbolic
from verl_rewards_math.math_boxed import MAX_BOX_CHARS, compute_score

FULL_SOLUTION = "We add them: $2 + 3 = 5$, so the answer is $\\boxed{5}$."

EQUAL = [
    # plain numbers and their spellings
    ("Therefore, the final answer is $\\boxed{5}$.", "5"),
    ("\\boxed{ 42 }", "42"),
    ("\\boxed{42.}", "42"),
    ("\\boxed{5.0}", "5"),
    ("\\boxed{18.9}", "18.90"),
    ("\\boxed{1,000}", "1000"),
    ("\\boxed{\\$1,000,000}", "1000000"),
    ("\\boxed{\\$18.90}", "18.90"),
    ("\\boxed{\u22123}", "-3"),
    # fractions
    ("\\boxed{\\frac{1}{2}}", "\\frac12"),
    ("\\boxed{\\dfrac{1}{2}}", "\\frac{1}{2}"),
    ("\\boxed{0.5}", "\\frac{1}{2}"),
    ("\\boxed{\\tfrac{3}{4}}", "0.75"),
    ("\\boxed{3/4}", "\\frac{3}{4}"),
    ("\\boxed{-\\frac{1}{3}}", "-\\frac13"),
    ("\\boxed{\\frac{-1}{3}}", "-\\frac{1}{3}"),
    ("\\boxed{\\frac{4}{8}}", "\\frac{1}{2}"),
    ("\\boxed{0.333333333333}", "\\frac{1}{3}"),
    ("\\boxed{\\dfrac{\\pi}{4}}", "\\frac{\\pi}{4}"),
    # degrees, percent, currency, units
    ("The angle measures $\\boxed{30^\\circ}$.", "30"),
    ("\\boxed{30^{\\circ}}", "30^\\circ"),
    ("\\boxed{50\\%}", "50"),
    ("\\boxed{10\\text{ cm}}", "10"),
    ("\\boxed{12 \\text{ inches}}", "12"),
    ("\\boxed{5\\text{ cm}^2}", "5"),
    ("\\boxed{72 apples}", "72"),
    # assignments and membership
    ("\\boxed{x = 3}", "3"),
    ("\\boxed{k=\\frac{1}{3}}", "\\frac13"),
    ("\\boxed{y = 2x + 3}", "2x+3"),
    ("\\boxed{x \\in [1, 2]}", "[1,2]"),
    # tuples, intervals, sets, lists
    ("\\boxed{\\left(1, 2\\right)}", "(1,2)"),
    ("\\boxed{(3, -4)}", "(3,-4)"),
    ("\\boxed{[0, 1)}", "[0,1)"),
    ("\\boxed{\\left[ -2, 5 \\right]}", "[-2,5]"),
    ("\\boxed{(\\frac{1}{2}, 0.25)}", "(0.5,\\frac14)"),
    ("\\boxed{\\{1, 2, 3\\}}", "\\{3,2,1\\}"),
    ("\\boxed{1, 2}", "2, 1"),
    # radicals, constants, expressions (symbolic)
    ("\\boxed{\\sqrt{2}}", "\\sqrt2"),
    ("\\boxed{2\\sqrt{3}}", "2\\sqrt{3}"),
    ("\\boxed{\\frac{\\sqrt{3}}{2}}", "\\frac{1}{2}\\sqrt{3}"),
    ("\\boxed{\\sqrt{8}}", "2\\sqrt{2}"),
    ("\\boxed{6\\sqrt{2}}", "\\sqrt{72}"),
    ("\\boxed{\\pi}", "\\pi"),
    ("\\boxed{2\\pi}", "2 \\pi"),
    ("\\boxed{\\infty}", "\\infty"),
    ("\\boxed{x^2 + 2x + 1}", "(x+1)^2"),
    ("\\boxed{\\frac{x+1}{2}}", "\\frac{1+x}{2}"),
    # multiple choice and text
    ("\\boxed{\\text{(B)}}", "B"),
    ("\\boxed{B}", "(B)"),
    ("\\boxed{\\text{Monday}}", "\\text{Monday}"),
    # box forms and positions
    ("\\fbox{7}", "7"),
    ("so the answer is \\boxed 7.", "7"),
    ("First I got \\boxed{4}. Wait, let me recheck... \\boxed{5}", "5"),
    ("\\boxed{5}", FULL_SOLUTION),
]

NOT_EQUAL = [
    ("\\boxed{6}", "5"),
    ("\\boxed{-5}", "5"),
    ("\\boxed{0.5}", "5"),
    ("\\boxed{\\frac{1}{3}}", "0.33"),
    ("\\boxed{(1, 2)}", "[1,2]"),
    ("\\boxed{(2, 1)}", "(1,2)"),
    ("\\boxed{1, 2, 3}", "1, 2"),
    ("\\boxed{2x + 1}", "2x - 1"),
    ("\\boxed{x^2}", "x^3"),
    ("\\boxed{\\sqrt{3}}", "\\sqrt{2}"),
    ("\\boxed{A}", "B"),
    ("\\boxed{\\text{Tuesday}}", "Monday"),
]

NO_ANSWER = [
    "The answer is 5.",
    "\\boxed{\\frac{1}{2",
    "\\boxed{}",
    "",
    # empty once normalised
    "\\boxed{ }",
    "\\boxed{\\$}",
    "\\boxed{\\%}",
    "\\boxed{\\text{}}",
    "\\boxed{$\\,$}",
]


@pytest.mark.parametrize(("response", "truth"), EQUAL)
def test_equal_answers_score_one(response: str, truth: str) -> None:
    result = compute_score("lighteval/MATH", response, truth)
    assert (result["score"], result["acc"]) == (1.0, True), result


@pytest.mark.parametrize(("response", "truth"), NOT_EQUAL)
def test_different_answers_score_zero(response: str, truth: str) -> None:
    result = compute_score("lighteval/MATH", response, truth)
    assert (result["score"], result["acc"]) == (0.0, False), result


@pytest.mark.parametrize("response", NO_ANSWER)
def test_no_complete_box_scores_zero_even_with_format_score(response: str) -> None:
    result = compute_score("lighteval/MATH", response, "5", format_score=0.1)
    assert (result["score"], result["acc"]) == (0.0, False)


def test_format_score_rewards_a_boxed_but_wrong_answer() -> None:
    assert compute_score("lighteval/MATH", "\\boxed{6}", "5", format_score=0.1)["score"] == 0.1


def test_custom_score_for_a_right_answer() -> None:
    assert compute_score("lighteval/MATH", "\\boxed{5}", "5", score=2.0)["score"] == 2.0


def test_extra_info_names_the_deciding_check() -> None:
    assert compute_score("m", "\\boxed{\\dfrac34}", "\\frac{3}{4}") == {
        "score": 1.0,
        "acc": True,
        "pred": "\\dfrac34",
        "match": "exact",
    }
    assert compute_score("m", "\\boxed{0.75}", "\\frac{3}{4}")["match"] == "numeric"
    assert compute_score("m", "\\boxed{(0.75, 1)}", "(\\frac34, 1)")["match"] == "sequence"
    assert compute_score("m", "\\boxed{(x-1)(x+1)}", "x^2-1", math_verify=False)["match"] == "symbolic"
    assert compute_score("m", "none", "1")["match"] == "none"


def test_symbolic_false_skips_sympy(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args: object) -> bool:
        raise AssertionError("sympy must not be consulted")

    monkeypatch.setattr(symbolic, "sympy_equal", fail)
    result = compute_score("m", "\\boxed{(x-1)(x+1)}", "x^2-1", symbolic=False, math_verify=False)
    assert (result["score"], result["match"]) == (0.0, "none")


def test_numeric_ground_truth_is_accepted() -> None:
    assert compute_score("m", "\\boxed{12}", 12)["score"] == 1.0


def test_a_box_longer_than_the_cap_is_no_answer() -> None:
    at_cap = "1" * MAX_BOX_CHARS
    assert compute_score("m", f"\\boxed{{{at_cap}}}", at_cap)["score"] == 1.0
    over = "1" * (MAX_BOX_CHARS + 1)
    result = compute_score("m", f"\\boxed{{{over}}}", over, format_score=0.1)
    assert result == {"score": 0.0, "acc": False, "pred": "", "match": "none"}
