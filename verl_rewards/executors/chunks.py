"""What every pool worker runs for a chunk: score it as a stream of pieces.

A Ray actor (:mod:`.ray_worker`) and a worker process (:mod:`.process_worker`)
score a chunk with :func:`score_chunk` and send each :class:`Piece` as soon as
it is produced, so a driver whose worker died keeps what it received and
re-runs only the rest. In ``precise`` mode a piece is one sample, sent before
the next sample starts, so a death is pinned on exactly the sample running.
No Ray here.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any, NamedTuple

from ..dispatch import LoadedComposite, LoadedSpec, score_spec
from ..limits import Limits
from ..outcomes import Outcome
from ..samples import Sample
from ..watchdog import Progress

FLUSH_S = 0.05  # how much scoring a normal-mode piece holds: bounds what a crash re-runs
_FIRST_PIECE = 8
_MAX_PIECE = 128  # and at most this many samples: bounds the precise re-run after a crash


class Piece(NamedTuple):
    """Outcomes for a run of a chunk's samples, from ``offset`` in the chunk."""

    offset: int
    outcomes: list[Outcome]
    rss_mb: float  # the worker's resident memory after producing them


def score_chunk(
    loaded: LoadedSpec, samples: Sequence[Sample], limits: Limits, first_index: int, precise: bool,
    progress: Progress, dumps: Callable[[Any], bytes],
) -> Iterator[Piece]:
    """Score one chunk (``first_index``: its first sample's index in the batch), yielding
    :class:`Piece` records as they are produced; ``dumps`` is how the worker will send
    them (an extra value it cannot send fails only its sample)."""
    size = 1 if precise else _FIRST_PIECE if _per_sample(loaded) else len(samples)
    offset = 0
    while offset < len(samples):
        began = time.monotonic()
        part = samples[offset:offset + size]
        outcomes = score_spec(loaded, part, limits, first_index=first_index + offset, progress=progress)
        yield Piece(offset, portable(outcomes, dumps), rss_mb())
        offset += len(part)
        if not precise:
            size = _next_size(size, time.monotonic() - began)


def portable(outcomes: list[Outcome], dumps: Callable[[Any], bytes]) -> list[Outcome]:
    """``outcomes``, with any whose extra values ``dumps`` cannot send (a lock, a socket)
    turned into that sample's failure, so the rest still reach the driver."""
    if all(o.extra is None for o in outcomes):
        return outcomes
    try:  # the C pickler first: fast, and what it takes the others take too
        pickle.dumps([o.extra for o in outcomes], protocol=pickle.HIGHEST_PROTOCOL)
        return outcomes
    except Exception:  # find the samples at fault, one by one, as they will be sent
        return [_portable_one(o, dumps) for o in outcomes]


def _portable_one(outcome: Outcome, dumps: Callable[[Any], bytes]) -> Outcome:
    for key, value in (outcome.extra or {}).items():
        try:
            dumps(value)
        except Exception as e:
            return Outcome(None, None, f"RewardValueError: extra value {key!r} ({type(value).__name__}) "
                                       f"cannot be sent from the worker: {type(e).__name__}: {e}"[:500],
                           "failed")
    return outcome


_statm: tuple[int, int] | None = None  # (pid, fd): /proc/self/statm kept open, read again per piece


def rss_mb() -> float:
    """This process's resident memory in MiB (0.0 where /proc is not available)."""
    global _statm
    try:
        if _statm is None or _statm[0] != os.getpid():  # opening it costs more than reading it
            _statm = (os.getpid(), os.open("/proc/self/statm", os.O_RDONLY | os.O_CLOEXEC))
        resident_pages = int(os.pread(_statm[1], 128, 0).split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return resident_pages * _PAGE / 2**20


_PAGE = os.sysconf("SC_PAGE_SIZE")


def _per_sample(loaded: LoadedSpec) -> bool:
    """Whether each sample is its own call (sync sample rewards), so a chunk can
    be cut anywhere; batch and async calls cover the whole chunk."""
    parts = loaded.loaded.values() if isinstance(loaded, LoadedComposite) else (loaded,)
    return all(p.shape == "sample" and not p.is_async for p in parts)


def _next_size(size: int, elapsed_s: float) -> int:
    """The next piece's size, aiming at ``FLUSH_S`` of work (at most doubling)."""
    if elapsed_s <= 0:
        return min(_MAX_PIECE, size * 2)
    return max(1, min(_MAX_PIECE, size * 2, int(size * FLUSH_S / elapsed_s)))
