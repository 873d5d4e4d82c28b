"""overlong_penalty: DAPO's min(-(L - (max_len - buffer)) / buffer * factor, 0)."""

from __future__ import annotations

from typing import Any

import pytest
from verl_rewards_format.overlong import compute_score, overlong_penalty


@pytest.mark.parametrize(
    ("length", "expected"),
    [(0, 0.0), (800, 0.0), (801, -0.005), (850, -0.25), (900, -0.5), (1000, -1.0), (1100, -1.5)],
)
def test_penalty_follows_the_dapo_formula(length: int, expected: float) -> None:
    assert overlong_penalty(length, max_length=1000, buffer_length=200, factor=1.0) == pytest.approx(expected)


def test_factor_scales_the_penalty() -> None:
    assert overlong_penalty(1000, 1000, 200, factor=0.5) == pytest.approx(-0.5)


def test_dapo_defaults() -> None:
    assert compute_score("any", "x", "", {"response_length": 20480})["score"] == pytest.approx(-1.0)
    assert compute_score("any", "x", "", {"response_length": 16384})["score"] == 0.0
    assert compute_score("any", "x", "", {"response_length": 18432})["score"] == pytest.approx(-0.5)


@pytest.mark.parametrize(("buffer", "maximum"), [(0, 1000), (1001, 1000), (-5, 1000)])
def test_inconsistent_buffer_is_an_error(buffer: int, maximum: int) -> None:
    with pytest.raises(ValueError, match="buffer_length"):
        overlong_penalty(10, maximum, buffer, 1.0)


def test_tokens_from_extra_info_win_over_characters() -> None:
    kwargs: dict[str, Any] = {"max_length": 1000, "buffer_length": 200}
    assert compute_score("any", "x" * 1000, "", None, **kwargs) == {
        "score": -1.0,
        "length": 1000,
        "length_unit": "chars",
    }
    assert compute_score("any", "x" * 1000, "", {"num_tokens": 900}, **kwargs) == {
        "score": -0.5,
        "length": 900,
        "length_unit": "tokens",
    }
