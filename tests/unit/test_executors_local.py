"""The local executor scores on a thread of its own: a reward's own SystemExit or
KeyboardInterrupt is its sample's failure (issue 26, item 1), the thread ends with the
scorer, and a forked child gets its own."""

from __future__ import annotations

import logging
import multiprocessing
import threading

import pytest

from verl_rewards import Scorer
from verl_rewards.errors import PluginLoadError

REWARDS = '''
import sys
import threading

def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    if solution_str == "interrupt":
        raise KeyboardInterrupt("the reward's own")
    if solution_str == "exit":
        sys.exit("bye")
    return float(solution_str == ground_truth)

class ExitsWhileBuilding:
    def __init__(self):
        sys.exit(2)
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return 1.0

meet = threading.Barrier(2, timeout=20)

def together(data_source, solution_str, ground_truth, extra_info=None):
    meet.wait()  # returns only when two calls run at once
    return 1.0

class ExitsWhileClosing:
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return 1.0
    def close(self):
        raise SystemExit(5)
'''


def _rows(*texts: str) -> list[dict]:
    return [{"data_source": "d", "solution_str": t, "ground_truth": "1"} for t in texts]


def _local(path, name: str = "compute_score") -> Scorer:
    return Scorer.from_config({"path": str(path), "name": name, "executor": "local"})


def _runner_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "verl-rewards-local"]


def test_a_reward_interrupting_or_exiting_fails_its_sample_through_the_scorer(reward_file):
    path = reward_file(REWARDS, "exits.py")
    with _local(path) as scorer:  # called from the main thread, as the CLI does
        result = scorer.score(_rows("1", "interrupt", "exit", "0"))
    assert result.statuses == ["ok", "failed", "failed", "ok"]
    assert result.errors[1] == f"KeyboardInterrupt: the reward's own (at {path}:7 in compute_score)"
    assert result.errors[2] == f"SystemExit: bye (at {path}:9 in compute_score)"


def test_a_class_reward_exiting_in_its_constructor_is_a_load_error(reward_file):
    path = reward_file(REWARDS, "exits.py")
    with pytest.raises(PluginLoadError) as raised:
        _local(path, "ExitsWhileBuilding").start()
    assert str(raised.value).endswith("ExitsWhileBuilding(...) raised: SystemExit: 2")


def test_a_class_reward_exiting_in_close_is_logged_and_the_scorer_closes(reward_file, caplog):
    path = reward_file(REWARDS, "exits.py")
    with caplog.at_level(logging.WARNING, "verl_rewards"), _local(path, "ExitsWhileClosing") as scorer:
        assert scorer.score(_rows("1")).scores == [1.0]
    assert any(r.getMessage().endswith("failed: SystemExit: 5") for r in caplog.records)


@pytest.mark.parametrize("name", ["compute_score", "ExitsWhileBuilding"])
def test_closing_a_local_scorer_or_failing_to_start_it_ends_its_thread(reward_file, name):
    before = set(_runner_threads())
    scorer = _local(reward_file(REWARDS, "exits.py"), name)
    try:
        with scorer:
            scorer.score(_rows("1"))
    except PluginLoadError:
        pass
    (thread,) = set(_runner_threads()) - before
    thread.join(10)
    assert not thread.is_alive()


def _score_in_child(scorer: Scorer, conn) -> None:
    conn.send(scorer.score(_rows("1", "exit")).statuses)


def test_a_scorer_started_before_a_fork_scores_in_the_child(reward_file):
    with _local(reward_file(REWARDS, "exits.py")) as scorer:
        scorer.score(_rows("1"))  # the parent's thread exists; the child has none
        parent, child = multiprocessing.get_context("fork").Pipe()
        process = multiprocessing.get_context("fork").Process(target=_score_in_child, args=(scorer, child))
        process.start()
        assert parent.poll(60)
        assert parent.recv() == ["ok", "failed"]
        process.join(10)


def test_callers_in_several_threads_score_at_once_as_in_their_own_threads(reward_file):
    results: list[list[str]] = []
    with _local(reward_file(REWARDS, "exits.py"), "together") as scorer:
        callers = [threading.Thread(target=lambda: results.append(scorer.score(_rows("1")).statuses))
                   for _ in range(2)]
        for caller in callers:
            caller.start()
        for caller in callers:
            caller.join(60)
    assert results == [["ok"], ["ok"]]  # one thread for both would break the barrier
