"""The Ray pool's fault policy, as plain functions over batch indices (no Ray).

:mod:`.ray_pool` keeps the actors and the dispatch loop; what to do when a
worker dies, stalls or grows is decided here:

* a batch is cut into contiguous chunks, a few per worker;
* a worker that dies in a normal chunk: its unfinished samples are re-run in
  *precise* mode (one sample per piece, each taken before the next starts),
  where the next death is pinned on exactly one sample; that sample is
  charged (twice when it also caused the first death) and failed at
  ``max_sample_crashes``, else re-run alone;
* a worker stuck past its allowance in code Python cannot interrupt: the
  stuck sample is a timeout and the chunk's others are re-run; when the
  culprit is unknown (a batch or async call, or a silent worker) the
  unfinished samples are re-run in precise mode first;
* between chunks, a worker past ``worker_max_calls`` chunks or
  ``worker_max_rss_mb`` is recycled.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal, NamedTuple

from ..outcomes import Outcome
from ..samples import contiguous_runs
from ..scoring import timeout_outcome

MAX_CHUNK = 512
CHUNKS_PER_WORKER = 4
GRACE_S = 1.0  # past a call's allowance before it counts as stuck

Stuck = int | Literal["unknown"]  # the stuck sample's batch index, or no single culprit
# In the error of a sample whose call was stopped only by killing its worker (readers
# such as the audit tell it from a timeout the call itself gave in to).
UNINTERRUPTIBLE = "in code Python could not interrupt"
WORKER_DIED = "WorkerDied"  # the error type of a sample failed for the worker deaths it caused


@dataclass(frozen=True)
class Chunk:
    """A contiguous run of batch indices sent to one worker in one call."""

    indices: tuple[int, ...]
    precise: bool = False  # one sample per piece, each taken before the next starts
    # A worker already died on these samples (in normal mode, so on which one is
    # unknown): the first that kills a worker again is charged that death too.
    died_on: bool = False


class Verdict(NamedTuple):
    """What follows a fault: chunks to run again and samples settled now."""

    requeue: tuple[Chunk, ...] = ()
    settled: Mapping[int, Outcome] = {}
    charged: tuple[int, int] | None = None  # (index, its crashes so far) when a death was pinned


def plan_chunks(n: int, workers: int, chunk_size: int | None = None) -> list[Chunk]:
    """``n`` samples as contiguous chunks: ``chunk_size`` each, or about
    :data:`CHUNKS_PER_WORKER` per worker (at most :data:`MAX_CHUNK`)."""
    size = chunk_size or max(1, min(MAX_CHUNK, math.ceil(n / (max(1, workers) * CHUNKS_PER_WORKER))))
    return [Chunk(tuple(range(i, min(i + size, n)))) for i in range(0, n, size)]


def after_death(
    chunk: Chunk, unfinished: Sequence[int], crashes: Mapping[int, int], max_sample_crashes: int,
    how: str | None = None,
) -> Verdict:
    """The worker running ``chunk`` died with ``unfinished`` samples not received
    (``how``, when known: "it was killed by signal 11 (SIGSEGV)")."""
    if not unfinished:
        return Verdict()
    if not chunk.precise:  # the culprit is among the unfinished: find it exactly
        return Verdict((Chunk(tuple(unfinished), precise=True, died_on=True),))
    # Samples run in order and the ones before the culprit just passed, so it is
    # also the one that killed the worker in normal mode (if that is how this
    # chunk came about): both deaths are its own.
    culprit, rest = unfinished[0], tuple(unfinished[1:])
    count = crashes.get(culprit, 0) + (2 if chunk.died_on else 1)
    requeue: list[Chunk] = []
    settled: dict[int, Outcome] = {}
    if count >= max_sample_crashes:
        settled[culprit] = Outcome(
            None, None,
            f"{WORKER_DIED}: the reward worker process died while scoring this sample "
            f"({count} time{'s' if count > 1 else ''}); not retried again{f'; {how}' if how else ''}",
            "failed",
        )
    else:  # re-run alone: a second death confirms the culprit
        requeue.append(Chunk((culprit,), precise=True))
    if rest:
        requeue.append(Chunk(rest))
    return Verdict(tuple(requeue), settled, (culprit, count))


def after_stall(chunk: Chunk, unfinished: Sequence[int], stuck: Stuck, timeout_s: float) -> Verdict:
    """The worker running ``chunk`` was stuck (and is replaced) with ``unfinished`` samples."""
    if not unfinished:
        return Verdict()
    if stuck == "unknown" and not chunk.precise and len(unfinished) > 1:
        return Verdict((Chunk(tuple(unfinished), precise=True),))  # pins the next stall exactly
    # In precise mode the worker runs one sample at a time, each only after the
    # one before was taken: the stuck one is the first not received.
    culprit = unfinished[0] if stuck == "unknown" else stuck
    message = f"exceeded timeout_s={timeout_s:g} {UNINTERRUPTIBLE}; worker replaced"
    rest = (i for i in unfinished if i != culprit)
    return Verdict(tuple(Chunk(tuple(run)) for run in contiguous_runs(rest)),
                   {culprit: timeout_outcome(message)})


def stall_of(
    index: int | None, span: int, running_for: float, allowed: float | None, unfinished: Iterable[int],
) -> Stuck | None:
    """Read a worker's progress report: the stuck sample, ``"unknown"`` when a call
    over several samples is stuck, None when nothing runs past its allowance."""
    if index is None or allowed is None or running_for < allowed + GRACE_S:
        return None
    if span > 1:  # a batch or async call over several samples: no single culprit
        return "unknown"
    return int(index) if index in set(unfinished) else "unknown"


def silent_too_long(silent_since: float, now: float, limit: float) -> bool:
    """A worker that cannot answer its heartbeat (holding the GIL in C, or a long
    pure-Python call) counts as stuck once silent for a whole ``limit``: a call
    under its allowance may hold the GIL a while."""
    return now - silent_since >= limit


def should_recycle(calls: int, rss_mb: float, max_calls: int | None, max_rss_mb: float | None) -> bool:
    """Whether a worker that just finished a chunk is replaced (planned, not a fault)."""
    return (max_calls is not None and calls >= max_calls) or (max_rss_mb is not None and rss_mb > max_rss_mb)
