"""What the trainer adapters share: a per-process cache keyed by the reward's
selection, plain config values, and one scoring path.

Every adapter builds a reward section (a plugin, a file, or ``rewards`` +
``route``, with the section's options), turns it into a :class:`Scorer` once
per process, and scores through it: the same spec -> resolve -> dispatch code
as the CLI and the trainer, with the same timeout rule and per-sample errors.
Adapters default to ``executor: local``: they run inside their host's own
workers.
"""

from __future__ import annotations

import atexit
import json
import logging
import threading
from collections.abc import Callable, Hashable, Mapping, Sequence
from typing import Any, Generic, Literal, TypeVar

from ..config import RewardConfig, load_config
from ..errors import ConfigError
from ..results import BatchResult
from ..samples import Sample
from ..scorer import Scorer
from ..spec import RewardSpec, spec_from_config

OnError = Literal["score", "raise", "skip"]

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
    """A cache key for a reward selection plus its kwargs (cheap when the values are hashable)."""
    try:
        # The type is part of the key: 1, 1.0 and True are equal but distinct kwargs.
        key = tuple(sorted((str(k), type(v), v) for k, v in options.items()))
        hash(key)
        return key
    except TypeError:
        return json.dumps(plain(options), sort_keys=True, default=repr)


def plain(value: Any) -> Any:
    """``value`` with omegaconf containers (verl's nested ``reward_kwargs``) made plain."""
    if type(value).__module__.startswith("omegaconf"):
        from omegaconf import OmegaConf

        return OmegaConf.to_container(value, resolve=True)
    if isinstance(value, Mapping):
        return {k: plain(v) for k, v in value.items()}
    if isinstance(value, list):
        return [plain(v) for v in value]
    return value


def adapter_config(section: Mapping[str, Any]) -> RewardConfig:
    """Validate a reward section given to an adapter; ``executor`` defaults to ``local``."""
    return load_config({"executor": "local", **plain(section)})


def build_scorer(spec: RewardSpec, config: RewardConfig) -> Scorer:
    """A started :class:`Scorer`, closed when the process exits."""
    scorer = Scorer(spec, config).start()
    atexit.register(scorer.close)
    return scorer


def scorer_from_section(section: Mapping[str, Any]) -> Scorer:
    """Validate ``section``, reference its reward and start a scorer for it."""
    config = adapter_config(section)
    return build_scorer(spec_from_config(config), config)


def score_batch(scorer: Scorer, samples: Sequence[Sample]) -> BatchResult:
    """Score ``samples`` through ``scorer`` (timeouts, validation, ``on_error``).

    ``on_error='raise'`` raises :class:`~verl_rewards.errors.RewardError` at the
    first failed sample; ``'score'`` and ``'skip'`` give it ``error_score`` and log
    a warning naming the plugin and the sample index (under skip the adapter then
    marks it for its host: see :mod:`verl_rewards.integrations._skip`).
    """
    result = scorer.score(samples)
    if result.n_ok != len(result):
        outcome = ("left out of training (on_error='skip')" if scorer.config.on_error == "skip"
                   else f"scored {scorer.config.error_score} (on_error='score')")
        _warn_failures(scorer.ref.display_name, result.errors, outcome)
    return result


def _warn_failures(plugin: str, errors: Sequence[str | None], outcome: str) -> None:
    failed = [(i, e) for i, e in enumerate(errors) if e is not None]
    for index, error in failed[:_MAX_WARNINGS]:
        logger.warning("reward %s failed on sample %d: %s; %s", plugin, index, error, outcome)
    if len(failed) > _MAX_WARNINGS:
        logger.warning("reward %s: %d more failed samples in this batch of %d: %s",
                       plugin, len(failed) - _MAX_WARNINGS, len(errors), outcome)
