"""Pickled frames over a private pipe between the host and a worker process.

A frame is an 8-byte length and a pickle. The worker writes and reads with
plain blocking calls (it has nothing else to do); the host never blocks
without a deadline, whatever the worker does: :class:`FrameReader` takes what
a pipe holds without waiting (a worker that stops halfway through a frame
cannot hang the host), and :func:`send_frame` writes within a deadline.
"""

from __future__ import annotations

import os
import pickle
import select
import struct
import time
from typing import Any

_HEADER = struct.Struct("<Q")
MAX_FRAME = 1 << 34  # 16 GiB: a length past it is not a frame (a reward wrote to our pipe)
_READ_SIZE = 1 << 20


class ChannelError(Exception):
    """The other end is gone, broke the protocol, or did not read in time."""


def frame(message: Any) -> bytes:
    """``message`` as one frame."""
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    return _HEADER.pack(len(data)) + data


def write_frame(fd: int, message: Any) -> None:
    """Write ``message`` to ``fd`` as one frame, blocking until it is all written."""
    view = memoryview(frame(message))
    while view:
        view = view[os.write(fd, view):]


def read_frame(fd: int) -> Any:
    """The next frame's message from ``fd``, blocking; :class:`ChannelError` at end of file."""
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    if size > MAX_FRAME:
        raise ChannelError(f"a frame of {size} bytes is not one of ours")
    return pickle.loads(_read_exactly(fd, size))


def _read_exactly(fd: int, size: int) -> bytes:
    parts: list[bytes] = []
    left = size
    while left:
        part = os.read(fd, min(left, _READ_SIZE))
        if not part:
            raise ChannelError("the other end closed the channel")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


def send_frame(fd: int, data: bytes, deadline_s: float) -> None:
    """Write the frame ``data`` to the non-blocking ``fd`` within ``deadline_s``;
    :class:`ChannelError` when the reader is gone or has not taken it in time."""
    view = memoryview(data)
    ends = time.monotonic() + deadline_s
    poller = select.poll()  # not select.select: a host may hold fds past FD_SETSIZE
    poller.register(fd, select.POLLOUT)
    while True:  # write first: a small frame fits the pipe at once
        try:
            view = view[os.write(fd, view):]
        except BlockingIOError:
            pass
        except OSError as e:  # EPIPE: the worker is gone
            raise ChannelError(f"the worker is gone ({e.strerror})") from None
        if not view:
            return
        left = ends - time.monotonic()
        if left <= 0:
            raise ChannelError(f"the worker did not read its request within {deadline_s:g} s")
        poller.poll(left * 1000)


class FrameReader:
    """Frames from a non-blocking pipe, read as they arrive, never waiting."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.closed = False  # end of file: the writer is gone
        self._buffer = bytearray()

    def fill(self) -> None:
        """Take whatever the pipe holds now (call when it is readable)."""
        while not self.closed:
            try:
                part = os.read(self.fd, _READ_SIZE)
            except BlockingIOError:
                return
            except OSError:
                self.closed = True
                return
            if not part:
                self.closed = True
                return
            self._buffer += part
            if len(part) < _READ_SIZE:
                return

    def has_frame(self) -> bool:
        """Whether a whole frame is buffered."""
        if len(self._buffer) < _HEADER.size:
            return False
        (size,) = _HEADER.unpack_from(self._buffer)
        return bool(size > MAX_FRAME or len(self._buffer) >= _HEADER.size + size)

    def ready(self) -> bool:
        """Whether :meth:`next` has something to give: a frame, or the end."""
        return self.closed or self.has_frame()

    def next(self) -> Any:
        """The next buffered frame's message; :class:`ChannelError` at the end of
        the stream, or for bytes that are not a frame."""
        if not self.has_frame():
            raise ChannelError("the worker closed its channel" if self.closed else "no frame yet")
        (size,) = _HEADER.unpack_from(self._buffer)
        if size > MAX_FRAME:
            self.closed = True
            raise ChannelError(f"a frame of {size} bytes is not one of ours")
        data = bytes(self._buffer[_HEADER.size:_HEADER.size + size])
        del self._buffer[:_HEADER.size + size]
        try:
            return pickle.loads(data)
        except Exception as e:  # not a pickle we wrote
            self.closed = True
            raise ChannelError(f"an unreadable frame ({type(e).__name__}: {e})") from None
