"""Start worker processes that never outlive this one.

A worker is started by :func:`verl_rewards.child.spawn` (the core's one spawner
thread per process: Linux sends the parent-death signal when the *thread* that
forked a process ends, so a worker started from a short-lived thread, a
submitted batch's or a host's ``asyncio.to_thread``, would die with it) and
arms that signal itself as it starts (:func:`verl_rewards.child.exit_with_parent`).
Workers lead sessions of their own, so a terminal's Ctrl-C reaches only the
host, which closes them, and killing a worker's process group also kills what
its reward started in it.
"""

from __future__ import annotations

import os
import signal
import subprocess
from collections.abc import Sequence

from ..child import spawn

LAUNCH_TIMEOUT_S = 60.0  # for the fork and exec only (a worker's imports come after)


def launch(argv: list[str], pass_fds: Sequence[int]) -> subprocess.Popen[bytes]:
    """Start ``argv`` (keeping ``pass_fds`` open in it) tied to this process's life:
    stdin from /dev/null, stdout to this process's stderr, in a session of its own."""
    return spawn(argv, LAUNCH_TIMEOUT_S, stdin=subprocess.DEVNULL, stdout=_stdout(), stderr=None,
                 pass_fds=tuple(pass_fds))


def _stdout() -> int:
    """What a worker's prints go to: our stderr (never our stdout, which may be a
    protocol, e.g. ``score -o -``), or nowhere if we have none."""
    try:
        os.fstat(2)
    except OSError:
        return subprocess.DEVNULL
    return 2


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
