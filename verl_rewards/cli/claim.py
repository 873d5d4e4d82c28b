"""One ``score`` run per output: a run claims its output before it reads or writes it.

The claim is an exclusive ``flock`` on ``.NAME.lock`` beside the output, taken
without waiting and held until the run ends. The kernel drops a lock with the
last descriptor of its holder, so a run killed with ``kill -9`` leaves no claim
to clean up: the next run takes it over. The file holds the owner's pid, host
and start time, so a refused run names the run it lost to. A claim is
released by removing the file while still holding its lock; a run that
locked a file removed meanwhile (a replaced inode) tries again on the new one,
so two runs can never both hold "the" claim.
"""

from __future__ import annotations

import contextlib
import datetime
import errno
import fcntl
import json
import os
import socket
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Final

from .errors import UsageError

# How long a refused run waits for the owner to write who it is (it locks, then writes).
OWNER_WRITE_S: Final = 2.0


def path_for(output: Path) -> Path:
    """The claim's file: ``.NAME.lock`` beside the output."""
    return output.with_name(f".{output.name}.lock")


@contextlib.contextmanager
def claimed(output: Path) -> Iterator[None]:
    """Hold the claim on ``output`` for the ``with`` block, or raise :class:`UsageError`
    naming the run that holds it (nothing of that run's is touched)."""
    fd = _acquire(output)
    try:
        yield
    finally:
        _release(output, fd)


def _acquire(output: Path) -> int:
    lock = path_for(output)
    try:
        output.parent.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise UsageError(f"cannot write output file {output}: {e.strerror or e}") from e
    while True:
        try:
            fd = os.open(lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o644)
        except OSError as e:
            raise UsageError(f"cannot claim output file {output} ({lock}): {e.strerror or e}") from e
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError as e:
            owner = _owner(fd)
            os.close(fd)
            if e.errno in (errno.EWOULDBLOCK, errno.EACCES):
                raise UsageError(_busy(output, owner)) from None
            raise UsageError(f"cannot claim output file {output} ({lock}): {e.strerror or e}") from e
        if _same_file(fd, lock):
            break
        os.close(fd)  # its owner released it (removed the file) meanwhile: claim the new one
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(_me()).encode(), 0)
    return fd


def _release(output: Path, fd: int) -> None:
    """Remove the claim's file, then unlock (in that order: see the module docstring)."""
    with contextlib.suppress(OSError):
        if _same_file(fd, path_for(output)):
            path_for(output).unlink()
    os.close(fd)


def _same_file(fd: int, path: Path) -> bool:
    try:
        return os.path.samestat(os.fstat(fd), os.stat(path))
    except OSError:
        return False


def _me() -> dict[str, Any]:
    return {"pid": os.getpid(), "host": socket.gethostname(), "started": time.time()}


def _owner(fd: int) -> dict[str, Any] | None:
    """Who holds the claim, as it wrote it; ``None`` when it has not written yet in time."""
    deadline = time.monotonic() + OWNER_WRITE_S
    while True:
        try:
            data = json.loads(os.pread(fd, 4096, 0) or b"null")
        except (OSError, ValueError):
            data = None
        if isinstance(data, dict) or time.monotonic() > deadline:
            return data if isinstance(data, dict) else None
        time.sleep(0.02)


def _busy(output: Path, owner: dict[str, Any] | None) -> str:
    """The refusal: which run holds ``output``, and what to do."""
    if owner is None:
        who = "another run"
    else:
        started = datetime.datetime.fromtimestamp(float(owner.get("started", 0))).strftime("%Y-%m-%d %H:%M:%S")
        here = owner.get("host") == socket.gethostname()
        who = (f"another run (pid {owner.get('pid')}"
               f"{'' if here else ' on host ' + str(owner.get('host'))}, started {started})")
    return (f"output file {output} is being written by {who}: two runs would mix or delete "
            f"each other's rows; wait for it to end (or stop it), or write to another output "
            f"(the claim is {path_for(output).name}, held while that run lives)")
