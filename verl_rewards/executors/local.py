"""The ``local`` executor: score in this process, on one thread of its own.

The reward is resolved, called and closed on that thread (:class:`.runner.Runner`),
while the caller waits: so a call that no interrupt can end (it catches them all,
or is stuck in C) fails the run after its time limit and ``watchdog.HARD_GRACE_S``
instead of hanging it, and a Ctrl-C of the caller is never mistaken for the
reward's own ``KeyboardInterrupt``.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from typing import TypeVar

from .. import watchdog
from ..config import RewardConfig
from ..dispatch import LoadedSpec, resolve_spec, score_spec
from ..errors import ExecutorError
from ..limits import limits_for
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec, refs_of
from ..watchdog import Progress
from .runner import Runner

_T = TypeVar("_T")

CLOSE_TIMEOUT_S = 30.0  # for the rewards' close() at shutdown

log = logging.getLogger(__name__)


class LocalExecutor:
    """Resolves the reward once in this process and scores batches sequentially
    (async rewards concurrently, up to ``max_concurrency``)."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._spec = spec
        self._limits = limits_for(config)
        self._loaded: LoadedSpec | None = None
        self._progress = Progress()
        self._runner: Runner | None = None
        self._lock = threading.Lock()

    def start(self) -> None:
        """Resolve the reward now, so a load error surfaces before scoring."""
        try:
            self._loaded = self._call(lambda: resolve_spec(self._spec))
        except BaseException:  # nobody will close an executor that did not start: end its thread
            with self._lock:
                runner, self._runner = self._runner, None
            if runner is not None:
                runner.stop()
            raise

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` in order."""
        def score() -> list[Outcome]:
            loaded = self._loaded or resolve_spec(self._spec)
            return score_spec(loaded, samples, self._limits, stop_on_error, progress=self._progress)

        return self._call(score), {}

    def close(self) -> None:
        """Close class rewards (their ``close()``) and forget them in this process."""
        from ..resolve import release

        self._loaded = None
        with self._lock:
            runner, self._runner = self._runner, None
        if runner is not None and runner.abandoned and runner.busy:
            log.info("not closing reward %s: a call of it is still running in an abandoned "
                     "thread", self._spec.display_name)
            return
        if runner is None or not runner.usable:
            release(*refs_of(self._spec))
            return
        try:  # on the thread that built them (a client may be bound to it)
            runner.call(lambda: release(*refs_of(self._spec)), self._not_closed, CLOSE_TIMEOUT_S)
        except ExecutorError as e:
            log.warning("%s", e)
        runner.stop()

    def _call(self, fn: Callable[[], _T]) -> _T:
        with self._lock:
            if self._runner is None or not self._runner.usable:
                self._runner = Runner(self._progress)
            runner = self._runner
        return runner.call(fn, self._stuck)

    def _not_closed(self, elapsed_s: float) -> str:
        return (f"closing reward {self._spec.display_name} did not end within {elapsed_s:.0f} s; "
                f"left running in a background thread")

    def _stuck(self, elapsed_s: float) -> str:
        p = self._progress
        return (f"reward {self._spec.display_name} has run one call (sample {p.index} of the "
                f"batch) for {elapsed_s:.0f} s, past its allowed {p.allowed_s:g} s and the local executor's "
                f"{watchdog.HARD_GRACE_S:g} s grace: it goes on through the interrupts the time limit "
                f"raises (code that catches them, such as a bare `except:`, or a call stuck in "
                f"C). The local executor cannot stop such a call and has left it running in a "
                f"background thread; only the Ray executor (reward.executor=ray) can kill it, "
                f"by replacing its worker process")
