"""The service's scorer: started in the background, replaced when its pool dies.

The keeper holds one :class:`~verl_rewards.Scorer` for the served section: its executor
is the one the config names (``local``, ``ray``, or with ``--shared-pool``, which sets
``reward.share_pool=cluster``, a client of the Ray cluster's one pool for this reward;
see :mod:`verl_rewards.executors.shared_pool`). This module knows no Ray. A scoring call
that fails as a whole (not a sample: the executor, the Ray actors or the cluster) marks
the scorer down; a new one is built and the batch is tried once more on it. ``/readyz``
reports the state.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from ..errors import RewardError, VerlRewardsError
from ..executors import POOL_HOST_RESTARTS
from ..results import BatchResult
from ..samples import Sample
from ..scorer import Scorer
from .metrics import Metrics

log = logging.getLogger("verl_rewards.serve")

State = Literal["starting", "ready", "restarting", "failed", "closed"]
_RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)  # between failed starts
Results = list[BatchResult | RewardError]


class PoolUnavailable(VerlRewardsError):
    """The reward pool is down and could not be started again (yet)."""


@dataclass
class _Status:
    state: State = "starting"
    restarts: int = 0
    last_error: str | None = None
    since: float = 0.0


class PoolKeeper:
    """Starts, uses, replaces and closes the pool; thread-safe."""

    def __init__(self, build: Callable[[], Scorer], metrics: Metrics, describe: str) -> None:
        self._build = build  # a started Scorer
        self._metrics = metrics
        self.describe = describe  # e.g. "ray executor, 2 workers" for /readyz
        self._backend: Scorer | None = None
        self._status = _Status(since=time.monotonic())
        self._changed = threading.Condition()
        self._wanted = False  # the pool thread should build a (new) pool
        self._thread: threading.Thread | None = None

    # -- lifecycle ----------------------------------------------------------

    def start(self) -> None:
        """Build the pool in the background (``/healthz`` answers meanwhile)."""
        with self._changed:
            self._wanted = True
        # One thread builds every pool and outlives it: Ray ties the processes
        # a local ray.init starts to the thread that started them (they are
        # killed when it ends), so it must not be a short-lived one.
        self._thread = threading.Thread(target=self._maintain, name="verl-rewards-pool", daemon=True)
        self._thread.start()

    def _maintain(self) -> None:
        while True:
            with self._changed:
                while not self._wanted and self._status.state != "closed":
                    self._changed.wait()
                if self._status.state == "closed":
                    break
                self._wanted = False
            self._build_until_up()
        with self._changed:
            backend, self._backend = self._backend, None
        if backend is not None:
            backend.close()

    def _build_until_up(self) -> None:
        for attempt in range(10**9):
            try:
                backend = self._build()
            except Exception as e:  # noqa: BLE001 - reported by /readyz, retried
                with self._changed:
                    if self._status.state == "closed":
                        return
                    self._status.last_error = f"{type(e).__name__}: {e}"
                    self._set("failed")
                    log.error("the reward pool did not start: %s", self._status.last_error)
                    self._changed.wait(_RETRY_S[min(attempt, len(_RETRY_S) - 1)])
                continue
            with self._changed:
                if self._status.state == "closed":
                    self._backend = backend  # closed by _maintain on its way out
                    return
                self._backend = backend
                self._set("ready")
            return

    def _set(self, state: State) -> None:
        self._status.state = state
        self._status.since = time.monotonic()
        self._metrics.ready.set(1.0 if state == "ready" else 0.0)
        self._changed.notify_all()

    def close(self, timeout_s: float = 120.0) -> None:
        """Stop the pool (in-flight work has finished: the server drained first)."""
        with self._changed:
            self._set("closed")
        if self._thread is not None:
            self._thread.join(timeout_s)

    # -- use ----------------------------------------------------------------

    def status(self) -> dict[str, Any]:
        """For ``/readyz``: state, restarts, the last pool failure, the pool's description."""
        with self._changed:
            s = self._status
            return {"ready": s.state == "ready", "state": s.state, "pool": self.describe,
                    "restarts": s.restarts, "last_error": s.last_error,
                    "state_for_s": round(time.monotonic() - s.since, 3)}

    @property
    def state(self) -> State:
        return self._status.state

    def score_together(self, batches: Sequence[list[Sample]], wait_s: float) -> Results:
        """Score several requests' batches as one pool batch (waiting up to ``wait_s`` for the
        pool to be up): each its own result or its own ``RewardError``
        (:meth:`Scorer.score_together`). A pool that fails as a whole is replaced and the
        batches tried once more."""
        backend = self._wait_ready(wait_s)
        try:
            results = backend.score_together(batches)
        except Exception as e:  # noqa: BLE001 - the pool itself failed: replace it
            self._replace(backend, e)
            results = self._wait_ready(wait_s).score_together(batches)
        self._count_host_restart(results)
        return results

    def _count_host_restart(self, results: Results) -> None:
        """The shared pool's client created its host again under this batch: count it."""
        if any(isinstance(r, BatchResult) and r.metrics.get(POOL_HOST_RESTARTS) for r in results):
            with self._changed:
                self._status.restarts += 1
                self._status.last_error = "the shared pool's host died; it was created again"
                self._metrics.restarts.inc()
            log.error("the shared reward pool's host died; it was created again")

    def _wait_ready(self, wait_s: float) -> Scorer:
        deadline = time.monotonic() + wait_s
        with self._changed:
            while True:
                if self._status.state == "ready" and self._backend is not None:
                    return self._backend
                if self._status.state in ("failed", "closed"):
                    break
                left = deadline - time.monotonic()
                if left <= 0:
                    break
                self._changed.wait(left)
            raise PoolUnavailable(f"the reward pool is {self._status.state}"
                                  + (f" ({self._status.last_error})" if self._status.last_error else ""))

    def _replace(self, failed: Scorer, error: Exception) -> None:
        with self._changed:
            if self._backend is not failed:  # another batch already replaced it
                return
            self._backend = None
            self._status.restarts += 1
            self._status.last_error = f"{type(error).__name__}: {error}"
            self._metrics.restarts.inc()
            self._wanted = True
            self._set("restarting")
        log.error("the reward pool failed (%s); starting a new one", self._status.last_error)
        threading.Thread(target=_close_quietly, args=(failed,), daemon=True).start()


def _close_quietly(backend: Scorer) -> None:
    try:
        backend.close()
    except Exception as e:  # noqa: BLE001 - a dead pool may fail to close; it is gone anyway
        log.warning("closing the failed reward pool: %s: %s", type(e).__name__, e)
