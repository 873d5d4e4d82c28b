"""The Ray session the ``ray`` executor runs on: joined or started once per
process and shared by every executor in it.

A session this module started is shut down when the last executor using it
closes, never under another one. Connecting to an address has a deadline
and an error that says what to do, and a Ctrl-C while Ray starts is held
until start-up ends, then shuts down what was started, so no Ray helper
process outlives the interrupted program.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import signal
import socket
import threading
from collections.abc import Iterator
from types import FrameType
from typing import Any

import ray

from ..errors import ExecutorError

CONNECT_TIMEOUT_S = 10.0

log = logging.getLogger(__name__)

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
        recorded = _recorded_cluster()
        if recorded is not None:
            _connect(recorded)  # the cluster `ray start` left running: join it, as ray.init would
            return False
        # "local": never the address file, which _recorded_cluster found stale or absent.
        _init_holding_interrupts(address="local", include_dashboard=False, log_to_driver=True)
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


def _recorded_cluster() -> str | None:
    """The address of the cluster ``ray start`` recorded on this machine (Ray's
    ``ray_current_cluster`` file, which a bare ``ray.init()`` joins), when something
    answers there. A stale one (its cluster died without ``ray stop``), which Ray
    would retry for minutes, is reported and ignored."""
    from ray._common.utils import get_ray_address_file

    path = get_ray_address_file(None)  # under RAY_TMPDIR, else TMPDIR, else /tmp: as ray.init reads it
    try:
        with open(path) as f:
            address = f.read().strip()
    except OSError:
        return None
    if not address:
        return None
    problem = _unreachable(address)
    if problem is not None:
        log.warning("ignoring %s: nothing answers at %s, the address it records (%s: %s), so the "
                    "cluster started there with `ray start` has ended without `ray stop`. "
                    "Starting a local Ray session instead; `ray stop` (or deleting the file) "
                    "forgets it, reward.ray_address or RAY_ADDRESS joins a cluster",
                    path, address, type(problem).__name__, problem)
        return None
    return address


def _check_reachable(address: str) -> None:
    """Fail within ``CONNECT_TIMEOUT_S`` when nothing listens at a ``host:port``
    address (Ray itself would retry for minutes)."""
    problem = _unreachable(address)
    if problem is not None:
        raise ExecutorError(
            f"cannot reach a Ray cluster at {address} ({type(problem).__name__}: {problem}). "
            f"Start one with `ray start --head`, or fix reward.ray_address / RAY_ADDRESS "
            f"(unset both to start a local session)"
        )


def _unreachable(address: str, timeout_s: float = CONNECT_TIMEOUT_S) -> OSError | None:
    """Why nothing answers at a ``host:port`` address, or None (also for "auto",
    "local" and forms Ray resolves itself)."""
    match = _HOST_PORT.match(address.strip())
    if match is None:
        return None
    host, port = match.group(1), int(match.group(2))
    try:
        socket.create_connection((host, port), timeout=timeout_s).close()
    except OSError as e:
        return e
    return None


def _init_holding_interrupts(**options: Any) -> None:
    """``ray.init`` with SIGINT (and SIGTERM when it has a Python handler, such as
    the CLI's) held until it returns; a signal that arrived meanwhile shuts Ray down
    (its helper processes too), then is handled: ``KeyboardInterrupt`` for SIGINT,
    the held handler for SIGTERM."""
    if threading.current_thread() is not threading.main_thread():
        ray.init(**options)  # signals are delivered to the main thread only
        return
    interrupted: list[signal.Signals] = []

    def hold(signum: int, frame: FrameType | None) -> None:
        interrupted.append(signal.Signals(signum))

    held = {signal.SIGINT: signal.signal(signal.SIGINT, hold)}
    if callable(signal.getsignal(signal.SIGTERM)):  # the default handler just ends the process
        held[signal.SIGTERM] = signal.signal(signal.SIGTERM, hold)
    try:
        with _no_ray_sigterm_handlers(signal.SIGTERM in held):
            ray.init(**options)
    finally:
        for signum, previous in held.items():
            signal.signal(signum, previous if previous is not None else signal.default_int_handler)
        if interrupted and ray.is_initialized():
            ray.shutdown()
    if interrupted:
        handler = held[interrupted[0]]
        if interrupted[0] == signal.SIGTERM and callable(handler):
            handler(interrupted[0], None)
        raise KeyboardInterrupt


@contextlib.contextmanager
def _no_ray_sigterm_handlers(holding: bool) -> Iterator[None]:
    """Keep ``ray.init`` from replacing a held SIGTERM handler with its own (they stop
    what it started so far and exit: a SIGTERM in the middle of a start then left the
    raylet's agents running); the process's handler, put back afterwards, decides."""
    utils = ray._private.utils
    original = getattr(utils, "set_sigterm_handler", None)
    if not holding or original is None:
        yield
        return
    utils.set_sigterm_handler = lambda handler: None
    try:
        yield
    finally:
        utils.set_sigterm_handler = original
