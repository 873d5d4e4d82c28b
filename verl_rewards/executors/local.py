"""The ``local`` executor: score in this process, on one thread of its own.

The reward is resolved, called and closed on that thread (:class:`.runner.Runner`),
while the caller waits: so a call that no interrupt can end (it catches them all,
or is stuck in C) fails the run after its time limit and ``watchdog.HARD_GRACE_S``
instead of hanging it, and a Ctrl-C of the caller is never mistaken for the
reward's own ``KeyboardInterrupt``. Such a call goes on in its thread (holding
the GIL, if it is stuck in C with it, it stops the whole process): only a process
can be killed, which is what the ``process`` executor (:mod:`.process_pool`) does.
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
    """Resolves the reward once in this process and scores batches in order (async
    rewards concurrently, up to ``max_concurrency``). Callers in several threads at once
    each get a thread of their own, so they score concurrently, as in their own threads."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._spec = spec
        self._limits = limits_for(config)
        self._loaded: LoadedSpec | None = None
        self._lock = threading.Lock()
        self._idle: list[Runner] = []  # the last one used is reused first
        self._abandoned: list[Runner] = []

    def start(self) -> None:
        """Resolve the reward now, so a load error surfaces before scoring."""
        try:
            self._loaded = self._call(lambda progress: resolve_spec(self._spec))
        except BaseException:  # nobody will close an executor that did not start: end its thread
            self._stop_idle()
            raise

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` in order."""
        def score(progress: Progress) -> list[Outcome]:
            loaded = self._loaded or resolve_spec(self._spec)
            return score_spec(loaded, samples, self._limits, stop_on_error, progress=progress)

        return self._call(score), {}

    def close(self) -> None:
        """Close class rewards (their ``close()``) and forget them in this process."""
        from ..resolve import release

        self._loaded = None
        with self._lock:
            runners, self._idle = self._idle, []
            stuck = [r for r in self._abandoned if r.busy]
        usable = [r for r in runners if r.usable]
        try:
            if stuck:
                log.info("not closing reward %s: a call of it is still running in an abandoned "
                         "thread", self._spec.display_name)
            elif usable:  # on the thread that built them (a client may be bound to it)
                usable[-1].call(lambda: release(*refs_of(self._spec)), self._not_closed, CLOSE_TIMEOUT_S)
            else:
                release(*refs_of(self._spec))
        except ExecutorError as e:
            log.warning("%s", e)
        finally:
            for runner in runners:
                runner.stop()

    def _call(self, fn: Callable[[Progress], _T]) -> _T:
        with self._lock:
            while self._idle and not self._idle[-1].usable:
                self._idle.pop().stop()
            runner = self._idle.pop() if self._idle else Runner(Progress())
        try:
            return runner.call(lambda: fn(runner.progress), self._stuck(runner.progress))
        finally:
            with self._lock:
                self._abandoned = [r for r in self._abandoned if r.busy]
                (self._idle if runner.usable else self._abandoned).append(runner)

    def _stop_idle(self) -> None:
        with self._lock:
            runners, self._idle = self._idle, []
        for runner in runners:
            runner.stop()

    def _not_closed(self, elapsed_s: float) -> str:
        return (f"closing reward {self._spec.display_name} did not end within {elapsed_s:.0f} s; "
                f"left running in a background thread")

    def _stuck(self, progress: Progress) -> Callable[[float], str]:
        def message(elapsed_s: float) -> str:
            return (f"reward {self._spec.display_name} has run one call (sample {progress.index} "
                    f"of the batch) for {elapsed_s:.0f} s, past its allowed {progress.allowed_s:g} s "
                    f"and the local executor's {watchdog.HARD_GRACE_S:g} s grace: it goes on "
                    f"through the interrupts the time limit raises (code that catches them, such "
                    f"as a bare `except:`, or a call stuck in C). The local executor cannot stop "
                    f"such a call and has left it running in a background thread. The process "
                    f"executor (reward.executor=process, the adapters' default) kills it with its "
                    f"worker process on this machine; across a cluster, only the Ray executor "
                    f"(reward.executor=ray) can kill it, by replacing its worker process")

        return message
