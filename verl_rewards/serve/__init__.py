"""``verl-rewards serve``: one reward section served over HTTP on the scoring path.

aiohttp carries HTTP (parsing, keep-alive, body limits, graceful shutdown);
this package adds the protocols (native, OpenRLHF, slime, NeMo-Gym), the
token check, a queue that scores requests arriving together as one pool
batch, bounds on the samples and bytes held, Prometheus metrics and the pool's
lifecycle. See ``docs/serve.md``.
"""

from __future__ import annotations

from .settings import ServeSettings

__all__ = ["ServeSettings"]
