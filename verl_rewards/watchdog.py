"""Interrupt a Python-level reward call that overruns its time limit.

One watchdog thread per scoring run (not per sample) checks the current
call's start time and, when it overruns, raises :class:`SampleTimeout` in the
scoring thread with ``PyThreadState_SetAsyncExc``. That works from any
thread (``signal.alarm`` only works in the main thread) and needs only two
attribute writes per sample. It cannot interrupt code stuck in C; the Ray
executor handles that by replacing the worker process.
"""

from __future__ import annotations

import ctypes
import threading
import time
from types import TracebackType

from .errors import SampleTimeout

# Two prototypes of one C function: raising needs a PyObject*, cancelling a
# pending exception needs NULL (None through py_object would raise None).
_set_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.py_object)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)
_clear_async_exc = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p)(
    ("PyThreadState_SetAsyncExc", ctypes.pythonapi)
)


class Watchdog:
    """Context manager timing calls made by the thread that entered it."""

    def __init__(self, poll_s: float = 0.02) -> None:
        self._poll_s = poll_s
        self._lock = threading.Lock()
        self._index: int | None = None
        self._deadline = 0.0
        self._fired: int | None = None
        self._active = False
        self._thread_id = 0
        self._thread: threading.Thread | None = None
        self._closing = threading.Event()

    def __enter__(self) -> Watchdog:
        self._thread_id = threading.get_ident()
        self._active = True
        self._thread = threading.Thread(target=self._watch, name="verl-rewards-watchdog", daemon=True)
        self._thread.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        with self._lock:
            self._active = False
            self._index = None
            if self._fired is not None:  # fired but never delivered: cancel it
                _clear_async_exc(self._thread_id, None)
                self._fired = None
        self._closing.set()
        if self._thread is not None:
            self._thread.join()

    def start(self, index: int, limit_s: float) -> float:
        """Call ``index`` begins now and may run for ``limit_s`` seconds; returns now."""
        now = time.monotonic()
        with self._lock:
            self._deadline = now + limit_s
            self._index = index
        return now

    def stop(self) -> None:
        """The current call returned."""
        with self._lock:
            self._index = None

    def take_fired(self) -> int | None:
        """The index a delivered :class:`SampleTimeout` was meant for (then forget it)."""
        with self._lock:
            fired, self._fired = self._fired, None
            return fired

    def _watch(self) -> None:
        while not self._closing.wait(self._poll_s):
            with self._lock:
                if not self._active:
                    return
                overdue = self._index is not None and time.monotonic() > self._deadline
                if overdue and self._fired is None:
                    self._fired = self._index
                    self._index = None
                    _set_async_exc(self._thread_id, SampleTimeout)
