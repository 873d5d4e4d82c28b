"""One event loop per process for async rewards, on its own thread.

An async reward often keeps loop-bound state across batches (an aiohttp
session, an async client). ``asyncio.run`` per batch would give every batch a
new loop and break such state, so every async call in a process runs on one
long-lived loop instead; callers in any thread block on the result.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

from .errors import SampleTimeout

_T = TypeVar("_T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pid = 0


# Beyond an async call's own allowance: asyncio.wait_for normally ends it first.
GRACE_S = 2.0


def run(coro: Coroutine[Any, Any, _T], deadline_s: float | None = None) -> _T:
    """Run ``coro`` on the process's reward loop and wait for its result.

    With ``deadline_s``, a coroutine still running then (one that never awaits,
    so ``asyncio.wait_for`` cannot end it) raises :class:`SampleTimeout` here;
    the loop it blocks is abandoned and the next call gets a fresh one.
    """
    global _loop
    loop = _reward_loop()
    future = asyncio.run_coroutine_threadsafe(coro, loop)
    try:
        return future.result(timeout=None if deadline_s is None else deadline_s + GRACE_S)
    except concurrent.futures.TimeoutError:
        future.cancel()
        with _lock:
            if _loop is loop:
                _loop = None
        raise SampleTimeout(f"an async call did not yield within {deadline_s:g} s") from None


def _reward_loop() -> asyncio.AbstractEventLoop:
    global _loop, _pid
    with _lock:
        if _loop is None or _pid != os.getpid():  # a forked child needs its own thread
            _loop = asyncio.new_event_loop()
            _pid = os.getpid()
            threading.Thread(target=_loop.run_forever, name="verl-rewards-async", daemon=True).start()
        return _loop
