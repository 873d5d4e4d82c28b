"""What to score with: one reward, or several weighted rewards routed by ``data_source``.

A :class:`RewardSpec` is a :class:`RewardRef` or a :class:`CompositeRef`: a
tuple of named, weighted references plus routes, as small and picklable as
its parts. This is the reference layer: it imports no user code and no
scoring; :mod:`verl_rewards.dispatch` resolves and scores a spec.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from . import discovery
from .config import RewardConfig, keys_with_role
from .reference import RewardRef, value_key


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

    def keys_for(self, data_source: Any) -> tuple[str, ...] | None:
        """The component keys routed to ``data_source``: exact match, then globs in
        order, then ``"*"``; every component when there are no routes; None if unrouted.

        A data source that is not a string (a list, None) is matched by its text.
        """
        if not self.routes:
            return tuple(c.key for c in self.components)
        source = data_source if isinstance(data_source, str) else str(data_source)
        exact = dict(self.routes).get(source)
        if exact is not None:
            return exact
        for pattern, keys in self.routes:
            if pattern != "*" and fnmatch.fnmatchcase(source, pattern):
                return keys
        return dict(self.routes).get("*")


RewardSpec = RewardRef | CompositeRef


def spec_from_config(config: RewardConfig) -> RewardSpec:
    """The reference (single or composite) a validated config selects."""
    if config.rewards:
        return CompositeRef.from_config(config)
    return RewardRef.from_config(config)


def identity_key(spec: RewardSpec, config: RewardConfig) -> str:
    """One key for "this reward, at this version or source, with this config", stable
    across processes and whatever the order of the section's keys: it names a shared pool
    and keys every per-process scorer cache."""
    refs = ({c.key: c.ref.cache_key for c in spec.components} if isinstance(spec, CompositeRef)
            else spec.cache_key)
    text = json.dumps([refs, config.as_section()], sort_keys=True, default=value_key)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


@dataclass(frozen=True)
class ScoreIdentity:
    """What decides a score, as short hashes that are the same in every process: ``parts``
    by part of the reward section, ``key`` over them all."""

    key: str
    parts: Mapping[str, str]


# How the keys whose role is "reward" are read: through the references (a plugin by its
# distribution and version, however it was named; a file by its source hash, wherever
# it is) and the composite (its weights, its routes in order); the rest as configured.
_THROUGH_SPEC = {"plugin": "reward", "path": "reward", "name": "reward", "kwargs": "kwargs",
                 "rewards": "rewards", "route": "route"}


def score_identity(spec: RewardSpec, config: RewardConfig) -> ScoreIdentity:
    """The identity of everything in ``config`` that decides a score (the keys whose role is
    ``reward``: see :mod:`verl_rewards.config`), with ``spec`` its references. Two sections
    with the same identity give a sample the same score, before ``on_error`` and
    ``error_score``, which whoever assembles the batch applies. A service publishes its own
    (``GET /v1/info``); ``reward.remote_url`` compares it with the client's."""
    through_spec = _read_through_spec(spec)
    section = config.as_section()
    parts: dict[str, str] = {}
    for key in keys_with_role("reward"):
        part = _THROUGH_SPEC.get(key, key)
        parts[part] = _digest(through_spec[part] if part in through_spec else section[key])
    return ScoreIdentity(_digest(parts), parts)


def _read_through_spec(spec: RewardSpec) -> dict[str, Any]:
    """The reward's references, kwargs, weights and routes (a composite's components by name)."""
    if not isinstance(spec, CompositeRef):
        return {"reward": [spec.kind, spec.target, spec.dist, spec.version, spec.source_hash],
                "kwargs": spec.kwargs, "rewards": None, "route": None}
    refs = {c.key: c.ref for c in spec.components}
    return {
        "reward": {k: [r.kind, r.target, r.dist, r.version, r.source_hash] for k, r in refs.items()},
        "kwargs": {k: r.kwargs for k, r in refs.items()},
        "rewards": {c.key: c.weight for c in spec.components},
        # in the order routes are tried: patterns as written, then the "*" default
        "route": sorted(([p, sorted(k)] for p, k in spec.routes), key=lambda r: r[0] == "*"),
    }


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, default=value_key).encode()).hexdigest()[:16]


def refs_of(spec: RewardSpec) -> tuple[RewardRef, ...]:
    """Every single reference in ``spec``."""
    return spec.refs if isinstance(spec, CompositeRef) else (spec,)


def _component_ref(plugin: str | None, path: str | None, name: str, kwargs: Mapping[str, Any]) -> RewardRef:
    if plugin is not None:
        return RewardRef.from_plugin(discovery.select(plugin), kwargs)
    assert path is not None
    return RewardRef.from_file(path, name, kwargs)
