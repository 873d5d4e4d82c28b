"""Resolve and score a :class:`~verl_rewards.spec.RewardSpec`: the scoring layer.

Every entry point (the executors, so the ``Scorer``, the CLI and the
trainer; the verl, TRL and OpenRLHF adapters) scores through
:func:`score_spec`, so a composite, a timeout rule or a per-sample error added
here reaches all of them. A composite's total is the weighted sum of the
components routed to a sample; each component's own score is kept in extra
info under its name. A component with weight 0 is a logged metric: its
failure does not fail the sample.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

from .limits import Limits
from .outcomes import Outcome
from .resolve import LoadedReward, resolve
from .samples import Sample, contiguous_runs
from .scoring import raise_first_failure, score_samples
from .spec import CompositeRef, RewardSpec
from .watchdog import Progress


class LoadedComposite(NamedTuple):
    """A composite with every component resolved in this process."""

    ref: CompositeRef
    loaded: Mapping[str, LoadedReward]

    @property
    def display_name(self) -> str:
        """The composite's display name."""
        return self.ref.display_name


LoadedSpec = LoadedReward | LoadedComposite


def resolve_spec(spec: RewardSpec) -> LoadedSpec:
    """Resolve a single or composite reference in this process (cached per reward)."""
    if isinstance(spec, CompositeRef):
        return LoadedComposite(spec, {c.key: resolve(c.ref) for c in spec.components})
    return resolve(spec)


def loaded_rewards(loaded: LoadedSpec) -> tuple[LoadedReward, ...]:
    """Every resolved reward in ``loaded``."""
    return tuple(loaded.loaded.values()) if isinstance(loaded, LoadedComposite) else (loaded,)


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
                                   f"{sample.data_source!r} (routes: {patterns}; add a '*' route)",
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
