"""Several weighted rewards in one config, routed by ``data_source``.

A :class:`CompositeRef` is a tuple of named, weighted :class:`RewardRef` s plus
routes; it is as small and picklable as its parts. One executor serves it:
each worker resolves every component once. A sample's total is the weighted
sum of the components routed to it; each component's own score is kept in
extra info under its name. A component with weight 0 is a logged metric: its
failure does not fail the sample.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from .config import RewardConfig
from .reference import RewardRef
from .resolve import LoadedReward, resolve
from .samples import Sample, contiguous_runs
from .scoring import Limits, Outcome, raise_first_failure, score_samples
from .watchdog import Progress


class Component(NamedTuple):
    """One named, weighted reward of a composite."""

    key: str
    ref: RewardRef
    weight: float


@dataclass(frozen=True)
class CompositeRef:
    """Named weighted rewards and the routes choosing them per data source."""

    components: tuple[Component, ...]
    routes: tuple[tuple[str, tuple[str, ...]], ...] = ()  # (pattern, keys); "*" is the default

    @classmethod
    def from_config(cls, config: RewardConfig) -> CompositeRef:
        """Reference every component of ``config.rewards`` (validated at config time)."""
        components = tuple(
            Component(c.key, _component_ref(c.plugin, c.path, c.name, c.kwargs), float(c.weight))
            for c in config.components
        )
        routes = tuple((pattern, tuple(keys)) for pattern, keys in (config.route or {}).items())
        return cls(components, routes)

    @property
    def display_name(self) -> str:
        """``composite(correct=gsm8k (verl-rewards-math 0.1.0) x1, ...)``."""
        parts = ", ".join(f"{c.key}={c.ref.display_name} x{c.weight:g}" for c in self.components)
        return f"composite({parts})"

    @property
    def refs(self) -> tuple[RewardRef, ...]:
        """Every component's reference."""
        return tuple(c.ref for c in self.components)

    def keys_for(self, data_source: str) -> tuple[str, ...] | None:
        """The component keys routed to ``data_source``: exact match, then globs in
        order, then ``"*"``; every component when there are no routes; None if unrouted."""
        if not self.routes:
            return tuple(c.key for c in self.components)
        exact = dict(self.routes).get(data_source)
        if exact is not None:
            return exact
        for pattern, keys in self.routes:
            if pattern != "*" and fnmatch.fnmatchcase(str(data_source), pattern):
                return keys
        return dict(self.routes).get("*")


RewardSpec = RewardRef | CompositeRef


class LoadedComposite(NamedTuple):
    """A composite with every component resolved in this process."""

    ref: CompositeRef
    loaded: Mapping[str, LoadedReward]

    @property
    def display_name(self) -> str:
        """The composite's display name."""
        return self.ref.display_name


LoadedSpec = LoadedReward | LoadedComposite


def spec_from_config(config: RewardConfig) -> RewardSpec:
    """The reference (single or composite) a validated config selects."""
    if config.rewards:
        return CompositeRef.from_config(config)
    return RewardRef.from_config(config)


def resolve_spec(spec: RewardSpec) -> LoadedSpec:
    """Resolve a single or composite reference in this process (cached per reward)."""
    if isinstance(spec, CompositeRef):
        return LoadedComposite(spec, {c.key: resolve(c.ref) for c in spec.components})
    return resolve(spec)


def score_spec(
    loaded: LoadedSpec, samples: Sequence[Sample], limits: Limits, stop_on_error: bool = False,
    first_index: int = 0, progress: Progress | None = None,
) -> list[Outcome]:
    """Score with a single or composite reward; one outcome per sample, in order."""
    if isinstance(loaded, LoadedComposite):
        outcomes = _score_composite(loaded, samples, limits, first_index, progress)
        if stop_on_error:
            raise_first_failure(loaded.display_name, outcomes, first_index)
        return outcomes
    return score_samples(loaded, samples, limits, stop_on_error, first_index, progress)


def _score_composite(
    loaded: LoadedComposite, samples: Sequence[Sample], limits: Limits, first_index: int,
    progress: Progress | None,
) -> list[Outcome]:
    routes = [loaded.ref.keys_for(s.data_source) for s in samples]
    by_key: dict[str, dict[int, Outcome]] = {}
    for component in loaded.ref.components:
        outcomes = by_key[component.key] = {}
        routed = (i for i, keys in enumerate(routes) if keys and component.key in keys)
        for run in contiguous_runs(routed):
            scored = score_samples(loaded.loaded[component.key], [samples[i] for i in run], limits,
                                   first_index=first_index + run[0], progress=progress)
            outcomes.update(zip(run, scored))
    return [_combine(loaded.ref, i, routes[i], samples[i], by_key) for i in range(len(samples))]


def _combine(
    ref: CompositeRef, index: int, keys: tuple[str, ...] | None, sample: Sample,
    by_key: Mapping[str, Mapping[int, Outcome]],
) -> Outcome:
    if keys is None:
        patterns = ", ".join(p for p, _ in ref.routes)
        return Outcome(None, None, f"RoutingError: no reward is routed for data_source "
                                   f"'{sample.data_source}' (routes: {patterns}; add a '*' route)",
                       "failed")
    weights = {c.key: c.weight for c in ref.components}
    extra: dict[str, Any] = {}
    total = 0.0
    failed: list[tuple[str, Outcome]] = []
    for key in keys:
        outcome = by_key[key][index]
        extra[key] = outcome.score
        for name, value in (outcome.extra or {}).items():
            extra[f"{key}/{name}"] = value
        if outcome.status == "ok":
            total += weights[key] * (outcome.score or 0.0)
        elif weights[key] != 0:
            failed.append((key, outcome))
    if failed:
        key, first = failed[0]
        return Outcome(None, extra, f"[{key}] {first.error}", first.status)
    return Outcome(total, extra, None, "ok")


def _component_ref(plugin: str | None, path: str | None, name: str, kwargs: Mapping[str, Any]) -> RewardRef:
    from . import discovery

    if plugin is not None:
        return RewardRef.from_plugin(discovery.select(plugin), kwargs)
    assert path is not None
    return RewardRef.from_file(path, name, kwargs)
