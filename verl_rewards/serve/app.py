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
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING

from aiohttp import web

from ..config import OnError
from ..errors import BadRequest, QueueFull, RewardError, ServiceStopping
from ..results import BatchResult, Provenance
from ..spec import ScoreIdentity
from ..wire import dumps, json_data, provenance_to_json
from .admission import ByteBudget
from .auth import token_matches
from .batching import BatchQueue
from .intake import (
    BUDGET,
    DRAINING,
    IDENTITY,
    KEEPER,
    METRICS,
    ORS_INFO,
    PROVENANCE,
    QUEUE,
    SETTINGS,
    admit,
    read_json,
    submit_samples,
)
from .metrics import CONTENT_TYPE, Metrics
from .pool import PoolKeeper, PoolUnavailable
from .protocols import Parsed, Protocol, parse_seed_session, protocols_for
from .settings import ServeSettings

if TYPE_CHECKING:
    from .ors.tasks import TaskSet

log = logging.getLogger("verl_rewards.serve")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
OPEN_PATHS = frozenset({"/healthz", "/health"})  # /health: the Open Reward Standard's
POOL_WAIT_S = 600.0  # how long a batch waits for a starting pool before its requests get 503


def build_app(settings: ServeSettings, keeper: PoolKeeper, metrics: Metrics,
              provenance: Provenance, identity: ScoreIdentity,
              on_error: OnError = "score", tasks: TaskSet | None = None) -> web.Application:
    """The application for one reward pool (``identity``: what decides its scores; its
    section says ``on_error``); the pool starts with the application (``AppRunner.setup``)
    and closes with it (``AppRunner.cleanup``). With ``tasks``, it also serves the reward
    as an Open Reward Standard environment over them (needs the ``openreward`` package)."""
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
    if tasks is not None:
        from .ors.routes import add_routes
        from .ors.tasks import environment_name

        add_routes(app, environment_name(provenance), tasks, on_error)
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
    """Every error as ``{"error": message}`` with its status (on the Open Reward Standard's
    routes also as ``detail``): the service's domain errors, aiohttp's own (404, 405, 413),
    and a bug (500, traceback in the log)."""
    try:
        return await handler(request)
    except Exception as e:  # noqa: BLE001 - every error becomes an answer
        return _answer_error(request, e)


def _answer_error(request: web.Request, e: Exception) -> web.Response:
    retry = {"Retry-After": str(request.app[SETTINGS].retry_after_s)}
    ors = _is_ors(request)
    if isinstance(e, BadRequest):
        return _error(e.status, e.message, e.headers, ors)
    if isinstance(e, QueueFull):
        return _error(429, str(e), retry, ors)
    if isinstance(e, (PoolUnavailable, ServiceStopping)):
        return _error(503, str(e), retry, ors)
    if isinstance(e, RewardError):  # on_error=raise: the request's own sample failed
        return _error(500, str(e), None, ors)
    if isinstance(e, web.HTTPException):
        if e.status < 400:
            raise e
        return _error(e.status, _http_message(request, e), _kept_headers(e), ors)
    # a bug: the client hears that much, the log the rest
    log.exception("%s %s failed", request.method, request.path, exc_info=e)
    return _error(500, f"internal error ({type(e).__name__}); the server log has the details", None, ors)


def _is_ors(request: web.Request) -> bool:
    if ORS_INFO not in request.app:
        return False
    from .ors.routes import is_ors

    return is_ors(request.match_info.handler)


@web.middleware
async def _require_token(request: web.Request, handler: Handler) -> web.StreamResponse:
    token = request.app[SETTINGS].token
    if token is None or request.path in OPEN_PATHS:
        return await handler(request)
    if not token_matches(token, request.headers.get("Authorization"), request.query.get("token"),
                         request.headers.get("X-API-Key")):
        raise BadRequest(401, "missing or wrong token: send 'Authorization: Bearer TOKEN' or ?token=TOKEN "
                              "(Open Reward Standard clients: 'X-API-Key: TOKEN', their OPENREWARD_API_KEY)",
                         {"WWW-Authenticate": 'Bearer realm="verl-rewards"'})
    return await handler(request)


def _error(status: int, message: str, headers: dict[str, str] | None = None,
           ors: bool = False) -> web.Response:
    # ORS clients read an error's `detail` (the openreward server's field)
    body = {"error": message, "detail": message} if ors else {"error": message}
    return web.json_response(body, status=status, headers=headers)


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
        "score_identity": json_data(request.app[IDENTITY]),
        "pool": request.app[KEEPER].describe,
        "limits": {"max_body_bytes": settings.max_body_bytes, "max_samples": settings.max_samples,
                   "max_queue": settings.max_queue, "max_queue_bytes": settings.max_queue_bytes},
        # The Open Reward Standard environment (serve --tasks): its base URL is this service's
        "ors_url": str(request.url.origin()) if ORS_INFO in request.app else None,
        "ors": request.app.get(ORS_INFO),
    })


async def _seed_session(request: web.Request) -> web.Response:
    with admit(request) as held:
        parse_seed_session(await read_json(request, held, allow_empty=True), None)
    return web.json_response({})


# -- scoring ----------------------------------------------------------------------


def _scoring_handler(protocol: Protocol) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        # The bytes stay held until the answer is built: the parsed request lives that long.
        with admit(request) as held:
            body = await read_json(request, held)
            parsed = protocol.parse(body, request.app[SETTINGS].data_source)
            del body
            answer = protocol.format(parsed, await _score(request, parsed))
            return web.Response(text=dumps(answer.body), content_type="application/json",
                                headers=answer.headers)

    return handle


async def _score(request: web.Request, parsed: Parsed) -> BatchResult:
    return await submit_samples(request.app, parsed.samples)
