"""One pool of reward actors shared by every process of a Ray job that asks for it.

verl starts N reward-loop actors, each with its own reward manager; each
finds (or, the first time, creates) one named :class:`PoolHost` actor for its
job and config, and sends it its batches. The host runs a ``Scorer`` whose
Ray executor drives the reward actors, so the job has one pool, not N.
``get_if_exists`` makes the creation race-free. The host is owned by the
process that created it, so it (and its reward actors) go when the job does.

The host scores one batch at a time (each spans every worker); batches that
arrive while one is scoring are combined and scored together next, so many
small batches (verl's agent loop scores sample by sample) still use every
worker. Every wait inside is bounded by the pool's own deadlines (per-sample
timeouts, worker replacement, start-up), so a client waits for its result.
"""

from __future__ import annotations

import hashlib
import logging
import pickle
import threading
from dataclasses import dataclass, field
from typing import Any

import ray
from ray.exceptions import RayActorError

from ..config import RewardConfig
from ..results import BatchResult
from ..samples import Sample
from ..spec import RewardSpec

log = logging.getLogger(__name__)


@dataclass
class _Waiting:
    samples: list[Sample]
    result: BatchResult | None = None
    error: BaseException | None = None
    done: threading.Event = field(default_factory=threading.Event)


class PoolHost:
    """A Ray actor that scores every client's batches on one pool."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        from ..scorer import Scorer

        self._scorer = Scorer(spec, config).start()
        self._turn = threading.Lock()  # one combined batch at a time
        self._pending: list[_Waiting] = []
        self._pending_lock = threading.Lock()

    def score(self, samples: list[Sample]) -> BatchResult:
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
            result = self._scorer.score([s for w in batch for s in w.samples])
        except BaseException as e:  # on_error=raise: every batch of the round hears it
            for w in batch:
                w.error = e
                w.done.set()
            return
        offset = 0
        for w in batch:
            w.result = _slice(result, offset, len(w.samples))
            offset += len(w.samples)
            w.done.set()


def _slice(result: BatchResult, start: int, n: int) -> BatchResult:
    end = start + n
    return BatchResult(
        scores=result.scores[start:end], errors=result.errors[start:end],
        statuses=result.statuses[start:end],
        extra_info={k: v[start:end] for k, v in result.extra_info.items()},
        provenance=result.provenance, metrics=result.metrics,
    )


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
            name=self.name, get_if_exists=True, num_cpus=0, max_concurrency=256,
        ).remote(self._spec, self._config)

    async def score(self, samples: list[Sample]) -> BatchResult:
        """Score ``samples`` on the pool (started again, once, if its host died)."""
        for attempt in (1, 2):
            try:
                result: BatchResult = await self._host.score.remote(samples)
                return result
            except RayActorError:
                if attempt == 2:
                    raise
                log.warning("the verl-rewards pool %s died; starting it again", self.name)
                self._host = self._connect()
        raise AssertionError("unreachable")
