"""serve's queue: the requests arriving together scored as one pool batch, bounded.

OpenRLHF and slime send one sample per request. While the pool scores one
batch, the requests that arrive wait and are combined into the next one, so
single-sample traffic still gives the pool whole batches and no request waits
on a timer. The queue is :class:`verl_rewards.combining.Gatherer` (the rule of
:mod:`verl_rewards.combining`: each request gets its own result, or its own
``RewardError`` under ``on_error=raise``), one batch at a time; it counts samples
waiting or scoring, and a request that would take it past ``--max-queue`` is
refused (the server answers 429 with Retry-After).
"""

from __future__ import annotations

from collections.abc import Callable

from ..combining import Gatherer
from ..errors import QueueFull, RewardError
from ..results import BatchResult
from ..samples import Sample
from .metrics import Metrics

__all__ = ["BatchQueue", "QueueFull", "ScoreFn"]

# Several requests' samples -> each one's result or RewardError (Scorer.score_together).
ScoreFn = Callable[[list[list[Sample]]], list[BatchResult | RewardError]]


class BatchQueue(Gatherer[list[Sample], BatchResult]):
    """serve's :class:`Gatherer`: whole requests, up to ``max_batch`` samples a batch,
    one batch at a time, at most ``max_queue`` samples waiting or scoring, watched by
    ``metrics``."""

    def __init__(self, score: ScoreFn, metrics: Metrics, max_queue: int, max_batch: int) -> None:
        super().__init__(score, max_batch_size=max_batch, size=len, one_at_a_time=True,
                         max_queue=max_queue, queue_option="--max-queue",
                         on_depth=metrics.queue_depth.set, on_batch=metrics.batch_size.observe,
                         on_answer=lambda result: metrics.count_statuses(result.statuses))
