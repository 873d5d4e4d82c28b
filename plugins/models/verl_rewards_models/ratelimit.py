"""Requests-per-minute and tokens-per-minute limits for async callers.

Each limit is a token bucket that refills continuously at ``limit / 60`` per
second and holds at most one second's worth (never less than one request),
so a burst is small and any window of ``t`` seconds admits at most
``capacity + t * rate``. Limits are per process: with N reward workers, give
each ``limit / N``.
"""

from __future__ import annotations

import asyncio
import time


class Bucket:
    """One per-minute limit; :meth:`take` waits until ``amount`` fits."""

    def __init__(self, per_minute: float) -> None:
        if not per_minute > 0:
            raise ValueError(f"a per-minute limit must be positive, not {per_minute!r}")
        self.rate = per_minute / 60.0
        self.capacity = max(1.0, self.rate)
        self._level = self.capacity
        self._stamp = time.monotonic()
        self._lock = asyncio.Lock()  # waiters queue in order; binds to the loop on first use

    async def take(self, amount: float) -> None:
        """Wait until ``amount`` is available, then spend it (more than the
        capacity is allowed: it waits for a full bucket and leaves a debt)."""
        async with self._lock:
            need = min(amount, self.capacity)
            while True:
                self._refill()
                if self._level >= need:
                    self._level -= amount
                    return
                await asyncio.sleep((need - self._level) / self.rate)

    def refund(self, amount: float) -> None:
        """Give back ``amount`` (negative: spend more, e.g. the tokens a reply really used)."""
        self._refill()
        self._level = min(self.capacity, self._level + amount)

    def _refill(self) -> None:
        now = time.monotonic()
        self._level = min(self.capacity, self._level + (now - self._stamp) * self.rate)
        self._stamp = now


class RateLimiter:
    """Optional ``rpm`` and ``tpm`` buckets; a request takes one of the first
    and its estimated tokens of the second, settled when the reply's usage is known."""

    def __init__(self, rpm: float | None = None, tpm: float | None = None) -> None:
        self.requests = Bucket(rpm) if rpm is not None else None
        self.tokens = Bucket(tpm) if tpm is not None else None

    async def acquire(self, estimated_tokens: int) -> None:
        """Wait for room for one request of about ``estimated_tokens``."""
        if self.requests is not None:
            await self.requests.take(1)
        if self.tokens is not None:
            await self.tokens.take(estimated_tokens)

    def settle(self, estimated_tokens: int, used_tokens: int | None) -> None:
        """Correct the token bucket once the reply reports what it used."""
        if self.tokens is not None and used_tokens is not None:
            self.tokens.refund(estimated_tokens - used_tokens)
