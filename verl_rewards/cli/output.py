"""Small text helpers shared by the subcommands (stdout is looked up per call)."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field


def emit(*lines: str) -> None:
    """Print ``lines`` to stdout."""
    for line in lines:
        print(line, file=sys.stdout)


def note(message: str) -> None:
    """Print a one-line note to stderr (kept out of machine-readable stdout)."""
    print(f"note: {message}", file=sys.stderr)


def show_library_logs() -> None:
    """Show what verl-rewards logs while a command works (a service retried, a pool
    replaced) on stderr as ``verl-rewards: warning: ...`` lines; once per process."""
    import logging

    class StderrHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                print(f"verl-rewards: {record.levelname.lower()}: {self.format(record)}",
                      file=sys.stderr, flush=True)
            except Exception:  # noqa: BLE001 - logging's own contract: never raise from emit
                self.handleError(record)

    logger = logging.getLogger("verl_rewards")
    if not any(type(h).__name__ == "StderrHandler" for h in logger.handlers):
        logger.addHandler(StderrHandler(logging.WARNING))


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns; the last column is not padded."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths)]
        return "  ".join([*padded, cells[-1]]).rstrip()

    return [line(headers), *(line(r) for r in rows)]


@dataclass
class Captured:
    """What a block wrote to stdout/stderr, and the warnings it raised, as lines."""

    lines: list[str] = field(default_factory=list)

    def tail(self, limit: int = 40) -> list[str]:
        """The last ``limit`` lines, after a line saying how many were left out."""
        if len(self.lines) <= limit:
            return list(self.lines)
        return [f"... ({len(self.lines) - limit} earlier lines)", *self.lines[-limit:]]


@contextlib.contextmanager
def captured() -> Iterator[Captured]:
    """Hold back everything a block writes to stdout and stderr (Python's streams and
    file descriptors 1 and 2, so C extensions, progress bars and log handlers too)
    and the warnings it raises; the result is filled in when the block ends."""
    result = Captured()
    _flush_all()
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings(record=True) as caught:
        saved = _redirect_fds(sink.fileno())
        stream = open(sink.fileno(), "w", buffering=1, encoding="utf-8",
                      errors="replace", closefd=False)
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            try:
                yield result
            finally:
                _flush_all()
                stream.close()
                _restore_fds(saved)
        sink.seek(0)
        result.lines.extend(sink.read().decode("utf-8", "replace").splitlines())
        result.lines.extend(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}"
                            for w in caught)


def _flush_all() -> None:
    for stream in {id(s): s for s in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__)
                   if s is not None}.values():
        with contextlib.suppress(Exception):
            stream.flush()


def _redirect_fds(target: int) -> list[tuple[int, int]]:
    """Point fds 1 and 2 at ``target``; the saved copies (none for a closed fd)."""
    saved: list[tuple[int, int]] = []
    for fd in (1, 2):
        try:
            saved.append((fd, os.dup(fd)))
        except OSError:  # closed: nothing can write to it anyway
            continue
        os.dup2(target, fd)
    return saved


def _restore_fds(saved: list[tuple[int, int]]) -> None:
    for fd, copy in saved:
        os.dup2(copy, fd)
        os.close(copy)
