"""Assemble per-sample outcomes into a :class:`BatchResult`."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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

    def rows(self) -> list[dict[str, Any]]:
        """One dict per sample: ``score``, ``error`` and the extra keys."""
        keys = list(self.extra_info)
        return [
            {"score": self.scores[i], "error": self.errors[i],
             **{k: self.extra_info[k][i] for k in keys}}
            for i in range(len(self.scores))
        ]


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
