"""A reward that kills its Ray node (issue 15 row 7), on a second node this
test starts and stops itself: its samples are re-run elsewhere, none is
marked a timeout, and the next batch returns."""

from __future__ import annotations

import time

import pytest

from verl_rewards import Scorer

pytestmark = pytest.mark.ray


def test_a_reward_that_kills_its_node_fails_no_good_sample_and_the_next_batch_returns(killable_second_node):
    # One 2-CPU worker fits on each node; only the second node's worker kills its node.
    cfg = {"plugin": "node_killer", "executor": "ray", "num_workers": 2, "worker_num_cpus": 2,
           "chunk_size": 2, "timeout_s": 10}
    rows = [{"data_source": "d", "solution_str": "kill_node", "ground_truth": "kill_node"}] * 12
    with Scorer.from_config(cfg) as scorer:
        raylets = killable_second_node.processes(b"raylet")
        assert raylets
        began = time.monotonic()
        first = scorer.score(rows)
        first_s = time.monotonic() - began
        assert not any(p in killable_second_node.processes() for p in raylets), "the node was not killed"
        began = time.monotonic()
        second = scorer.score(rows[:4])
        second_s = time.monotonic() - began
    assert first.statuses == ["ok"] * 12 and first.scores == [1.0] * 12
    assert first.metrics["worker_restarts"] >= 1
    assert second.statuses == ["ok"] * 4
    assert first_s < 90 and second_s < 30
