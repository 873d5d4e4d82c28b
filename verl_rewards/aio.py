"""One event loop per process for async rewards, on its own thread.

An async reward often keeps loop-bound state across batches (an aiohttp
session, an async client). ``asyncio.run`` per batch would give every batch a
new loop and break such state, so every async call in a process runs on one
long-lived loop instead; callers in any thread block on the result.

asyncio re-raises a ``KeyboardInterrupt`` or ``SystemExit`` that a task raises out
of the loop itself, which would end the loop's thread and leave every later call
waiting forever: :func:`contained` carries them past the task machinery as data.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import os
import threading
from collections.abc import Awaitable, Coroutine
from typing import Any, TypeVar

from .errors import SampleTimeout

_T = TypeVar("_T")

_lock = threading.Lock()
_loop: asyncio.AbstractEventLoop | None = None
_thread: threading.Thread | None = None
_pid = 0


# Beyond an async call's own allowance: asyncio.wait_for normally ends it first.
GRACE_S = 2.0


class Escaped(Exception):
    """A ``KeyboardInterrupt`` or ``SystemExit`` raised by a coroutine, carried as an
    ordinary exception (``error``) so that it fails only its own call."""

    def __init__(self, error: BaseException) -> None:
        super().__init__(f"{type(error).__name__}: {error}")
        self.error = error


async def contained(awaitable: Awaitable[_T]) -> _T:
    """Await ``awaitable``; a ``KeyboardInterrupt`` or ``SystemExit`` it raises comes out
    as :class:`Escaped` instead of ending the event loop. Wrap each reward coroutine
    that becomes a task of its own (``asyncio.wait_for`` and ``gather`` make tasks)."""
    try:
        return await awaitable
    except (KeyboardInterrupt, SystemExit) as e:
        raise Escaped(e) from None


def run(coro: Coroutine[Any, Any, _T], deadline_s: float | None = None) -> _T:
    """Run ``coro`` on the process's reward loop and wait for its result.

    With ``deadline_s``, a coroutine still running then (one that never awaits,
    so ``asyncio.wait_for`` cannot end it) raises :class:`SampleTimeout` here;
    the loop it blocks is abandoned and the next call gets a fresh one. A
    ``KeyboardInterrupt`` or ``SystemExit`` the coroutine raises is raised here,
    in the caller's thread; the loop goes on.
    """
    global _loop
    loop = _reward_loop()
    future = asyncio.run_coroutine_threadsafe(contained(coro), loop)
    try:
        return future.result(timeout=None if deadline_s is None else deadline_s + GRACE_S)
    except Escaped as e:
        raise e.error from None
    except concurrent.futures.TimeoutError:
        future.cancel()
        with _lock:
            if _loop is loop:
                _loop = None
        raise SampleTimeout(f"an async call did not yield within {deadline_s:g} s") from None


def _reward_loop() -> asyncio.AbstractEventLoop:
    global _loop, _pid, _thread
    with _lock:
        # A forked child needs its own thread; a loop whose thread ended (nothing should
        # end it, but then every call would wait forever) is replaced.
        alive = _thread is not None and _thread.is_alive()
        if _loop is None or _pid != os.getpid() or not alive:
            _loop = asyncio.new_event_loop()
            _pid = os.getpid()
            _thread = threading.Thread(target=_loop.run_forever, name="verl-rewards-async", daemon=True)
            _thread.start()
        return _loop
