"""The CLI's one output channel: results to stdout (:func:`emit`), every message to
stderr (:func:`say`), the program name added here alone. Streams are looked up per
call, so a captured or redirected stream is honoured."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
import warnings
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

PROG = "verl-rewards"

# What a message is decides how it looks (pypa/build's ``log(message, kind=...)``):
# the program's own errors, warnings and interruptions carry its name; a note, one
# sample's error in a listing and a plain line (a summary, a frame) do not.
Kind = Literal["error", "warning", "interrupted", "note", "sample_error", "line"]
_HEADS: Mapping[Kind, str] = {
    "error": f"{PROG}: error",
    "warning": f"{PROG}: warning",
    "interrupted": f"{PROG}: interrupted",
    "note": "note",
    "sample_error": "error",
    "line": "",
}


def emit(*lines: str) -> None:
    """Print ``lines`` to stdout: what the command produces (a table, JSON, a summary)."""
    for line in lines:
        print(line, file=sys.stdout)


def say(kind: Kind, text: str = "") -> None:
    """Print one message to stderr, kept out of machine-readable stdout, looking as its
    ``kind`` does (``say("error", "bad")`` -> ``verl-rewards: error: bad``)."""
    print(": ".join(part for part in (_HEADS[kind], text) if part), file=sys.stderr, flush=True)


def progress_bar(total: int | None, desc: str, show: bool) -> Any:
    """A tqdm progress bar on stderr, drawn only when ``show`` and stderr is a terminal."""
    from tqdm import tqdm

    return tqdm(total=total, unit="sample", file=sys.stderr, disable=not (show and sys.stderr.isatty()),
                dynamic_ncols=True, desc=desc)


def show_library_logs() -> None:
    """Show what verl-rewards logs while a command works (a service retried, a pool
    replaced) on stderr as ``verl-rewards: warning: ...`` lines; once per process."""
    import logging

    class StderrHandler(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            try:
                say("error" if record.levelno >= logging.ERROR else "warning", self.format(record))
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
    flush_all()
    with tempfile.TemporaryFile() as sink, warnings.catch_warnings(record=True) as caught:
        saved = _redirect_fds(sink.fileno())
        stream = open(sink.fileno(), "w", buffering=1, encoding="utf-8",
                      errors="replace", closefd=False)
        with contextlib.redirect_stdout(stream), contextlib.redirect_stderr(stream):
            try:
                yield result
            finally:
                flush_all()
                stream.close()
                _restore_fds(saved)
        sink.seek(0)
        result.lines.extend(sink.read().decode("utf-8", "replace").splitlines())
        result.lines.extend(f"{w.filename}:{w.lineno}: {w.category.__name__}: {w.message}"
                            for w in caught)


def flush_all() -> None:
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
