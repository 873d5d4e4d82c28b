"""A worker process's :class:`~verl_rewards.watchdog.Progress`, readable by its host
without the worker's help.

A worker stuck in C holding the GIL cannot answer a question, but its scoring
loop wrote which call it is in, since when and for how long it is allowed
before it got stuck: here, into a small shared memory block the host maps too.
So the host finds a stuck call at its allowance plus the grace, whatever the
worker is doing, and knows which sample it is. Each write is one record with a
sequence number at both ends; a reader that sees them differ (a write in
progress) reads again.
"""

from __future__ import annotations

import mmap
import os
import struct
import tempfile
import time

from ..watchdog import Progress
from .pool import Report

# seq, index (-1: no call), span, started, allowed (-1: no limit), seq
_RECORD = struct.Struct("<qqqddq")
SIZE = mmap.PAGESIZE
_IDLE = -1


def new_block() -> int:
    """A file descriptor of a fresh shared block (anonymous memory where the system has it)."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("verl-rewards-progress", os.MFD_CLOEXEC)
    else:  # pragma: no cover - no memfd (macOS): an unlinked temporary file
        with tempfile.TemporaryFile() as f:
            fd = os.dup(f.fileno())
    os.ftruncate(fd, SIZE)
    return fd


def map_block(fd: int) -> mmap.mmap:
    """Map the block ``fd`` names, shared."""
    return mmap.mmap(fd, SIZE, mmap.MAP_SHARED, mmap.PROT_READ | mmap.PROT_WRITE)


class SharedProgress(Progress):
    """A :class:`Progress` that also writes each call's start (and end) to ``block``."""

    __slots__ = ("_block", "_seq")

    def __init__(self, block: mmap.mmap) -> None:
        self._block = block
        self._seq = 0
        self.started, self.allowed_s, self.span = 0.0, None, 1
        self.index = None  # written last, as Progress.begin does

    @property
    def index(self) -> int | None:
        return _index.__get__(self)  # type: ignore[no-any-return]

    @index.setter
    def index(self, value: int | None) -> None:
        # Progress.begin sets index last, after the call's other fields.
        _index.__set__(self, value)
        self._seq += 1
        allowed = self.allowed_s
        _RECORD.pack_into(self._block, 0, self._seq, _IDLE if value is None else value, self.span,
                          self.started, -1.0 if allowed is None else allowed, self._seq)


_index = Progress.__dict__["index"]  # the slot itself


def read(block: mmap.mmap) -> Report:
    """What the worker writing ``block`` is running, as its host reads it."""
    for _ in range(100):
        seq, index, span, started, allowed, seq_end = _RECORD.unpack_from(block, 0)
        if seq == seq_end:
            break
    if index == _IDLE:
        return Report(None, 1, 0.0, None)
    return Report(index, span, time.monotonic() - started, None if allowed < 0 else allowed)
