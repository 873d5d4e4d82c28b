"""One pool of reward actors shared by every process of a Ray job that asks for it.

verl starts N reward-loop actors, each with its own reward manager; each
finds (or, the first time, creates) one named :class:`PoolHost` actor for its
job and config, and sends it its batches. The host runs a ``Scorer`` whose
Ray executor drives the reward actors, so the job has one pool, not N.
``get_if_exists`` makes the creation race-free. The host is owned by the
process that created it, so it (and its reward actors) go when the job does.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import pickle
import threading
from typing import Any

import ray
from ray.exceptions import RayActorError

from ..config import RewardConfig
from ..outcomes import Outcome
from ..results import BatchResult, Provenance, assemble
from ..samples import Sample
from ..spec import RewardSpec

log = logging.getLogger(__name__)

_GRACE_S = 120.0  # beyond the pool's own per-sample deadlines, for Ray itself
_AUTO_TIMEOUT_S = 300.0  # "auto" (a plugin's declared timeout) is unknown here: assume a long one


class PoolHost:
    """A Ray actor that scores every client's batches on one pool, one batch at a time."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        from ..scorer import Scorer

        self._scorer = Scorer(spec, config).start()
        self._lock = threading.Lock()  # each batch spans the whole pool

    def score(self, samples: list[Sample]) -> BatchResult:
        with self._lock:
            return self._scorer.score(samples)


class SharedPool:
    """A client of the job's shared pool for ``spec`` and ``config`` (``executor: ray``)."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._spec, self._config = spec, config
        digest = hashlib.sha256(pickle.dumps((spec, config))).hexdigest()[:16]
        job = ray.get_runtime_context().get_job_id()
        self.name = f"verl_rewards_pool_{job}_{digest}"
        self._host = self._connect()

    def _connect(self) -> Any:
        return ray.remote(PoolHost).options(
            name=self.name, get_if_exists=True, num_cpus=0, max_concurrency=64,
        ).remote(self._spec, self._config)

    async def score(self, samples: list[Sample]) -> BatchResult:
        """Score ``samples`` on the pool; a pool that does not answer in time fails them."""
        deadline = deadline_s(self._config, len(samples))
        for attempt in (1, 2):
            try:
                result: BatchResult = await asyncio.wait_for(self._host.score.remote(samples), deadline)
                return result
            except RayActorError:
                if attempt == 2:
                    raise
                log.warning("the verl-rewards pool %s died; starting it again", self.name)
                self._host = self._connect()
            except asyncio.TimeoutError:
                log.error("the verl-rewards pool %s did not answer a batch of %d within %.0f s",
                          self.name, len(samples), deadline)
                return self._all_failed(len(samples), deadline)
        raise AssertionError("unreachable")

    def _all_failed(self, n: int, deadline: float | None) -> BatchResult:
        error = (f"SampleTimeout: the shared reward pool {self.name} did not answer within "
                 f"{deadline:.0f} s; check its reward actors (`ray list actors`) and reward.timeout_s")
        return assemble([Outcome(None, None, error, "timeout")] * n, Provenance.of(self._spec),
                        self._config.error_score)


def deadline_s(config: RewardConfig, n: int) -> float | None:
    """A backstop for one batch (the pool enforces per-sample timeouts itself)."""
    if config.timeout_s is None:
        return None  # no per-sample limit was asked for
    timeout = config.timeout_s if isinstance(config.timeout_s, (int, float)) else _AUTO_TIMEOUT_S
    rounds = -(-n // max(1, config.num_workers))
    return float(timeout) * (rounds + 2) + _GRACE_S
