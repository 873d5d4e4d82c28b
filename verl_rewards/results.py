"""Assemble per-sample outcomes into a :class:`BatchResult`."""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .outcomes import Outcome, Status
from .spec import CompositeRef, RewardSpec


@dataclass(frozen=True)
class Provenance:
    """Which reward produced a result: distribution and version, or file and hash."""

    kind: Literal["plugin", "file", "composite"]
    name: str
    display_name: str
    dist: str | None = None
    version: str | None = None
    path: str | None = None
    source_hash: str | None = None
    components: tuple[tuple[str, float, Provenance], ...] = ()  # (key, weight, provenance)

    @classmethod
    def of(cls, spec: RewardSpec) -> Provenance:
        """The provenance of a single or composite reference."""
        if isinstance(spec, CompositeRef):
            parts = tuple((c.key, c.weight, cls.of(c.ref)) for c in spec.components)
            return cls("composite", "composite", spec.display_name, components=parts)
        return cls(spec.kind, spec.name, spec.display_name, spec.dist, spec.version, spec.path,
                   spec.source_hash)


@dataclass(frozen=True)
class BatchResult:
    """Every sample's result, in input order."""

    scores: list[float]
    errors: list[str | None]
    statuses: list[Status]
    extra_info: dict[str, list[Any]]
    provenance: Provenance
    metrics: Mapping[str, float] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.scores)

    @property
    def n_ok(self) -> int:
        """Samples that scored."""
        return self.statuses.count("ok")

    @property
    def n_failed(self) -> int:
        """Samples that raised, returned an invalid value or killed their worker."""
        return self.statuses.count("failed")

    @property
    def n_timed_out(self) -> int:
        """Samples that exceeded ``timeout_s``."""
        return self.statuses.count("timeout")

    @property
    def trainable(self) -> list[bool]:
        """Per sample: did the reward itself score it? ``on_error='skip'`` trains on these only."""
        return [st == "ok" for st in self.statuses]

    def ok_scores(self) -> list[float]:
        """The scores the reward itself returned (failed samples left out)."""
        return [s for s, st in zip(self.scores, self.statuses) if st == "ok"]

    def extras(self, index: int, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """Sample ``index``'s extra values for ``keys`` (default: every extra key),
        None where it has none (a failed sample, a key another sample returned)."""
        chosen = self.extra_info if keys is None else keys
        return {k: (self.extra_info[k][index] if k in self.extra_info else None) for k in chosen}

    def row(self, index: int, keys: Iterable[str] | None = None) -> dict[str, Any]:
        """Sample ``index`` as one dict: ``score``, ``error`` and its extras (see :meth:`extras`)."""
        return {"score": self.scores[index], "error": self.errors[index], **self.extras(index, keys)}

    def rows(self) -> list[dict[str, Any]]:
        """One dict per sample: ``score``, ``error`` and the extra keys."""
        return [self.row(i) for i in range(len(self))]

    def slice(self, start: int, stop: int) -> BatchResult:
        """Samples ``start`` to ``stop`` (exclusive) as their own result."""
        return BatchResult(
            scores=self.scores[start:stop], errors=self.errors[start:stop],
            statuses=self.statuses[start:stop],
            extra_info={k: v[start:stop] for k, v in self.extra_info.items()},
            provenance=self.provenance, metrics=self.metrics,
        )


def assemble(
    outcomes: Sequence[Outcome], provenance: Provenance, error_score: float,
    metrics: Mapping[str, float] | None = None,
) -> BatchResult:
    """Turn outcomes into a :class:`BatchResult`; failed samples get ``error_score``."""
    scores = [o.score if o.score is not None else error_score for o in outcomes]
    keys: dict[str, None] = {}
    for o in outcomes:
        if o.extra:
            keys.update(dict.fromkeys(o.extra))
    extra = {k: [o.extra.get(k) if o.extra else None for o in outcomes] for k in keys}
    return BatchResult(
        scores=scores,
        errors=[o.error for o in outcomes],
        statuses=[o.status for o in outcomes],
        extra_info=extra,
        provenance=provenance,
        metrics=dict(metrics or {}),
    )


def finite(value: Any) -> Any:
    """``value`` with NaN and infinities (which JSON cannot hold) as None, through dicts,
    lists and tuples: how the CLI's JSONL and the service's answers write result values."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [finite(v) for v in value]
    return value
