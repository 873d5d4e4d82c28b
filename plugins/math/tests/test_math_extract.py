"""Which part of a response is the answer: ``extract=boxed`` (the box) and ``extract=last_math``."""

from __future__ import annotations

import time

import pytest
from verl_rewards_math.extract import Found, answer_side, math_spans, reference_answer, response_answer
from verl_rewards_math.math_boxed import compute_score

LONG_SOLUTION = (
    "We can rewrite the equation as $2^{4x} = 2^{32}$. Since the bases are equal, $4x = 32$. "
    "Final Answer: The final answer is $14{,}916$. I hope it is correct. Note: divisibility "
    "by 3 and 4 was checked."
)


@pytest.mark.parametrize(("response", "answer"), [
    # a box is the answer in both modes, with the same meaning
    ("So $x = \\boxed{5}$. Final Answer: 7", "5"),
    ("$\\boxed{(2,2)}$ and $\\boxed{(6,2)}$", "(2,2), (6,2)"),
    # a final-answer phrase: what directly follows it...
    (LONG_SOLUTION, "14{,}916"),
    ("Therefore, answer is 189.", "189"),
    ("Answer \\[ 9 \\]", "9"),
    ("Answer: $\\frac{10}{9}$", "\\frac{10}{9}"),
    ("**Final Answer:** $x \\neq 3$", "x \\neq 3"),
    # ...else the last math or number in the rest of its sentence
    ("Final Answer: The largest $n$ is 34.", "34"),
    ("Final Answer: The volume of $ABCDEFGH$ is 120. I hope it is correct.", "120"),
    ("The final answer is $7$. I hope the answer is correct.", "7"),
    # a response that is an answer is all of it
    ("\\frac{10}{9}", "\\frac{10}{9}"),
    ("10 weeks", "10 weeks"),
    ("x = 1, y = 2, z = 3", "x = 1, y = 2, z = 3"),
    ("$1$ and $2$ and $3$", "$1$ and $2$ and $3$"),
    ("7, -2, \\text{ and } -5", "7, -2, \\text{ and } -5"),
    # else the last math or plain number
    ("So the ordered pair that solves the system is $(7, 6)$. <|im_start|>user", "(7, 6)"),
    ("Therefore, the probability that Alice wins is 2/3. <|im_start|>user", "2/3"),
    ("the number is not 10 which is 1,000.99€", "1,000.99"),
    ("The position error increases by 100%.", "100%"),
    ("We find that $x \\neq 3$.", "x \\neq 3"),
    ("Thus $x <= 2$ is our answer.", "x <= 2"),
    ("The sum is \\[\n1 + 2 = 3\n\\] in all.", "1 + 2 = 3"),
])
def test_last_math_reads_the_answer_a_response_gives(response: str, answer: str) -> None:
    found = response_answer(response, "last_math")
    assert found is not None and found.text == answer


@pytest.mark.parametrize("response", [
    "The answer is 5.",
    "Final Answer: The final answer is $14{,}916$.",
    "We find that $x \\neq 3$.",
    "",
])
def test_boxed_reads_nothing_without_a_box(response: str) -> None:
    assert response_answer(response, "boxed") is None


@pytest.mark.parametrize("response", [
    "So the answer is \\boxed{12",  # cut off inside the box
    "Nothing here is an answer at all.",
    "   ",
])
def test_last_math_finds_no_answer_in_a_cut_off_box_or_plain_prose(response: str) -> None:
    assert response_answer(response, "last_math") is None


def test_an_inline_formula_never_spans_lines_but_a_displayed_one_may() -> None:
    assert [span[2] for span in math_spans("a $x$ b $$\n7\n$$ \\(\n1\n\\) \\[\n2\n\\]")] == ["x", "\n7\n", "\n2\n"]
    assert [span[2] for span in math_spans("a $x$ b $\n9\n$ c")] == ["x"]
    assert [span[2] for span in math_spans("Answer $ \\frac{1}{2} \\$ = 3 $")] == [" \\frac{1}{2} \\$ = 3 "]
    assert [span[2] for span in math_spans("$a$$b$")] == ["a", "b"]


@pytest.mark.parametrize(("pred", "reference", "side"), [
    (Found("\\frac{1}{2} \\$ = \\frac{10}{9}", "marker"), "10/9", "\\frac{10}{9}"),
    (Found("100 - 10 = 90", "last"), "90", "90"),
    (Found("2x + 4y = 6", "last"), "x + 2y = 3", "2x + 4y = 6"),  # the reference is an equation too
    (Found("x \\le 5", "last"), "5", "x \\le 5"),  # a relation is no chain of equalities
    (Found("a = b = 90", "box"), "90", "a = b = 90"),  # a box means what it says
    (Found("f(x) = 2x", "whole"), "2x", "f(x) = 2x"),
])
def test_a_chain_of_equalities_read_without_a_box_gives_its_last_side(pred: Found, reference: str, side: str) -> None:
    assert answer_side(pred, reference) == side


def test_the_reference_is_its_box_or_as_written_and_with_last_math_read_like_a_response() -> None:
    solution = "Adding, $(A, B) = \\boxed{(-6, 10)}.$"
    assert reference_answer(solution, "boxed") == reference_answer(solution, "last_math") == "(-6, 10)"
    assert reference_answer("$125$ miles", "last_math") == "$125$ miles"
    prose = "The overall loss is $28 \\%$. Final Answer: The final answer is $28 \\%$. I hope it is correct."
    assert reference_answer(prose, "boxed") == prose
    assert reference_answer(prose, "last_math") == "28 \\%"


@pytest.mark.parametrize(("response", "reference", "boxed", "last_math"), [
    ("The answer is 5.", "5", 0.0, 1.0),
    (LONG_SOLUTION, "14916", 0.0, 1.0),
    ("Answer $ \\frac{1}{2} \\$ = \\frac{10}{9} $", "$10/9$", 0.0, 1.0),
    ("The solution is $x != 5$", "$x \\neq 5$", 0.0, 1.0),
    ("Therefore $x \\gt 5$ is the solution.", "$x > 5$", 0.0, 1.0),
    ("Therefore $x < 5$ is the solution.", "$x > 5$", 0.0, 0.0),
    ("So $x = \\boxed{4}$. Final Answer: The final answer is $5$.", "5", 0.0, 0.0),  # the box is the answer
    ("\\boxed{5}", "5", 1.0, 1.0),
])
def test_math_boxed_scores_by_the_extract_mode_chosen(response: str, reference: str, boxed: float,
                                                      last_math: float) -> None:
    assert compute_score("t", response, reference, math_verify=False, symbolic=False)["score"] == boxed
    found = compute_score("t", response, reference, extract="last_math", math_verify=False, symbolic=False)
    assert found["score"] == last_math


def test_an_unknown_extract_mode_is_an_error_naming_the_modes() -> None:
    with pytest.raises(ValueError, match="extract must be one of boxed, last_math, not 'last'"):
        compute_score("t", "\\boxed{5}", "5", extract="last")


@pytest.mark.parametrize("unit", ["$", "$$", "\\(", "\\[", "answer: ", "answer is 1 ", "Final answer: x ",
                                  "1,", "1. ", "$1$ ", "\\$", "\n", "\\boxed{", "=", "a ", "answer $x$ . "])
def test_last_math_reads_a_megabyte_of_hostile_text_in_one_pass(unit: str) -> None:
    text = (unit * ((1 << 20) // len(unit) + 1))[: 1 << 20]
    started = time.monotonic()
    compute_score("t", text, "5", extract="last_math", math_verify=False, symbolic=False)
    assert time.monotonic() - started < 10.0  # linear: about a second here; quadratic: hours
