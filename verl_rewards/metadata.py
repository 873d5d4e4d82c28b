"""The optional ``@reward`` decorator: metadata and self-test examples.

Decorating never wraps or changes the target; it only attaches a
:class:`RewardMeta` record under ``__verl_reward__``, which discovery never
reads (listing imports nothing) and ``show``/``check`` read after loading.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, TypeVar, get_args

from .samples import Sample

Shape = Literal["sample", "batch"]
# What a reward judges; ``verl-rewards audit`` picks its attacks by it.
Kind = Literal["math", "code", "format", "judge", "generic"]
KINDS: tuple[Kind, ...] = get_args(Kind)

ATTRIBUTE = "__verl_reward__"

_T = TypeVar("_T")


@dataclass(frozen=True)
class Example:
    """A self-test: these inputs must score ``expected`` (within ``tolerance``)."""

    solution_str: str
    ground_truth: Any
    expected: float
    data_source: str = ""
    extra_info: Mapping[str, Any] | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    tolerance: float = 1e-6
    prompt: Any = None  # text or chat messages, for rewards that read the prompt

    def as_sample(self, solution_str: str | None = None) -> Sample:
        """This example's inputs as a :class:`Sample`, or with ``solution_str`` as the
        response instead of its own (an attack on the same reference)."""
        response = self.solution_str if solution_str is None else solution_str
        return Sample(self.data_source, response, self.ground_truth, self.extra_info, self.prompt)


@dataclass(frozen=True)
class RewardMeta:
    """Metadata a plugin declares about itself."""

    description: str = ""
    data_sources: tuple[str, ...] = ()
    shape: Shape | None = None
    timeout_s: float | None = None
    examples: tuple[Example, ...] = ()
    tags: tuple[str, ...] = ()
    num_gpus: float | None = None  # default for reward.worker_num_gpus
    max_batch_size: int | None = None  # default for reward.max_batch_size (batch rewards)
    kind: Kind | None = None
    # Attacks of the plugin's own for `verl-rewards audit`: each must score at most `expected`.
    adversarial: tuple[Example, ...] = ()
    # Audit findings the plugin's author accepts, by probe name, each with the reason.
    audit_accept: tuple[tuple[str, str], ...] = ()


def reward(
    *,
    description: str = "",
    data_sources: Sequence[str] = (),
    shape: Shape | None = None,
    timeout_s: float | None = None,
    examples: Sequence[Example | Mapping[str, Any]] = (),
    tags: Sequence[str] = (),
    num_gpus: float | None = None,
    max_batch_size: int | None = None,
    kind: Kind | None = None,
    adversarial: Sequence[Example | Mapping[str, Any]] = (),
    audit_accept: Mapping[str, str] | None = None,
) -> Callable[[_T], _T]:
    """Attach metadata to a reward function or class, returning it unchanged.

    ``shape`` overrides classification ("sample" or "batch") when a
    signature is ambiguous; ``examples`` are run by ``verl-rewards check``.
    ``num_gpus`` (fractional allowed) and ``max_batch_size`` (the most samples
    one batch call receives) are defaults that ``reward.worker_num_gpus`` and
    ``reward.max_batch_size`` override. ``kind`` (math, code, format, judge,
    generic) chooses the attacks ``verl-rewards audit`` tries; ``adversarial``
    adds the plugin's own: examples whose ``expected`` is the most they may score.
    ``audit_accept`` maps the probe names of audit findings that are deliberate to
    why (``{"a rounded answer": "we pay answers within 1%"}``): ``audit`` reports
    them as accepted and passes.

    >>> @reward(description="1 if exact match", examples=[
    ...     {"solution_str": "42", "ground_truth": "42", "expected": 1.0}])
    ... def exact(data_source, solution_str, ground_truth, extra_info=None):
    ...     return float(solution_str.strip() == ground_truth)
    """
    if shape not in (None, "sample", "batch"):
        raise ValueError(f"shape must be 'sample', 'batch' or None, not {shape!r}")
    if num_gpus is not None and not num_gpus >= 0:
        raise ValueError(f"num_gpus must be >= 0, not {num_gpus!r}")
    if max_batch_size is not None and (not isinstance(max_batch_size, int) or max_batch_size < 1):
        raise ValueError(f"max_batch_size must be a positive integer, not {max_batch_size!r}")
    if kind is not None and kind not in KINDS:
        raise ValueError(f"kind must be one of {', '.join(KINDS)} or None, not {kind!r}")
    accepted = _accepted(audit_accept or {})
    meta = RewardMeta(
        description=description,
        data_sources=tuple(data_sources),
        shape=shape,
        timeout_s=timeout_s,
        examples=tuple(_as_example(e) for e in examples),
        tags=tuple(tags),
        num_gpus=num_gpus,
        max_batch_size=max_batch_size,
        kind=kind,
        adversarial=tuple(_as_example(e) for e in adversarial),
        audit_accept=accepted,
    )

    def attach(target: _T) -> _T:
        setattr(target, ATTRIBUTE, meta)
        return target

    return attach


def metadata_of(target: object) -> RewardMeta:
    """The metadata declared on ``target``, or empty metadata."""
    meta = getattr(target, ATTRIBUTE, None)
    return meta if isinstance(meta, RewardMeta) else RewardMeta()


def _as_example(value: Example | Mapping[str, Any]) -> Example:
    if isinstance(value, Example):
        return value
    known = set(Example.__dataclass_fields__)
    unknown = set(value) - known
    if unknown:
        raise ValueError(
            f"unknown example field(s) {sorted(unknown)}; valid fields: {sorted(known)}"
        )
    return Example(**value)


def _accepted(value: Mapping[str, str]) -> tuple[tuple[str, str], ...]:
    """``audit_accept`` as (probe, reason) pairs; each needs a name and a reason."""
    if not isinstance(value, Mapping):
        raise ValueError(f"audit_accept must map probe names to reasons, e.g. "
                         f"{{'a rounded answer': 'why it is right'}}, not {type(value).__name__}")
    pairs = []
    for probe, reason in value.items():
        if not isinstance(probe, str) or not probe.strip():
            raise ValueError(f"audit_accept: a probe name must be non-empty text, not {probe!r}")
        if not isinstance(reason, str) or not reason.strip():
            raise ValueError(f"audit_accept[{probe!r}]: say why the finding is accepted (a reason), "
                             f"not {reason!r}")
        pairs.append((probe, reason.strip()))
    return tuple(pairs)
