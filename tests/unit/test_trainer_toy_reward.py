"""The toy plugin's reward (examples/toy_plugin), as the default run sees it."""

from __future__ import annotations

import pytest

# Installed by scripts/install.sh (pip install ./examples/toy_plugin); the default run needs it.
from verl_rewards_toy.copy_digits import compute_score


@pytest.mark.parametrize("response, score, position_acc", [
    ("4721", 1.0, 1.0),
    ("4720", 0.75 * 0.75 + 0.25, 0.75),
    ("47", 0.75 * 0.5 + 0.25 * 0.5, 0.5),
    ("47215555", 0.75, 1.0),
    ("1234", 0.25, 0.0),
    ("", 0.0, 0.0),
])
def test_partial_credit(response, score, position_acc):
    result = compute_score("toy_copy", response, "4721")
    assert result == {"score": pytest.approx(score), "position_acc": position_acc,
                      "exact": float(response == "4721")}


def test_length_weight_is_a_kwarg_and_checked():
    assert compute_score("toy_copy", "47215555", "4721", length_weight=0.0)["score"] == 1.0
    with pytest.raises(ValueError, match="length_weight"):
        compute_score("toy_copy", "1", "1", length_weight=2.0)


def test_empty_ground_truth_is_an_error():
    with pytest.raises(ValueError, match="ground_truth is empty"):
        compute_score("toy_copy", "1", "")


def test_declared_examples_hold_and_the_entry_point_resolves():
    from verl_rewards import Scorer
    from verl_rewards.metadata import metadata_of

    meta = metadata_of(compute_score)
    assert len(meta.examples) >= 3 and meta.data_sources == ("toy_copy",)
    for example in meta.examples:
        got = compute_score(example.data_source, example.solution_str, example.ground_truth)
        assert got["score"] == pytest.approx(example.expected, abs=example.tolerance)
    with Scorer.from_config({"plugin": "copy_digits", "executor": "local"}) as scorer:
        result = scorer.score([{"data_source": "toy_copy", "solution_str": "4720",
                                "ground_truth": "4721"}])
    assert result.scores == [0.8125]
    assert result.provenance.display_name == "copy_digits (verl-rewards-toy 0.1.0)"
