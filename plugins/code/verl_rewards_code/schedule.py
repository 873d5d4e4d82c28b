"""Which tests of a sample run, in what order, and what the others become.

A policy over test indices, whatever judges a test: tests start in order on
``workers`` threads; with ``stop_at_failure`` none starts after a test that
did not pass, and every test after the first one that did not pass is
``skipped`` (even one that ran meanwhile on another thread, so the statuses
are those of a sequential run); a test starts only while its worst case
(``worst_case_s``) still fits before ``deadline``: a test that never started
for want of time is ``timeout`` (the sample's time budget ran out).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from .outcome import Verdict

SKIPPED = Verdict("skipped")
OUT_OF_TIME = Verdict("timeout")


@dataclass
class _Progress:
    """What the threads share, under ``lock``."""

    count: int
    next_index: int = 0
    first_failure: int | None = None
    out_of_time: bool = False
    error: BaseException | None = None
    verdicts: dict[int, Verdict] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def run_in_order(
    count: int,
    judge: Callable[[int], Verdict],
    *,
    workers: int = 1,
    stop_at_failure: bool = False,
    deadline: float | None = None,
    worst_case_s: float = 0.0,
    clock: Callable[[], float] = time.monotonic,
) -> list[Verdict]:
    """The verdict of each of ``count`` tests, in order; ``judge(i)`` judges test ``i``.

    An exception from ``judge`` stops every thread from starting more tests
    and is raised once they have finished.
    """
    progress = _Progress(count)

    def work() -> None:
        while (index := _claim(progress, stop_at_failure, deadline, worst_case_s, clock)) is not None:
            try:
                verdict = judge(index)
            except BaseException as e:  # noqa: BLE001 (raised again in the caller's thread)
                with progress.lock:
                    progress.error = progress.error or e
                return
            _record(progress, index, verdict)

    threads = [threading.Thread(target=work, daemon=True) for _ in range(max(1, min(workers, count)) - 1)]
    for thread in threads:
        thread.start()
    work()
    for thread in threads:
        thread.join()
    if progress.error is not None:
        raise progress.error
    return [_final(progress, index, stop_at_failure) for index in range(count)]


def _claim(
    progress: _Progress, stop_at_failure: bool, deadline: float | None, worst_case_s: float,
    clock: Callable[[], float],
) -> int | None:
    """The next test to start, or None when no more may start."""
    with progress.lock:
        index = progress.next_index
        if index >= progress.count or progress.error is not None or progress.out_of_time:
            return None
        if stop_at_failure and progress.first_failure is not None:
            return None
        if deadline is not None and clock() + worst_case_s > deadline:
            progress.out_of_time = True
            return None
        progress.next_index += 1
        return index


def _record(progress: _Progress, index: int, verdict: Verdict) -> None:
    with progress.lock:
        progress.verdicts[index] = verdict
        if verdict.status != "pass" and (progress.first_failure is None or index < progress.first_failure):
            progress.first_failure = index


def _final(progress: _Progress, index: int, stop_at_failure: bool) -> Verdict:
    if stop_at_failure and progress.first_failure is not None and index > progress.first_failure:
        return SKIPPED
    verdict = progress.verdicts.get(index)
    if verdict is not None:
        return verdict
    return OUT_OF_TIME if progress.out_of_time else SKIPPED
