"""Prometheus metrics of one service (its own registry, ``verl_rewards_*``)."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
_LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120)
_BATCH_BUCKETS = (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096)


class Metrics:
    """The counters, gauges and histograms ``GET /metrics`` shows."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter("verl_rewards_requests", "HTTP requests by endpoint and status code",
                                ["endpoint", "code"], registry=r)
        self.latency = Histogram("verl_rewards_request_latency_seconds",
                                 "Time from a scoring request's arrival to its answer",
                                 ["endpoint"], buckets=_LATENCY_BUCKETS, registry=r)
        self.samples = Counter("verl_rewards_samples", "Samples scored, by status", ["status"],
                               registry=r)
        self.batch_size = Histogram("verl_rewards_batch_samples",
                                    "Samples per pool batch (requests arriving together are combined)",
                                    buckets=_BATCH_BUCKETS, registry=r)
        self.queue_depth = Gauge("verl_rewards_queue_depth", "Samples waiting or being scored",
                                 registry=r)
        self.queue_bytes = Gauge("verl_rewards_queue_bytes",
                                 "Bytes of the requests being read, parsed, waiting or scored",
                                 registry=r)
        self.ready = Gauge("verl_rewards_pool_ready", "1 while the reward pool is up", registry=r)
        self.ors_sessions = Gauge("verl_rewards_ors_sessions",
                                  "Open Reward Standard sessions open (serve --tasks)", registry=r)
        self.restarts = Counter("verl_rewards_pool_restarts", "Reward pools replaced after a failure",
                                registry=r)

    def count_statuses(self, statuses: Sequence[str]) -> None:
        for status in set(statuses):
            self.samples.labels(status).inc(statuses.count(status))

    def render(self) -> bytes:
        """The Prometheus text exposition."""
        return generate_latest(self.registry)
