"""Gather the per-sample calls a host makes concurrently into one batch.

verl's reward loop calls its reward manager (or an async reward function)
once per sample, all at once on one event loop; verifiers scores concurrent
rollouts the same way. Scoring each call alone would cost one dispatch per
sample; a :class:`Microbatcher` collects the calls made in the same event-loop
iteration and scores them as one batch, so a pool sees chunks and an async
reward's calls run concurrently.

Each call is its own caller (the rule of :mod:`verl_rewards.combining`): the
batch is scored without stopping, one part per call, so each call gets its own
result, and with ``on_error='raise'`` a failed sample raises in its own call
only (its ``RewardError`` indexes sample 0, its call's one sample); a failure
of the scoring call itself (the pool, not a sample) reaches every call.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Callable, Sequence
from typing import Any, Generic, NamedTuple, TypeVar, cast

from ..errors import RewardError
from ..results import BatchResult
from ..samples import Sample
from ..scorer import Scorer
from ._common import score_each

Item = TypeVar("Item")


class _Pending(NamedTuple):
    item: Any
    future: asyncio.Future[BatchResult]


class Microbatcher(Generic[Item]):
    """Scores the items submitted in one loop iteration with one ``scorer`` batch.

    ``to_samples`` turns a batch's items into its samples in one call (verl's
    manager decodes the whole batch at once); without it the items are samples.
    """

    def __init__(self, scorer: Scorer, to_samples: Callable[[list[Item]], Sequence[Sample]] | None = None,
                 max_batch: int = 4096) -> None:
        self._scorer = scorer
        self._to_samples = to_samples
        self._max_batch = max_batch
        self._pending: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[_Pending]] = (
            weakref.WeakKeyDictionary())

    async def score(self, item: Item) -> BatchResult:
        """``item``'s own result (one sample), scored together with the items submitted
        now; with ``on_error='raise'`` its own ``RewardError`` if it failed."""
        loop = asyncio.get_running_loop()
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = []
            # Runs after every task already scheduled in this iteration has submitted.
            loop.call_soon(self._flush, loop)
        future: asyncio.Future[BatchResult] = loop.create_future()
        pending.append(_Pending(item, future))
        if len(pending) >= self._max_batch:
            self._flush(loop)
        return await future

    def _flush(self, loop: asyncio.AbstractEventLoop) -> None:
        batch = self._pending.pop(loop, None)
        if batch:
            loop.create_task(self._run(batch))

    async def _run(self, batch: list[_Pending]) -> None:
        try:
            # Off the host's loop: building the samples (a batch decode) and scoring.
            results = await asyncio.to_thread(self._score_items, [p.item for p in batch])
        except BaseException as e:  # the scoring call failed: every caller hears why
            for p in batch:
                if not p.future.done():
                    p.future.set_exception(e)
            if not isinstance(e, Exception):
                raise
            return
        for p, result in zip(batch, results):
            if p.future.done():  # its caller was cancelled
                continue
            if isinstance(result, RewardError):
                p.future.set_exception(result)
            else:
                p.future.set_result(result)

    def _score_items(self, items: list[Item]) -> list[BatchResult | RewardError]:
        samples = cast("list[Sample]", items) if self._to_samples is None else self._to_samples(items)
        return score_each(self._scorer, samples)
