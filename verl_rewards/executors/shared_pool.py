"""``share_pool``: one pool of reward actors for every process of a Ray job, or of a
whole Ray cluster, that scores with the same reward and config.

Two scopes, one mechanism:

* ``share_pool: job`` (or ``true``): one pool per Ray job. verl starts N reward-loop
  actors, each with its own reward manager and ``Scorer``; they all score on one pool,
  not N.
* ``share_pool: cluster`` (what ``verl-rewards serve --shared-pool`` sets): one pool per
  Ray cluster, in namespace ``verl_rewards``, so ``serve`` front ends of different jobs,
  on different nodes, score on one pool.

Each client's :class:`SharedPoolExecutor` finds (or, the first time, creates;
``get_if_exists`` makes that race-free) one named :class:`PoolHost` actor, named by its
scope and :func:`~verl_rewards.spec.identity_key` (the reward at its version or source,
and its whole config, in any key order). The host drives the executor the config
describes and returns outcomes; each client assembles its own result. The host is owned
by the process that created it (not detached), so it and its reward actors go with that
process; a client whose host died creates it again, once per batch.

The host scores one batch at a time (each spans every worker); batches that arrive
while one is scoring are combined and scored together next
(:func:`verl_rewards.combining.score_together`, whose rule says how a failed sample
stays its own caller's), so many small batches (verl's agent loop scores sample by
sample) still use every worker. Every wait inside is bounded by the pool's own
deadlines (per-sample timeouts, worker replacement, start-up), so a client waits for
its result.
"""

from __future__ import annotations

import dataclasses
import logging
import threading
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import GetTimeoutError, RayActorError

from .._inspect import RewardInfo
from ..combining import Scored, for_caller, score_together
from ..config import PoolScope, RewardConfig
from ..errors import ExecutorError
from ..samples import Sample
from ..spec import RewardSpec, identity_key
from . import POOL_HOST_RESTARTS, ray_session

log = logging.getLogger(__name__)

NAMESPACE = "verl_rewards"  # the cluster scope's: every job finds the pool there
START_TIMEOUT_S = 600.0  # the host's pool start-up (its workers have their own 300 s deadline)


def host_name(scope: PoolScope, key: str, job: str) -> tuple[str, str | None]:
    """The pool host's actor name and namespace (None: the job's own) for ``scope``."""
    if scope == "cluster":
        return f"verl_rewards_pool_{key}", NAMESPACE
    return f"verl_rewards_pool_{job}_{key}", None


@dataclass
class _Waiting:
    samples: Sequence[Sample]
    result: Scored | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class PoolHost:
    """A Ray actor that scores every client's batches on one pool."""

    def __init__(self, spec: RewardSpec, config: RewardConfig, info: RewardInfo) -> None:
        from . import make_executor

        self._executor = make_executor(spec, dataclasses.replace(config, share_pool=False), info)
        self._executor.start()
        self._turn = threading.Lock()  # one combined batch at a time
        self._pending: list[_Waiting] = []
        self._pending_lock = threading.Lock()

    def ready(self) -> bool:
        """Answers once the pool has started (the actor's constructor started it)."""
        return True

    def score(self, samples: Sequence[Sample]) -> Scored:
        """Outcomes and metrics for ``samples``, scored with whatever else is waiting. A
        failed sample is an outcome, never an exception: the client applies its on_error."""
        waiting = _Waiting(samples)
        with self._pending_lock:
            self._pending.append(waiting)
        with self._turn:
            if not waiting.done.is_set():  # nobody scored it while we waited for our turn
                with self._pending_lock:
                    batch, self._pending = self._pending, []
                self._score_together(batch)
        if waiting.error is not None:
            raise waiting.error
        assert waiting.result is not None
        return waiting.result

    def _score_together(self, batch: list[_Waiting]) -> None:
        try:
            parts = score_together(lambda samples: self._executor.run(samples, False),
                                   [w.samples for w in batch])
        except BaseException as e:  # the pool failed, not a sample: every caller of the round hears it
            for w in batch:
                w.error = e
                w.done.set()
            return
        for w, part in zip(batch, parts):
            w.result = part
            w.done.set()


class SharedPoolExecutor:
    """A client of the job's or the cluster's shared pool (``config.share_pool``) for one
    reward and config."""

    def __init__(self, spec: RewardSpec, config: RewardConfig, info: RewardInfo) -> None:
        self._spec, self._config, self._info = spec, config, info
        self.scope: PoolScope = "cluster" if config.share_pool == "cluster" else "job"
        self._host: Any = None
        self._holds_session = False
        self.name = ""
        self._namespace: str | None = None

    def start(self) -> None:
        """Join Ray, find (or create) the pool host and wait until its pool is up."""
        self._holds_session = ray_session.acquire(self._config.ray_address)
        try:
            job = ray.get_runtime_context().get_job_id()
            self.name, self._namespace = host_name(self.scope, identity_key(self._spec, self._config), job)
            self._host = self._connect()
        except BaseException:
            self.close()
            raise

    def _connect(self) -> Any:
        host_class: Any = ray.remote(PoolHost)
        host = host_class.options(
            name=self.name, namespace=self._namespace, get_if_exists=True, num_cpus=0,
            max_concurrency=256,
        ).remote(self._spec, self._config, self._info)
        try:
            ray.get(host.ready.remote(), timeout=START_TIMEOUT_S)
        except GetTimeoutError as e:
            raise ExecutorError(
                f"the shared reward pool {self.name} for {self._spec.display_name} did not start "
                f"within {START_TIMEOUT_S:g} s; see the Ray cluster's logs (`ray status`: can it "
                f"place reward.num_workers workers?)") from e
        return host

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> Scored:
        """Score ``samples`` on the pool (created again, once, if its host died); with
        ``stop_on_error`` the first failed sample of *these* samples raises."""
        try:
            outcomes, metrics = self._score(samples)
        except RayActorError as e:
            log.warning("the shared reward pool %s died (%s); starting it again", self.name,
                        str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__)
            self._host = self._connect()
            outcomes, metrics = self._score(samples)
            metrics = {**metrics, POOL_HOST_RESTARTS: 1.0}
        return for_caller(self._spec.display_name, (outcomes, metrics), stop_on_error)

    def _score(self, samples: Sequence[Sample]) -> Scored:
        outcomes, metrics = ray.get(self._host.score.remote(list(samples)))
        return list(outcomes), dict(metrics)

    def close(self) -> None:
        """Leave the pool (it lives as long as the process that created it) and the Ray session."""
        self._host = None
        if self._holds_session:
            self._holds_session = False
            ray_session.release()
