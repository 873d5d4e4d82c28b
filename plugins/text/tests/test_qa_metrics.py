"""SQuAD normalisation, exact match and token F1, hand-computed."""

from __future__ import annotations

import pytest
from verl_rewards_text.metrics import exact_match, normalize_answer, token_f1


@pytest.mark.parametrize(
    ("text", "normalized"),
    [
        ("The  Eiffel Tower!", "eiffel tower"),
        ("an apple, a pear", "apple pear"),
        ("theatre", "theatre"),
        ("U.S.A.", "usa"),
        ("  \tA\n", ""),
        ("Café  «Noir»", "café «noir»"),
    ],
)
def test_normalisation_lowercases_and_drops_punctuation_articles_and_extra_space(text: str, normalized: str) -> None:
    assert normalize_answer(text) == normalized


def test_exact_match_is_the_best_over_gold_answers() -> None:
    assert exact_match("the Tower", ["Paris", "tower"]) == 1.0
    assert exact_match("Tower of Paris", ["Paris", "tower"]) == 0.0


@pytest.mark.parametrize(
    ("prediction", "golds", "f1"),
    [
        ("Barack Obama", ["Barack Obama"], 1.0),
        ("President Barack Obama", ["Barack Obama"], 0.8),  # p 2/3, r 1
        ("Obama", ["Barack Obama", "Barack"], 2 / 3),  # p 1, r 1/2 against the first
        ("x y y", ["y z"], 0.4),  # common 1: p 1/3, r 1/2
        ("b b", ["b b c"], 0.8),  # common 2: p 1, r 2/3
        ("George Bush", ["Barack Obama"], 0.0),
        ("the", ["a"], 1.0),  # both empty after normalisation: agreeing on nothing
        ("the", ["Obama"], 0.0),
    ],
)
def test_token_f1_is_squads(prediction: str, golds: list[str], f1: float) -> None:
    assert token_f1(prediction, golds) == pytest.approx(f1)
