"""The service's own settings (everything that is not the ``reward`` section)."""

from __future__ import annotations

from dataclasses import dataclass

DEFAULT_PORT = 8000


@dataclass(frozen=True)
class ServeSettings:
    """How ``verl-rewards serve`` listens, admits and drains requests."""

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT  # 0: any free port (the bound one is printed)
    token: str | None = None  # required by every endpoint but /healthz when set
    max_body_bytes: int = 16 * 1024 * 1024  # 413 past this
    max_samples: int = 4096  # per request; 413 past this
    max_queue: int = 16384  # samples waiting or scoring; 429 past this
    max_batch: int = 4096  # samples per pool batch
    retry_after_s: int = 1  # the Retry-After of a 429 or 503
    drain_timeout_s: float = 300.0  # on SIGTERM: how long in-flight requests may take
    data_source: str | None = None  # for protocols without one (default: the protocol's name)
