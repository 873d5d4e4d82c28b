"""The Ray session the ``ray`` executor runs on: joined or started once per
process and shared by every executor in it.

A session this module started is shut down when the last executor using it
closes, never under another one. Connecting to an address has a deadline
and an error that says what to do, and a Ctrl-C while Ray starts is held
until start-up ends, then shuts down what was started, so no Ray helper
process outlives the interrupted program.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import threading
from types import FrameType
from typing import Any

import ray

from ..errors import ExecutorError

CONNECT_TIMEOUT_S = 10.0

_lock = threading.Lock()
_started = False  # this module ray.init-ed the running session
_users = 0  # executors holding that session
_HOST_PORT = re.compile(r"^(?:ray://)?\[?([^\]\s/]+?)\]?:(\d+)$")


def acquire(address: str | None) -> bool:
    """Join the running session, connect to ``address`` (or ``RAY_ADDRESS``), or
    start a local one. True when the caller holds a share to :func:`release`."""
    global _started, _users
    with _lock:
        if ray.is_initialized():
            if _started:
                _users += 1
            return _started
        _started, _users = False, 0
        address = address or os.environ.get("RAY_ADDRESS")
        if address:
            _connect(address)
            return False
        _init_holding_interrupts(include_dashboard=False, log_to_driver=True)
        _started, _users = True, 1
        return True


def joined_cluster_resources() -> dict[str, float] | None:
    """The resources of the Ray cluster this process has joined (None: it has joined none)."""
    if not ray.is_initialized():
        return None
    return dict(ray.cluster_resources())  # type: ignore[no-untyped-call]


def release() -> None:
    """Give back one share; the last one shuts down the session this module started."""
    global _started, _users
    with _lock:
        if not _started or _users <= 0:
            return
        _users -= 1
        if _users == 0:
            _started = False
            if ray.is_initialized():
                ray.shutdown()


def _connect(address: str) -> None:
    _check_reachable(address)
    try:
        _init_holding_interrupts(address=address, log_to_driver=True)
    except ConnectionError as e:
        raise ExecutorError(
            f"cannot connect to the Ray cluster at {address}: {e}. Check that the "
            f"cluster is running (`ray status --address={address}`); if it uses token "
            f"authentication, set RAY_AUTH_MODE=token and its token (RAY_AUTH_TOKEN "
            f"or RAY_AUTH_TOKEN_PATH) in this process's environment"
        ) from e


def _check_reachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> None:
    """Fail within ``timeout_s`` when nothing listens at a ``host:port`` address
    (Ray itself would retry for minutes)."""
    match = _HOST_PORT.match(address.strip())
    if match is None:  # "auto", "local", or a form Ray resolves itself
        return
    host, port = match.group(1), int(match.group(2))
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as e:
        raise ExecutorError(
            f"cannot reach a Ray cluster at {address} ({type(e).__name__}: {e}). Start one "
            f"with `ray start --head`, or fix reward.ray_address / RAY_ADDRESS (unset both "
            f"to start a local session)"
        ) from None


def _init_holding_interrupts(**options: Any) -> None:
    """``ray.init`` with SIGINT held until it returns; an interrupt that arrived
    meanwhile shuts Ray down (its helper processes too), then is raised."""
    if threading.current_thread() is not threading.main_thread():
        ray.init(**options)  # signals are delivered to the main thread only
        return
    interrupted: list[int] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        interrupted.append(signum)

    previous = signal.signal(signal.SIGINT, hold)
    try:
        ray.init(**options)
    finally:
        signal.signal(signal.SIGINT, previous if previous is not None else signal.default_int_handler)
        if interrupted and ray.is_initialized():
            ray.shutdown()
    if interrupted:
        raise KeyboardInterrupt
