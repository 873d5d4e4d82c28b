"""length_penalty and how response length is measured."""

from __future__ import annotations

import logging

import pytest
from verl_rewards_format import length
from verl_rewards_format.length import response_length
from verl_rewards_format.length_penalty import compute_score, length_penalty


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 0.0), (100, 0.0), (125, -0.25), (150, -0.5), (200, -1.0), (10_000, -1.0)],
)
def test_penalty_is_zero_to_target_then_linear_to_minus_factor(length: int, expected: float) -> None:
    assert length_penalty(length, target_length=100, max_length=200, factor=1.0) == pytest.approx(expected)


def test_factor_scales_the_penalty() -> None:
    assert length_penalty(150, 100, 200, factor=0.2) == pytest.approx(-0.1)


def test_no_penalty_is_plain_zero_not_negative_zero() -> None:
    assert str(length_penalty(10, 100, 200, 1.0)) == "0.0"


@pytest.mark.parametrize(("target", "maximum"), [(200, 200), (300, 200), (-1, 200)])
def test_inconsistent_lengths_are_an_error(target: int, maximum: int) -> None:
    with pytest.raises(ValueError, match="target_length < max_length"):
        length_penalty(10, target, maximum, 1.0)


def test_reward_measures_characters_without_token_counts() -> None:
    result = compute_score("any", "x" * 150, "", None, target_length=100, max_length=200)
    assert result == {"score": -0.5, "length": 150, "length_unit": "chars"}


@pytest.mark.parametrize("key", ["response_length", "num_tokens", "valid_response_length"])
def test_reward_prefers_token_counts_from_extra_info(key: str) -> None:
    result = compute_score("any", "x", "", {key: 150}, target_length=100, max_length=200)
    assert result == {"score": -0.5, "length": 150, "length_unit": "tokens"}


def test_unit_chars_ignores_token_counts() -> None:
    assert response_length("abc", {"num_tokens": 7}, "chars") == (3, "chars")


def test_unit_tokens_requires_a_token_count() -> None:
    with pytest.raises(ValueError, match="response_length"):
        response_length("abc", {}, "tokens")


@pytest.mark.parametrize("bad", [True, -1, 2.5, "12"])
def test_a_bad_token_count_is_an_error(bad: object) -> None:
    with pytest.raises(ValueError, match="num_tokens"):
        response_length("abc", {"num_tokens": bad})


def test_integral_float_token_count_is_accepted() -> None:
    assert response_length("abc", {"num_tokens": 12.0}) == (12, "tokens")


def test_unknown_unit_is_an_error() -> None:
    with pytest.raises(ValueError, match="unit must be"):
        response_length("abc", None, "words")  # type: ignore[arg-type]


def test_auto_falling_back_to_characters_warns_once_per_process(
    monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    monkeypatch.setattr(length, "_warned", False, raising=False)
    with caplog.at_level(logging.WARNING, logger="verl_rewards_format.length"):
        assert response_length("abc", {"num_tokens": 2}) == (2, "tokens")
        assert response_length("abc", None, "chars") == (3, "chars")
        assert caplog.records == []
        for extra_info in (None, {}, {"other": 1}):
            assert response_length("abc", extra_info) == (3, "chars")
    [record] = caplog.records
    assert "characters" in record.getMessage() and "response_length" in record.getMessage()
