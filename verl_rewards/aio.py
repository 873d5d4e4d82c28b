"""One event loop per process for async rewards, on its own thread.

An async reward often keeps loop-bound state across batches (an aiohttp
session, an async client). ``asyncio.run`` per batch would give every batch a
new loop and break such state, so every async call in a process runs on one
long-lived loop instead; callers in any thread block on the result.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from typing import Any, TypeVar

_T = TypeVar("_T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_pid = 0


def run(coro: Coroutine[Any, Any, _T]) -> _T:
    """Run ``coro`` on the process's reward loop and wait for its result."""
    return asyncio.run_coroutine_threadsafe(coro, _reward_loop()).result()


def _reward_loop() -> asyncio.AbstractEventLoop:
    global _loop, _pid
    with _lock:
        if _loop is None or _pid != os.getpid():  # a forked child needs its own thread
            _loop = asyncio.new_event_loop()
            _pid = os.getpid()
            threading.Thread(target=_loop.run_forever, name="verl-rewards-async", daemon=True).start()
        return _loop
