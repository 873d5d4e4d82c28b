"""What the trainer adapters share: a per-process cache, plain config values,
and the one way to build and use a :class:`Scorer`.

Every adapter builds a reward section (a plugin, a file, or ``rewards`` +
``route``, with the section's options) and turns it into a :class:`Scorer`
with :meth:`Scorer.from_config` (validation, preflight and inspection, as
for the CLI and the trainer) once per process, then scores through it.
Adapters default to ``executor: process``: the reward runs in a small pool of
worker processes beside the host's own (no Ray), so a reward that swallows its
timeout, blocks in C or kills its process costs one sample, never the host's
run. A section's own ``executor`` wins (``local`` scores in the host's process).
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
import weakref
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Generic, TypeVar

from ..config import OnError
from ..errors import ConfigError, RewardError
from ..reference import value_key
from ..results import BatchResult
from ..samples import Sample
from ..scorer import Scorer

__all__ = [
    "ADAPTER_DEFAULTS",
    "OnError",
    "ProcessCache",
    "logger",
    "score_batch",
    "score_each",
    "scorer_from_section",
    "selection_key",
    "started",
    "to_container",
]

# Merged under an adapter's section: the keys it leaves unset.
ADAPTER_DEFAULTS: Mapping[str, Any] = {"executor": "process"}

logger = logging.getLogger("verl_rewards.integrations")

_T = TypeVar("_T")
_MAX_WARNINGS = 5  # per batch: one line per failed sample, then a count


class ProcessCache(Generic[_T]):
    """Values built once per process and key. A build that raises a
    :class:`ConfigError` is remembered (it would fail the same way again);
    any other failure is retried on the next call."""

    def __init__(self) -> None:
        self._values: dict[Hashable, _T] = {}
        self._errors: dict[Hashable, ConfigError] = {}
        self._lock = threading.Lock()

    def peek(self, key: Hashable) -> _T | None:
        """The cached value for ``key``, or None; never builds."""
        return self._values.get(key)

    def get(self, key: Hashable, build: Callable[[], _T]) -> _T:
        """The value for ``key``, built by ``build()`` the first time."""
        try:
            return self._values[key]
        except KeyError:
            pass
        with self._lock:
            if key in self._values:
                return self._values[key]
            if key in self._errors:
                raise self._errors[key]
            try:
                value = self._values[key] = build()
            except ConfigError as e:
                self._errors[key] = e
                raise
            return value

    def clear(self) -> None:
        """Forget everything (tests, or after reinstalling a plugin)."""
        with self._lock:
            self._values.clear()
            self._errors.clear()


def selection_key(options: Mapping[str, Any]) -> Hashable:
    """A cheap per-call lookup key for a host's raw reward options (verl passes them on
    every call): it finds the scorer already built, whose identity is :attr:`Scorer.key`."""
    try:
        # The type is part of the key: 1, 1.0 and True are equal but distinct kwargs.
        key = tuple(sorted((str(k), type(v), v) for k, v in options.items()))
        hash(key)
        return key
    except TypeError:
        return json.dumps(to_container(options), sort_keys=True, default=value_key)


def to_container(value: Any) -> Any:
    """``value`` with omegaconf containers (verl's nested ``reward_kwargs``) made plain."""
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        return OmegaConf.to_container(value, resolve=True)
    if isinstance(value, Mapping):
        return {k: to_container(v) for k, v in value.items()}
    if isinstance(value, list):
        return [to_container(v) for v in value]
    return value


def started(scorer: Scorer) -> Scorer:
    """``scorer``, started, and closed when the process exits. Only a weak reference is
    kept for that: a scorer its cache forgets is collected, and its workers with it."""
    scorer.start()
    atexit.register(_close_at_exit, weakref.ref(scorer))
    return scorer


def _close_at_exit(ref: weakref.ref[Scorer]) -> None:
    scorer = ref()
    if scorer is not None:
        scorer.close()


def scorer_from_section(section: Mapping[str, Any]) -> Scorer:
    """Validate ``section`` (``executor: process`` unless it says otherwise), inspect its
    reward and start a scorer for it."""
    return started(Scorer.from_config(to_container(section), defaults=ADAPTER_DEFAULTS))


def score_batch(scorer: Scorer, samples: Sequence[Sample]) -> BatchResult:
    """Score ``samples`` through ``scorer`` (timeouts, validation, ``on_error``).

    ``on_error='raise'`` raises :class:`~verl_rewards.errors.RewardError` at the
    first failed sample; ``'score'`` gives it ``error_score`` and ``'skip'``
    marks it untrainable (``BatchResult.trainable``), each with a logged
    warning naming the plugin and the sample index.
    """
    result = scorer.score(samples)
    _warn_failures(scorer, result.errors)
    return result


def score_each(scorer: Scorer, samples: Sequence[Sample]) -> list[BatchResult | RewardError]:
    """Score ``samples`` as one batch in which each sample is its own caller
    (:meth:`Scorer.score_together`): each sample's own one-sample result, or with
    ``on_error='raise'`` its own ``RewardError`` (sample 0 of its call), never another's.
    Failed samples are logged as :func:`score_batch` logs them (by their index here)."""
    results = scorer.score_together([(sample,) for sample in samples])
    if scorer.config.on_error != "raise":
        _warn_failures(scorer, [r.errors[0] if isinstance(r, BatchResult) else None for r in results])
    return results


def _warn_failures(scorer: Scorer, errors: list[str | None]) -> None:
    if errors.count(None) == len(errors):
        return
    config, plugin = scorer.config, scorer.ref.display_name
    fate = "left out of training (on_error='skip')" if config.on_error == "skip" \
        else f"scored {config.error_score} (on_error='score')"
    failed = [(i, e) for i, e in enumerate(errors) if e is not None]
    for index, error in failed[:_MAX_WARNINGS]:
        logger.warning("reward %s failed on sample %d: %s; %s", plugin, index, error, fate)
    if len(failed) > _MAX_WARNINGS:
        logger.warning("reward %s: %d more failed samples in this batch of %d; %s",
                       plugin, len(failed) - _MAX_WARNINGS, len(errors), fate)
