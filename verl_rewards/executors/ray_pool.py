"""The ``ray`` executor: a pool of Ray actors that each resolve the reward once.

The driver sends each actor a chunk of samples at a time (never a task per
sample) and keeps every result in input order. Actors stream a chunk's
outcomes back in pieces as they are produced (:mod:`.ray_worker`), so when a
worker dies the driver keeps what it received and re-runs only the rest, one
sample per piece ("precise" mode), which pins the next death on the one
sample that was running: that sample alone is charged a crash and re-run
alone, and failed after ``max_sample_crashes`` deaths. It watches chunks that
run past ``timeout_s``: the in-worker watchdog interrupts Python code, and
when a call is stuck where it cannot (a C call), the driver reads the
worker's progress, kills and replaces it, fails that one sample as a timeout
and re-runs the chunk's unfinished others. Between chunks, a worker past
``worker_max_calls`` chunks or ``worker_max_rss_mb`` of memory is replaced.
"""

from __future__ import annotations

import logging
import re
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from .._inspect import RewardInfo
from ..config import RewardConfig
from ..errors import ExecutorError
from ..limits import limits_for
from ..outcomes import Outcome
from ..samples import Sample
from ..scoring import failure, raise_first_failure, timeout_outcome
from ..spec import RewardSpec, refs_of
from . import ray_session
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
from .ray_worker import Piece, RewardWorker

log = logging.getLogger(__name__)

_HEARTBEAT_TIMEOUT_S = 2.0
START_TIMEOUT_S = 300.0  # a worker's start-up and reward import; then a clear error
_MAX_START_FAILURES = 20
_CLOSE_TIMEOUT_S = 10.0  # for class rewards' close() when the pool stops
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


@dataclass
class _Slot:
    actor: Any
    starting: Any = None  # the replacement's ready() call until it answers; chunks wait for it
    since: float = 0.0  # when it was (re)started
    calls: int = 0  # chunks finished since it was (re)started
    rss_mb: float = 0.0  # resident memory it last reported


@dataclass
class _InFlight:
    chunk: Chunk
    slot: _Slot
    started: float
    received: int = 0  # outcomes received so far, from the chunk's start
    checked: float = 0.0
    silent_since: float | None = None  # when its worker first failed to answer a heartbeat

    @property
    def unfinished(self) -> tuple[int, ...]:
        return self.chunk.indices[self.received:]


@dataclass
class _RunState:
    outcomes: list[Outcome | None]
    queue: deque[Chunk]
    crashes: dict[int, int] = field(default_factory=dict)
    restarts: int = 0
    recycled: int = 0
    dispatched: int = 0
    start_failures: int = 0


class RayExecutor:
    """Scores on ``num_workers`` Ray actors; joins or starts a Ray session."""

    def __init__(self, spec: RewardSpec, config: RewardConfig, info: RewardInfo) -> None:
        self._spec = spec
        self._info = info
        self._name = spec.display_name
        self._config = config
        self._limits = limits_for(config)
        self._timeout_s: float | None = None  # the longest per-sample timeout, known once workers load
        self._slots: list[_Slot] = []
        self._run_lock = threading.Lock()
        self._holds_session = False
        self._actor_cls: Any = None
        self._packages: Any = None  # ObjectRef of the shipped packages, if any

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Connect to Ray, start the actors and resolve the reward on each."""
        self._holds_session = ray_session.acquire(self._config.ray_address)
        try:
            options: dict[str, Any] = {**self._hardware(), "max_concurrency": 2}
            if self._config.ship_package:
                from .shipping import pack

                self._packages = ray.put([pack(r) for r in refs_of(self._spec) if r.kind == "plugin"])
            self._actor_cls = ray.remote(RewardWorker).options(**options)
            self._slots = [_Slot(self._new_actor()) for _ in range(self._config.num_workers)]
        except BaseException:  # a package that cannot ship, an impossible request, Ctrl-C
            self.close()
            raise
        try:
            reports = ray.get([s.actor.ready.remote() for s in self._slots], timeout=START_TIMEOUT_S)
        except GetTimeoutError:
            self.close()
            raise ExecutorError(self._cannot_start()) from None
        except RayTaskError as e:
            self.close()
            error = _unwrap(e)
            raise error from error.__cause__
        except RayActorError as e:
            self.close()
            raise ExecutorError(f"reward workers for {self._name} died at start: {e}") from None
        except BaseException:  # Ctrl-C while the workers start: release them and the session
            self.close()
            raise
        self._timeout_s = reports[0]["timeout_s"] if reports else self._limits.timeout_s

    def close(self) -> None:
        """Kill the actors; shut Ray down only if this executor was the last user
        of a session that verl-rewards started. Class rewards are closed first, on
        each actor (a bounded wait)."""
        if self._slots:
            try:
                ray.wait([s.actor.shutdown.remote() for s in self._slots], num_returns=len(self._slots),
                         timeout=_CLOSE_TIMEOUT_S)
            except Exception as e:  # Ray already gone: nothing left to close
                log.debug("closing rewards on the workers of %s: %s", self._name, e)
        for slot in self._slots:
            _kill(slot.actor)
        self._slots = []
        self._packages = None
        if self._holds_session:
            self._holds_session = False
            ray_session.release()

    def _hardware(self) -> dict[str, Any]:
        """The per-worker resource request, refused now if the cluster can never meet it."""
        from .hardware import unplaceable, worker_options

        options = worker_options(self._config, self._info.num_gpus)
        problem = unplaceable(options, self._config, ray.cluster_resources())  # type: ignore[no-untyped-call]
        if problem is not None:
            self.close()
            raise ExecutorError(f"cannot start reward workers for {self._name}: {problem}")
        return options

    def _cannot_start(self) -> str:
        return (f"no reward worker for {self._name} started within {START_TIMEOUT_S:.0f} s: Ray could "
                f"not place an actor needing num_cpus={self._config.worker_num_cpus} (see `ray status`), "
                f"or the plugin takes that long to load. Lower reward.worker_num_cpus or "
                f"reward.num_workers, or add nodes")

    def _new_actor(self) -> Any:
        return self._actor_cls.remote(self._spec, self._limits, self._packages)

    # -- one batch ---------------------------------------------------------------

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` on the pool; outcomes in input order. Batches run one at a
        time: each spans every worker, and a worker's progress record is one chunk's."""
        if not self._slots:
            raise ExecutorError(f"the Ray executor for {self._name} is not started")
        with self._run_lock:
            chunks = plan_chunks(len(samples), len(self._slots), self._config.chunk_size)
            state = _RunState([None] * len(samples), deque(chunks))
            in_flight: dict[Any, _InFlight] = {}
            try:
                self._run(samples, stop_on_error, state, in_flight)
            except BaseException:
                # Workers still on chunks of this batch are replaced, so the next
                # batch never shares an actor (or its progress record) with them.
                for job in in_flight.values():
                    self._replace(job.slot, state)
                raise
        if stop_on_error:  # stalls and deaths the driver found, too
            raise_first_failure(self._name, state.outcomes)
        metrics = {"worker_restarts": float(state.restarts), "worker_recycles": float(state.recycled),
                   "chunks": float(state.dispatched), "workers": float(len(self._slots))}
        return [o if o is not None else timeout_outcome("not run") for o in state.outcomes], metrics

    def _run(self, samples: Sequence[Sample], stop_on_error: bool, state: _RunState,
             in_flight: dict[Any, _InFlight]) -> None:
        idle = list(self._slots)
        while state.queue or in_flight:
            for slot in [s for s in idle if s.starting is None][:len(state.queue)]:
                idle.remove(slot)
                self._dispatch(state.queue.popleft(), slot, samples, in_flight, state)
            starting = {s.starting: s for s in idle if s.starting is not None}
            self._check_start_deadline(idle, in_flight)
            ready, _ = ray.wait([*in_flight, *starting], num_returns=1, timeout=self._poll_s())
            for stream in ready:
                if stream in starting:
                    self._confirm(starting[stream], state)
                    continue
                job = in_flight[stream]
                if self._take(stream, job, state):
                    del in_flight[stream]
                    idle.append(self._after_chunk(job.slot, state))
                if stop_on_error:
                    self._stop_at_first_failure(job.chunk, in_flight, state)
            idle.extend(self._check_overdue(in_flight, state))

    def _dispatch(
        self, chunk: Chunk, slot: _Slot, samples: Sequence[Sample],
        in_flight: dict[Any, _InFlight], state: _RunState,
    ) -> None:
        # Chunks are always contiguous runs, so a first index locates every sample.
        part = [samples[i] for i in chunk.indices]
        options: dict[str, Any] = {"num_returns": "streaming"}
        if chunk.precise:  # the worker waits until we took each piece: a death is exact
            options["_generator_backpressure_num_objects"] = 1
        stream = slot.actor.score.options(**options).remote(part, chunk.indices[0], chunk.precise)
        in_flight[stream] = _InFlight(chunk, slot, time.monotonic())
        state.dispatched += 1

    def _take(self, stream: Any, job: _InFlight, state: _RunState) -> bool:
        """Take the next piece of a chunk; True when the chunk is over."""
        try:
            piece: Piece = ray.get(next(stream))
        except StopIteration:
            return True
        except RayActorError:
            self._on_worker_death(job, state)
            return True
        except RayTaskError as e:  # the scoring loop itself failed: fail what is left
            error = failure(_unwrap(e))
            for i in job.unfinished:
                state.outcomes[i] = error
            return True
        job.slot.rss_mb = piece.rss_mb
        for i, outcome in zip(job.chunk.indices[piece.offset:], piece.outcomes):
            state.outcomes[i] = outcome
        job.received = piece.offset + len(piece.outcomes)
        return False

    def _after_chunk(self, slot: _Slot, state: _RunState) -> _Slot:
        """``slot``, its worker recycled first if past its call or memory budget."""
        slot.calls += 1
        if should_recycle(slot.calls, slot.rss_mb, self._config.worker_max_calls,
                          self._config.worker_max_rss_mb):
            log.info("recycling reward worker for %s after %d chunk(s) at %.0f MiB",
                     self._name, slot.calls, slot.rss_mb)
            self._replace(slot, state)
            state.restarts -= 1  # a planned replacement, not a fault
            state.recycled += 1
        return slot

    def _on_worker_death(self, job: _InFlight, state: _RunState) -> None:
        self._replace(job.slot, state)
        verdict = after_death(job.chunk, job.unfinished, state.crashes, self._config.max_sample_crashes)
        self._apply(verdict, state)
        if verdict.charged is None:
            if job.unfinished:
                log.warning("reward worker for %s died; %d unfinished sample(s) re-run one at a time",
                            self._name, len(job.unfinished))
            return
        culprit, crashes = verdict.charged
        state.crashes[culprit] = crashes
        log.warning("reward worker for %s died on sample %d (crash %d of at most %d)",
                    self._name, culprit, crashes, self._config.max_sample_crashes)

    @staticmethod
    def _apply(verdict: Verdict, state: _RunState) -> None:
        for index, outcome in verdict.settled.items():
            state.outcomes[index] = outcome
        state.queue.extend(verdict.requeue)

    def _check_overdue(self, in_flight: dict[Any, _InFlight], state: _RunState) -> list[_Slot]:
        if self._timeout_s is None:
            return []
        limit = self._timeout_s + GRACE_S
        freed: list[_Slot] = []
        now = time.monotonic()
        for object_ref, job in list(in_flight.items()):
            if now - job.started < limit or now - job.checked < limit / 2:
                continue
            job.checked = now
            stuck = self._stuck_index(job, limit)
            if stuck is None:
                continue
            del in_flight[object_ref]
            freed.append(job.slot)
            if stuck == "dead":
                self._on_worker_death(job, state)
                continue
            self._replace(job.slot, state)
            if self._timeout_s is not None:
                self._apply(after_stall(job.chunk, job.unfinished, stuck, self._timeout_s), state)
        return freed

    def _stuck_index(self, job: _InFlight, limit: float) -> Stuck | Literal["dead"] | None:
        """The batch index stuck past ``limit``: "unknown" if the worker cannot
        answer, "dead" if it is gone (its node died), None if it is not stuck."""
        try:
            index, span, running_for, allowed = ray.get(job.slot.actor.progress.remote(),
                                                        timeout=_HEARTBEAT_TIMEOUT_S)
        except RayActorError:
            return "dead"
        except GetTimeoutError:  # holding the GIL: in C, or a long pure-Python call
            now = time.monotonic()
            job.silent_since = job.silent_since or now
            return "unknown" if silent_too_long(job.silent_since, now, limit) else None
        job.silent_since = None
        return stall_of(index, span, running_for, allowed, job.unfinished)

    def _replace(self, slot: _Slot, state: _RunState) -> None:
        _kill(slot.actor)
        slot.actor = self._new_actor()
        # Chunks go to it once it has resolved the reward, so a replacement that
        # cannot be placed (its node died, no free CPU) never holds up the batch.
        slot.starting, slot.since = slot.actor.ready.remote(), time.monotonic()
        slot.calls, slot.rss_mb = 0, 0.0
        state.restarts += 1

    def _confirm(self, slot: _Slot, state: _RunState) -> None:
        """A replacement answered ``ready()``: use it, or replace it again if it died."""
        try:
            ray.get(slot.starting)
        except RayActorError:
            state.start_failures += 1
            if state.start_failures > _MAX_START_FAILURES:
                raise ExecutorError(f"reward workers for {self._name} keep dying as they start "
                                    f"({state.start_failures} times); see the Ray worker logs") from None
            self._replace(slot, state)
            return
        except RayTaskError as e:
            error = _unwrap(e)
            raise error from error.__cause__
        slot.starting = None

    def _check_start_deadline(self, idle: list[_Slot], in_flight: dict[Any, _InFlight]) -> None:
        """Fail, rather than wait forever, when no worker is left to score on."""
        if in_flight or any(s.starting is None for s in idle):
            return
        if all(time.monotonic() - s.since > START_TIMEOUT_S for s in idle):
            raise ExecutorError(self._cannot_start())

    def _poll_s(self) -> float:
        timeout = self._timeout_s
        return 1.0 if timeout is None else max(0.05, min(1.0, timeout / 4))

    def _stop_at_first_failure(
        self, chunk: Chunk, in_flight: dict[Any, _InFlight], state: _RunState
    ) -> None:
        outcomes = [state.outcomes[i] for i in chunk.indices]
        if all(o is None or o.status == "ok" for o in outcomes):
            return
        # run() replaces the actors still working on abandoned chunks.
        raise_first_failure(self._name, outcomes, chunk.indices[0])


def _kill(actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception as e:  # already gone: nothing to release
        log.debug("killing reward worker: %s", e)


def _unwrap(error: RayTaskError) -> Exception:
    """The exception a worker raised, with its own type and cause (not Ray's wrapper)."""
    inner = getattr(error, "cause", None)
    if isinstance(inner, Exception):
        cause = getattr(inner, "cause", None)  # our errors carry the original exception
        if isinstance(cause, BaseException) and inner.__cause__ is None:
            inner.__cause__ = cause
        return inner
    return ExecutorError(_ANSI.sub("", str(error)))
