"""The gold answers a ground truth holds, in each shape datasets store them."""

from __future__ import annotations

import numpy as np
import pytest
from verl_rewards_text.golds import gold_answers


@pytest.mark.parametrize(
    ("ground_truth", "expected"),
    [
        ("Paris", ("Paris",)),
        (["Paris", "City of Paris"], ("Paris", "City of Paris")),
        (("Paris",), ("Paris",)),
        ('["Paris", "City of Paris"]', ("Paris", "City of Paris")),
        ('  {"target": ["Paris"]} ', ("Paris",)),
        ({"target": ["Paris", "Lutetia"]}, ("Paris", "Lutetia")),
        ({"target": np.array(["Paris", "Lutetia"], dtype=object)}, ("Paris", "Lutetia")),
        ({"target": "Paris"}, ("Paris",)),
        (np.array(["Paris"]), ("Paris",)),
        ([1969, 2.5], ("1969", "2.5")),
        ("[citation needed]", ("[citation needed]",)),
        ('{"answer": "x"}', ('{"answer": "x"}',)),
        ("[1, 2]", ("1", "2")),
    ],
)
def test_every_shape_gives_its_gold_answers(ground_truth: object, expected: tuple[str, ...]) -> None:
    assert gold_answers(ground_truth) == expected


@pytest.mark.parametrize(
    ("ground_truth", "message"),
    [
        (None, "ground_truth must be a gold answer, a list of them or {'target': [...]}, not NoneType"),
        ([], "ground_truth holds no gold answer (an empty list)"),
        ("[]", "ground_truth holds no gold answer (an empty list)"),
        ({"answers": ["x"]}, "ground_truth mapping has no 'target' key (keys: ['answers'])"),
        (["Paris", None], "a gold answer must be text (or a number), not NoneType: None"),
        ([True], "a gold answer must be text (or a number), not bool: True"),
    ],
)
def test_a_ground_truth_without_gold_answers_is_an_error(ground_truth: object, message: str) -> None:
    with pytest.raises(ValueError) as caught:
        gold_answers(ground_truth)
    assert str(caught.value) == message
