"""A class reward with ``close()`` is closed when its executor stops; functions are only forgotten."""

from __future__ import annotations

import logging
from pathlib import Path

from verl_rewards import RewardRef, Scorer
from verl_rewards.resolve import _cache, release, resolve

CLOSING = '''
import os

class Model:
    def __init__(self, marker):
        self.marker = marker
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return 1.0
    def close(self):
        with open(self.marker, "a") as f:
            f.write(f"closed {os.getpid()}\\n")

class BadClose:
    def __call__(self, data_source, solution_str, ground_truth, extra_info=None):
        return 1.0
    def close(self):
        raise OSError("disk gone")

def close(data_source, solution_str, ground_truth, extra_info=None):
    return 1.0
'''


def test_release_closes_a_class_instance_and_forgets_it(reward_file, tmp_path: Path) -> None:
    marker = tmp_path / "closed.txt"
    ref = RewardRef.from_file(reward_file(CLOSING), "Model", {"marker": str(marker)})
    first = resolve(ref)
    release(ref)
    assert marker.read_text().startswith("closed ")
    assert ref.cache_key not in _cache
    assert resolve(ref).call is not first.call  # a fresh instance after release


def test_a_failing_close_is_logged_naming_the_reward_and_does_not_raise(reward_file, caplog) -> None:
    ref = RewardRef.from_file(reward_file(CLOSING), "BadClose")
    resolve(ref)
    with caplog.at_level(logging.WARNING, logger="verl_rewards.resolve"):
        release(ref)
    assert "closing reward BadClose" in caplog.text and "OSError: disk gone" in caplog.text


def test_a_function_is_never_called_by_release_even_if_named_close(reward_file) -> None:
    ref = RewardRef.from_file(reward_file(CLOSING), "close")
    resolve(ref)
    release(ref)  # would raise TypeError if called with no arguments
    assert ref.cache_key not in _cache


def test_the_local_scorer_closes_a_class_reward_once_when_it_closes(reward_file, tmp_path: Path) -> None:
    marker = tmp_path / "closed.txt"
    config = {"path": str(reward_file(CLOSING)), "name": "Model", "executor": "local",
              "kwargs": {"marker": str(marker)}}
    with Scorer.from_config(config) as scorer:
        assert scorer.score([{"data_source": "", "solution_str": "", "ground_truth": ""}]).scores == [1.0]
        assert not marker.exists()
    assert len(marker.read_text().splitlines()) == 1
