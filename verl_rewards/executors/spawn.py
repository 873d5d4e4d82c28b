"""Start worker processes that never outlive this one.

Each worker asks the kernel to kill it when its parent goes
(``PR_SET_PDEATHSIG``, set by the worker on itself as it starts). Linux sends
that signal when the *thread* that forked the worker ends, not the process,
so every worker is started from one long-lived thread per process, here: a
worker started from a short-lived thread (a submitted batch's, a host's
``asyncio.to_thread``) would die with it. Workers lead sessions of their own,
so a terminal's Ctrl-C reaches only the host, which closes them, and killing
a worker's process group also kills what its reward started in it.
"""

from __future__ import annotations

import os
import queue
import signal
import subprocess
import threading
from collections.abc import Sequence
from typing import Any

LAUNCH_TIMEOUT_S = 60.0  # for the fork and exec only (a worker's imports come after)


class _Launcher:
    """The one thread per process that starts workers."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._pid = 0
        self._requests: queue.SimpleQueue[tuple[list[str], tuple[int, ...], queue.SimpleQueue[Any]]] = \
            queue.SimpleQueue()

    def forget(self) -> None:
        """In a forked child: the parent's thread and lock are not ours (the lock may have
        been held by another thread at the fork)."""
        self._lock = threading.Lock()
        self._pid = 0

    def launch(self, argv: list[str], pass_fds: Sequence[int]) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._pid != os.getpid():  # first use, or a forked child: start our thread
                self._pid = os.getpid()
                self._requests = queue.SimpleQueue()
                threading.Thread(target=self._run, name="verl-rewards-launcher", daemon=True).start()
        reply: queue.SimpleQueue[Any] = queue.SimpleQueue()
        self._requests.put((argv, tuple(pass_fds), reply))
        try:
            result = reply.get(timeout=LAUNCH_TIMEOUT_S)
        except queue.Empty:
            raise OSError(f"could not start a worker process within {LAUNCH_TIMEOUT_S:g} s") from None
        if isinstance(result, BaseException):
            raise result
        return result  # type: ignore[no-any-return]

    def _run(self) -> None:
        while True:
            argv, pass_fds, reply = self._requests.get()
            try:
                reply.put(subprocess.Popen(
                    argv, stdin=subprocess.DEVNULL, stdout=_stdout(), pass_fds=pass_fds,
                    start_new_session=True))
            except BaseException as e:  # the caller raises it
                reply.put(e)


_launcher = _Launcher()
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_launcher.forget)


def launch(argv: list[str], pass_fds: Sequence[int]) -> subprocess.Popen[bytes]:
    """Start ``argv`` (keeping ``pass_fds`` open in it) from this process's launcher thread:
    stdin from /dev/null, stdout to this process's stderr, in a session of its own."""
    return _launcher.launch(argv, pass_fds)


def _stdout() -> int:
    """What a worker's prints go to: our stderr (never our stdout, which may be a
    protocol, e.g. ``score -o -``), or nowhere if we have none."""
    try:
        os.fstat(2)
    except OSError:
        return subprocess.DEVNULL
    return 2


def die_with_parent(parent: int) -> None:
    """In a worker: be killed when ``parent`` (the host) goes; exit now if it has gone."""
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, signal.SIGKILL, 0, 0, 0)  # PR_SET_PDEATHSIG
    except (OSError, AttributeError):  # not Linux: the host's pipes closing still ends us
        pass
    if os.getppid() != parent:  # the host went before we asked
        os._exit(0)


def alive(process: subprocess.Popen[bytes]) -> bool:
    """Whether ``process`` still runs, without reaping it (its id stays ours to signal)."""
    if process.returncode is not None:
        return False
    try:
        return os.waitid(os.P_PID, process.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is None
    except ChildProcessError:  # reaped elsewhere
        return False


def kill_group(process: subprocess.Popen[bytes], wait_s: float = 5.0) -> None:
    """Kill ``process`` and what it started in its session (before reaping it, so its
    process group's id cannot have been reused), then reap it."""
    if process.returncode is None:
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    try:
        process.wait(wait_s)
    except subprocess.TimeoutExpired:  # in the kernel (D state): reaped later by subprocess
        pass
