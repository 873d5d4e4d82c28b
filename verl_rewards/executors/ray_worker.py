"""The Ray actor that scores: resolves the reward once, then streams a chunk's
outcomes back as they are produced.

Streaming is what makes a crash cheap: when the process dies, the driver
keeps every outcome it already received and re-runs only the rest. In
``precise`` mode the actor sends one sample at a time and waits until the
driver has taken it (Ray's generator back-pressure), so a death is pinned on
exactly the sample that was running.
"""

from __future__ import annotations

import os
import pickle
import time
from collections.abc import Iterator
from typing import Any, NamedTuple

import ray
import ray.cloudpickle

from ..dispatch import LoadedComposite, LoadedSpec, loaded_rewards, resolve_spec, score_spec
from ..errors import PluginLoadError, PluginNotInstalledError
from ..limits import Limits, longest
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec, refs_of
from ..watchdog import Progress

FLUSH_S = 0.05  # how much scoring a normal-mode piece holds: bounds what a crash re-runs
_FIRST_PIECE = 8
_MAX_PIECE = 128  # and at most this many samples: bounds the precise re-run after a crash


class Piece(NamedTuple):
    """Outcomes for a run of a chunk's samples, from ``offset`` in the chunk."""

    offset: int
    outcomes: list[Outcome]
    rss_mb: float  # the worker's resident memory after producing them


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
        size = 1 if precise else _FIRST_PIECE if _per_sample(loaded) else len(samples)
        offset = 0
        while offset < len(samples):
            began = time.monotonic()
            part = samples[offset:offset + size]
            outcomes = score_spec(loaded, part, self._limits, first_index=first_index + offset,
                                  progress=self._progress)
            yield Piece(offset, portable(outcomes), rss_mb())
            offset += len(part)
            if not precise:
                size = _next_size(size, time.monotonic() - began)

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


def portable(outcomes: list[Outcome]) -> list[Outcome]:
    """``outcomes``, with any whose extra values cannot be pickled (a lock, a
    socket) turned into that sample's failure, so the rest still reach the driver."""
    if all(o.extra is None for o in outcomes):
        return outcomes
    try:  # the C pickler first: fast, and what it takes Ray's cloudpickle takes too
        pickle.dumps([o.extra for o in outcomes], protocol=pickle.HIGHEST_PROTOCOL)
        return outcomes
    except Exception:  # find the samples at fault, one by one, as Ray will send them
        return [_portable_one(o) for o in outcomes]


def _portable_one(outcome: Outcome) -> Outcome:
    for key, value in (outcome.extra or {}).items():
        try:
            ray.cloudpickle.dumps(value)  # type: ignore[no-untyped-call]
        except Exception as e:
            return Outcome(None, None, f"RewardValueError: extra value {key!r} ({type(value).__name__}) "
                                       f"cannot be sent from the worker: {type(e).__name__}: {e}"[:500],
                           "failed")
    return outcome


def rss_mb() -> float:
    """This process's resident memory in MiB (0.0 where /proc is not available)."""
    try:
        with open("/proc/self/statm", "rb") as f:
            resident_pages = int(f.read().split()[1])
    except (OSError, IndexError, ValueError):
        return 0.0
    return resident_pages * os.sysconf("SC_PAGE_SIZE") / 2**20


def _per_sample(loaded: LoadedSpec) -> bool:
    """Whether each sample is its own call (sync sample rewards), so a chunk can
    be cut anywhere; batch and async calls cover the whole chunk."""
    parts = loaded.loaded.values() if isinstance(loaded, LoadedComposite) else (loaded,)
    return all(p.shape == "sample" and not p.is_async for p in parts)


def _next_size(size: int, elapsed_s: float) -> int:
    """The next piece's size, aiming at ``FLUSH_S`` of work (at most doubling)."""
    if elapsed_s <= 0:
        return min(_MAX_PIECE, size * 2)
    return max(1, min(_MAX_PIECE, size * 2, int(size * FLUSH_S / elapsed_s)))

