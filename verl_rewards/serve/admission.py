"""How many request bytes the service holds at once: reserved before a body is read,
released when its answer is written.

Samples are counted by the queue; this counts what they cost. A parsed request
holds several times its body in Python objects (docs/serve.md measures it), so
the bound is on the bytes of the requests being read, parsed, waiting or scoring:
a request that would take the service past it is refused before its body is read
(HTTP 429 with ``Retry-After``).
"""

from __future__ import annotations

from types import TracebackType

from ..errors import QueueFull
from .metrics import Metrics


class ByteBudget:
    """The bytes of the requests admitted and not yet answered, up to ``limit``
    (event-loop only: no lock)."""

    def __init__(self, limit: int, metrics: Metrics) -> None:
        self.limit = limit
        self.held = 0
        self._metrics = metrics

    def hold(self, nbytes: int) -> Held:
        """Reserve ``nbytes`` for one request; :class:`QueueFull` when there is no room."""
        if self.held + nbytes > self.limit:
            raise QueueFull("bytes", self.held, self.limit, "--max-queue-mb")
        self._add(nbytes)
        return Held(self, nbytes)

    def _add(self, nbytes: int) -> None:
        self.held += nbytes
        self._metrics.queue_bytes.set(self.held)


class Held:
    """One request's reservation: resized once its body is read, released on exit."""

    def __init__(self, budget: ByteBudget, nbytes: int) -> None:
        self._budget = budget
        self.nbytes = nbytes

    def resize(self, nbytes: int) -> None:
        """The body turned out to be ``nbytes`` (never more than reserved: the read is
        bounded by the reservation)."""
        self._budget._add(nbytes - self.nbytes)
        self.nbytes = nbytes

    def release(self) -> None:
        self._budget._add(-self.nbytes)
        self.nbytes = 0

    def __enter__(self) -> Held:
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                 tb: TracebackType | None) -> None:
        self.release()
