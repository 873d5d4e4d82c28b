"""Interrupt a Python-level reward call that overruns its time limit.

One watchdog thread per process (not per run or sample) reads each scoring
loop's :class:`Progress` (which sample, since when) and, when a call
overruns, raises :class:`SampleTimeout` in the scoring thread with
``PyThreadState_SetAsyncExc``. That works from any thread (``signal.alarm``
only works in the main thread) and costs the loop two attribute writes per
sample, no lock. It cannot interrupt code stuck in C; the process and Ray
executors handle that by replacing the worker process.

The exception may land a few bytecodes after the overdue call returned, so
the watchdog records which index it fired for (:meth:`take_fired`), and the
scoring loop must call :meth:`disarm` inside the region that catches
:class:`SampleTimeout`: after ``disarm`` nothing can be raised or pending.

A reward that catches everything (a bare ``except:``) swallows the exception, so
the watchdog raises it again every ``REFIRE_S`` while the call goes on, until
``HARD_GRACE_S`` past the limit; a call that returns after that is still a
timeout (:meth:`overran`). Past the grace it stops trying: only a process can be
killed (the process and Ray executors kill their worker long before), and the local
executor says so (:mod:`verl_rewards.executors.local`).
"""

from __future__ import annotations

import ctypes
import os
import threading
import time
from types import TracebackType

from .errors import SampleTimeout

REFIRE_S = 0.25  # how often a timeout the call caught is raised again
HARD_GRACE_S = 10.0  # past its limit, how long a call that keeps catching it is interrupted

# Two prototypes of one C function: raising needs a PyObject*, cancelling a
# pending exception needs NULL (None through py_object would raise None).
_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
_clear_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)


class Progress:
    """Which call a scoring thread is in, since when, and how long it may take;
    readable from another thread (the watchdog, a Ray heartbeat).

    ``index`` is the call's first sample and ``span`` how many it covers (1 for
    a sample call; a batch or async call covers a chunk); ``allowed_s`` is how
    long the call may take (None: no limit). Writers set the other fields
    before ``index``, so a reader that sees an index sees that call's fields.
    """

    __slots__ = ("allowed_s", "index", "span", "started")

    def __init__(self) -> None:
        self.index: int | None = None
        self.started = 0.0
        self.allowed_s: float | None = None
        self.span = 1

    def begin(self, index: int, allowed_s: float | None = None, span: int = 1) -> None:
        """A call covering ``span`` samples from ``index`` begins now."""
        self.started = time.monotonic()
        self.allowed_s = allowed_s
        self.span = span
        self.index = index


class Watchdog:
    """Times the calls :class:`Progress` reports, for the thread that entered it.

    Entering registers with the process's one watchdog thread (started on first
    use), so a scoring call costs a set insert and removal, not a thread.
    """

    def __init__(self, progress: Progress, limit_s: float, poll_s: float = 0.02) -> None:
        self._progress = progress
        self._limit_s = limit_s
        self.poll_s = min(poll_s, limit_s / 4)
        self._lock = threading.Lock()
        self._fired: int | None = None
        self._fired_started = -1.0  # the call (its start) last fired at
        self._last_fire = 0.0
        self._armed = False
        self._thread_id = 0

    def __enter__(self) -> Watchdog:
        self._thread_id = threading.get_ident()
        self._armed = True
        _service.watch(self)
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.disarm()
        _service.forget(self)

    def disarm(self) -> None:
        """Stop timing; cancel a timeout raised but not yet delivered."""
        with self._lock:
            self._armed = False
            if self._fired is not None:
                _clear_async_exc(self._thread_id, None)
                self._fired = None

    def take_fired(self) -> int | None:
        """The index a delivered :class:`SampleTimeout` was meant for (then forget it)."""
        with self._lock:
            fired, self._fired = self._fired, None
            return fired

    def overran(self) -> bool:
        """Whether it fired during the call :class:`Progress` now reports (which therefore
        ran past its limit, even if it caught the timeout and returned)."""
        return self._fired_started == self._progress.started

    def check(self, now: float) -> None:
        """Raise :class:`SampleTimeout` in the scoring thread if its call overran, and
        again every ``REFIRE_S`` while it goes on (it caught it), for ``HARD_GRACE_S``."""
        progress = self._progress
        index, started = progress.index, progress.started
        if index is None or now - started <= self._limit_s:
            return
        with self._lock:
            if not self._armed or progress.index != index or progress.started != started:
                return
            if started == self._fired_started and (
                    now - self._last_fire < REFIRE_S or now - started > self._limit_s + HARD_GRACE_S):
                return
            self._fired, self._fired_started, self._last_fire = index, started, now
            _set_async_exc(self._thread_id, SampleTimeout)


class _Service:
    """The one thread per process that polls every armed :class:`Watchdog`."""

    def __init__(self) -> None:
        self._wake = threading.Condition()
        self._watched: set[Watchdog] = set()
        self._pid = 0

    def watch(self, watchdog: Watchdog) -> None:
        with self._wake:
            self._watched.add(watchdog)
            if self._pid != os.getpid():  # first use, or a forked child: start our thread
                self._pid = os.getpid()
                threading.Thread(target=self._run, name="verl-rewards-watchdog", daemon=True).start()
            self._wake.notify()

    def forget(self, watchdog: Watchdog) -> None:
        with self._wake:
            self._watched.discard(watchdog)

    def _run(self) -> None:
        while True:
            with self._wake:
                while not self._watched:
                    self._wake.wait()
                watched = list(self._watched)
            now = time.monotonic()
            for watchdog in watched:
                watchdog.check(now)
            time.sleep(min(w.poll_s for w in watched))


_service = _Service()
