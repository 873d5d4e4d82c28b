"""``share_pool``: one pool of reward actors for every process of a Ray job that asks for it.

verl starts N reward-loop actors, each with its own reward manager and
``Scorer``; each one's :class:`SharedPoolExecutor` finds (or, the first time,
creates) one named :class:`PoolHost` actor for its job, reward and config,
and sends it its batches. The host drives a :class:`~.ray_pool.RayExecutor`,
so the job has one pool, not N. ``get_if_exists`` makes the creation
race-free. The host is owned by the process that created it, so it (and its
reward actors) go when the job does.

The host scores one batch at a time (each spans every worker); batches that
arrive while one is scoring are combined and scored together next, so many
small batches (verl's agent loop scores sample by sample) still use every
worker. Every wait inside is bounded by the pool's own deadlines (per-sample
timeouts, worker replacement, start-up), so a client waits for its result.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import RayActorError

from .._inspect import RewardInfo
from ..config import RewardConfig
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec, identity_key
from . import ray_session

log = logging.getLogger(__name__)

Scored = tuple[list[Outcome], dict[str, float]]


@dataclass
class _Waiting:
    samples: Sequence[Sample]
    result: Scored | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class PoolHost:
    """A Ray actor that scores every client's batches on one pool."""

    def __init__(self, spec: RewardSpec, config: RewardConfig, info: RewardInfo) -> None:
        from .ray_pool import RayExecutor

        self._executor = RayExecutor(spec, config, info)
        self._executor.start()
        self._turn = threading.Lock()  # one combined batch at a time
        self._pending: list[_Waiting] = []
        self._pending_lock = threading.Lock()

    def score(self, samples: Sequence[Sample], stop_on_error: bool) -> Scored:
        """Outcomes and metrics for ``samples``, scored with whatever else is waiting."""
        waiting = _Waiting(samples)
        with self._pending_lock:
            self._pending.append(waiting)
        with self._turn:
            if not waiting.done.is_set():  # nobody scored it while we waited for our turn
                with self._pending_lock:
                    batch, self._pending = self._pending, []
                self._score_together(batch, stop_on_error)
        if waiting.error is not None:
            raise waiting.error
        assert waiting.result is not None
        return waiting.result

    def _score_together(self, batch: list[_Waiting], stop_on_error: bool) -> None:
        try:
            outcomes, metrics = self._executor.run([s for w in batch for s in w.samples], stop_on_error)
        except BaseException as e:  # on_error=raise: every batch of the round hears it
            for w in batch:
                w.error = e
                w.done.set()
            return
        offset = 0
        for w in batch:
            w.result = (outcomes[offset:offset + len(w.samples)], metrics)
            offset += len(w.samples)
            w.done.set()


class SharedPoolExecutor:
    """A client of the job's shared pool for one reward and config."""

    def __init__(self, spec: RewardSpec, config: RewardConfig, info: RewardInfo) -> None:
        self._spec, self._config, self._info = spec, config, info
        self._host: Any = None
        self._holds_session = False
        self.name = ""

    def start(self) -> None:
        """Join Ray and find (or create) the job's pool host."""
        self._holds_session = ray_session.acquire(self._config.ray_address)
        job = ray.get_runtime_context().get_job_id()
        self.name = f"verl_rewards_pool_{job}_{identity_key(self._spec, self._config)}"
        self._host = self._connect()

    def _connect(self) -> Any:
        return ray.remote(PoolHost).options(
            name=self.name, get_if_exists=True, num_cpus=0, max_concurrency=256,
        ).remote(self._spec, self._config, self._info)

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> Scored:
        """Score ``samples`` on the pool (started again, once, if its host died)."""
        try:
            return self._score(samples, stop_on_error)
        except RayActorError:
            log.warning("the verl-rewards pool %s died; starting it again", self.name)
            self._host = self._connect()
            return self._score(samples, stop_on_error)

    def _score(self, samples: Sequence[Sample], stop_on_error: bool) -> Scored:
        outcomes, metrics = ray.get(self._host.score.remote(list(samples), stop_on_error))
        return list(outcomes), dict(metrics)

    def close(self) -> None:
        """Leave the pool (it lives as long as the job) and the Ray session."""
        self._host = None
        if self._holds_session:
            self._holds_session = False
            ray_session.release()
