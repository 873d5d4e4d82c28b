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

from ..child import stdout_diverted

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
    if previous is not sys.__stdout__ or not _has_stdout_fd():
        # stdout is already redirected in Python (an embedding host, a test), or there is no fd 1
        sys.stdout = sys.stderr
        _claimed.append(previous)
        try:
            yield
        finally:
            _claimed.pop()
            sys.stdout = previous
        return
    with stdout_diverted() as rows:
        _claimed.append(rows)
        try:
            yield
        finally:
            _claimed.pop()


def _has_stdout_fd() -> bool:
    try:
        os.fstat(1)
    except OSError:  # no file descriptor 1
        return False
    return True
