"""The Open Reward Standard's HTTP routes on the service's own application.

Each route is the openreward package's server's (the same paths, request models,
answers and event streams), run through the service's middlewares (token, error
mapping, request metrics) and its intake (bytes admitted and bounded, JSON checked):
one HTTP stack for every protocol. Bare paths (``/call``) serve the one environment,
as the package's server does by redirect.

A tool call is started before its answer's stream opens: a refusal before its sample
is queued (a full queue, a draining service, a failed pool, too many samples) is an
HTTP status; what happens after (the result, or an error the scoring raised) is in the
stream.
"""

from __future__ import annotations

import asyncio
import random
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Coroutine
from typing import Any, NamedTuple, TypeVar

from aiohttp import web
from openreward.environments import CreateSession, ToolCall
from openreward.environments.session import call_session_tool, list_session_tools
from openreward.environments.types import (
    GetTask,
    GetTaskRange,
    ListTasks,
    NumTasks,
)
from pydantic import BaseModel, ValidationError

from ... import __version__
from ...config import OnError
from ...errors import BadRequest, ServiceStopping
from ..intake import (
    DRAINING,
    MAX_JSON_DEPTH,
    METRICS,
    ORS_INFO,
    SETTINGS,
    admit,
    check_depth,
    read_json,
    submit_samples,
)
from .answers import group_answer, tool_answer
from .candidates import GroupRequest, model_request, plain_answers
from .environment import QUEUED, RewardEnvironment, environment_class
from .sessions import Session, Sessions
from .sse import PING_S, one_event, stream
from .tasks import TaskSet, spec_location, task_spec

SESSION_TTL_S = 900.0  # the ORS convention: a session unused for 15 minutes is closed
REAP_EVERY_S = 30.0
M = TypeVar("M", bound=BaseModel)
T = TypeVar("T")
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class Served(NamedTuple):
    """The one environment this service serves."""

    name: str
    tasks: TaskSet
    env_cls: type[RewardEnvironment]
    sessions: Sessions


SERVED = web.AppKey("ors_served", Served)


def add_routes(app: web.Application, name: str, tasks: TaskSet, on_error: OnError) -> None:
    """Serve ``tasks`` as the environment ``name`` on ``app``, scoring on its pool."""
    settings, metrics = app[SETTINGS], app[METRICS]
    env_cls = environment_class(name, tasks, lambda samples: submit_samples(app, samples), on_error)
    sessions = Sessions(settings.max_sessions, SESSION_TTL_S, settings.retry_after_s,
                        on_count=metrics.ors_sessions.set)
    app[SERVED] = Served(name, tasks, env_cls, sessions)
    app[ORS_INFO] = {"environment": name, "splits": tasks.counts(), "tool": "submit",
                     "session_ttl_s": SESSION_TTL_S, "max_sessions": settings.max_sessions}
    app.cleanup_ctx.append(_close_idle_sessions)
    get, post = app.router.add_get, app.router.add_post
    get("/health", _ors(_health))
    get("/version", _ors(_version))
    get("/list_environments", _ors(_list_environments))
    post("/create_session", _ors(_create_session))
    post("/delete_session", _ors(_delete_session))
    post("/create", _ors(_create))
    post("/delete", _ors(_delete))
    post("/ping", _ors(_ping))
    for prefix in ("", "/{env_name}"):  # bare: the one environment
        get(f"{prefix}/tools", _ors(_tools))
        get(f"{prefix}/splits", _ors(_splits))
        post(f"{prefix}/tasks", _ors(_tasks))
        post(f"{prefix}/num_tasks", _ors(_num_tasks))
        post(f"{prefix}/task", _ors(_task))
        post(f"{prefix}/task_range", _ors(_task_range))
        get(f"{prefix}/task_tools", _ors(_task_tools))
        get(f"{prefix}/prompt", _ors(_prompt))
        get(f"{prefix}/messages", _ors(_messages))
        post(f"{prefix}/call", _ors(_call))
        post(f"{prefix}/score_group", _ors(_score_group))


def is_ors(handler: Any) -> bool:
    """Whether ``handler`` serves an ORS route (its errors also carry ``detail``, the
    field ORS clients read)."""
    return bool(getattr(handler, "ors", False))


def _ors(handler: Handler) -> Handler:
    async def handle(request: web.Request) -> web.StreamResponse:
        return await handler(request)

    handle.ors = True  # type: ignore[attr-defined]
    return handle


async def _close_idle_sessions(app: web.Application) -> AsyncIterator[None]:
    sessions = app[SERVED].sessions

    async def reap() -> None:
        while True:
            await asyncio.sleep(REAP_EVERY_S)
            sessions.close_idle()

    task = asyncio.get_running_loop().create_task(reap())
    yield
    task.cancel()


# -- what requests name: the environment, the session, the body ---------------------


def _served(request: web.Request) -> Served:
    served = request.app[SERVED]
    name = request.match_info.get("env_name")
    if name is not None and name.lower() != served.name:
        raise BadRequest(404, f"unknown environment {name!r}; this server has {served.name!r} "
                              f"(GET /list_environments)")
    return served


def _sid(request: web.Request) -> str:
    sid = request.headers.get("X-Session-ID", "").strip()
    if not sid:
        raise BadRequest(400, "the X-Session-ID header is required (POST /create_session gives one)")
    return sid


def _session(request: web.Request) -> Session:
    return _served(request).sessions.get(_sid(request))


async def _body(request: web.Request, model: type[M], what: str) -> M:
    return _parsed(await _json_body(request), model.model_validate, what)


async def _json_body(request: web.Request) -> Any:
    """The body, admitted and read by the service's intake; no body is ``{}``."""
    with admit(request) as held:
        body = await read_json(request, held, allow_empty=True)
    return {} if body is None else body


def _parsed(body: Any, parse: Callable[[Any], T], what: str) -> T:
    """``parse(body)``; a 422 naming the first few fields at fault when the protocol's
    model refuses it."""
    try:
        return parse(body)
    except ValidationError as e:
        problems = "; ".join(f"{'.'.join(map(str, err['loc'])) or 'the body'}: {err['msg']}"
                             for err in e.errors()[:5])
        raise BadRequest(422, f"the {what} request: {problems}") from None


def _json(value: Any) -> web.Response:
    return web.json_response(value)


# -- discovery ------------------------------------------------------------------------


async def _health(request: web.Request) -> web.Response:
    return _json({"status": "ok"})


async def _version(request: web.Request) -> web.Response:
    return _json({"version": f"verl-rewards {__version__}", "build_sha": None})


async def _list_environments(request: web.Request) -> web.Response:
    return _json([request.app[SERVED].name])


async def _tools(request: web.Request) -> web.Response:
    return _json(_served(request).env_cls.list_tools().model_dump())


async def _splits(request: web.Request) -> web.Response:
    return _json([s.model_dump() for s in _served(request).env_cls.list_splits()])


async def _tasks(request: web.Request) -> web.Response:
    served = _served(request)
    body = await _body(request, ListTasks, "tasks")
    return _json({"tasks": served.env_cls.list_tasks(body.split), "env_name": served.name})


async def _num_tasks(request: web.Request) -> web.Response:
    served = _served(request)
    body = await _body(request, NumTasks, "num_tasks")
    return _json({"num_tasks": len(served.tasks.tasks(body.split))})


async def _task(request: web.Request) -> web.Response:
    served = _served(request)
    body = await _body(request, GetTask, "task")
    task = served.tasks.task(body.split, body.index)
    return _json({"task": task_spec(body.split, body.index, task), "env_name": served.name})


async def _task_range(request: web.Request) -> web.Response:
    served = _served(request)
    body = await _body(request, GetTaskRange, "task_range")
    tasks = served.tasks.tasks(body.split)
    chosen = range(len(tasks))[slice(body.start, body.stop)]  # Python's slice rules, as ORS says
    return _json({"tasks": [task_spec(body.split, i, tasks[i]) for i in chosen], "env_name": served.name})


# -- sessions -------------------------------------------------------------------------


async def _create_session(request: web.Request) -> web.Response:
    with admit(request) as held:
        await read_json(request, held, allow_empty=True)
    return one_event("task_id", str(uuid.uuid4()))


async def _delete_session(request: web.Request) -> web.Response:
    return _json({"sid": _sid(request)})


async def _create(request: web.Request) -> web.Response:
    served, sid = _served(request), _sid(request)
    if request.app[DRAINING]:
        raise ServiceStopping("the service is shutting down: no new sessions")
    body = await _body(request, CreateSession, "create")
    if body.toolset_name is not None:
        raise BadRequest(400, f"toolset {body.toolset_name!r}: this environment offers no toolsets")
    if body.env_name is not None and body.env_name.lower() != served.name:
        raise BadRequest(404, f"unknown environment {body.env_name!r}; this server has {served.name!r}")
    if body.task_spec is not None:
        split, index = spec_location(body.task_spec)
    else:
        split, index = str(body.split), int(body.index)
    task = served.tasks.task(split, index)
    served.sessions.check_new(sid)
    served.sessions.add(sid, served.env_cls(task_spec=task_spec(split, index, task)))
    return _json({"sid": sid})


async def _delete(request: web.Request) -> web.Response:
    sid = _sid(request)
    request.app[SERVED].sessions.close(sid)
    return _json({"sid": sid})


async def _ping(request: web.Request) -> web.Response:
    _session(request)
    return _json({"status": "ok"})


async def _task_tools(request: web.Request) -> web.Response:
    listed = await list_session_tools(_session(request).env, None)
    return _json(listed.model_dump())


async def _prompt(request: web.Request) -> web.Response:
    blocks = await _session(request).env.get_prompt()
    return _json([b.model_dump() for b in blocks])


async def _messages(request: web.Request) -> web.Response:
    return _json([m.model_dump() for m in _session(request).env.get_messages()])


# -- tool calls and group scores ------------------------------------------------------


async def _call(request: web.Request) -> web.StreamResponse:
    session = _session(request)
    body = await _body(request, ToolCall, "call")
    if body.task_id is not None:
        return await _resume(request, session, body.task_id)

    async def run() -> str:
        return tool_answer(await call_session_tool(session.env, None, body.name, body.input))

    return await _stream_new(request, session, run)


async def _score_group(request: web.Request) -> web.StreamResponse:
    session = _session(request)
    group = await _group_body(request)
    if group.task_id is not None:
        return await _resume(request, session, group.task_id)

    async def run() -> str:
        return group_answer(await session.env.score_answers(group.answers))

    return await _stream_new(request, session, run)


async def _group_body(request: web.Request) -> GroupRequest:
    """``score_group``'s request: read straight from its JSON when it is plain, else by the
    package's model; its depth checked either way (in the plain walk, or here)."""
    with admit(request) as held:
        body = await read_json(request, held, allow_empty=True, depth_checked_by_caller=True)
    body = {} if body is None else body
    plain = plain_answers(body, MAX_JSON_DEPTH)
    if plain is not None:
        return plain
    check_depth(body)
    return _parsed(body, model_request, "score_group")


async def _resume(request: web.Request, session: Session, task_id: str) -> web.StreamResponse:
    work = session.calls.get(task_id)
    if work is None:
        raise BadRequest(404, f"no call {task_id!r} in this session (the last few calls are kept)")
    return await stream(request, task_id, work)


async def _stream_new(request: web.Request, session: Session,
                      run: Callable[[], Coroutine[Any, Any, str]]) -> web.StreamResponse:
    work = await _started(run)
    task_id = _call_id()
    session.remember(task_id, work)
    return await stream(request, task_id, work)


def _call_id() -> str:
    """A call's ``task_id``: 128 random bits, from Python's generator. It names a call
    only within its session (which the client names too), so it need not be secret, and
    ``uuid4``'s ``os.urandom`` releases the GIL: with the scoring thread busy, each
    call's event loop then waited out a switch interval (5 ms) to get it back."""
    return f"{random.getrandbits(128):032x}"


async def _started(run: Callable[[], Coroutine[Any, Any, str]]) -> asyncio.Future[str]:
    """``run`` started; raised here (an HTTP status) when it failed before queueing its
    samples. Waits until it queued them, finished, or a ping interval passed (one future
    and a timer: this is on every call's path)."""
    loop = asyncio.get_running_loop()
    ready: asyncio.Future[bool] = loop.create_future()  # its result: whether run queued

    def settle(queued: bool) -> None:
        if not ready.done():
            ready.set_result(queued)

    token = QUEUED.set(lambda: settle(True))
    try:
        work = loop.create_task(run())
    finally:
        QUEUED.reset(token)
    work.add_done_callback(lambda _: settle(False))
    timer = loop.call_later(PING_S, settle, False)
    try:
        queued = await ready
    finally:
        timer.cancel()
    error = work.exception() if work.done() and not queued else None
    if error is not None:
        raise error
    return work

