""":class:`Scorer`: the public face of scoring, blocking or as futures."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from types import TracebackType
from typing import Any

from ._inspect import RewardInfo
from .combining import for_caller, score_together
from .config import ConfigSource, RewardConfig, load_config
from .errors import ExecutorError, RewardError
from .executors import Executor, make_executor
from .executors.quiet_ray import quiet_ray_startup
from .preflight import preflight
from .results import BatchResult, Provenance, assemble
from .samples import Sample, SampleLike, as_samples
from .spec import RewardSpec, identity_key, spec_from_config

_BACKGROUND = "verl-rewards-scorer"  # the name of submit()'s thread


class Scorer:
    """Scores batches of samples with the reward a config selects.

    >>> with Scorer.from_config({"plugin": "gsm8k", "executor": "local"}) as scorer:  # doctest: +SKIP
    ...     result = scorer.score([{"data_source": "openai/gsm8k",
    ...                             "solution_str": "... #### 72", "ground_truth": "72"}])
    """

    def __init__(self, ref: RewardSpec, config: RewardConfig, info: RewardInfo | None = None) -> None:
        self.ref = ref  # a RewardRef, or a CompositeRef for reward.rewards
        self.config = config
        self._info = info
        self.provenance = Provenance.of(ref)
        self._executor: Executor | None = None  # made in start(): building a Scorer imports no Ray
        self._closed = False
        self._lock = threading.Lock()
        self._idle = threading.Condition(self._lock)  # notified when a run ends
        self._running = 0  # score() calls in flight, submitted ones included
        self._background: ThreadPoolExecutor | None = None

    @classmethod
    def from_config(
        cls, cfg: ConfigSource, overrides: Sequence[str] = (), *,
        defaults: Mapping[str, Any] | None = None,
    ) -> Scorer:
        """Validate ``cfg`` (the ``reward`` section, ``defaults`` filling the keys it
        leaves unset), reference and inspect the reward here, and build a scorer;
        nothing starts yet. Every entry point builds its scorer this way.

        Raises a :class:`~verl_rewards.errors.ConfigError` for a bad section or
        kwargs, a :class:`~verl_rewards.errors.PluginLoadError` for a reward
        that does not import here (see :mod:`verl_rewards.preflight`).
        """
        config = load_config(cfg, overrides, defaults)
        spec = spec_from_config(config)
        return cls(spec, config, preflight(spec, config))

    @property
    def info(self) -> RewardInfo:
        """What the reward is and how it is called, read once without building it."""
        if self._info is None:
            self._info = preflight(self.ref, self.config)
        return self._info

    def unplaceable(self, cluster: Mapping[str, float], prefix: str = "reward.") -> str | None:
        """Why a cluster with ``cluster`` resources can never place this scorer's Ray
        workers (naming the config keys under ``prefix``), or None when it can."""
        from .executors.hardware import unplaceable, worker_options

        options = worker_options(self.config, self.info.num_gpus)
        return unplaceable(options, self.config, cluster, prefix)

    @property
    def key(self) -> str:
        """This reward and config's identity (the same in every process)."""
        return identity_key(self.ref, self.config)

    def __enter__(self) -> Scorer:
        self.start()
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def start(self) -> Scorer:
        """Start the executor (idempotent). ``score`` and ``submit`` call this."""
        with self._lock:
            if self._closed:
                raise ExecutorError(f"the scorer for {self.ref.display_name} is closed")
            if self._executor is None:
                if self.config.executor == "ray" and not self.config.remote_url:
                    quiet_ray_startup()  # as the CLI and the trainer do; RAY_LOGGER_LEVEL set by the user wins
                executor = make_executor(self.ref, self.config, self.info)
                executor.start()
                self._executor = executor
        return self

    def score(self, samples: Iterable[SampleLike]) -> BatchResult:
        """Score ``samples`` and wait for the result (in input order).

        With ``on_error='raise'`` the first failed sample raises
        :class:`~verl_rewards.errors.RewardError`.
        """
        batch = as_samples(samples)
        executor = self._begin_run()
        return self._run(executor, batch)

    def score_together(self, batches: Sequence[Iterable[SampleLike]]) -> list[BatchResult | RewardError]:
        """Score several callers' batches as one executor call (as ``serve`` combines the
        requests that arrive together): each batch's own result, in order, or with
        ``on_error='raise'`` the :class:`~verl_rewards.errors.RewardError` of its own first
        failed sample (indexed within that batch). A failed sample never fails another
        batch (the rule of :mod:`verl_rewards.combining`); a failure of the executor
        itself raises.
        """
        parts = [as_samples(batch) for batch in batches]
        executor = self._begin_run()
        began = time.perf_counter()
        try:
            scored = score_together(lambda samples: executor.run(samples, False), parts)
        finally:
            self._end_run()
        latency = time.perf_counter() - began
        results: list[BatchResult | RewardError] = []
        for part in scored:
            try:
                outcomes, metrics = for_caller(self.ref.display_name, part, self.config.on_error == "raise")
            except RewardError as e:
                results.append(e)
                continue
            results.append(assemble(outcomes, self.provenance, self.config.error_score,
                                    {"latency_s": latency, **metrics}))
        return results

    def submit(self, samples: Iterable[SampleLike]) -> Future[BatchResult]:
        """Start scoring ``samples`` in the background; return a future of the result.

        A submitted batch is scored even if :meth:`close` is called before it
        starts: ``close`` waits for it.
        """
        batch = as_samples(samples)  # malformed input fails here, in the caller
        executor = self._begin_run()
        with self._lock:
            if self._background is None:
                self._background = ThreadPoolExecutor(1, thread_name_prefix=_BACKGROUND)
            return self._background.submit(self._run, executor, batch)

    def _begin_run(self) -> Executor:
        """Start if needed and count one run in flight (``close`` waits for it)."""
        self.start()
        with self._lock:
            if self._closed or self._executor is None:
                raise ExecutorError(f"the scorer for {self.ref.display_name} is closed")
            self._running += 1
            return self._executor

    def _end_run(self) -> None:
        with self._lock:
            self._running -= 1
            self._idle.notify_all()

    def _run(self, executor: Executor, batch: Sequence[Sample]) -> BatchResult:
        try:
            began = time.perf_counter()
            outcomes, metrics = executor.run(batch, self.config.on_error == "raise")
            latency = time.perf_counter() - began
        finally:
            self._end_run()
        metrics = {"latency_s": latency, **metrics}
        return assemble(outcomes, self.provenance, self.config.error_score, metrics)

    def close(self) -> None:
        """Wait for running and submitted work, then stop the executor and release
        its workers. Safe to call from another thread while ``score`` runs."""
        if threading.current_thread().name.startswith(_BACKGROUND):
            # Called from a submitted batch's thread (a future's done-callback): that
            # thread cannot wait for itself, so a helper thread closes once it is free.
            threading.Thread(target=self.close, name="verl-rewards-close", daemon=True).start()
            return
        with self._lock:
            if self._closed:
                return
            self._closed = True
            background, self._background = self._background, None
        if background is not None:
            background.shutdown(wait=True)
        with self._lock:
            # Each run is bounded by the executor's own deadlines (timeout_s,
            # worker replacement), so this wait ends.
            while self._running:
                self._idle.wait()
            executor, self._executor = self._executor, None
        if executor is not None:
            executor.close()
