"""The ``ray`` executor: a pool of Ray actors that each resolve the reward once.

The driver sends each actor a chunk of samples at a time (never a task per
sample) and keeps every result in input order. It watches chunks that run
past ``timeout_s``: the in-worker watchdog interrupts Python code, and when a
call is stuck where it cannot (a C call), the driver reads the worker's
progress, kills and replaces it, fails that one sample as a timeout and
re-runs the chunk's others. A worker that dies is replaced and its samples are
re-run one per chunk, so a sample that kills workers is found and failed after
``max_sample_crashes`` deaths instead of being retried forever.
"""

from __future__ import annotations

import logging
import math
import os
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from ..config import RewardConfig
from ..dispatch import limits_for
from ..errors import ExecutorError, PluginLoadError, PluginNotInstalledError, VerlRewardsError
from ..outcomes import Outcome
from ..samples import Sample, contiguous_runs
from ..scoring import Limits, failure, raise_first_failure, timeout_outcome
from ..spec import RewardSpec, refs_of

log = logging.getLogger(__name__)

_HEARTBEAT_TIMEOUT_S = 2.0
_GRACE_S = 1.0
_MAX_CHUNK = 512
_CHUNKS_PER_WORKER = 4
_CLOSE_TIMEOUT_S = 10.0  # for class rewards' close() when the pool stops


class RewardWorker:
    """A Ray actor: resolves the reward once, then scores chunks."""

    def __init__(self, spec: RewardSpec, limits: Limits, packages: list[bytes] | None = None) -> None:
        from ..watchdog import Progress
        from .shipping import unpack

        for package in packages or ():
            unpack(package)
        self._spec = spec
        self._limits = limits
        self._progress = Progress()

    def ready(self) -> dict[str, Any]:
        """Resolve the reward in this process; report where we run."""
        from ..dispatch import resolve_spec, timeout_of

        node = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        try:
            loaded = resolve_spec(self._spec)
        except PluginNotInstalledError as e:
            ref = next(r for r in refs_of(self._spec) if r.display_name == e.plugin)
            raise PluginNotInstalledError(
                ref.display_name,
                f"it is not installed on worker node {node}. Install "
                f"{ref.dist}=={ref.version} on every node, or set "
                f"reward.ship_package=true to ship its package to the workers",
                e.cause,
            ) from None
        except PluginLoadError as e:
            raise PluginLoadError(e.plugin, f"on worker node {node}: {e}") from None
        return {"pid": os.getpid(), "node": node, "timeout_s": timeout_of(loaded, self._limits)}

    def score(self, samples: list[Sample], first_index: int) -> list[Outcome]:
        """Score one chunk; ``first_index`` is its first sample's index in the batch."""
        from ..dispatch import resolve_spec, score_spec

        loaded = resolve_spec(self._spec)
        return score_spec(loaded, samples, self._limits, first_index=first_index,
                          progress=self._progress)

    def shutdown(self) -> None:
        """Close class rewards resolved in this worker (their ``close()``), before the pool kills it."""
        from ..resolve import release

        release(*refs_of(self._spec))

    def progress(self) -> tuple[int | None, int, float, float | None]:
        """The call in flight: first batch index, samples covered, running for,
        allowed; answered from another thread."""
        p = self._progress
        index, span, started, allowed = p.index, p.span, p.started, p.allowed_s
        return index, span, (time.monotonic() - started) if index is not None else 0.0, allowed


@dataclass
class _Slot:
    actor: Any
    confirmed: bool = True  # has answered since it was (re)started


@dataclass
class _Chunk:
    indices: list[int]


@dataclass
class _InFlight:
    chunk: _Chunk
    slot: _Slot
    started: float
    checked: float = 0.0


@dataclass
class _RunState:
    outcomes: list[Outcome | None]
    queue: deque[_Chunk]
    crashes: dict[int, int] = field(default_factory=dict)
    restarts: int = 0
    dispatched: int = 0


class RayExecutor:
    """Scores on ``num_workers`` Ray actors; joins or starts a Ray session."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._spec = spec
        self._name = spec.display_name
        self._config = config
        self._limits = limits_for(config)
        self._timeout_s: float | None = None  # the longest per-sample timeout, known once workers load
        self._slots: list[_Slot] = []
        self._started_ray = False
        self._actor_cls: Any = None
        self._packages: Any = None  # ObjectRef of the shipped packages, if any

    # -- lifecycle -------------------------------------------------------------

    def start(self) -> None:
        """Connect to Ray, start the actors and resolve the reward on each."""
        self._connect()
        options: dict[str, Any] = {**self._hardware(), "max_concurrency": 2}
        if self._config.ship_package:
            from .shipping import pack

            self._packages = ray.put([pack(r) for r in refs_of(self._spec) if r.kind == "plugin"])
        self._actor_cls = ray.remote(RewardWorker).options(**options)
        self._slots = [_Slot(self._new_actor()) for _ in range(self._config.num_workers)]
        try:
            reports = ray.get([s.actor.ready.remote() for s in self._slots])
        except RayTaskError as e:
            self.close()
            raise _unwrap(e) from None
        except RayActorError as e:
            self.close()
            raise ExecutorError(f"reward workers for {self._name} died at start: {e}") from None
        self._timeout_s = reports[0]["timeout_s"] if reports else self._limits.timeout_s

    def close(self) -> None:
        """Close class rewards on each actor (bounded wait), kill the actors; shut
        Ray down only if this executor started it."""
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
        if self._started_ray and ray.is_initialized():
            ray.shutdown()
        self._started_ray = False

    def _hardware(self) -> dict[str, Any]:
        """The per-worker resource request, refused now if the cluster can never meet it."""
        from .hardware import shortfall, worker_options

        options = worker_options(refs_of(self._spec), self._config)
        cluster = ray.cluster_resources()  # type: ignore[no-untyped-call]
        missing = shortfall(options, self._config.num_workers, cluster)
        if missing:
            self.close()
            raise ExecutorError(
                f"cannot start reward workers for {self._name}: {'; '.join(missing)}. Lower "
                f"reward.num_workers, reward.worker_num_gpus or reward.worker_resources, or start "
                f"Ray with those resources (ray start --num-gpus N --resources '{{...}}')"
            )
        return options

    def _connect(self) -> None:
        if ray.is_initialized():
            return
        address = self._config.ray_address or os.environ.get("RAY_ADDRESS")
        if address:
            ray.init(address=address, log_to_driver=True)
        else:
            ray.init(include_dashboard=False, log_to_driver=True)
            self._started_ray = True

    def _new_actor(self) -> Any:
        return self._actor_cls.remote(self._spec, self._limits, self._packages)

    # -- one batch ---------------------------------------------------------------

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` on the pool; outcomes in input order."""
        if not self._slots:
            raise ExecutorError(f"the Ray executor for {self._name} is not started")
        state = _RunState([None] * len(samples), deque(self._chunks(len(samples))))
        in_flight: dict[Any, _InFlight] = {}
        idle = list(self._slots)
        while state.queue or in_flight:
            while state.queue and idle:
                self._dispatch(state.queue.popleft(), idle.pop(), samples, in_flight, state)
            done, _ = ray.wait(list(in_flight), num_returns=1, timeout=self._poll_s())
            for object_ref in done:
                job = in_flight.pop(object_ref)
                self._collect(object_ref, job, state)
                idle.append(job.slot)
                if stop_on_error:
                    self._stop_at_first_failure(job.chunk, in_flight, state)
            idle.extend(self._check_overdue(in_flight, state))
        metrics = {"worker_restarts": float(state.restarts), "chunks": float(state.dispatched),
                   "workers": float(len(self._slots))}
        return [o if o is not None else timeout_outcome("not run") for o in state.outcomes], metrics

    def _chunks(self, n: int) -> list[_Chunk]:
        size = self._config.chunk_size or max(
            1, min(_MAX_CHUNK, math.ceil(n / (len(self._slots) * _CHUNKS_PER_WORKER)))
        )
        return [_Chunk(list(range(i, min(i + size, n)))) for i in range(0, n, size)]

    def _dispatch(
        self, chunk: _Chunk, slot: _Slot, samples: Sequence[Sample],
        in_flight: dict[Any, _InFlight], state: _RunState,
    ) -> None:
        # Chunks are always contiguous runs, so a first index locates every sample.
        part = [samples[i] for i in chunk.indices]
        object_ref = slot.actor.score.remote(part, chunk.indices[0])
        in_flight[object_ref] = _InFlight(chunk, slot, time.monotonic())
        state.dispatched += 1

    def _collect(self, object_ref: Any, job: _InFlight, state: _RunState) -> None:
        try:
            outcomes = ray.get(object_ref)
        except RayActorError:
            self._on_worker_death(job, state)
            return
        except RayTaskError as e:  # the scoring loop itself failed: fail the chunk
            for i in job.chunk.indices:
                state.outcomes[i] = failure(_unwrap(e))
            return
        job.slot.confirmed = True
        for i, outcome in zip(job.chunk.indices, outcomes):
            state.outcomes[i] = outcome

    def _on_worker_death(self, job: _InFlight, state: _RunState) -> None:
        self._replace(job.slot, state)
        for i in job.chunk.indices:
            state.crashes[i] = state.crashes.get(i, 0) + 1
            if state.crashes[i] >= self._config.max_sample_crashes:
                state.outcomes[i] = Outcome(
                    None, None,
                    f"WorkerDied: the reward worker process died while scoring this sample "
                    f"({state.crashes[i]} times); not retried again", "failed",
                )
            else:  # re-run alone, so a second death identifies the culprit
                state.queue.append(_Chunk([i]))
        log.warning("reward worker for %s died; %d sample(s) re-queued",
                    self._name, len(job.chunk.indices))

    def _check_overdue(self, in_flight: dict[Any, _InFlight], state: _RunState) -> list[_Slot]:
        if self._timeout_s is None:
            return []
        limit = self._timeout_s + _GRACE_S
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
            self._replace(job.slot, state)
            freed.append(job.slot)
            self._requeue_after_stall(job, stuck, state)
        return freed

    def _stuck_index(self, job: _InFlight, limit: float) -> int | str | None:
        """The batch index stuck past ``limit``; "unknown" if the worker cannot answer."""
        try:
            index, span, running_for, allowed = ray.get(job.slot.actor.progress.remote(),
                                                        timeout=_HEARTBEAT_TIMEOUT_S)
        except (GetTimeoutError, RayActorError):
            # Holding the GIL in C, or dead. A replacement still starting up
            # (importing a heavy plugin) cannot answer either: give it longer.
            starting = not job.slot.confirmed and time.monotonic() - job.started < 10 * limit
            return None if starting else "unknown"
        job.slot.confirmed = True
        if index is None or allowed is None or running_for < allowed + _GRACE_S:
            return None
        if span > 1:  # a batch or async call over several samples: no single culprit
            return "unknown"
        return int(index) if index in job.chunk.indices else "unknown"

    def _requeue_after_stall(self, job: _InFlight, stuck: int | str, state: _RunState) -> None:
        message = f"exceeded timeout_s={self._timeout_s:g} in code Python could not interrupt; worker replaced"
        indices = job.chunk.indices
        if isinstance(stuck, str) and len(indices) > 1:
            state.queue.extend(_Chunk([i]) for i in indices)  # isolate to find the culprit
            return
        culprit = indices[0] if isinstance(stuck, str) else stuck
        state.outcomes[culprit] = timeout_outcome(message)
        state.queue.extend(_Chunk(run) for run in contiguous_runs(i for i in indices if i != culprit))

    def _replace(self, slot: _Slot, state: _RunState) -> None:
        _kill(slot.actor)
        slot.actor = self._new_actor()
        slot.confirmed = False
        state.restarts += 1

    def _poll_s(self) -> float:
        timeout = self._timeout_s
        return 1.0 if timeout is None else max(0.05, min(1.0, timeout / 4))

    def _stop_at_first_failure(
        self, chunk: _Chunk, in_flight: dict[Any, _InFlight], state: _RunState
    ) -> None:
        outcomes = [state.outcomes[i] for i in chunk.indices]
        if all(o is None or o.status == "ok" for o in outcomes):
            return
        # Actors still working on abandoned chunks are replaced, so the next batch
        # never shares an actor (and its progress record) with a stale chunk.
        for job in in_flight.values():
            self._replace(job.slot, state)
        raise_first_failure(self._name, outcomes, chunk.indices[0])


def _kill(actor: Any) -> None:
    try:
        ray.kill(actor, no_restart=True)
    except Exception as e:  # already gone: nothing to release
        log.debug("killing reward worker: %s", e)


def _unwrap(error: RayTaskError) -> Exception:
    cause = error.as_instanceof_cause()  # type: ignore[no-untyped-call]
    inner = getattr(error, "cause", None)
    if isinstance(inner, VerlRewardsError):
        return inner
    return cause if isinstance(cause, Exception) else ExecutorError(str(error))
