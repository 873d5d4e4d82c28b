"""Gather the per-sample calls a host makes concurrently into one batch.

verl's reward loop calls its reward manager (or an async reward function)
once per sample, all at once on one event loop; verifiers scores concurrent
rollouts the same way. Scoring each call alone would cost one dispatch per
sample; a :class:`Microbatcher` (a :class:`verl_rewards.combining.Gatherer`)
collects the calls made in the same event-loop iteration and scores them as one
batch, so a pool sees chunks and an async reward's calls run concurrently.

Each call is its own caller (the rule of :mod:`verl_rewards.combining`): the
batch is scored without stopping, one part per call, so each call gets its own
result, and with ``on_error='raise'`` a failed sample raises in its own call
only (its ``RewardError`` indexes sample 0, its call's one sample); a failure
of the scoring call itself (the pool, not a sample) reaches every call.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar, cast

from ..combining import Gatherer
from ..errors import RewardError
from ..results import BatchResult
from ..samples import Sample
from ..scorer import Scorer
from ._common import score_each

Item = TypeVar("Item")


class Microbatcher(Gatherer[Item, BatchResult]):
    """The adapters' :class:`Gatherer`: the items submitted in one loop iteration scored
    with one ``scorer`` batch, batches of up to ``max_batch`` items going at once.

    ``to_samples`` turns a batch's items into its samples in one call (verl's
    manager decodes the whole batch at once); without it the items are samples.
    """

    def __init__(self, scorer: Scorer, to_samples: Callable[[list[Item]], Sequence[Sample]] | None = None,
                 max_batch: int = 4096) -> None:
        def score(items: list[Item]) -> list[BatchResult | RewardError]:
            # Off the host's loop: building the samples (a batch decode) and scoring.
            samples = cast("list[Sample]", items) if to_samples is None else to_samples(items)
            return score_each(scorer, samples)

        super().__init__(score, max_batch_size=max_batch)
