"""Several callers' batches scored as one call, and the one rule for a failure among them.

The shared pool's host (``executors/shared_pool.py``) combines the batches its clients
send while it is busy; ``serve``'s queue (``serve/batching.py``) combines the requests
that arrive while the pool scores; the adapters' ``Microbatcher``
(``integrations/_batching.py``) combines the per-sample calls a host makes at once on
one event loop, each call a caller. All score the combined batch with
:func:`score_together`, and all hold to one rule:

* the combined call never stops at a failed sample (``on_error`` is the caller's, and
  applies afterwards, to its own samples only);
* each caller gets its own outcomes, and with ``on_error='raise'`` the
  :class:`~verl_rewards.errors.RewardError` of its own first failed sample, indexed
  within its own batch (:func:`for_caller`): a failed sample never fails another
  caller's batch;
* a failure of the call itself (the pool, not a sample) reaches every caller.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from .outcomes import Outcome
from .samples import Sample
from .scoring import raise_first_failure

Scored = tuple[list[Outcome], dict[str, float]]  # a batch's outcomes and the executor's metrics
Run = Callable[[list[Sample]], Scored]  # score samples without stopping at a failed one

T = TypeVar("T")


def score_together(run: Run, batches: Sequence[Sequence[Sample]]) -> list[Scored]:
    """Score ``batches`` with one ``run`` call; each batch's own outcomes, in order, with
    the call's metrics. An exception from ``run`` (the pool failed) propagates."""
    outcomes, metrics = run([s for batch in batches for s in batch])
    return [(part, metrics) for part in split(outcomes, [len(b) for b in batches])]


def split(items: Sequence[T], sizes: Sequence[int]) -> list[list[T]]:
    """``items`` cut into consecutive parts of ``sizes``."""
    if sum(sizes) != len(items):
        raise ValueError(f"{len(items)} items cannot be split into parts of {list(sizes)}")
    parts, start = [], 0
    for n in sizes:
        parts.append(list(items[start:start + n]))
        start += n
    return parts


def for_caller(reward: str, scored: Scored, stop_on_error: bool) -> Scored:
    """A caller's own part of a combined batch under its own ``on_error``: with
    ``stop_on_error`` its first failed sample raises ``RewardError`` (indexed within its
    batch); otherwise its outcomes as they are."""
    if stop_on_error:
        raise_first_failure(reward, scored[0])
    return scored
