"""Waiting for a run's processes without reaping them too early, and killing what is left of a run."""

from __future__ import annotations

import os
import select
import shutil
import signal
import subprocess
import time
from pathlib import Path

# How long the kernel may take to kill every process of a timed-out run.
STOP_GRACE_S = 10.0
LAUNCH_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}


def pidfd(pid: int) -> int | None:
    """A pidfd of ``pid``, or None where the kernel has none."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def wait_unreaped(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait until ``proc`` exits or ``timeout`` passes, leaving it unreaped."""
    fd = pidfd(proc.pid)
    if fd is not None:
        try:
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            return bool(poller.poll(timeout * 1000))
        finally:
            os.close(fd)
    deadline = time.monotonic() + timeout
    while not exited(proc):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def exited(proc: subprocess.Popen[bytes]) -> bool:
    """``proc`` has exited (it is left unreaped)."""
    if hasattr(os, "waitid"):
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    return proc.poll() is not None


def wait_closed(fd: int, timeout_s: float) -> None:
    """Wait until the write end of pipe ``fd`` is closed everywhere (or ``timeout_s`` passes)."""
    deadline = time.monotonic() + timeout_s
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while (left := deadline - time.monotonic()) > 0:
        if poller.poll(left * 1000) and not os.read(fd, 4096):
            return


def stop_namespace(proc: subprocess.Popen[bytes]) -> None:
    """Kill the runner (PID 1 of the run's namespace) and wait for ``unshare`` to see it die.

    The kernel tears a PID namespace down while its init exits, and
    ``unshare`` waits for that, so once it has exited no process of the run
    is left. Killing ``unshare`` first would return while they still die.
    """
    for fd in _child_pidfds(proc.pid):
        try:
            signal.pidfd_send_signal(fd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(fd)
    wait_unreaped(proc, STOP_GRACE_S)


def _child_pidfds(pid: int) -> list[int]:
    """Pidfds of ``pid``'s children, opened race-free (a child is re-checked after opening)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    opened = []
    try:
        for child in [int(c) for c in path.read_text().split()]:
            try:
                opened.append((child, os.pidfd_open(child)))
            except OSError:
                continue  # already gone
        still = {int(c) for c in path.read_text().split()}
    except (OSError, AttributeError, ValueError):
        still = set()
    kept = []
    for child, fd in opened:
        # An exited child may have been reaped and its pid reused since the
        # first read; one that is still listed is the process the pidfd holds.
        if child in still:
            kept.append(fd)
        else:
            os.close(fd)
    return kept


def kill_group(pgid: int) -> None:
    """SIGKILL process group ``pgid`` (its leader unreaped, so the id is still the run's)."""
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def kill_uid(uid: int) -> None:
    """Kill every process of the run's uid: those that left the process group."""
    kill = shutil.which("kill") or "/bin/kill"
    subprocess.run(
        [kill, "-KILL", "-1"],
        user=uid,
        group=uid,
        extra_groups=[],
        env=LAUNCH_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=10,
    )
