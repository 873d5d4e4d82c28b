"""BatchResult's own projections: a sample's extras and row, a slice."""

from __future__ import annotations

import math

from verl_rewards.outcomes import Outcome
from verl_rewards.results import Provenance, assemble, finite

PROVENANCE = Provenance("file", "f", "f (file x)")
RESULT = assemble([Outcome(1.0, {"acc": 1.0}, None, "ok"), Outcome(None, None, "ValueError: no", "failed"),
                   Outcome(0.5, {"acc": 0.0, "pred": "7"}, None, "ok")], PROVENANCE, -1.0, {"n": 3.0})


def test_extras_are_none_where_a_sample_has_none_and_follow_the_keys_asked_for():
    assert RESULT.extras(0) == {"acc": 1.0, "pred": None}
    assert RESULT.extras(1, ["acc", "declared_only"]) == {"acc": None, "declared_only": None}


def test_a_row_holds_score_error_and_extras():
    assert RESULT.row(1) == {"score": -1.0, "error": "ValueError: no", "acc": None, "pred": None}
    assert RESULT.rows()[2] == {"score": 0.5, "error": None, "acc": 0.0, "pred": "7"}


def test_a_slice_is_a_result_of_its_own():
    part = RESULT.slice(1, 3)
    assert (part.scores, part.errors, part.statuses) == ([-1.0, 0.5], ["ValueError: no", None],
                                                         ["failed", "ok"])
    assert part.extra_info == {"acc": [None, 0.0], "pred": [None, "7"]}
    assert (part.provenance, part.metrics, part.trainable) == (PROVENANCE, {"n": 3.0}, [False, True])


def test_finite_turns_nan_and_infinities_into_none_at_any_depth():
    value = {"a": math.nan, "b": [1.0, math.inf, ({"c": -math.inf},)], "d": "nan", "e": 2}
    assert finite(value) == {"a": None, "b": [1.0, None, [{"c": None}]], "d": "nan", "e": 2}
