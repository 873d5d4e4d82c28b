"""repetition_penalty: open-r1's n-gram repetition penalty, on its own test cases and by hand."""

from __future__ import annotations

import pytest
from verl_rewards_format.repetition import compute_score, repetition_penalty


@pytest.mark.parametrize(
    ("text", "ngram_size", "max_penalty", "expected"),
    [  # open-r1 tests/test_rewards.py::TestRepetitionPenaltyReward
        ("this is a test sentence", 2, -1.0, 0.0),
        ("this this this this this", 2, -1.0, -0.75),
        ("this is a this is a test", 2, -1.0, -1 / 3),
        ("this is a test", 3, -0.5, 0.0),
        ("test test test test", 3, -0.5, -0.25),
        ("", 2, -1.0, 0.0),
        ("this is a this is a test", 3, -2.0, -0.4),
        ("word", 3, -1.0, 0.0),
        ("two words", 3, -1.0, 0.0),
        ("three different words", 3, -1.0, 0.0),
        ("word word word word", 3, -1.0, -0.5),
        ("one two one two", 3, -1.0, 0.0),
        ("A B C A B", 3, -0.5, 0.0),
        ("A B C A B C", 3, -1.0, -0.25),
        ("A B C A B C E F G A B C A B C", 3, -1.0, -5 / 13),
        ("A B C D E F G H I J K L", 3, -1.0, 0.0),
        # by hand: 5 bigrams (a b)(b a)(a b)(b a)(a b), 2 distinct: (1 - 2/5) * -1
        ("a b a b a b", 2, -1.0, -0.6),
        ("x\ty\nx  y", 1, -1.0, -0.5),  # unigrams x y x y: (1 - 2/4) * -1; any whitespace splits
    ],
)
def test_the_penalty_equals_open_r1s(text: str, ngram_size: int, max_penalty: float, expected: float) -> None:
    assert repetition_penalty(text, ngram_size, max_penalty) == pytest.approx(expected)


def test_case_does_not_matter() -> None:
    assert repetition_penalty("This is A Test", 2) == repetition_penalty("this IS a test", 2)


def test_no_repetition_is_zero_not_minus_zero() -> None:
    assert str(compute_score("", "a b c d", "")["score"]) == "0.0"


@pytest.mark.parametrize(
    ("ngram_size", "max_penalty", "message"),
    [(2, 1.0, "max_penalty 1.0 should not be positive"), (2, 1.5, "max_penalty 1.5 should not be positive"),
     (0, -1.0, "ngram_size must be at least 1, not 0")],
)
def test_bad_settings_are_errors(ngram_size: int, max_penalty: float, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        compute_score("", "a b c", "", ngram_size=ngram_size, max_penalty=max_penalty)
    assert str(caught.value) == message
