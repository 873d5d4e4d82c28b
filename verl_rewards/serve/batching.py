"""A bounded queue that scores the requests arriving together as one pool batch.

OpenRLHF and slime send one sample per request. While the pool scores one
batch, the requests that arrive wait and are combined into the next one, so
single-sample traffic still gives the pool whole batches and no request waits
on a timer. A combined batch follows the one rule of
:mod:`verl_rewards.combining` (as the shared pool's host does): each request
gets its own result, or its own ``RewardError`` under ``on_error=raise``. The queue counts samples
waiting or scoring; a request that would take it past its limit is refused
(the server answers 429 with Retry-After).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from typing import NamedTuple

from ..errors import QueueFull, RewardError
from ..results import BatchResult
from ..samples import Sample
from .metrics import Metrics


class _Request(NamedTuple):
    samples: list[Sample]
    future: asyncio.Future[BatchResult]


# Several requests' samples -> each one's result or RewardError (Scorer.score_together).
ScoreFn = Callable[[list[list[Sample]]], list[BatchResult | RewardError]]


class BatchQueue:
    """Combines waiting requests into batches of up to ``max_batch`` samples,
    scored one combined batch at a time by ``score`` in a worker thread."""

    def __init__(self, score: ScoreFn, metrics: Metrics, max_queue: int, max_batch: int) -> None:
        self._score = score
        self._metrics = metrics
        self._max_queue = max_queue
        self._max_batch = max_batch
        self._waiting: list[_Request] = []
        self._depth = 0  # samples waiting or scoring
        self._wake: asyncio.Event | None = None
        self._drainer: asyncio.Task[None] | None = None
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="verl-rewards-batch")

    @property
    def depth(self) -> int:
        return self._depth

    async def score(self, samples: list[Sample]) -> BatchResult:
        """Score ``samples`` in the next batch; :class:`QueueFull` when there is no room."""
        return await self.submit(samples)

    def submit(self, samples: list[Sample]) -> Awaitable[BatchResult]:
        """Queue ``samples`` now (:class:`QueueFull`, raised here, when there is no room);
        await the result for their :class:`BatchResult`."""
        if self._depth and self._depth + len(samples) > self._max_queue:
            raise QueueFull("samples", self._depth, self._max_queue, "--max-queue")
        loop = asyncio.get_running_loop()
        if self._drainer is None:
            self._wake = asyncio.Event()
            self._drainer = loop.create_task(self._drain())
        future: asyncio.Future[BatchResult] = loop.create_future()
        self._waiting.append(_Request(samples, future))
        self._add_depth(len(samples))
        assert self._wake is not None
        self._wake.set()
        return _result(future)

    def _add_depth(self, n: int) -> None:
        self._depth += n
        self._metrics.queue_depth.set(self._depth)

    async def _drain(self) -> None:
        assert self._wake is not None
        while True:
            await self._wake.wait()
            self._wake.clear()
            while self._waiting:
                batch = self._take()
                await self._run(batch)

    def _take(self) -> list[_Request]:
        """Whole requests, oldest first, up to ``max_batch`` samples (at least one request)."""
        taken: list[_Request] = []
        n = 0
        while self._waiting and (not taken or n + len(self._waiting[0].samples) <= self._max_batch):
            request = self._waiting.pop(0)
            taken.append(request)
            n += len(request.samples)
        return taken

    async def _run(self, batch: list[_Request]) -> None:
        n = sum(len(r.samples) for r in batch)
        loop = asyncio.get_running_loop()
        self._metrics.batch_size.observe(n)
        try:
            results = await loop.run_in_executor(self._thread, self._score, [r.samples for r in batch])
        except Exception as e:  # noqa: BLE001 - the pool failed: every request of the batch hears why
            for r in batch:
                _settle(r.future, error=e)
        else:
            for r, result in zip(batch, results):
                if isinstance(result, BatchResult):
                    self._metrics.count_statuses(result.statuses)
                    _settle(r.future, result=result)
                else:  # on_error=raise: this request's own failed sample
                    _settle(r.future, error=result)
        self._add_depth(-n)

    async def close(self) -> None:
        """Stop the drainer (the server has drained its requests) and the thread."""
        if self._drainer is not None:
            self._drainer.cancel()
            try:
                await self._drainer
            except asyncio.CancelledError:
                pass
        self._thread.shutdown(wait=True)


async def _result(future: asyncio.Future[BatchResult]) -> BatchResult:
    try:
        return await asyncio.shield(future)  # a caller that goes away leaves its batch intact
    finally:
        if not future.done():
            future.add_done_callback(lambda f: f.exception())  # nobody reads it now


def _settle(future: asyncio.Future[BatchResult], result: BatchResult | None = None,
            error: BaseException | None = None) -> None:
    if future.done():
        return
    if error is not None:
        future.set_exception(error)
    else:
        assert result is not None
        future.set_result(result)

