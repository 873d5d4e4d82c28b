"""The reward pool behind the service: started in the background, replaced when it dies.

A pool is a :class:`~verl_rewards.Scorer` of its own (``executor: local`` or
``ray``), or a client of the Ray cluster's shared pool for this reward
(``--shared-pool``: every ``serve`` front end joined to the cluster scores on
one pool). A scoring call that fails as a whole (not a sample: the executor,
the Ray actors or the cluster) marks the pool down; it is rebuilt and the
batch is tried once more on the new one. ``/readyz`` reports the state.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from .._inspect import RewardInfo
from ..config import RewardConfig
from ..errors import RewardError, VerlRewardsError
from ..results import BatchResult
from ..samples import Sample
from ..spec import RewardSpec
from .metrics import Metrics

log = logging.getLogger("verl_rewards.serve")

State = Literal["starting", "ready", "restarting", "failed", "closed"]
_RETRY_S = (1.0, 2.0, 5.0, 10.0, 30.0)  # between failed starts
_START_TIMEOUT_S = 600.0


class PoolUnavailable(VerlRewardsError):
    """The reward pool is down and could not be started again (yet)."""


class Backend(Protocol):
    """What the keeper drives: score a batch; close."""

    def score(self, samples: list[Sample]) -> BatchResult: ...

    def close(self) -> None: ...


class OwnPool:
    """A :class:`Scorer` of this process (``executor: local`` or ``ray``)."""

    def __init__(self, spec: RewardSpec, config: RewardConfig, info: RewardInfo | None = None) -> None:
        from ..scorer import Scorer

        self._scorer = Scorer(spec, config, info).start()  # info: read once, not again per pool

    def score(self, samples: list[Sample]) -> BatchResult:
        return self._scorer.score(samples)

    def close(self) -> None:
        self._scorer.close()


NAMESPACE = "verl_rewards"


def shared_pool_name(spec: RewardSpec, config: RewardConfig) -> str:
    """The cluster-wide name of the shared pool for this reward and config."""
    import hashlib
    import pickle

    return f"verl_rewards_serve_{hashlib.sha256(pickle.dumps((spec, config))).hexdigest()[:16]}"


class SharedPool:
    """A client of the cluster's pool for this reward: a named ``PoolHost`` actor
    (the verl manager's shared-pool host) in namespace ``verl_rewards``, found or
    created race-free; it lives as long as the front end that created it, and the
    others create it again when it goes."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        import ray

        from ..executors import ray_session
        from ..executors.shared_pool import PoolHost
        from ..results import Provenance
        from ..scorer import Scorer

        info = Scorer(spec, config).info  # read in this process, never built here
        self._provenance, self._config = Provenance.of(spec), config
        self._holds_session = ray_session.acquire(config.ray_address)
        self.name = shared_pool_name(spec, config)
        host_class: Any = ray.remote(PoolHost)
        try:
            self._host: Any = host_class.options(
                name=self.name, namespace=NAMESPACE, get_if_exists=True, num_cpus=0,
                max_concurrency=256,
            ).remote(spec, config, info)
            # up once its pool started
            ray.get(self._host.score.remote([], False), timeout=_START_TIMEOUT_S)
        except BaseException:
            self.close()
            raise

    def score(self, samples: list[Sample]) -> BatchResult:
        import ray

        from ..results import assemble

        outcomes, metrics = ray.get(self._host.score.remote(samples, self._config.on_error == "raise"))
        return assemble(outcomes, self._provenance, self._config.error_score, metrics)

    def close(self) -> None:
        from ..executors import ray_session

        self._host = None
        if self._holds_session:
            ray_session.release()


@dataclass
class _Status:
    state: State = "starting"
    restarts: int = 0
    last_error: str | None = None
    since: float = 0.0


class PoolKeeper:
    """Starts, uses, replaces and closes the pool; thread-safe."""

    def __init__(self, build: Callable[[], Backend], metrics: Metrics, describe: str) -> None:
        self._build = build
        self._metrics = metrics
        self.describe = describe  # e.g. "ray executor, 2 workers" for /readyz
        self._backend: Backend | None = None
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

    def score(self, samples: list[Sample], wait_s: float) -> BatchResult:
        """Score on the pool (waiting up to ``wait_s`` for it to be up); a pool
        that fails as a whole is replaced and the batch tried once more."""
        backend = self._wait_ready(wait_s)
        try:
            return backend.score(samples)
        except RewardError:  # on_error=raise: a sample failed, not the pool
            raise
        except Exception as e:  # noqa: BLE001 - the pool itself failed: replace it
            self._replace(backend, e)
        return self._wait_ready(wait_s).score(samples)

    def _wait_ready(self, wait_s: float) -> Backend:
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

    def _replace(self, failed: Backend, error: Exception) -> None:
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


def _close_quietly(backend: Backend) -> None:
    try:
        backend.close()
    except Exception as e:  # noqa: BLE001 - a dead pool may fail to close; it is gone anyway
        log.warning("closing the failed reward pool: %s: %s", type(e).__name__, e)
