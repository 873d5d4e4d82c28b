"""serve.batching: requests waiting together are scored as one batch; the queue is bounded."""

from __future__ import annotations

import asyncio

import pytest

from verl_rewards import Scorer
from verl_rewards.errors import RewardError
from verl_rewards.serve.batching import BatchQueue, QueueFull
from verl_rewards.serve.metrics import Metrics


def _rows(*answers: str) -> list[dict[str, str]]:
    return [{"data_source": "d", "solution_str": a, "ground_truth": "1"} for a in answers]


def _samples(*answers: str):
    from verl_rewards.samples import as_samples

    return as_samples(_rows(*answers))


def _batches(metrics: Metrics) -> tuple[float, float]:
    count = metrics.registry.get_sample_value("verl_rewards_batch_samples_count") or 0.0
    total = metrics.registry.get_sample_value("verl_rewards_batch_samples_sum") or 0.0
    return count, total


@pytest.fixture
def sleepy_scorer():
    with Scorer.from_config({"plugin": "sleepy", "executor": "local", "kwargs": {"ms": 200}}) as scorer:
        yield scorer


def test_requests_made_together_are_scored_as_one_batch_each_getting_its_own_slice(sleepy_scorer):
    metrics = Metrics()

    async def main():
        queue = BatchQueue(sleepy_scorer.score_together, metrics, max_queue=100, max_batch=100)
        try:
            return await asyncio.gather(*(queue.score(_samples(a)) for a in "1212121212"))
        finally:
            await queue.close()

    results = asyncio.run(main())
    assert [r.scores for r in results] == [[1.0], [0.0]] * 5
    assert _batches(metrics) == (1.0, 10.0)
    assert metrics.registry.get_sample_value("verl_rewards_samples_total", {"status": "ok"}) == 10


def test_requests_arriving_while_a_batch_scores_join_the_next_batch(sleepy_scorer):
    metrics = Metrics()

    async def main():
        queue = BatchQueue(sleepy_scorer.score_together, metrics, max_queue=100, max_batch=100)
        try:
            first = asyncio.ensure_future(queue.score(_samples("1")))
            await asyncio.sleep(0.05)  # the first batch is scoring now (200 ms)
            later = await asyncio.gather(*(queue.score(_samples("1")) for _ in range(6)))
            return [await first, *later]
        finally:
            await queue.close()

    results = asyncio.run(main())
    assert all(r.scores == [1.0] for r in results)
    assert _batches(metrics) == (2.0, 7.0)


def test_a_request_that_would_overfill_the_queue_is_refused_and_the_depth_returns_to_zero(sleepy_scorer):
    metrics = Metrics()

    async def main():
        queue = BatchQueue(sleepy_scorer.score_together, metrics, max_queue=3, max_batch=100)
        try:
            first = asyncio.ensure_future(queue.score(_samples("1", "1")))
            await asyncio.sleep(0)
            with pytest.raises(QueueFull, match=r"2 samples waiting or scoring, limit 3"):
                await queue.score(_samples("1", "1"))
            await first
            return queue.depth
        finally:
            await queue.close()

    assert asyncio.run(main()) == 0
    assert metrics.queue_depth._value.get() == 0


def test_batches_hold_whole_requests_up_to_max_batch(sleepy_scorer):
    metrics = Metrics()

    async def main():
        queue = BatchQueue(sleepy_scorer.score_together, metrics, max_queue=100, max_batch=4)
        try:
            return await asyncio.gather(*(queue.score(_samples("1", "1", "1")) for _ in range(3)))
        finally:
            await queue.close()

    assert [r.scores for r in asyncio.run(main())] == [[1.0] * 3] * 3
    assert _batches(metrics) == (3.0, 9.0)  # 3 + 3 would pass 4: one request per batch


def test_with_on_error_raise_only_the_request_with_the_failed_sample_hears_it():
    metrics = Metrics()
    cfg = {"plugin": "faulty", "executor": "local", "on_error": "raise"}

    async def main(scorer):
        queue = BatchQueue(scorer.score_together, metrics, max_queue=100, max_batch=100)
        try:
            return await asyncio.gather(queue.score(_samples("1")), queue.score(_samples("raise")),
                                        queue.score(_samples("0")), return_exceptions=True)
        finally:
            await queue.close()

    with Scorer.from_config(cfg) as scorer:
        good, bad, other = asyncio.run(main(scorer))
    assert good.scores == [1.0] and other.scores == [0.0]
    assert isinstance(bad, RewardError) and "the reward raised on purpose" in str(bad)

