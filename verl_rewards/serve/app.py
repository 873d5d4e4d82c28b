"""The aiohttp application: routes, the token check, limits and error mapping.

Every scoring endpoint runs the same steps: reserve the body's bytes (413 past
the body limit, 429 past the bytes held), read it, parse JSON (400, also when it
nests too deep), parse the protocol (400/422 naming the field), check the
sample count (413), queue (429 when full, 503 when the pool is down), answer.
Handlers raise the domain errors of :mod:`verl_rewards.errors`; one middleware
turns every error into a JSON answer. Only ``/healthz`` is open without the token.
The pool starts when the application does (``cleanup_ctx``): building it starts
nothing.
"""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ..config import OnError
from ..errors import BadRequest, QueueFull, RewardError, ServiceStopping
from ..results import BatchResult, Provenance
from ..spec import ScoreIdentity
from ..wire import dumps, plain, provenance_to_json
from .admission import ByteBudget, Held
from .auth import token_matches
from .batching import BatchQueue
from .metrics import CONTENT_TYPE, Metrics
from .pool import PoolKeeper, PoolUnavailable
from .protocols import Parsed, Protocol, parse_seed_session, protocols_for
from .settings import MIB, ServeSettings

log = logging.getLogger("verl_rewards.serve")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
OPEN_PATHS = frozenset({"/healthz"})
POOL_WAIT_S = 600.0  # how long a batch waits for a starting pool before its requests get 503
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


def build_app(settings: ServeSettings, keeper: PoolKeeper, metrics: Metrics,
              provenance: Provenance, identity: ScoreIdentity,
              on_error: OnError = "score") -> web.Application:
    """The application for one reward pool (``identity``: what decides its scores; its
    section says ``on_error``); the pool starts with the application (``AppRunner.setup``)
    and closes with it (``AppRunner.cleanup``)."""
    app = web.Application(client_max_size=settings.max_body_bytes,
                          middlewares=[_count_requests, _errors, _require_token])
    queue = BatchQueue(lambda batches: keeper.score_together(batches, POOL_WAIT_S), metrics,
                       settings.max_queue, settings.max_batch)
    app[SETTINGS], app[KEEPER], app[QUEUE], app[METRICS] = settings, keeper, queue, metrics
    app[BUDGET] = ByteBudget(settings.max_queue_bytes, metrics)
    app[PROVENANCE], app[IDENTITY], app[DRAINING] = provenance, identity, []
    app.cleanup_ctx.append(_pool_and_queue)
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/readyz", _readyz)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/v1/info", _info)
    app.router.add_post("/seed_session", _seed_session)
    for path, protocol in protocols_for(on_error).items():
        app.router.add_post(path, _scoring_handler(protocol))
    return app


async def _pool_and_queue(app: web.Application) -> AsyncIterator[None]:
    """Start the pool in the background; after the last request (the runner drains
    first), stop the queue and close the pool."""
    app[KEEPER].start()
    yield
    await app[QUEUE].close()
    await asyncio.to_thread(app[KEEPER].close)


# -- middlewares ----------------------------------------------------------------


@web.middleware
async def _count_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    metrics = request.app[METRICS]
    resource = request.match_info.route.resource
    endpoint = resource.canonical if resource is not None else "unmatched"
    began = time.perf_counter()
    response = await handler(request)
    metrics.requests.labels(endpoint, str(response.status)).inc()
    if request.method == "POST" and response.status == 200:
        metrics.latency.labels(endpoint).observe(time.perf_counter() - began)
    return response


@web.middleware
async def _errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    """Every error as ``{"error": message}`` with its status: the service's domain
    errors, aiohttp's own (404, 405, 413), and a bug (500, traceback in the log)."""
    retry = {"Retry-After": str(request.app[SETTINGS].retry_after_s)}
    try:
        return await handler(request)
    except BadRequest as e:
        return _error(e.status, e.message, e.headers)
    except QueueFull as e:
        return _error(429, str(e), retry)
    except (PoolUnavailable, ServiceStopping) as e:
        return _error(503, str(e), retry)
    except RewardError as e:  # on_error=raise: the request's own sample failed
        return _error(500, str(e))
    except web.HTTPException as e:
        if e.status < 400:
            raise
        return _error(e.status, _http_message(request, e), _kept_headers(e))
    except Exception as e:  # a bug: the client hears that much, the log the rest
        log.exception("%s %s failed", request.method, request.path)
        return _error(500, f"internal error ({type(e).__name__}); the server log has the details")


@web.middleware
async def _require_token(request: web.Request, handler: Handler) -> web.StreamResponse:
    token = request.app[SETTINGS].token
    if token is None or request.path in OPEN_PATHS:
        return await handler(request)
    if not token_matches(token, request.headers.get("Authorization"), request.query.get("token")):
        raise BadRequest(401, "missing or wrong token: send 'Authorization: Bearer TOKEN' or ?token=TOKEN",
                         {"WWW-Authenticate": 'Bearer realm="verl-rewards"'})
    return await handler(request)


def _error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    return web.json_response({"error": message}, status=status, headers=headers)


def _http_message(request: web.Request, e: web.HTTPException) -> str:
    if e.status == 404:
        return f"no endpoint {request.path}; see GET /v1/info and docs/serve.md"
    if e.status == 405:
        return f"{request.method} is not allowed on {request.path}; use {e.headers.get('Allow', '')}"
    if e.status == 413:
        limit = request.app[SETTINGS].max_body_bytes
        return f"the body is over the limit of {limit} bytes (--max-body-mb)"
    return e.reason


def _kept_headers(e: web.HTTPException) -> dict[str, str]:
    return {k: v for k, v in e.headers.items() if k in ("Allow", "Retry-After")}


# -- plain endpoints --------------------------------------------------------------


async def _healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _readyz(request: web.Request) -> web.Response:
    status = request.app[KEEPER].status()
    if request.app[DRAINING]:
        status = {**status, "ready": False, "state": "draining"}
    status["queue_depth"] = request.app[QUEUE].depth
    status["queue_bytes"] = request.app[BUDGET].held
    return web.json_response(status, status=200 if status["ready"] else 503)


async def _metrics(request: web.Request) -> web.Response:
    body = request.app[METRICS].render()
    return web.Response(body=body, headers={"Content-Type": CONTENT_TYPE})


async def _info(request: web.Request) -> web.Response:
    settings = request.app[SETTINGS]
    return web.json_response({
        "provenance": provenance_to_json(request.app[PROVENANCE]),
        "score_identity": plain(request.app[IDENTITY]),
        "pool": request.app[KEEPER].describe,
        "limits": {"max_body_bytes": settings.max_body_bytes, "max_samples": settings.max_samples,
                   "max_queue": settings.max_queue, "max_queue_bytes": settings.max_queue_bytes},
    })


async def _seed_session(request: web.Request) -> web.Response:
    with _admit(request) as held:
        parse_seed_session(await _read_json(request, held, allow_empty=True), None)
    return web.json_response({})


# -- scoring ----------------------------------------------------------------------


def _scoring_handler(protocol: Protocol) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        # The bytes stay held until the answer is built: the parsed request lives that long.
        with _admit(request) as held:
            body = await _read_json(request, held)
            parsed = protocol.parse(body, request.app[SETTINGS].data_source)
            del body
            answer = protocol.format(parsed, await _score(request, parsed))
            return web.Response(text=dumps(answer.body), content_type="application/json",
                                headers=answer.headers)

    return handle


async def _score(request: web.Request, parsed: Parsed) -> BatchResult:
    app = request.app
    settings, keeper = app[SETTINGS], app[KEEPER]
    n = len(parsed.samples)
    if n > settings.max_samples:
        raise BadRequest(413, f"{n} samples in one request; the limit is {settings.max_samples} "
                              f"(--max-samples): split the request")
    if n == 0:
        return BatchResult([], [], [], {}, app[PROVENANCE])
    if app[DRAINING]:
        raise ServiceStopping("the service is shutting down")
    if keeper.state == "failed":
        status = keeper.status()
        raise PoolUnavailable(f"the reward pool is {status['state']}: {status['last_error']}; see /readyz")
    try:
        return await app[QUEUE].score(parsed.samples)
    except (QueueFull, PoolUnavailable, RewardError):
        raise
    except Exception as e:  # the pool failed twice on this batch: retryable
        raise PoolUnavailable(f"the reward pool failed while scoring: {type(e).__name__}: {e}; "
                              f"see /readyz") from e


# -- the body -----------------------------------------------------------------------


def _admit(request: web.Request) -> Held:
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


async def _read_json(request: web.Request, held: Held, allow_empty: bool = False) -> Any:
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
    if _deeper_than(value, MAX_JSON_DEPTH):
        raise BadRequest(400, f"the body nests deeper than {MAX_JSON_DEPTH} levels")
    return value


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


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests objects or arrays more than ``limit`` deep (iterative:
    the check itself cannot overflow the stack)."""
    stack = [(value, 1)] if isinstance(value, (dict, list)) else []
    while stack:
        item, depth = stack.pop()
        if depth > limit:
            return True
        children = item.values() if isinstance(item, dict) else item
        stack.extend((c, depth + 1) for c in children if isinstance(c, (dict, list)))
    return False

