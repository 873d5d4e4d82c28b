"""``on_error: skip`` in the hosts: how a failed sample is marked so the host leaves
it out of training instead of learning from ``error_score`` (``docs/skip.md``)."""

from __future__ import annotations

from ..results import BatchResult

__all__ = ["TRAINABLE_KEY", "trainable_flags", "trl_scores"]

# The per-sample extra-info key the verl adapters add under skip: 1.0 when the
# reward itself scored the sample, 0.0 when it failed (scored ``error_score``).
TRAINABLE_KEY = "trainable"


def trl_scores(result: BatchResult, on_error: str) -> list[float | None]:
    """TRL's rewards for ``result``: under skip, ``None`` for a sample the reward did not
    score (TRL turns it into NaN, leaves it out of the reward mean and zeroes its advantage)."""
    if on_error != "skip":
        return list(result.scores)
    return [s if ok else None for s, ok in zip(result.scores, result.trainable)]


def trainable_flags(result: BatchResult) -> list[float]:
    """Per sample, 1.0 when the reward scored it and 0.0 when it failed: a float, so verl
    can average it into its metrics and read it as a filter metric."""
    return [1.0 if ok else 0.0 for ok in result.trainable]
