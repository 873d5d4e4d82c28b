"""The ``local`` executor: score in this process, in the calling thread."""

from __future__ import annotations

from collections.abc import Sequence

from ..compose import CompositeRef, LoadedSpec, RewardSpec, resolve_spec, score_spec
from ..config import RewardConfig
from ..samples import Sample
from ..scoring import Limits, Outcome


class LocalExecutor:
    """Resolves the reward once in this process and scores batches sequentially
    (async rewards concurrently, up to ``max_concurrency``)."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._spec = spec
        self._limits = Limits(config.timeout_s, config.max_concurrency, config.max_batch_size)
        self._loaded: LoadedSpec | None = None

    def start(self) -> None:
        """Resolve the reward now, so a load error surfaces before scoring."""
        self._loaded = resolve_spec(self._spec)

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` in order."""
        loaded = self._loaded or resolve_spec(self._spec)
        return score_spec(loaded, samples, self._limits, stop_on_error), {}

    def close(self) -> None:
        """Close class rewards (their ``close()``) and forget them in this process."""
        from ..resolve import release

        self._loaded = None
        release(*(self._spec.refs if isinstance(self._spec, CompositeRef) else (self._spec,)))
