"""The service's own settings (everything that is not the ``reward`` section)."""

from __future__ import annotations

from dataclasses import dataclass

from ..errors import ConfigError

DEFAULT_PORT = 8000
MIB = 1024 * 1024


@dataclass(frozen=True)
class ServeSettings:
    """How ``verl-rewards serve`` listens, admits and drains requests.

    The command line's defaults are these (``verl-rewards serve --help``).
    """

    host: str = "127.0.0.1"
    port: int = DEFAULT_PORT  # 0: any free port (the bound one is printed)
    token: str | None = None  # required by every endpoint but /healthz when set
    max_body_bytes: int = 16 * MIB  # 413 past this
    max_samples: int = 4096  # per request; 413 past this
    max_queue: int = 16384  # samples waiting or scoring; 429 past this
    # Request bytes held at once (being read, parsed, waiting or scoring); 429 past
    # this. The server holds 1.5-7x this in Python objects (docs/serve.md).
    max_queue_bytes: int = 128 * MIB
    max_batch: int = 4096  # samples per pool batch
    retry_after_s: int = 1  # the Retry-After of a 429 or 503
    drain_timeout_s: float = 300.0  # on SIGTERM: how long in-flight requests may take
    data_source: str | None = None  # for protocols without one (default: the protocol's name)
    dev: bool = False  # development mode: allows reward.executor=local (docs/serve.md)
    max_sessions: int = 16384  # open Open Reward Standard sessions (serve --tasks); 429 past this

    def __post_init__(self) -> None:
        if self.max_queue_bytes < self.max_body_bytes:
            raise ConfigError(
                f"--max-queue-mb ({self.max_queue_bytes / MIB:g}) is below --max-body-mb "
                f"({self.max_body_bytes / MIB:g}): a request of the largest size could never be "
                f"admitted; raise --max-queue-mb or lower --max-body-mb")
