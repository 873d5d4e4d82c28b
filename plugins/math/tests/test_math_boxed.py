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
    # several boxes across connectors are one answer
    ("$\\boxed{(2, 2)}$ and $\\boxed{(6, 2)}$", "(6,2),(2,2)"),
    ("\\boxed{k = 45} \\quad \\text{and} \\quad \\boxed{n = 2}", "k=45, n=2"),
    ("\\boxed{1}, \\boxed{2}, \\boxed{3}", "\\{3, 2, 1\\}"),
    ("\\boxed{-5}", "\\boxed{-5} and \\boxed{-5}"),
    # named answers
    ("\\boxed{(3, 2)}", "(p,q)=(3,2)"),
    ("\\boxed{1}", "|AB|=1"),
    ("\\boxed{2x+3}", "f(x) = 2x + 3"),
    ("\\boxed{-5, \\frac{14}{3}}", "x = -5,\\ p = \\frac{14}{3}"),
    ("\\boxed{(5,2),(7,2)}", "p=5,q=2;p=7,q=2"),
    # relations, intervals, sets and lists
    ("\\boxed{5 \\geq x}", "x \\leq 5"),
    ("\\boxed{(0,1)}", "0<f(x)<1"),
    ("\\boxed{[2, \\infty)}", "k \\ge 2"),
    ("\\boxed{\\{-2021, 2021\\}}", "\\pm 2021"),
    ("\\boxed{1 \\pm \\sqrt{2}}", "1-\\sqrt{2}, 1+\\sqrt{2}"),
    ("\\boxed{(0;0;1), (1;0;0)}", "(1,0,0),(0,0,1)"),
    ("\\boxed{7, -2, \\text{ and } -5}", "-5,-2,7"),
    # matrices and systems
    ("\\boxed{\\begin{bmatrix} 1 & 0.5 \\\\ 1/3 & 4 \\end{bmatrix}}",
     "\\begin{pmatrix} 1 & \\frac12 \\\\ \\frac13 & 4 \\end{pmatrix}"),
    ("\\boxed{\\begin{pmatrix} 1 \\\\ 2 \\end{pmatrix}}", "[1, 2]"),
    # percent, mixed numbers, thousands, units, clock times, bases
    ("\\boxed{10\\%}", "0.1"),
    ("\\boxed{0.28}", "28\\%"),
    ("\\boxed{28 \\text{ percent}}", "28"),
    ("\\boxed{2\\frac58}", "2.625"),
    ("\\boxed{1 1/2}", "\\frac{3}{2}"),
    ("\\boxed{14{,}916}", "14916"),
    ("\\boxed{11,\\!111}", "11111"),
    ("\\boxed{10 \\text{ square units}}", "10"),
    ("\\boxed{10 square units}", "10"),
    ("\\boxed{08:34 \\text{P.M.}}", "20:34"),
    ("\\boxed{4210_{7}}", "4210_7"),
    # text and fractions spelled otherwise
    ("\\boxed{\\textnormal{Even}}", "\\text{Even}"),
    ("\\boxed{\\cfrac{1}{3}}", "1/3"),
    # an exact answer against a reference rounded (or truncated) to its last place
    ("\\boxed{\\sqrt{3}}", "1.732"),
    ("\\boxed{\\pi}", "3.14"),
    ("\\boxed{e}", "2.71"),
    ("\\boxed{2^6 3^5 5^4}", "2^6 \\cdot 3^5 \\cdot 5^4"),
]

NOT_EQUAL = [
    ("\\boxed{6}", "5"),
    # a rounded answer against an exact reference: the reference states every digit
    ("\\boxed{3.14}", "\\pi"),
    ("\\boxed{1.732}", "\\sqrt{3}"),
    ("\\boxed{3.1416}", "\\pi"),
    # an exact answer more than one unit of the reference's last place away
    ("\\boxed{\\pi}", "3.12"),
    ("\\boxed{\\sqrt{2}}", "1.40"),
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
    # a list is not a number, and boxes apart in a sentence are not one answer
    ("\\boxed{32, 349}", "32349"),
    ("\\boxed{1} no no no no no \\boxed{2}", "1, 2"),
    ("\\boxed{12:00}", "1:00"),
    ("\\boxed{10cm}", "10"),
    ("\\boxed{28}", "0.28"),  # a percentage is also its hundredth, a plain number is not
    ("\\boxed{1, 3, 2}", "\\{1, 2\\}"),
    ("\\boxed{x \\le 5}", "x \\ge 5"),
    ("\\boxed{\\sin(x)=\\frac{42}{59}}", "\\cos(x)=\\frac{42}{59}"),
    ("\\boxed{5x - 7y + 11z + 4 = 0}", "x + y - z + 2 = 0"),
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


def test_ordered_lists_makes_the_order_of_a_bare_list_count() -> None:
    assert compute_score("m", "\\boxed{10, 4, -2}", "4, 10, -2")["acc"] is True
    assert compute_score("m", "\\boxed{10, 4, -2}", "4, 10, -2", ordered_lists=True)["acc"] is False
    assert compute_score("m", "\\boxed{4, 10, -2}", "4, 10, -2", ordered_lists=True)["acc"] is True
    # Sets stay unordered and tuples ordered, whatever the option.
    assert compute_score("m", "\\boxed{\\{2, 1\\}}", "\\{1, 2\\}", ordered_lists=True)["acc"] is True
    assert compute_score("m", "\\boxed{(2, 1)}", "(1, 2)")["acc"] is False


def test_the_joined_boxes_are_reported_as_the_prediction() -> None:
    result = compute_score("m", "$\\boxed{(2, 2)}$ and $\\boxed{(6, 2)}$", "(2,2),(6,2)")
    assert result["pred"] == "(2, 2), (6, 2)"


def test_numeric_ground_truth_is_accepted() -> None:
    assert compute_score("m", "\\boxed{12}", 12)["score"] == 1.0


def test_a_box_longer_than_the_cap_is_no_answer() -> None:
    at_cap = "1" * MAX_BOX_CHARS
    assert compute_score("m", f"\\boxed{{{at_cap}}}", at_cap)["score"] == 1.0
    over = "1" * (MAX_BOX_CHARS + 1)
    result = compute_score("m", f"\\boxed{{{over}}}", over, format_score=0.1)
    assert result == {"score": 0.0, "acc": False, "pred": "", "match": "none"}
