"""Per-minute limits hold over real time (measured with the monotonic clock)."""

from __future__ import annotations

import asyncio
import time

import pytest
from verl_rewards_models.ratelimit import Bucket, RateLimiter


async def _times(limiter: RateLimiter, n: int, tokens: int = 1) -> list[float]:
    start = time.monotonic()
    stamps: list[float] = []

    async def one() -> None:
        await limiter.acquire(tokens)
        stamps.append(time.monotonic() - start)

    await asyncio.gather(*(one() for _ in range(n)))
    return sorted(stamps)


def test_requests_beyond_the_burst_wait_for_the_refill() -> None:
    stamps = asyncio.run(_times(RateLimiter(rpm=600), 15))  # 10 per second, burst 10
    assert max(stamps[:10]) < 0.4
    assert 0.45 <= stamps[14] < 1.5  # the 5 beyond the burst wait for 0.5 s of refill


def test_tokens_per_minute_throttle_large_requests() -> None:
    stamps = asyncio.run(_times(RateLimiter(tpm=6000), 3, tokens=100))  # 100 tokens/s
    assert stamps[0] < 0.4
    assert 0.95 <= stamps[1] < 2.0
    assert 1.95 <= stamps[2] < 3.0


def test_settling_with_the_real_usage_refunds_or_charges_tokens() -> None:
    bucket = Bucket(6000)  # 100/s, capacity 100
    limiter = RateLimiter(tpm=6000)
    asyncio.run(bucket.take(100))
    bucket.refund(100)
    started = time.monotonic()
    asyncio.run(bucket.take(100))
    assert time.monotonic() - started < 0.1  # the refund made room at once
    asyncio.run(limiter.acquire(50))
    limiter.settle(50, 150)  # the reply used 100 more than estimated: that is owed
    started = time.monotonic()
    asyncio.run(limiter.acquire(100))
    assert time.monotonic() - started > 0.9


def test_a_non_positive_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="must be positive"):
        Bucket(0)
