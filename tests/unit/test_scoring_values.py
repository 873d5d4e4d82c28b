"""Converting a reward's value to a score: what ``float()`` rejects fails that
sample only; bools of both kinds count as numbers (issue 15 row 5, "Also")."""

from __future__ import annotations

import numpy
import pytest

from verl_rewards import Scorer
from verl_rewards.errors import RewardValueError
from verl_rewards.scoring import validate

BATCH_REWARD = '''
import numpy

def compute_score(data_sources, solution_strs, ground_truths, extra_infos):
    special = {"huge": 10**400, "np_true": numpy.bool_(True), "true": True, "np_false": numpy.False_}
    return [special.get(s, float(s == g)) for s, g in zip(solution_strs, ground_truths)]
'''


@pytest.mark.parametrize("value", [10**400, -(10**400), {"score": 10**400}])
def test_a_value_float_overflows_on_is_a_reward_value_error(value):
    with pytest.raises(RewardValueError, match=r"sample 3: int .* cannot be a score \(OverflowError"):
        validate(value, "p", 3)


def test_a_value_too_long_to_print_is_still_named_by_type():
    with pytest.raises(RewardValueError, match="int <unprintable: ValueError> cannot be a score"):
        validate(10**5000, "p", 0)


@pytest.mark.parametrize("value, score", [(True, 1.0), (False, 0.0), (numpy.bool_(True), 1.0),
                                          (numpy.False_, 0.0), (numpy.float32(0.5), 0.5),
                                          (numpy.int64(2), 2.0)])
def test_bools_and_numpy_scalars_score_alike(value, score):
    assert validate(value, "p", 0) == (score, None)


@pytest.mark.parametrize("value, score", [(numpy.array(0.5), 0.5), (numpy.array(True), 1.0),
                                          ({"score": numpy.array(2)}, 2.0)])
def test_a_0d_array_scores_as_verls_managers_take_it(value, score):
    assert validate(value, "p", 0)[0] == score


def test_a_0d_torch_tensor_scores_and_a_1d_one_does_not():
    import torch

    assert validate(torch.tensor(0.25), "p", 0) == (0.25, None)
    with pytest.raises(RewardValueError, match="expected a number, got Tensor"):
        validate(torch.tensor([0.25]), "p", 0)


@pytest.mark.parametrize("value", ["1.0", b"1", None, [1.0], numpy.array([1.0, 2.0]),
                                   numpy.array("1.0")])
def test_non_numbers_are_rejected(value):
    with pytest.raises(RewardValueError, match="expected a number"):
        validate(value, "p", 0)


def test_a_batch_value_float_rejects_fails_only_its_sample_locally(reward_file):
    cfg = {"path": str(reward_file(BATCH_REWARD)), "executor": "local"}
    texts = ["a", "huge", "np_true", "true", "np_false", "b"]
    with Scorer.from_config(cfg) as scorer:
        result = scorer.score([{"data_source": "d", "solution_str": t, "ground_truth": "a"} for t in texts])
    assert result.statuses == ["ok", "failed", "ok", "ok", "ok", "ok"]
    assert result.scores == [1.0, 0.0, 1.0, 1.0, 0.0, 0.0]
    assert "OverflowError" in result.errors[1] and "sample 1" in result.errors[1]
