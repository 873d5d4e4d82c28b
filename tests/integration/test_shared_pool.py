"""``share_pool: cluster`` on a real Ray session: two scorers whose sections differ only in key
order find one pool host by name, and a sample that fails under ``on_error: raise`` fails only
its own caller's batch."""

from __future__ import annotations

import threading
from typing import Any

import pytest
import ray

from verl_rewards import Scorer
from verl_rewards.errors import RewardError
from verl_rewards.executors.shared_pool import NAMESPACE

pytestmark = [pytest.mark.ray]


def _section(order: list[str]) -> dict[str, Any]:
    """One composite section, its keys and components written in ``order``."""
    rewards = {"slow": {"plugin": "sleepy", "kwargs": {"ms": 300}, "weight": 0.0},
               "exact": {"plugin": "faulty"}}
    section = {"rewards": {k: rewards[k] for k in order}, "route": {"*": ["slow", "exact"]},
               "executor": "ray", "num_workers": 1, "worker_num_cpus": 0.5, "on_error": "raise",
               "share_pool": "cluster", "timeout_s": 30}
    return dict(reversed(list(section.items()))) if order[0] == "exact" else section


def _hosts() -> list[str]:
    return [a["name"] for a in ray.util.list_named_actors(all_namespaces=True)
            if a["namespace"] == NAMESPACE and a["name"].startswith("verl_rewards_pool_")]


def test_two_clients_in_any_key_order_share_one_host_and_a_failure_stays_its_callers(ray_session, testkit):
    first = Scorer.from_config(_section(["slow", "exact"])).start()
    second = Scorer.from_config(_section(["exact", "slow"])).start()
    answers: dict[str, Any] = {}

    def call(name: str, scorer: Scorer, answers_: list[str]) -> None:
        try:
            answers[name] = scorer.score([{"data_source": "d", "solution_str": a, "ground_truth": "1"}
                                          for a in answers_]).scores
        except RewardError as e:
            answers[name] = str(e)

    try:
        (host,) = _hosts()
        threads = [threading.Thread(target=call, args=("first", first, ["1", "raise", "1"])),
                   threading.Thread(target=call, args=("second", second, ["1", "0"]))]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
    finally:
        first.close()
        second.close()
        for name in _hosts():  # the host belongs to this process: end it with the test
            ray.kill(ray.get_actor(name, namespace=NAMESPACE), no_restart=True)
    assert host == f"verl_rewards_pool_{first.key}" and first.key == second.key
    assert answers["second"] == [1.0, 0.0]
    assert answers["first"].startswith("reward composite(slow=sleepy (")
    assert "failed on sample 1: [exact] RuntimeError: the reward raised on purpose (at " in answers["first"]
