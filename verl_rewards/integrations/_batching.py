"""Gather the per-sample calls a host makes concurrently into one batch.

verl's reward loop calls its reward manager (or an async reward function)
once per sample, all at once on one event loop. Scoring each call alone would
cost one dispatch per sample; a :class:`Microbatcher` collects the calls made
in the same event-loop iteration and scores them as one batch, so a pool sees
chunks and an async reward's calls run concurrently.
"""

from __future__ import annotations

import asyncio
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Generic, NamedTuple, TypeVar

from ..results import BatchResult

Item = TypeVar("Item")


class Scored(NamedTuple):
    """One sample's place in the batch it was scored in."""

    result: BatchResult
    position: int


class _Pending(NamedTuple):
    item: Any
    future: asyncio.Future[Scored]


class Microbatcher(Generic[Item]):
    """Scores the items (samples, or what becomes one) submitted in one loop
    iteration with one ``score_many`` call."""

    def __init__(self, score_many: Callable[[list[Item]], Awaitable[BatchResult]],
                 max_batch: int = 4096) -> None:
        self._score_many = score_many
        self._max_batch = max_batch
        self._pending: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, list[_Pending]] = (
            weakref.WeakKeyDictionary())

    async def score(self, item: Item) -> Scored:
        """Score ``item`` together with the others submitted now; its batch result and index."""
        loop = asyncio.get_running_loop()
        pending = self._pending.get(loop)
        if pending is None:
            pending = self._pending[loop] = []
            # Runs after every task already scheduled in this iteration has submitted.
            loop.call_soon(self._flush, loop)
        future: asyncio.Future[Scored] = loop.create_future()
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
            result = await self._score_many([p.item for p in batch])
        except BaseException as e:  # the whole call failed: every caller hears why
            for p in batch:
                if not p.future.done():
                    p.future.set_exception(e)
            if not isinstance(e, Exception):
                raise
            return
        for i, p in enumerate(batch):
            if not p.future.done():
                p.future.set_result(Scored(result, i))
