"""The Ray actor that scores: resolves the reward once, then streams a chunk's
outcomes back as they are produced.

Streaming is what makes a crash cheap (:mod:`.chunks`, which every pool's
worker runs): when the process dies, the driver keeps every outcome it already
received and re-runs only the rest. In ``precise`` mode the actor sends one
sample at a time and waits until the driver has taken it (Ray's generator
back-pressure), so a death is pinned on exactly the sample that was running.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from typing import Any

import ray
import ray.cloudpickle

from ..dispatch import loaded_rewards, resolve_spec
from ..errors import PluginLoadError, PluginNotInstalledError
from ..limits import Limits, longest
from ..samples import Sample
from ..spec import RewardSpec, refs_of
from ..watchdog import Progress
from .chunks import Piece, score_chunk

__all__ = ["Piece", "RewardWorker", "on_node"]


class RewardWorker:
    """A Ray actor: resolves the reward once, then scores chunks."""

    def __init__(self, spec: RewardSpec, limits: Limits, packages: list[bytes] | None = None) -> None:
        from .shipping import unpack

        for package in packages or ():
            unpack(package)
        self._spec = spec
        self._limits = limits
        self._progress = Progress()

    def ready(self) -> dict[str, Any]:
        """Resolve the reward in this process; report where we run."""
        node = ray.util.get_node_ip_address()  # type: ignore[no-untyped-call]
        try:
            loaded = resolve_spec(self._spec)
        except PluginNotInstalledError as e:
            ref = next(r for r in refs_of(self._spec) if r.display_name == e.plugin)
            raise PluginNotInstalledError(
                ref.display_name,
                f"it is not installed on worker node {node}. Install "
                f"{ref.dist}=={ref.version} on every node, or set "
                f"reward.ship_package=true to ship its package to the workers",
                e.cause,
            ) from None
        except PluginLoadError as e:
            raise on_node(e, node) from None
        return {"pid": os.getpid(), "node": node, "timeout_s": longest(self._limits, loaded_rewards(loaded))}

    def score(self, samples: list[Sample], first_index: int, precise: bool = False) -> Iterator[Piece]:
        """Score one chunk (``first_index``: its first sample's index in the batch),
        yielding :class:`Piece` records as they are produced."""
        loaded = resolve_spec(self._spec)
        yield from score_chunk(loaded, samples, self._limits, first_index, precise, self._progress,
                               _dumps)

    def shutdown(self) -> None:
        """Close class rewards resolved in this worker (their ``close()``), before the pool kills it."""
        from ..resolve import release

        release(*refs_of(self._spec))

    def progress(self) -> tuple[int | None, int, float, float | None]:
        """The call in flight: first batch index, samples covered, running for,
        allowed; answered from another thread."""
        p = self._progress
        index, span, started, allowed = p.index, p.span, p.started, p.allowed_s
        return index, span, (time.monotonic() - started) if index is not None else 0.0, allowed


def on_node(error: PluginLoadError, node: str) -> PluginLoadError:
    """``error``, same type and attributes, its message saying which node raised it."""
    import copy

    located = copy.copy(error)
    located.args = (f"{error} (on worker node {node})",)
    return located


def _dumps(value: Any) -> bytes:
    return ray.cloudpickle.dumps(value)  # type: ignore[no-any-return,no-untyped-call]
