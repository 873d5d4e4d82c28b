"""Run the service: bind, start the pool in the background, drain on SIGTERM.

Start-up: the port is bound first (nothing starts when it cannot be), then the
application starts the pool in the background and listens (``/healthz`` answers
at once, ``/readyz`` turns 200 when the pool is up). SIGTERM or Ctrl-C: stop
accepting, let in-flight requests finish (up to ``drain_timeout_s``), close the
pool, return 0.
"""

from __future__ import annotations

import asyncio
import gc
import logging
import signal
import socket
import sys
from collections.abc import Callable

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError

from ..config import RewardConfig
from ..errors import BindError, ConfigError
from ..results import Provenance
from ..scorer import Scorer
from ..spec import score_identity
from .app import build_app
from .intake import DRAINING, QUEUE
from .metrics import Metrics
from .ors.tasks import TaskSet, environment_name
from .pool import PoolKeeper
from .protocols import refused_endpoints
from .settings import ServeSettings

log = logging.getLogger("verl_rewards.serve")
http_log = logging.getLogger("verl_rewards.serve.http")  # aiohttp's server messages

LOCAL_IN_PRODUCTION = (
    "reward.executor=local scores in the server process: a reward stuck in C blocks every "
    "request while /readyz still says ready, and a crash in the reward ends the service. "
    "Serve with reward.executor=ray (the default), or add --dev to accept that while developing")


def describe_pool(config: RewardConfig) -> str:
    """One line for /readyz and the start-up message."""
    if config.executor == "local":
        return "local executor (in the server process; development mode)"
    if config.executor == "process":
        return f"process executor, {config.num_workers} worker processes (this machine)"
    where = {"cluster": "the Ray cluster's shared pool", "job": "this job's shared pool"}.get(
        str(config.share_pool), "its own pool")
    return f"ray executor, {config.num_workers} workers ({where})"


def check_pool(settings: ServeSettings, config: RewardConfig) -> None:
    """Refuse pools the service cannot keep its promises on (docs/serve.md)."""
    if config.executor == "ray" or config.remote_url:
        return
    if config.share_pool == "cluster":
        raise ConfigError(f"--shared-pool needs reward.executor=ray (a {config.executor} executor "
                          f"runs on this machine, for this process, and cannot be shared)")
    if config.executor == "process":
        return
    if not settings.dev:
        raise ConfigError(LOCAL_IN_PRODUCTION)


def scorer_factory(scorer: Scorer) -> Callable[[], Scorer]:
    """How to build the service's scorer (again, after its pool failed), started, from what
    the command already read and inspected (preflight ran once, in the command)."""
    return lambda: Scorer(scorer.ref, scorer.config, scorer.info).start()


def serve(settings: ServeSettings, scorer: Scorer, say: Callable[[str], None],
          tasks: TaskSet | None = None) -> int:
    """Serve ``scorer``'s reward (validated, not started) until SIGTERM or Ctrl-C; 0
    after a clean drain. With ``tasks``, also as an Open Reward Standard environment.
    :class:`BindError` when the address cannot be had."""
    check_pool(settings, scorer.config)
    return asyncio.run(_serve(settings, scorer, say, tasks))


async def _serve(settings: ServeSettings, scorer: Scorer, say: Callable[[str], None],
                 tasks: TaskSet | None) -> int:
    sockets = bind(settings.host, settings.port)  # before anything starts
    metrics = Metrics()
    describe = describe_pool(scorer.config)
    keeper = PoolKeeper(scorer_factory(scorer), metrics, describe)
    provenance = Provenance.of(scorer.ref)
    app = build_app(settings, keeper, metrics, provenance,
                    score_identity(scorer.ref, scorer.config), scorer.config.on_error, tasks)
    runner = web.AppRunner(app, handle_signals=False, access_log=None, logger=http_log,
                           shutdown_timeout=settings.drain_timeout_s)
    http_log.addFilter(_one_line_for_malformed_requests)
    stop = _stop_event()
    try:
        await runner.setup()  # starts the pool in the background (cleanup_ctx)
        freeze_startup_objects()
        for sock in sockets:
            await web.SockSite(runner, sock).start()
        for address in runner.addresses:
            host, port = address[0], address[1]
            shown = f"[{host}]" if ":" in host else host
            say(f"verl-rewards serve: {scorer.ref.display_name} on {describe}; "
                f"listening on http://{shown}:{port}{' (token required)' if settings.token else ''}")
            if tasks is not None:
                say(ors_line(provenance, tasks, f"http://{shown}:{port}"))
        if refused := refused_endpoints(scorer.config.on_error):
            say(f"verl-rewards serve: on_error=skip: {', '.join(refused)} answer every request 409 "
                f"(their trainers cannot leave one sample out; see docs/skip.md)")
        await stop.wait()
        app[DRAINING].append(True)
        say(f"verl-rewards serve: stopping; finishing {app[QUEUE].depth} sample(s) in flight")
    finally:
        await runner.cleanup()  # stops accepting, waits for in-flight requests, closes the pool
        for sock in sockets:
            sock.close()
    say("verl-rewards serve: stopped")
    return 0


def freeze_startup_objects() -> None:
    """Move what start-up created (modules, the reward, the application) out of the
    garbage collector's reach. A process that imported the reward's and the protocols'
    libraries holds hundreds of thousands of objects, and each full collection, which
    the requests' own objects trigger now and then, walked them all: a pause of 100-250
    ms for every request in flight. Start-up's own garbage is collected first."""
    gc.collect()
    gc.freeze()


def ors_line(provenance: Provenance, tasks: TaskSet, url: str) -> str:
    """The start-up line that gives the Open Reward Standard environment's base URL."""
    splits = ", ".join(f"{name}: {n} tasks" for name, n in tasks.counts().items())
    return (f"verl-rewards serve: Open Reward Standard environment {environment_name(provenance)!r} "
            f"({splits}; tool submit(answer)) at ors_url {url}")


def bind(host: str, port: int) -> list[socket.socket]:
    """A listening socket for each address ``host`` names (one port for all, also for
    port 0), or :class:`BindError` naming the address and the fix."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except OSError as e:
        raise BindError(f"cannot listen on {host}:{port}: {e.strerror or e}; choose another --host") from e
    sockets: list[socket.socket] = []
    try:
        for family, kind, proto, _, address in dict.fromkeys(infos):
            sock = socket.socket(family, kind, proto)
            sockets.append(sock)
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            if family == socket.AF_INET6:
                sock.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            if port == 0 and len(sockets) > 1:
                address = (address[0], sockets[0].getsockname()[1], *address[2:])
            sock.bind(address)
            sock.listen(128)
            sock.setblocking(False)
    except OSError as e:
        for sock in sockets:
            sock.close()
        raise BindError(f"cannot listen on {host}:{port}: {e.strerror or e}; choose another --port "
                        f"(0 picks a free one) or --host") from e
    return sockets


def _one_line_for_malformed_requests(record: logging.LogRecord) -> bool:
    """A request aiohttp cannot parse (bad headers, a broken chunk) is the client's
    error: one warning line, not a traceback."""
    error = record.exc_info[1] if record.exc_info else None
    if isinstance(error, HttpProcessingError):
        remote = record.args[0] if isinstance(record.args, tuple) and record.args else "?"
        said = " ".join(str(error.message or repr(error)).split())[:300]
        record.msg, record.args = "refused a malformed request from %s: %s", (remote, said)
        record.exc_info, record.exc_text = None, None
        record.levelno, record.levelname = logging.WARNING, "WARNING"
    return True


def _stop_event() -> asyncio.Event:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        try:
            loop.add_signal_handler(sig, stop.set)
        except (NotImplementedError, RuntimeError):  # not the main thread, or no signals here
            log.debug("cannot handle %s here", sig)
    return stop


def print_line(line: str) -> None:
    """Start-up and shutdown lines go to stdout, flushed (supervisors and tests read them)."""
    print(line, file=sys.stdout, flush=True)
