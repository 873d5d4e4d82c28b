"""The local executor's thread: user code runs there, the caller waits with a deadline.

Running the reward off the caller's thread is what lets the local executor keep
two promises that code in the caller's own thread could break. A call that keeps
running past its time limit and the watchdog's grace (it catches every interrupt,
or is stuck in C) is left behind in this daemon thread and the caller gets an
error saying so, instead of waiting forever. And a real Ctrl-C reaches the
waiting main thread, never the reward: a reward's own ``raise KeyboardInterrupt``
happens in this thread, where Python never delivers a signal, so it is only that
sample's failure (:func:`~verl_rewards.errors.is_host_interrupt`).
"""

from __future__ import annotations

import os
import queue
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, TypeVar

from .. import watchdog
from ..errors import ExecutorError
from ..frames import running
from ..watchdog import Progress

_T = TypeVar("_T")

POLL_S = 0.25  # how often a waiting caller looks at the call in flight


class Runner:
    """One daemon thread running one call at a time for one caller. :meth:`call` waits
    for it; a call past its allowance and ``watchdog.HARD_GRACE_S`` (read from
    ``progress``) is abandoned, and so is the thread."""

    def __init__(self, progress: Progress, name: str = "verl-rewards-local") -> None:
        self.progress = progress
        self.pid = os.getpid()
        self.abandoned = False
        # Two plain queues: the cheapest hand-off between two threads (a Future costs
        # about twice as much), and a reply nobody waits for any more goes nowhere.
        self._requests: queue.SimpleQueue[Callable[[], Any] | None] = queue.SimpleQueue()
        self._replies: queue.SimpleQueue[tuple[bool, Any]] = queue.SimpleQueue()
        self._thread = threading.Thread(target=self._work, name=name, daemon=True)
        self._thread.start()

    @property
    def usable(self) -> bool:
        """Alive, not abandoned, and this process's own (not a forked copy)."""
        return not self.abandoned and self.pid == os.getpid() and self._thread.is_alive()

    @property
    def busy(self) -> bool:
        """Whether its thread is still running something (an abandoned call, say)."""
        return self._thread.is_alive() and self.progress.index is not None

    def call(self, fn: Callable[[], _T], stuck: Callable[[float], str],
             deadline_s: float | None = None) -> _T:
        """Run ``fn`` in the thread and return its result (or raise its exception).

        A scoring call in flight past its allowance + ``watchdog.HARD_GRACE_S``, or
        ``fn`` as a whole past ``deadline_s``, raises :class:`ExecutorError` with
        ``stuck(elapsed_s)``'s text and the reward's current line; that and an
        interrupt of the caller (Ctrl-C) abandon the thread.
        """
        self._requests.put(fn)
        began = time.monotonic()
        try:
            while True:
                try:
                    ok, value = self._replies.get(timeout=POLL_S)
                except queue.Empty:
                    elapsed = self._overdue(began, deadline_s)
                    if elapsed is not None:
                        self.abandon()
                        raise ExecutorError(stuck(elapsed) + self._where()) from None
                    continue
                if ok:
                    return value  # type: ignore[no-any-return]
                raise value
        except KeyboardInterrupt:  # the caller's Ctrl-C: the call goes on, unwatched
            self.abandon()
            raise

    def stop(self) -> None:
        """Let the thread end once it is idle."""
        self._requests.put(None)

    def abandon(self) -> None:
        """Give up on the thread: it ends once its current call does."""
        self.abandoned = True
        self._requests.put(None)

    def _overdue(self, began: float, deadline_s: float | None) -> float | None:
        """How long the call in flight has run, once past its allowance and the grace
        (or past ``deadline_s`` since ``began``)."""
        now = time.monotonic()
        if deadline_s is not None and now - began > deadline_s:
            return now - began
        p = self.progress
        index, started, allowed = p.index, p.started, p.allowed_s
        if index is None or allowed is None:
            return None
        elapsed = now - started
        return elapsed if elapsed > allowed + watchdog.HARD_GRACE_S else None

    def _where(self) -> str:
        frame = sys._current_frames().get(self._thread.ident or 0)
        found = running(frame)
        return f" (it is at {found.location})" if found is not None else ""

    def _work(self) -> None:
        while True:
            fn = self._requests.get()
            if fn is None:
                return
            try:
                reply: tuple[bool, Any] = (True, fn())
            except BaseException as e:  # the caller re-raises it; this thread goes on
                reply = (False, e)
            self._replies.put(reply)
