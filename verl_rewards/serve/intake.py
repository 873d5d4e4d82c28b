"""What every endpoint shares: the application's keys, admitting and reading a body,
and putting samples on the pool's queue.

A body is admitted before it is read (its bytes reserved: 413 past the body limit,
429 past the bytes held), read once and bounded, parsed as JSON (400, also when it
nests too deep). Samples go on the queue through :func:`submit_samples`, which makes
every check a scoring endpoint makes (413 past ``--max-samples``, 503 while draining or
while the pool is down, 429 when the queue is full) before anything is queued.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ..errors import BadRequest, QueueFull, RewardError, ServiceStopping
from ..results import BatchResult, Provenance
from ..samples import Sample
from ..spec import ScoreIdentity
from .admission import ByteBudget, Held
from .batching import BatchQueue
from .metrics import Metrics
from .pool import PoolKeeper, PoolUnavailable
from .settings import MIB, ServeSettings

# Deeper JSON is refused before scoring: no protocol needs it, and a body nested
# past Python's recursion limit would fail wherever it is walked (an echo, a pickle).
MAX_JSON_DEPTH = 100

SETTINGS = web.AppKey("settings", ServeSettings)
KEEPER = web.AppKey("keeper", PoolKeeper)
QUEUE = web.AppKey("queue", BatchQueue)
BUDGET = web.AppKey("budget", ByteBudget)
METRICS = web.AppKey("metrics", Metrics)
PROVENANCE = web.AppKey("provenance", Provenance)
IDENTITY = web.AppKey("identity", ScoreIdentity)
DRAINING = web.AppKey("draining", list)  # non-empty once SIGTERM arrived
ORS_INFO = web.AppKey("ors_info", dict)  # the ORS environment (serve --tasks), for /v1/info


# -- samples onto the queue -------------------------------------------------------


def submit_samples(app: web.Application, samples: list[Sample]) -> Awaitable[BatchResult]:
    """Queue ``samples`` on the application's pool now, or raise why not (413 past
    ``--max-samples``, 503 while draining or while the pool has failed, 429 when the
    queue is full); await the result for their :class:`BatchResult`."""
    settings, keeper = app[SETTINGS], app[KEEPER]
    n = len(samples)
    if n > settings.max_samples:
        raise BadRequest(413, f"{n} samples in one request; the limit is {settings.max_samples} "
                              f"(--max-samples): split the request")
    if n == 0:
        return _ready(BatchResult([], [], [], {}, app[PROVENANCE]))
    if app[DRAINING]:
        raise ServiceStopping("the service is shutting down")
    if keeper.state == "failed":
        status = keeper.status()
        raise PoolUnavailable(f"the reward pool is {status['state']}: {status['last_error']}; see /readyz")
    return _pool_errors(app[QUEUE].submit(samples))


async def _ready(result: BatchResult) -> BatchResult:
    return result


async def _pool_errors(pending: Awaitable[BatchResult]) -> BatchResult:
    try:
        return await pending
    except (QueueFull, PoolUnavailable, RewardError):
        raise
    except Exception as e:  # the pool failed twice on this batch: retryable
        raise PoolUnavailable(f"the reward pool failed while scoring: {type(e).__name__}: {e}; "
                              f"see /readyz") from e


# -- the body -----------------------------------------------------------------------


def admit(request: web.Request) -> Held:
    """Reserve the request's bytes before reading them: 413 past the body limit, 429
    past the bytes held. A body of unknown size (chunked, compressed) reserves the
    body limit until it is read."""
    settings = request.app[SETTINGS]
    limit = settings.max_body_bytes
    length = request.content_length
    if length is not None and length > limit:
        raise BadRequest(413, f"the body is {length} bytes; the limit is {limit} bytes "
                              f"(--max-body-mb {limit / MIB:g})")
    encoded = request.headers.get("Content-Encoding", "identity").lower() != "identity"
    return request.app[BUDGET].hold(limit if length is None or encoded else length)


async def read_json(request: web.Request, held: Held, allow_empty: bool = False,
                    depth_checked_by_caller: bool = False) -> Any:
    """The body (admitted by :func:`admit`) as JSON; ``allow_empty``: no body is ``None``.
    Its depth is checked here (:func:`check_depth`) unless the caller checks it in its own
    walk over the body, before anything else uses it."""
    raw = await _read_body(request, request.app[SETTINGS].max_body_bytes)
    held.resize(len(raw))
    if allow_empty and not raw.strip():
        return None
    try:
        value = json.loads(raw)
    except RecursionError:
        raise BadRequest(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels") from None
    except (UnicodeDecodeError, ValueError) as e:
        raise BadRequest(400, f"the body is not valid JSON: {e}") from None
    del raw
    if not depth_checked_by_caller:
        check_depth(value)
    return value


def check_depth(value: Any) -> None:
    """A 400 when the JSON ``value`` nests deeper than :data:`MAX_JSON_DEPTH`."""
    if deeper_than(value, MAX_JSON_DEPTH):
        raise BadRequest(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")


async def _read_body(request: web.Request, limit: int) -> bytearray:
    """The body, up to ``limit`` bytes (after decompression), kept once: aiohttp's
    ``read()`` would keep a second copy for the request's lifetime."""
    body = bytearray()
    try:
        while chunk := await request.content.readany():
            body += chunk
            if len(body) > limit:
                raise BadRequest(413, f"the body is over the limit of {limit} bytes (--max-body-mb)")
    except (ConnectionError, HttpProcessingError) as e:  # a client gone, a malformed chunk
        raise BadRequest(400, f"the body could not be read: {type(e).__name__}: {e}") from None
    return body


def deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` (JSON data as :func:`json.loads` gives it) nests objects or
    arrays more than ``limit`` deep. Iterative, so the check itself cannot overflow the
    stack, and level by level with exact type tests: it runs over every request body."""
    level = [value] if type(value) is dict or type(value) is list else []
    depth = 0
    while level:
        depth += 1
        if depth > limit:
            return True
        inner = []
        for item in level:
            for child in item.values() if type(item) is dict else item:
                if type(child) is dict or type(child) is list:
                    inner.append(child)
        level = inner
    return False
