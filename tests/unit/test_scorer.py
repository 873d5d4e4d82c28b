from __future__ import annotations

from concurrent.futures import Future

import pytest

from verl_rewards import BatchResult, RewardError, Sample, Scorer
from verl_rewards.errors import ExecutorError, SampleError

REWARD = '''
def compute_score(data_source, solution_str, ground_truth, extra_info=None, bonus=0.0):
    if solution_str == "raise":
        raise ValueError("no")
    return {"score": float(solution_str == ground_truth) + bonus, "len": len(solution_str)}
'''


@pytest.fixture
def local_cfg(reward_file):
    return {"path": str(reward_file(REWARD)), "executor": "local", "kwargs": {"bonus": 0.5}}


def _rows(*texts):
    return [{"data_source": "d", "solution_str": t, "ground_truth": "a"} for t in texts]


def test_score_keeps_input_order_counts_and_provenance(local_cfg):
    with Scorer.from_config(local_cfg) as scorer:
        result = scorer.score(_rows("a", "b", "raise", "a"))
    assert result.scores == [1.5, 0.5, 0.0, 1.5]
    assert result.errors[:2] == [None, None] and result.errors[3] is None
    assert result.errors[2].startswith(f"ValueError: no (at {local_cfg['path']}:")
    assert result.extra_info == {"len": [1, 1, None, 1]}
    assert (result.n_ok, result.n_failed, result.n_timed_out) == (3, 1, 0)
    assert result.provenance.kind == "file"
    assert result.provenance.source_hash and result.provenance.path == local_cfg["path"]
    assert result.metrics["latency_s"] > 0


def test_error_score_is_given_to_failed_samples(local_cfg):
    with Scorer.from_config({**local_cfg, "error_score": -1.0}) as scorer:
        assert scorer.score(_rows("raise")).scores == [-1.0]


def test_submit_returns_a_future_of_the_batch_result(local_cfg):
    with Scorer.from_config(local_cfg) as scorer:
        future = scorer.submit([Sample("d", "a", "a")])
        assert isinstance(future, Future)
        result = future.result(timeout=10)
    assert isinstance(result, BatchResult) and result.scores == [1.5]


def test_on_error_raise_raises_reward_error(local_cfg):
    with Scorer.from_config({**local_cfg, "on_error": "raise"}) as scorer:
        with pytest.raises(RewardError, match="failed on sample 1: ValueError: no"):
            scorer.score(_rows("a", "raise"))


def test_malformed_sample_names_its_index(local_cfg):
    with Scorer.from_config(local_cfg) as scorer:
        with pytest.raises(SampleError, match="sample 1: missing required field"):
            scorer.score([_rows("a")[0], {"solution_str": "x"}])


def test_closed_scorer_refuses_work(local_cfg):
    scorer = Scorer.from_config(local_cfg)
    scorer.close()
    with pytest.raises(ExecutorError, match="is closed"):
        scorer.score(_rows("a"))


def test_plugin_scored_by_name_from_config_with_overrides(testkit):
    with Scorer.from_config({"executor": "local"}, ["reward.plugin=exact_match", "reward.kwargs.bonus=1"]) as scorer:
        result = scorer.score(_rows(" a ", "b"))
    assert result.scores == [2.0, 1.0]
    assert result.provenance.display_name == f"exact_match ({testkit.label})"


def test_on_error_skip_marks_failed_samples_untrainable(local_cfg):
    with Scorer.from_config({**local_cfg, "on_error": "skip"}) as scorer:
        result = scorer.score(_rows("a", "raise"))
    assert result.trainable == [True, False]
    assert result.statuses == ["ok", "failed"]


def test_info_is_read_once_at_construction_and_also_for_a_scorer_built_from_a_spec():
    from verl_rewards.spec import spec_from_config

    built = Scorer.from_config({"plugin": "exact_match", "executor": "local"})
    assert (built.info.shape, built.info.is_async, built.info.accepted_kwargs) == ("sample", False, ("bonus",))
    direct = Scorer(built.ref, built.config)  # e.g. in a process the reference was sent to
    assert direct.info == built.info and direct.key == built.key
    assert spec_from_config(built.config) == built.ref


def test_unplaceable_names_the_keys_to_change():
    scorer = Scorer.from_config({"plugin": "exact_match", "num_workers": 3})
    assert scorer.unplaceable({"CPU": 8.0}) is None
    assert scorer.unplaceable({"CPU": 2.0}).startswith("3 worker(s) x 1 CPU = 3 but the cluster has 2. "
                                                      "Lower reward.num_workers")
