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
The loop that does all this is :mod:`.pool`'s, shared with the process pool;
this module is how it reaches Ray actors (:class:`RayWorkers`).
"""

from __future__ import annotations

import logging
import re
from collections.abc import Sequence
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError, RayTaskError

from .._inspect import RewardInfo
from ..config import RewardConfig
from ..errors import ExecutorError
from ..limits import limits_for
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec, refs_of
from . import ray_session
from .faults import Chunk
from .pool import START_TIMEOUT_S, Event, Heartbeat, Job, Pool, Report, Slot
from .ray_worker import Piece, RewardWorker

log = logging.getLogger(__name__)

_HEARTBEAT_TIMEOUT_S = 2.0
_CLOSE_TIMEOUT_S = 10.0  # for class rewards' close() when the pool stops
_ANSI = re.compile(r"\x1b\[[0-9;]*m")


class RayExecutor:
    """Scores on ``num_workers`` Ray actors; joins or starts a Ray session."""

    def __init__(self, spec: RewardSpec, config: RewardConfig, info: RewardInfo) -> None:
        self._spec = spec
        self._info = info
        self._name = spec.display_name
        self._config = config
        self._limits = limits_for(config)
        self._pool: Pool | None = None
        self._slots: list[Slot] = []
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
            self._slots = [Slot(self._new_actor()) for _ in range(self._config.num_workers)]
        except BaseException:  # a package that cannot ship, an impossible request, Ctrl-C
            self.close()
            raise
        try:
            reports = ray.get([s.worker.ready.remote() for s in self._slots], timeout=START_TIMEOUT_S)
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
        timeout_s = reports[0]["timeout_s"] if reports else self._limits.timeout_s
        self._pool = Pool(RayWorkers(self._new_actor), self._slots, self._config, self._name,
                          timeout_s, self._cannot_start())

    def close(self) -> None:
        """Kill the actors; shut Ray down only if this executor was the last user
        of a session that verl-rewards started. Class rewards are closed first, on
        each actor (a bounded wait)."""
        self._pool = None
        if self._slots:
            try:
                ray.wait([s.worker.shutdown.remote() for s in self._slots], num_returns=len(self._slots),
                         timeout=_CLOSE_TIMEOUT_S)
            except Exception as e:  # Ray already gone: nothing left to close
                log.debug("closing rewards on the workers of %s: %s", self._name, e)
        for slot in self._slots:
            _kill(slot.worker)
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
        """Score ``samples`` on the pool (:class:`.pool.Pool`); outcomes in input order."""
        if self._pool is None:
            raise ExecutorError(f"the Ray executor for {self._name} is not started")
        return self._pool.run(samples, stop_on_error)


class RayWorkers:
    """The pool's workers as Ray actors: a chunk is a streaming call, a heartbeat an
    actor call answered from its second thread."""

    def __init__(self, new_actor: Any) -> None:
        self._new_actor = new_actor

    def send(self, slot: Slot, chunk: Chunk, samples: Sequence[Sample]) -> Any:
        options: dict[str, Any] = {"num_returns": "streaming"}
        if chunk.precise:  # the worker waits until we took each piece: a death is exact
            options["_generator_backpressure_num_objects"] = 1
        return slot.worker.score.options(**options).remote(list(samples), chunk.indices[0], chunk.precise)

    def wait(self, jobs: Sequence[Job], starting: Sequence[Slot], timeout: float
             ) -> tuple[list[Job], list[Slot]]:
        refs: dict[Any, Job | Slot] = {job.handle: job for job in jobs}
        refs.update({slot.starting: slot for slot in starting})
        ready, _ = ray.wait(list(refs), num_returns=1, timeout=timeout)
        found = [refs[r] for r in ready]
        return [j for j in found if isinstance(j, Job)], [s for s in found if isinstance(s, Slot)]

    def take(self, job: Job) -> Event:
        try:
            piece: Piece = ray.get(next(job.handle))
        except StopIteration:
            return "end"
        except RayActorError:
            return "died"
        except RayTaskError as e:
            return _unwrap(e)
        return piece

    def confirm(self, slot: Slot) -> bool:
        try:
            ray.get(slot.starting)
        except RayActorError:
            return False
        except RayTaskError as e:
            error = _unwrap(e)
            raise error from error.__cause__
        return True

    def heartbeat(self, slot: Slot) -> Heartbeat:
        try:
            return Report(*ray.get(slot.worker.progress.remote(), timeout=_HEARTBEAT_TIMEOUT_S))
        except RayActorError:
            return "dead"
        except GetTimeoutError:
            return "silent"

    def ended(self, slot: Slot) -> str | None:
        return None  # Ray says only that the actor died

    def restart(self, slot: Slot) -> None:
        _kill(slot.worker)
        slot.worker = self._new_actor()
        slot.starting = slot.worker.ready.remote()

    def heartbeat_every(self, limit: float) -> float:
        return limit / 2  # a heartbeat may wait _HEARTBEAT_TIMEOUT_S


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
