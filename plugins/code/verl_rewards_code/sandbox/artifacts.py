"""A compile run's output, written to the host's disk as it comes out of the sandbox.

The runner sends the regular files of the compiler's output directory on the
run's artifact pipe, each as a ``{"path", "size", "mode"}`` JSON line followed
by its bytes (``_inside.send_collected``). An :class:`ArtifactSink` parses
that stream chunk by chunk as the launcher reads it and writes each file into
the compile's directory of the cache: the scorer never holds more than one
chunk and one header line of it, and the files' size on disk (counted in
blocks) is held to the compile's disk limit.
"""

from __future__ import annotations

import json
import os
import shutil

BLOCK = 4096
# A header line is a short JSON object: a path of at most 16 parts, a size, a mode.
MAX_HEADER = 4096


def disk_bytes(size: int) -> int:
    """What a file of ``size`` bytes takes on disk: whole blocks, at least one."""
    return max(1, -(-size // BLOCK)) * BLOCK


class ArtifactSink:
    """Writes the files of a compile run's artifact stream into ``into`` as they arrive,
    at most ``limit`` bytes on disk in all; :meth:`finish` says whether they are whole."""

    def __init__(self, into: str, limit: int) -> None:
        self.into = into
        self.limit = limit
        self.written = 0  # bytes on disk, counted in blocks
        self.error: str | None = None
        self._header = bytearray()
        self._file: int | None = None
        self._left = 0
        self._made: list[str] = []

    def feed(self, chunk: bytes) -> None:
        """Take the next bytes of the stream (after an error, they are dropped)."""
        view = memoryview(chunk)
        while view and self.error is None:
            if self._file is not None:
                view = self._write(view)
                continue
            newline = bytes(view[: MAX_HEADER + 1 - len(self._header)]).find(b"\n")
            if newline == -1:
                self._header += view[: MAX_HEADER + 1 - len(self._header)]
                if len(self._header) > MAX_HEADER:
                    self._fail("the compiler's output arrived damaged (a header line too long)")
                return
            self._header += view[:newline]
            view = view[newline + 1 :]
            self._open(bytes(self._header))
            self._header.clear()

    def finish(self) -> str | None:
        """Close the last file: None when every file arrived whole, else why not."""
        if self._file is not None:
            os.close(self._file)
            self._file = None
            if self.error is None:
                self._fail("the compiler's output arrived damaged (a file was cut short)")
        elif self._header and self.error is None:
            self._fail("the compiler's output arrived damaged (a header without its file)")
        return self.error

    def discard(self) -> None:
        """Remove what was written (a run that did not finish, to be run again)."""
        if self._file is not None:
            os.close(self._file)
            self._file = None
        for path in reversed(self._made):
            if os.path.isdir(path) and not os.path.islink(path):
                shutil.rmtree(path, ignore_errors=True)
            else:
                try:
                    os.unlink(path)
                except FileNotFoundError:
                    pass
        self._made.clear()
        self.written = 0

    def _open(self, line: bytes) -> None:
        try:
            header = json.loads(line)
            path, size, mode = str(header["path"]), int(header["size"]), int(header["mode"])
        except (TypeError, KeyError, ValueError):
            self._fail("the compiler's output arrived damaged")
            return
        parts = path.split("/")
        if size < 0 or any(part in ("", ".", "..") for part in parts):
            self._fail(f"the compiler's output arrived damaged (at {path!r})")
            return
        self.written += disk_bytes(size)
        if self.written > self.limit:
            self._fail(f"the compiler's output passes {self.limit} bytes (the compile's disk limit)")
            return
        target = os.path.join(self.into, *parts)
        try:
            self._makedirs(parts[:-1])
            self._file = os.open(
                target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o755 if mode & 0o100 else 0o644
            )
        except OSError as e:
            self._fail(f"the compiler's output arrived damaged (at {path!r}: {e.strerror})")
            return
        self._made.append(target)
        self._left = size
        if not size:
            self._close_file()

    def _makedirs(self, parts: list[str]) -> None:
        directory = self.into
        for part in parts:
            directory = os.path.join(directory, part)
            if not os.path.isdir(directory):
                os.mkdir(directory, 0o755)
                self._made.append(directory)

    def _write(self, view: memoryview) -> memoryview:
        assert self._file is not None
        size = min(len(view), self._left)
        piece = view[:size]
        try:
            while piece:
                piece = piece[os.write(self._file, piece) :]
        except OSError as e:
            self._fail(f"writing the compiler's output: {e.strerror}")  # the host's disk is full
            return view[:0]
        self._left -= size
        if not self._left:
            self._close_file()
        return view[size:]

    def _close_file(self) -> None:
        if self._file is not None:
            os.close(self._file)
            self._file = None

    def _fail(self, why: str) -> None:
        self.error = why
        self._close_file()
