"""The aiohttp application: routes, the token check, limits and error mapping.

Every scoring endpoint runs the same steps: read the body (413 past the
limit), parse JSON (400), parse the protocol (400/422 naming the field),
check the sample count (413), queue (429 when full, 503 when the pool is
down), answer. Only ``/healthz`` is open without the token.
"""

from __future__ import annotations

import json
import time
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web

from ..errors import RewardError
from ..results import BatchResult, Provenance
from ..spec import ScoreIdentity
from ..wire import dumps, plain, provenance_to_json
from .auth import token_matches
from .batching import BatchQueue, QueueFull
from .metrics import CONTENT_TYPE, Metrics
from .pool import PoolKeeper, PoolUnavailable
from .protocols import PROTOCOLS, BadRequest, Parsed, Protocol, parse_seed_session
from .settings import ServeSettings

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
OPEN_PATHS = frozenset({"/healthz"})
POOL_WAIT_S = 600.0  # how long a batch waits for a starting pool before its requests get 503

SETTINGS = web.AppKey("settings", ServeSettings)
KEEPER = web.AppKey("keeper", PoolKeeper)
QUEUE = web.AppKey("queue", BatchQueue)
METRICS = web.AppKey("metrics", Metrics)
PROVENANCE = web.AppKey("provenance", Provenance)
IDENTITY = web.AppKey("identity", ScoreIdentity)
DRAINING = web.AppKey("draining", list)  # non-empty once SIGTERM arrived


def build_app(settings: ServeSettings, keeper: PoolKeeper, metrics: Metrics,
              provenance: Provenance, identity: ScoreIdentity) -> web.Application:
    """The application for one reward pool (``identity``: what decides its scores)."""
    app = web.Application(client_max_size=settings.max_body_bytes,
                          middlewares=[_count_requests, _require_token])
    queue = BatchQueue(lambda batches: keeper.score_together(batches, POOL_WAIT_S), metrics,
                       settings.max_queue, settings.max_batch)
    app[SETTINGS], app[KEEPER], app[QUEUE], app[METRICS] = settings, keeper, queue, metrics
    app[PROVENANCE], app[IDENTITY], app[DRAINING] = provenance, identity, []
    app.router.add_get("/healthz", _healthz)
    app.router.add_get("/readyz", _readyz)
    app.router.add_get("/metrics", _metrics)
    app.router.add_get("/v1/info", _info)
    app.router.add_post("/seed_session", _seed_session)
    for path, protocol in PROTOCOLS.items():
        app.router.add_post(path, _scoring_handler(protocol))
    return app


def error(status: int, message: str, headers: dict[str, str] | None = None) -> web.Response:
    """A JSON error answer: ``{"error": message}``."""
    return web.json_response({"error": message}, status=status, headers=headers)


# -- middlewares ----------------------------------------------------------------


@web.middleware
async def _count_requests(request: web.Request, handler: Handler) -> web.StreamResponse:
    metrics = request.app[METRICS]
    resource = request.match_info.route.resource
    endpoint = resource.canonical if resource is not None else "unmatched"
    began = time.perf_counter()
    try:
        response = await handler(request)
    except web.HTTPException as e:
        metrics.requests.labels(endpoint, str(e.status)).inc()
        raise
    metrics.requests.labels(endpoint, str(response.status)).inc()
    if request.method == "POST" and response.status == 200:
        metrics.latency.labels(endpoint).observe(time.perf_counter() - began)
    return response


@web.middleware
async def _require_token(request: web.Request, handler: Handler) -> web.StreamResponse:
    token = request.app[SETTINGS].token
    if token is None or request.path in OPEN_PATHS:
        return await handler(request)
    if not token_matches(token, request.headers.get("Authorization"), request.query.get("token")):
        return error(401, "missing or wrong token: send 'Authorization: Bearer TOKEN' or ?token=TOKEN",
                     {"WWW-Authenticate": 'Bearer realm="verl-rewards"'})
    return await handler(request)


# -- plain endpoints --------------------------------------------------------------


async def _healthz(request: web.Request) -> web.Response:
    return web.json_response({"status": "ok"})


async def _readyz(request: web.Request) -> web.Response:
    status = request.app[KEEPER].status()
    if request.app[DRAINING]:
        status = {**status, "ready": False, "state": "draining"}
    status["queue_depth"] = request.app[QUEUE].depth
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
                   "max_queue": settings.max_queue},
    })


async def _seed_session(request: web.Request) -> web.Response:
    try:
        parse_seed_session(await _read_json(request, allow_empty=True), None)
    except BadRequest as e:
        return error(e.status, e.message)
    return web.json_response({})


# -- scoring ----------------------------------------------------------------------


def _scoring_handler(protocol: Protocol) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        try:
            parsed = protocol.parse(await _read_json(request), request.app[SETTINGS].data_source)
            result = await _score(request, parsed)
        except BadRequest as e:
            return error(e.status, e.message)
        return _answer(protocol, parsed, result)

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
    retry = {"Retry-After": str(settings.retry_after_s)}
    if app[DRAINING]:
        raise web.HTTPServiceUnavailable(text=_json_error("the service is shutting down"),
                                         content_type="application/json", headers=retry)
    if keeper.state == "failed":
        raise web.HTTPServiceUnavailable(text=_json_error(_unavailable(keeper)),
                                         content_type="application/json", headers=retry)
    try:
        return await app[QUEUE].score(parsed.samples)
    except QueueFull as e:
        raise web.HTTPTooManyRequests(text=_json_error(str(e)), content_type="application/json",
                                      headers=retry) from None
    except PoolUnavailable as e:
        raise web.HTTPServiceUnavailable(text=_json_error(str(e)), content_type="application/json",
                                         headers=retry) from None
    except RewardError as e:  # on_error=raise
        raise web.HTTPInternalServerError(text=_json_error(str(e)),
                                          content_type="application/json") from None
    except Exception as e:  # noqa: BLE001 - the pool failed twice on this batch: retryable
        message = f"the reward pool failed while scoring: {type(e).__name__}: {e}; see /readyz"
        raise web.HTTPServiceUnavailable(text=_json_error(message), content_type="application/json",
                                         headers=retry) from None


def _unavailable(keeper: PoolKeeper) -> str:
    status = keeper.status()
    return f"the reward pool is {status['state']}: {status['last_error']}; see /readyz"


def _answer(protocol: Protocol, parsed: Parsed, result: BatchResult) -> web.Response:
    answer = protocol.format(parsed, result)
    headers = {}
    if protocol.name == "slime" and result.statuses and result.statuses[0] != "ok":
        # slime reads a bare number: the failure is said in headers (and metrics).
        headers = {"X-Verl-Rewards-Status": result.statuses[0],
                   "X-Verl-Rewards-Error": _header_safe(result.errors[0] or "")}
    return web.Response(text=dumps(answer), content_type="application/json", headers=headers)


def _header_safe(text: str) -> str:
    return " ".join(text.split())[:512].encode("ascii", "replace").decode()


async def _read_json(request: web.Request, allow_empty: bool = False) -> Any:
    limit = request.app[SETTINGS].max_body_bytes
    if request.content_length is not None and request.content_length > limit:
        raise BadRequest(413, f"the body is {request.content_length} bytes; the limit is {limit} bytes "
                              f"(--max-body-mb)")
    try:
        raw = await request.read()
    except web.HTTPRequestEntityTooLarge:
        raise BadRequest(413, f"the body is over the limit of {limit} bytes (--max-body-mb)") from None
    if not raw.strip() and allow_empty:
        return None
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, ValueError) as e:
        raise BadRequest(400, f"the body is not valid JSON: {e}") from None


def _json_error(message: str) -> str:
    return json.dumps({"error": message})

