"""A run's pipes, and the pump that feeds its stdin and reads its output within the caps and the deadline."""

from __future__ import annotations

import os
import select
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .artifacts import ArtifactSink
from .records import Limits

# Startup of the namespaces and the interpreter is not the program's time.
STARTUP_GRACE_S = 1.0
STDERR_TAIL_BYTES = 4096


@dataclass
class Streams:
    """What the launcher read from a run's pipes, within the caps."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr_tail: bytearray = field(default_factory=bytearray)
    stderr_total: int = 0
    status: bytearray = field(default_factory=bytearray)
    log: bytearray = field(default_factory=bytearray)
    sink: ArtifactSink | None = None
    exited: bool = False
    output_limit_hit: bool = False
    returncode: int = 0


class Pipes:
    """A run's pipes: the launcher's ends (``ours``) and the run's (``theirs``, to hand over)."""

    NAMES = ("stdin", "stdout", "log", "stderr", "status", "lifeline")

    def __init__(self, artifact: bool, reaped: bool = False) -> None:
        self.ours: dict[str, int] = {}
        self.theirs: dict[str, int] = {}
        for name in (*self.NAMES, *(["artifact"] if artifact else []), *(["reaped"] if reaped else [])):
            read_end, write_end = os.pipe()
            # The run reads stdin and the lifeline; it writes everything else.
            mine, its = (write_end, read_end) if name in ("stdin", "lifeline") else (read_end, write_end)
            self.ours[name], self.theirs[name] = mine, its

    def close_theirs(self) -> None:
        for fd in self.theirs.values():
            os.close(fd)
        self.theirs = {}

    def close_ours(self, names: tuple[str, ...]) -> None:
        for name in names:
            fd = self.ours.pop(name, None)
            if fd is not None:
                os.close(fd)


def pump(
    pipes: Pipes,
    stdin: bytes,
    limits: Limits,
    streams: Streams,
    exit_fd: int | None,
    exited: Callable[[], bool] | None,
) -> None:
    """Feed stdin and read every output pipe until the run ends, the time limit
    passes, or the output passes ``max_output_bytes`` (then stop early). The
    run has ended when ``exit_fd`` (a pidfd) is readable, when ``exited()``
    says so (polled), or, with neither, when its status pipe closes (its
    runner, the only holder, closed it). Closes every pipe but the lifeline
    (and ``reaped``)."""
    deadline = time.monotonic() + limits.timeout_s + STARTUP_GRACE_S
    names = ("stdout", "stderr", "log", "status", "artifact")
    readers = {pipes.ours[name]: name for name in names if name in pipes.ours}
    stdin_fd = pipes.ours["stdin"]
    writer: int | None = stdin_fd
    os.set_blocking(stdin_fd, False)
    pending = memoryview(stdin)
    # poll, not select: a worker may hold more than FD_SETSIZE (1024) descriptors.
    poller = select.poll()
    for fd in [*readers, *([exit_fd] if exit_fd is not None else [])]:
        poller.register(fd, select.POLLIN)
    poller.register(stdin_fd, select.POLLOUT)
    try:
        while True:
            if writer is not None and not pending:
                poller.unregister(writer)
                os.close(writer)
                writer = None
            left = deadline - time.monotonic()
            if left <= 0:
                return
            wait_s = min(left, 0.01) if exit_fd is None and exited is not None else left
            events = dict(poller.poll(wait_s * 1000))
            if writer is not None and writer in events:
                try:
                    pending = pending[os.write(writer, pending[:65536]) :]
                except BrokenPipeError:
                    pending = pending[:0]
            status_closed = False
            for fd in [fd for fd in events if fd in readers]:
                name = readers[fd]
                if not _read_into(fd, readers, streams, limits):
                    streams.output_limit_hit = True
                    return
                if fd not in readers:
                    poller.unregister(fd)
                    status_closed |= name == "status"
            if (
                (exit_fd is not None and exit_fd in events)
                or (exit_fd is None and exited is not None and exited())
                or (exit_fd is None and exited is None and status_closed)
            ):
                streams.exited = True
                _drain(readers, streams, limits)
                return
    finally:
        for fd in [*readers, *([writer] if writer is not None else []), *([exit_fd] if exit_fd is not None else [])]:
            os.close(fd)
        pipes.ours = {k: v for k, v in pipes.ours.items() if k in ("lifeline", "reaped")}


def _read_into(fd: int, readers: dict[int, str], streams: Streams, limits: Limits) -> bool:
    """Read what ``fd`` has; False when the run's output passed its cap."""
    chunk = os.read(fd, 65536)
    name = readers[fd]
    if not chunk:
        del readers[fd]
        os.close(fd)
        return True
    if name == "stdout":
        streams.stdout += chunk
        if len(streams.stdout) >= limits.max_output_bytes:
            del streams.stdout[limits.max_output_bytes :]
            return False
    elif name == "stderr":
        streams.stderr_total += len(chunk)
        streams.stderr_tail = (streams.stderr_tail + chunk)[-STDERR_TAIL_BYTES:]
        return streams.stderr_total < limits.max_output_bytes
    elif name == "artifact":
        if streams.sink is not None:
            streams.sink.feed(chunk)  # written as it arrives; past the disk limit, dropped and refused
    else:
        # The runner's own status and log are small; a cap still bounds them.
        target = streams.status if name == "status" else streams.log
        if len(target) < limits.max_output_bytes:
            target += chunk
    return True


def _drain(readers: dict[int, str], streams: Streams, limits: Limits) -> None:
    """After the runner exited: read what its pipes still hold, without waiting
    for processes that escaped it (without a PID namespace) to close them."""
    for fd in list(readers):
        os.set_blocking(fd, False)
        while fd in readers:
            try:
                if not _read_into(fd, readers, streams, limits):
                    streams.output_limit_hit = True
                    return
            except BlockingIOError:
                break
