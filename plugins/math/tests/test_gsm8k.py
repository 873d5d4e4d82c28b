"""gsm8k: answer extraction in strict and flexible mode, and the scores it leads to."""

from __future__ import annotations

from decimal import Decimal
from typing import Any

import pytest
from verl_rewards_math.gsm8k import compute_score, extract_answer, reference_answer


def score(response: str, truth: str = "72", **kwargs: Any) -> float:
    return float(compute_score("openai/gsm8k", response, truth, None, **kwargs)["score"])


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("Natalia sold 48/2 = 24 clips in May.\n48 + 24 = 72\n#### 72", "72"),
        ("#### 1,080", "1080"),
        ("#### $1,080.", "1080"),
        ("#### \\$18", "18"),
        ("####72", "72"),
        ("#### 72 clips", "72"),
        ("#### -5", "-5"),
        ("#### 3.50", "3.5"),
        ("#### 0.5", "0.5"),
        ("#### 25%", "25"),
        ("#### 10\n\nI hope this helps! #### 12", "12"),
    ],
)
def test_lenient_reads_the_number_after_the_last_marker(response: str, expected: str) -> None:
    assert extract_answer(response, "lenient") == Decimal(expected)


@pytest.mark.parametrize(
    "response",
    ["The answer is 72.", "#### seventy-two", "####", "#### the answer is 72", ""],
)
def test_lenient_finds_nothing_without_a_number_right_after_the_marker(response: str) -> None:
    assert extract_answer(response, "lenient") is None


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("So she has 72 clips in total.", "72"),
        ("The answer is $1,234.56.", "1234.56"),
        ("He loses 5 dollars, so the change is -5.", "-5"),
        ("x = \u22127", "-7"),
        ("Pages 3-5 are torn; she read 40 pages.", "40"),
        ("The final answer is \\boxed{1,000}.", "1000"),
        ("It takes .5 hours", "0.5"),
        ("Step 1: 2 + 3 = 5\nStep 2: 5 * 4 = 20 apples", "20"),
    ],
)
def test_flexible_takes_the_last_number_in_the_text(response: str, expected: str) -> None:
    assert extract_answer(response, "flexible") == Decimal(expected)


@pytest.mark.parametrize(
    ("response", "method", "expected"),
    [
        ("Reasoning...\n#### 72", "strict", 1.0),
        ("#### 72.00", "strict", 0.0),  # verl compares text
        ("#### 72.00", "lenient", 1.0),
        ("####72", "strict", 0.0),
        ("####72", "lenient", 1.0),
        ("#### 71", "strict", 0.0),
        ("The answer is 72", "strict", 0.0),
        ("The answer is 72", "flexible", 1.0),
        ("There were 72 at first, 70 left", "flexible", 0.0),
        ("no digits at all", "flexible", 0.0),
    ],
)
def test_score_is_one_only_for_the_right_answer(response: str, method: str, expected: float) -> None:
    assert score(response, method=method) == expected


def test_format_score_rewards_a_wrong_but_well_formed_answer() -> None:
    assert score("#### 71", format_score=0.1) == 0.1
    assert score("The answer is 71", format_score=0.1) == 0.0
    assert score("The answer is 71", method="flexible", format_score=0.1) == 0.1


def test_custom_score_for_a_right_answer() -> None:
    assert score("#### 72", score=2.0) == 2.0


def test_extra_info_reports_accuracy_and_prediction() -> None:
    assert compute_score("gsm8k", "#### 1,080", "1080") == {"score": 1.0, "acc": True, "pred": "1080"}
    lenient = compute_score("gsm8k", "#### $1,080.", "1080", method="lenient")
    assert lenient == {"score": 1.0, "acc": True, "pred": "1080"}
    assert compute_score("gsm8k", "none", "1080") == {"score": 0.0, "acc": False, "pred": ""}


@pytest.mark.parametrize(
    ("truth", "expected"),
    [
        ("72", "72"),
        ("1,080", "1080"),
        ("She makes 9 * 2 = $18 a day.\n#### 18", "18"),
        (42, "42"),
        ("-3", "-3"),
    ],
)
def test_reference_answer_accepts_plain_and_full_gsm8k_solutions(truth: str | int, expected: str) -> None:
    assert reference_answer(truth) == Decimal(expected)


def test_a_reference_without_a_number_is_an_error() -> None:
    with pytest.raises(ValueError, match="no number"):
        compute_score("gsm8k", "#### 1", "n/a")


@pytest.mark.parametrize("method", ["strict", "lenient", "flexible"])
def test_a_reference_without_a_number_is_an_error_even_when_the_response_has_none(method: str) -> None:
    with pytest.raises(ValueError, match="no number"):
        compute_score("gsm8k", "I do not know.", "n/a", method=method)


@pytest.mark.parametrize(
    ("response", "expected"),
    [
        ("#### 1,0800", "1"),
        ("#### 1,000,0000", "1"),
        ("#### 1,080,000.5", "1080000.5"),
        ("#### 1,080, then 5", "1080"),
    ],
)
def test_thousands_groups_must_end_the_integer_part(response: str, expected: str) -> None:
    assert extract_answer(response, "lenient") == Decimal(expected)


LONG = "1234567890" * 4


@pytest.mark.parametrize("sign", ["-", "\u2212", "$-"])
def test_long_numbers_keep_every_digit(sign: str) -> None:
    assert extract_answer(f"#### {sign}{LONG}", "lenient") == Decimal("-" + LONG)
    assert extract_answer(f"so {sign}{LONG}.{LONG}", "flexible") == Decimal(f"-{LONG}.{LONG}")


def test_the_prediction_is_spelled_with_every_digit() -> None:
    result = compute_score("gsm8k", f"#### {LONG}0", f"{LONG}0")
    assert result == {"score": 1.0, "acc": True, "pred": f"{LONG}0"}
    assert compute_score("gsm8k", f"#### -{LONG}.500", "0", method="lenient")["pred"] == f"-{LONG}.5"


def test_an_unknown_method_is_an_error() -> None:
    with pytest.raises(ValueError, match="'strict', 'lenient' or 'flexible'"):
        compute_score("gsm8k", "#### 1", "1", method="loose")  # type: ignore[arg-type]


def test_extract_answer_points_strict_readers_at_strict_answer():
    from verl_rewards_math.gsm8k import strict_answer

    with pytest.raises(ValueError, match=r"for 'strict', see strict_answer"):
        extract_answer("#### 72", "strict")  # type: ignore[arg-type]
    assert strict_answer("so #### 72") == "72"
