"""The ``local`` executor: score in this process, in the calling thread."""

from __future__ import annotations

from collections.abc import Sequence

from ..config import RewardConfig
from ..dispatch import LoadedSpec, resolve_spec, score_spec
from ..limits import limits_for
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec, refs_of


class LocalExecutor:
    """Resolves the reward once in this process and scores batches sequentially
    (async rewards concurrently, up to ``max_concurrency``)."""

    def __init__(self, spec: RewardSpec, config: RewardConfig) -> None:
        self._spec = spec
        self._limits = limits_for(config)
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
        release(*refs_of(self._spec))
