"""Several callers' batches scored as one call, and the one rule for a failure among them.

The shared pool's host (``executors/shared_pool.py``) combines the batches its clients
send while it is busy; on an event loop, the one :class:`Gatherer` parks callers and
scores them as combined batches: ``serve``'s queue (``serve/batching.py``: the requests
that arrive while the pool scores, bounded) and the adapters' ``Microbatcher``
(``integrations/_batching.py``: the per-sample calls a host makes at once, each call a
caller) are its two configurations. All score the combined batch with
:func:`score_together`, and all hold to one rule:

* the combined call never stops at a failed sample (``on_error`` is the caller's, and
  applies afterwards, to its own samples only);
* each caller gets its own outcomes, and with ``on_error='raise'`` the
  :class:`~verl_rewards.errors.RewardError` of its own first failed sample, indexed
  within its own batch (:func:`for_caller`): a failed sample never fails another
  caller's batch;
* a failure of the call itself (the pool, not a sample) reaches every caller.
"""

from __future__ import annotations

import asyncio
import contextvars
import functools
import weakref
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Generic, NamedTuple, TypeVar

from .errors import QueueFull, RewardError
from .outcomes import Outcome
from .samples import Sample
from .scoring import raise_first_failure

Scored = tuple[list[Outcome], dict[str, float]]  # a batch's outcomes and the executor's metrics
Run = Callable[[list[Sample]], Scored]  # score samples without stopping at a failed one

T = TypeVar("T")


def score_together(run: Run, batches: Sequence[Sequence[Sample]]) -> list[Scored]:
    """Score ``batches`` with one ``run`` call; each batch's own outcomes, in order, with
    the call's metrics. An exception from ``run`` (the pool failed) propagates."""
    outcomes, metrics = run([s for batch in batches for s in batch])
    return [(part, metrics) for part in split(outcomes, [len(b) for b in batches])]


def split(items: Sequence[T], sizes: Sequence[int]) -> list[list[T]]:
    """``items`` cut into consecutive parts of ``sizes``."""
    if sum(sizes) != len(items):
        raise ValueError(f"{len(items)} items cannot be split into parts of {list(sizes)}")
    parts, start = [], 0
    for n in sizes:
        parts.append(list(items[start:start + n]))
        start += n
    return parts


def for_caller(reward: str, scored: Scored, stop_on_error: bool) -> Scored:
    """A caller's own part of a combined batch under its own ``on_error``: with
    ``stop_on_error`` its first failed sample raises ``RewardError`` (indexed within its
    batch); otherwise its outcomes as they are."""
    if stop_on_error:
        raise_first_failure(reward, scored[0])
    return scored


# -- the one gatherer: callers parked on an event loop, scored as combined batches --------------

Item = TypeVar("Item")
Out = TypeVar("Out")


class _Waiting(NamedTuple):
    item: Any
    size: int
    future: asyncio.Future[Any]


class _OnLoop:
    """One event loop's waiting callers and the task that drains them."""

    def __init__(self) -> None:
        self.waiting: list[_Waiting] = []
        self.size = 0  # samples waiting (not yet taken)
        self.grown = asyncio.Event()
        self.drainer: asyncio.Task[None] | None = None


def _one(_: object) -> int:
    return 1


class Gatherer(Generic[Item, Out]):
    """Callers' items parked on their event loop and scored as combined batches, each
    caller handed its own part of the answer.

    ``score`` takes a batch's items (whole callers, oldest first, up to
    ``max_batch_size`` samples by ``size``, at least one caller) and returns one answer
    per item, in a worker thread; an answer that is a ``RewardError`` is raised in its
    own caller only. A failure of ``score`` itself (the pool, not a sample) reaches
    every caller of the batch. After a first caller arrives the batch waits
    ``batch_wait_timeout_s`` for more (0: the callers ready in this loop iteration), or
    until it is full. With ``one_at_a_time`` one batch scores at a time, in a thread of
    its own, and the callers that arrive meanwhile join the next batch; otherwise each
    batch goes to the loop's default executor at once. With ``max_queue``, a caller that
    would take the samples waiting or scoring past it is refused with ``QueueFull``
    (``queue_option`` names the setting). ``on_depth``, ``on_batch`` and ``on_answer``
    watch the depth, each batch's size and each caller's answer (serve's metrics).
    Ray Serve's ``_BatchQueue`` is the model.
    """

    def __init__(self, score: Callable[[list[Item]], Sequence[Out | RewardError]], *,
                 max_batch_size: int, batch_wait_timeout_s: float = 0.0,
                 size: Callable[[Item], int] = _one, one_at_a_time: bool = False,
                 max_queue: int | None = None, queue_option: str = "max_queue",
                 on_depth: Callable[[int], None] | None = None,
                 on_batch: Callable[[int], None] | None = None,
                 on_answer: Callable[[Out], None] | None = None) -> None:
        self._score, self._size = score, size
        self._max_batch, self._wait_s = max_batch_size, batch_wait_timeout_s
        self._max_queue, self._queue_option = max_queue, queue_option
        self._on_depth, self._on_batch, self._on_answer = on_depth, on_batch, on_answer
        self._thread = ThreadPoolExecutor(1, thread_name_prefix="verl-rewards-batch") if one_at_a_time else None
        self._loops: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, _OnLoop] = weakref.WeakKeyDictionary()
        self._running: set[asyncio.Task[None]] = set()
        self._depth = 0  # samples waiting or scoring

    @property
    def depth(self) -> int:
        """Samples waiting or scoring."""
        return self._depth

    async def score(self, item: Item) -> Out:
        """``item``'s own answer, scored in the next batch (``QueueFull`` when there is no room)."""
        return await self.submit(item)

    def submit(self, item: Item) -> Awaitable[Out]:
        """Queue ``item`` now (``QueueFull``, raised here, when there is no room); await
        the result for its answer. A caller that goes away leaves its batch intact."""
        n = self._size(item)
        if self._max_queue is not None and self._depth and self._depth + n > self._max_queue:
            raise QueueFull("samples", self._depth, self._max_queue, self._queue_option)
        loop = asyncio.get_running_loop()
        on_loop = self._loops.get(loop)
        if on_loop is None:
            on_loop = self._loops[loop] = _OnLoop()
        future: asyncio.Future[Out] = loop.create_future()
        on_loop.waiting.append(_Waiting(item, n, future))
        on_loop.size += n
        on_loop.grown.set()
        self._add_depth(n)
        if on_loop.drainer is None:
            on_loop.drainer = loop.create_task(self._drain(loop, on_loop))
        return _answer(future)

    async def close(self) -> None:
        """Stop this loop's drainer and the batches in flight (the host has drained its
        callers), and the gatherer's own thread."""
        loop = asyncio.get_running_loop()
        on_loop = self._loops.pop(loop, None)
        tasks = [t for t in self._running if t.get_loop() is loop]
        if on_loop is not None and on_loop.drainer is not None:
            tasks.append(on_loop.drainer)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._thread is not None:
            self._thread.shutdown(wait=True)

    def _add_depth(self, n: int) -> None:
        self._depth += n
        if self._on_depth is not None:
            self._on_depth(self._depth)

    async def _drain(self, loop: asyncio.AbstractEventLoop, on_loop: _OnLoop) -> None:
        try:
            await self._gather_window(loop, on_loop)
            while on_loop.waiting:
                batch = self._take(on_loop)
                if self._thread is not None:
                    await self._run(batch)
                else:
                    task = loop.create_task(self._run(batch))
                    self._running.add(task)
                    task.add_done_callback(self._running.discard)
        finally:  # normally nothing waits now; after a cancel or a crash the waiting hear it
            on_loop.drainer = None
            if on_loop.waiting:
                for w in on_loop.waiting:
                    w.future.cancel()
                self._add_depth(-on_loop.size)
                on_loop.waiting, on_loop.size = [], 0
            if self._loops.get(loop) is on_loop:
                del self._loops[loop]

    async def _gather_window(self, loop: asyncio.AbstractEventLoop, on_loop: _OnLoop) -> None:
        """Wait for more callers: one loop iteration, or up to the timeout unless full."""
        if self._wait_s <= 0:
            await asyncio.sleep(0)
            return
        deadline = loop.time() + self._wait_s
        while on_loop.size < self._max_batch and (left := deadline - loop.time()) > 0:
            on_loop.grown.clear()
            try:
                await asyncio.wait_for(on_loop.grown.wait(), left)
            except TimeoutError:
                return

    def _take(self, on_loop: _OnLoop) -> list[_Waiting]:
        """Whole callers, oldest first, up to ``max_batch_size`` samples (at least one caller)."""
        taken: list[_Waiting] = []
        n = 0
        waiting = on_loop.waiting
        while waiting and (not taken or n + waiting[0].size <= self._max_batch):
            caller = waiting.pop(0)
            taken.append(caller)
            n += caller.size
        on_loop.size -= n
        return taken

    async def _run(self, batch: list[_Waiting]) -> None:
        n = sum(w.size for w in batch)
        if self._on_batch is not None:
            self._on_batch(n)
        call = functools.partial(contextvars.copy_context().run, self._score, [w.item for w in batch])
        try:
            answers = await asyncio.get_running_loop().run_in_executor(self._thread, call)
        except asyncio.CancelledError:
            for w in batch:
                w.future.cancel()
            raise
        except BaseException as e:  # the scoring call failed: every caller hears why
            for w in batch:
                if not w.future.done():
                    w.future.set_exception(e)
            if not isinstance(e, Exception):
                raise
        else:
            for w, answer in zip(batch, answers):
                self._settle(w.future, answer)
        finally:
            self._add_depth(-n)

    def _settle(self, future: asyncio.Future[Any], answer: Out | RewardError) -> None:
        if isinstance(answer, RewardError):  # on_error=raise: this caller's own failed sample
            if not future.done():
                future.set_exception(answer)
            return
        if self._on_answer is not None:
            self._on_answer(answer)
        if not future.done():  # else its caller was cancelled
            future.set_result(answer)


async def _answer(future: asyncio.Future[Out]) -> Out:
    try:
        return await asyncio.shield(future)  # a caller that goes away leaves its batch intact
    finally:
        if not future.done():
            future.add_done_callback(lambda f: f.cancelled() or f.exception())  # nobody reads it now
