"""The verl adapter where verl runs it: Ray reward workers and a spawned process pool."""

from __future__ import annotations

import asyncio
import functools
import multiprocessing
import os
import pickle
from concurrent.futures import ProcessPoolExecutor

import pytest

from verl_rewards.integrations.verl import compute_score

REWARD_KWARGS = {"plugin": "exact_match", "bonus": 0.5}


def test_process_pool_as_verls_prime_manager_runs_it():
    """verl's PrimeRewardManager: run_in_executor(pool, partial(fn, task, completion,
    reference, extra_info)) in a ProcessPoolExecutor; standard pickle, spawned workers."""
    evaluation_func = functools.partial(compute_score, **REWARD_KWARGS)
    rows = [("d", "1", "1"), ("d", "2", "1"), ("d", " 3 ", "3")]

    async def run(pool):
        loop = asyncio.get_running_loop()
        futures = [loop.run_in_executor(pool, functools.partial(evaluation_func, d, s, g, {"i": i}))
                   for i, (d, s, g) in enumerate(rows)]
        return await asyncio.gather(*futures)

    pickle.dumps(evaluation_func)  # plain pickle, no cloudpickle
    with ProcessPoolExecutor(2, mp_context=multiprocessing.get_context("spawn")) as pool:
        results = asyncio.run(run(pool))
    assert [r["score"] for r in results] == [1.5, 0.5, 1.5]  # not silently 0.0
    assert os.getpid() not in {r["pid"] for r in results}


@pytest.mark.ray
def test_ray_task_calls_compute_score_with_reward_kwargs(ray_session):
    import ray

    @ray.remote
    def reward_worker(fn, rows, reward_kwargs):
        return [fn(data_source=d, solution_str=s, ground_truth=g, extra_info={}, **reward_kwargs)
                for d, s, g in rows]

    rows = [("d", "1", "1"), ("d", "0", "1")]
    results = ray.get(reward_worker.remote(compute_score, rows, REWARD_KWARGS))
    assert [r["score"] for r in results] == [1.5, 0.5]
    assert os.getpid() not in {r["pid"] for r in results}

    # verl ships the wrapped function itself (a partial holding reward_kwargs) to workers.
    wrapped = functools.partial(compute_score, plugin="stateful", scale=2.0)
    assert ray.get(reward_worker.remote(wrapped, rows, {}))[0]["score"] == 2.0
