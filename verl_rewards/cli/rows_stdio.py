"""stdin and stdout as row streams: JSONL in on ``-i -``, JSONL out on ``-o -``.

Rows written to stdout must be the only thing there. :func:`claim_stdout` is
entered before anything imports a reward (a plugin may print at import), and
sends whatever else writes to stdout to stderr until the run ends.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import IO

_claimed: list[IO[str]] = []  # the rows' private handle on stdout, while claimed


def open_stdin() -> IO[str]:
    """stdin as UTF-8 text split on ``\\n`` only (a raw ``\\r`` is JSON whitespace)."""
    return open(sys.stdin.fileno(), encoding="utf-8", newline="\n", closefd=False)


def rows_stdout() -> IO[str]:
    """The handle rows go to; :func:`claim_stdout` must be active."""
    if not _claimed:
        raise RuntimeError("stdout is not claimed for rows: enter claim_stdout() first")
    return _claimed[-1]


@contextlib.contextmanager
def claim_stdout(claim: bool = True) -> Iterator[None]:
    """While active, rows alone reach stdout; other writes (a reward's print, a native
    library when stdout is the process's own) go to stderr. ``claim=False``: no-op."""
    if not claim:
        yield
        return
    previous = sys.stdout
    previous.flush()
    saved_fd = _dup_stdout() if previous is sys.__stdout__ else None
    if saved_fd is None:  # stdout is already redirected in Python (an embedding host, a test)
        sys.stdout = sys.stderr
        _claimed.append(previous)
        try:
            yield
        finally:
            _claimed.pop()
            sys.stdout = previous
        return
    rows = os.fdopen(os.dup(saved_fd), "w", encoding="utf-8", closefd=True)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    _claimed.append(rows)
    try:
        yield
    finally:
        _claimed.pop()
        with contextlib.suppress(OSError, ValueError):
            rows.close()
        sys.stderr.flush()
        os.dup2(saved_fd, 1)
        os.close(saved_fd)
        sys.stdout = previous


def _dup_stdout() -> int | None:
    try:
        return os.dup(1)
    except OSError:  # no file descriptor 1
        return None
