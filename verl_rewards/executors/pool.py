"""The one dispatch loop every worker pool runs: Ray actors (:mod:`.ray_pool`) and
worker processes (:mod:`.process_pool`).

A batch is cut into chunks (:func:`.faults.plan_chunks`), one in flight per
worker, each streamed back in pieces. The loop carries out what
:mod:`.faults` decides: a worker that died has its unfinished samples re-run
(precise mode, crash charging), a worker stuck past its allowance is replaced
and its sample failed as a timeout, a worker past its call or memory budget
is recycled between chunks. How a worker is started, sent a chunk, read,
asked for its progress and killed is the :class:`Workers` backend's; nothing
here knows Ray or pipes.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol

from ..config import RewardConfig
from ..errors import ExecutorError
from ..outcomes import Outcome
from ..samples import Sample
from ..scoring import failure, raise_first_failure, timeout_outcome
from .chunks import Piece
from .faults import (
    GRACE_S,
    Chunk,
    Stuck,
    Verdict,
    after_death,
    after_stall,
    plan_chunks,
    should_recycle,
    silent_too_long,
    stall_of,
)

log = logging.getLogger(__name__)

START_TIMEOUT_S = 300.0  # a worker's start-up and reward import; then a clear error
MAX_START_FAILURES = 20


class Report(NamedTuple):
    """A worker's call in flight: first batch index (None: idle), samples it covers,
    seconds it has run, seconds it is allowed (None: no limit)."""

    first: int | None
    span: int
    running_for: float
    allowed: float | None


# What reading a chunk gave: a piece, its end, its worker's death, or the exception
# that ended the worker's scoring loop itself (its unfinished samples fail with it).
Event = Piece | Literal["end", "died"] | Exception
# A worker's answer to "what are you doing?": gone, or unable to answer (holding the GIL).
Heartbeat = Report | Literal["dead", "silent"]


@dataclass(eq=False)
class Slot:
    """One place in the pool, holding one worker at a time."""

    worker: Any
    starting: Any = None  # set while a (re)started worker has not said it is ready
    since: float = 0.0  # when it was (re)started
    calls: int = 0  # chunks finished since it was (re)started
    rss_mb: float = 0.0  # resident memory it last reported


@dataclass(eq=False)
class Job:
    """A chunk in flight on one slot's worker."""

    chunk: Chunk
    slot: Slot
    handle: Any  # the backend's, to read the chunk's pieces
    started: float
    received: int = 0  # outcomes received so far, from the chunk's start
    checked: float = 0.0
    silent_since: float | None = None  # when its worker first failed to answer a heartbeat

    @property
    def unfinished(self) -> tuple[int, ...]:
        return self.chunk.indices[self.received:]


class Workers(Protocol):
    """What a pool's workers can be asked to do (Ray actors, or processes)."""

    def send(self, slot: Slot, chunk: Chunk, samples: Sequence[Sample]) -> Any:
        """Start scoring ``samples`` (the chunk's) on ``slot``'s worker; the job's handle."""

    def wait(self, jobs: Sequence[Job], starting: Sequence[Slot], timeout: float
             ) -> tuple[list[Job], list[Slot]]:
        """The jobs with something to read and the starting slots that answered, within ``timeout``."""

    def take(self, job: Job) -> Event:
        """Read what a ready job has: its next piece, its end, or its worker's death."""

    def confirm(self, slot: Slot) -> bool:
        """A starting slot answered: True when its worker is ready, False when it died
        starting; the reward's load error is raised."""

    def heartbeat(self, slot: Slot) -> Heartbeat:
        """What ``slot``'s worker is running (it may not be able to answer)."""

    def ended(self, slot: Slot) -> str | None:
        """How ``slot``'s worker, which died, ended ("it was killed by signal 11
        (SIGSEGV)"), when the backend can tell."""

    def restart(self, slot: Slot) -> None:
        """Kill ``slot``'s worker and start another in its place (``slot.starting`` set)."""

    def heartbeat_every(self, limit: float) -> float:
        """How often a long chunk's worker is asked (a heartbeat may be costly)."""


@dataclass
class _RunState:
    outcomes: list[Outcome | None]
    queue: deque[Chunk]
    crashes: dict[int, int] = field(default_factory=dict)
    restarts: int = 0
    recycled: int = 0
    dispatched: int = 0
    start_failures: int = 0
    waited: float = 0.0  # seconds with chunks queued and every worker still starting


class Pool:
    """Runs batches on ``slots`` through ``workers``, one batch at a time: each spans
    every worker, and a worker's progress record is one chunk's."""

    def __init__(self, workers: Workers, slots: list[Slot], config: RewardConfig, name: str,
                 timeout_s: float | None, cannot_start: str) -> None:
        self.slots = slots
        self.timeout_s = timeout_s  # the longest per-sample timeout, reported by the workers
        self._workers = workers
        self._config = config
        self._name = name
        self._cannot_start = cannot_start
        self._lock = threading.Lock()

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` on the pool; outcomes in input order, and the run's metrics."""
        with self._lock:
            chunks = plan_chunks(len(samples), len(self.slots), self._config.chunk_size)
            state = _RunState([None] * len(samples), deque(chunks))
            in_flight: dict[Slot, Job] = {}
            try:
                self._loop(samples, stop_on_error, state, in_flight)
            except BaseException:
                # Workers still on chunks of this batch are replaced, so the next
                # batch never shares a worker (or its progress record) with them.
                for job in in_flight.values():
                    self._restart(job.slot, state)
                raise
        if stop_on_error:  # stalls and deaths the driver found, too
            raise_first_failure(self._name, state.outcomes)
        metrics = {"worker_restarts": float(state.restarts), "worker_recycles": float(state.recycled),
                   "chunks": float(state.dispatched), "workers": float(len(self.slots)),
                   "worker_wait_s": state.waited}
        return [o if o is not None else timeout_outcome("not run") for o in state.outcomes], metrics

    def _loop(self, samples: Sequence[Sample], stop_on_error: bool, state: _RunState,
              in_flight: dict[Slot, Job]) -> None:
        idle = list(self.slots)
        while state.queue or in_flight:
            for slot in [s for s in idle if s.starting is None][:len(state.queue)]:
                idle.remove(slot)
                self._dispatch(state.queue.popleft(), slot, samples, in_flight, state)
            starting = [s for s in idle if s.starting is not None]
            self._check_start_deadline(idle, in_flight)
            began = time.monotonic()
            ready, answered = self._workers.wait(list(in_flight.values()), starting, self._poll_s())
            if not in_flight:  # nothing to score on: a replaced worker is starting
                state.waited += time.monotonic() - began
            for slot in answered:
                self._confirm(slot, state)
            for job in ready:
                if self._take(job, state):
                    del in_flight[job.slot]
                    idle.append(self._after_chunk(job.slot, state))
                if stop_on_error:
                    self._stop_at_first_failure(job.chunk, state)
            idle.extend(self._check_overdue(in_flight, state))

    def _dispatch(self, chunk: Chunk, slot: Slot, samples: Sequence[Sample],
                  in_flight: dict[Slot, Job], state: _RunState) -> None:
        # Chunks are always contiguous runs, so a first index locates every sample.
        handle = self._workers.send(slot, chunk, [samples[i] for i in chunk.indices])
        in_flight[slot] = Job(chunk, slot, handle, time.monotonic())
        state.dispatched += 1

    def _take(self, job: Job, state: _RunState) -> bool:
        """Take the next piece of a chunk; True when the chunk is over."""
        event = self._workers.take(job)
        if event == "end":
            return True
        if event == "died":
            self._on_worker_death(job, state)
            return True
        if isinstance(event, Exception):  # the scoring loop itself failed: fail what is left
            error = failure(event)
            for i in job.unfinished:
                state.outcomes[i] = error
            return True
        assert isinstance(event, Piece)
        job.slot.rss_mb = event.rss_mb
        for i, outcome in zip(job.chunk.indices[event.offset:], event.outcomes):
            state.outcomes[i] = outcome
        job.received = event.offset + len(event.outcomes)
        return False

    def _after_chunk(self, slot: Slot, state: _RunState) -> Slot:
        """``slot``, its worker recycled first if past its call or memory budget."""
        slot.calls += 1
        if should_recycle(slot.calls, slot.rss_mb, self._config.worker_max_calls,
                          self._config.worker_max_rss_mb):
            log.info("recycling reward worker for %s after %d chunk(s) at %.0f MiB",
                     self._name, slot.calls, slot.rss_mb)
            self._restart(slot, state)
            state.restarts -= 1  # a planned replacement, not a fault
            state.recycled += 1
        return slot

    def _on_worker_death(self, job: Job, state: _RunState) -> None:
        how = self._workers.ended(job.slot)
        self._restart(job.slot, state)
        verdict = after_death(job.chunk, job.unfinished, state.crashes, self._config.max_sample_crashes, how)
        _apply(verdict, state)
        if verdict.charged is None:
            if job.unfinished:
                log.warning("reward worker for %s died; %d unfinished sample(s) re-run one at a time",
                            self._name, len(job.unfinished))
            return
        culprit, crashes = verdict.charged
        state.crashes[culprit] = crashes
        log.warning("reward worker for %s died on sample %d (crash %d of at most %d)",
                    self._name, culprit, crashes, self._config.max_sample_crashes)

    def _check_overdue(self, in_flight: dict[Slot, Job], state: _RunState) -> list[Slot]:
        if self.timeout_s is None:
            return []
        limit = self.timeout_s + GRACE_S
        every = self._workers.heartbeat_every(limit)
        freed: list[Slot] = []
        now = time.monotonic()
        for slot, job in list(in_flight.items()):
            if now - job.started < limit or now - job.checked < every:
                continue
            job.checked = now
            stuck = self._stuck_index(job, limit)
            if stuck is None:
                continue
            del in_flight[slot]
            freed.append(slot)
            if stuck == "dead":
                self._on_worker_death(job, state)
                continue
            self._restart(slot, state)
            _apply(after_stall(job.chunk, job.unfinished, stuck, self.timeout_s), state)
        return freed

    def _stuck_index(self, job: Job, limit: float) -> Stuck | Literal["dead"] | None:
        """The batch index stuck past ``limit``: "unknown" if the worker cannot
        answer, "dead" if it is gone, None if it is not stuck."""
        beat = self._workers.heartbeat(job.slot)
        if beat == "dead":
            return "dead"
        if beat == "silent":  # holding the GIL: in C, or a long pure-Python call
            now = time.monotonic()
            job.silent_since = job.silent_since or now
            return "unknown" if silent_too_long(job.silent_since, now, limit) else None
        job.silent_since = None
        return stall_of(beat.first, beat.span, beat.running_for, beat.allowed, job.unfinished)

    def _restart(self, slot: Slot, state: _RunState) -> None:
        # Chunks go to it once it has resolved the reward, so a replacement that
        # cannot be placed or started never holds up the batch.
        self._workers.restart(slot)
        slot.since, slot.calls, slot.rss_mb = time.monotonic(), 0, 0.0
        state.restarts += 1

    def _confirm(self, slot: Slot, state: _RunState) -> None:
        """A replacement answered: use it, or replace it again if it died starting."""
        if self._workers.confirm(slot):
            slot.starting = None
            return
        state.start_failures += 1
        if state.start_failures > MAX_START_FAILURES:
            raise ExecutorError(f"reward workers for {self._name} keep dying as they start "
                                f"({state.start_failures} times); see the workers' logs")
        self._restart(slot, state)

    def _check_start_deadline(self, idle: list[Slot], in_flight: dict[Slot, Job]) -> None:
        """Fail, rather than wait forever, when no worker is left to score on."""
        if in_flight or any(s.starting is None for s in idle):
            return
        if all(time.monotonic() - s.since > START_TIMEOUT_S for s in idle):
            raise ExecutorError(self._cannot_start)

    def _poll_s(self) -> float:
        timeout = self.timeout_s
        return 1.0 if timeout is None else max(0.05, min(1.0, timeout / 4))

    def _stop_at_first_failure(self, chunk: Chunk, state: _RunState) -> None:
        outcomes = [state.outcomes[i] for i in chunk.indices]
        if all(o is None or o.status == "ok" for o in outcomes):
            return
        # run() replaces the workers still working on abandoned chunks.
        raise_first_failure(self._name, outcomes, chunk.indices[0])


def _apply(verdict: Verdict, state: _RunState) -> None:
    for index, outcome in verdict.settled.items():
        state.outcomes[index] = outcome
    state.queue.extend(verdict.requeue)
