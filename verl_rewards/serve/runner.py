"""Run the service: bind, start the pool in the background, drain on SIGTERM.

Start-up: the port is bound first (``/healthz`` answers at once), then the
pool starts (``/readyz`` turns 200). SIGTERM or Ctrl-C: stop accepting,
let in-flight requests finish (up to ``drain_timeout_s``), close the pool,
return 0.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys
from collections.abc import Callable

from aiohttp import web

from ..config import RewardConfig
from ..errors import ConfigError
from ..results import Provenance
from ..scorer import Scorer
from ..spec import RewardSpec, score_identity
from .app import DRAINING, QUEUE, build_app
from .metrics import Metrics
from .pool import PoolKeeper
from .settings import ServeSettings

log = logging.getLogger("verl_rewards.serve")


def describe_pool(config: RewardConfig) -> str:
    """One line for /readyz and the start-up message."""
    if config.executor == "local":
        return "local executor (in the server process)"
    where = {"cluster": "the Ray cluster's shared pool", "job": "this job's shared pool"}.get(
        str(config.share_pool), "its own pool")
    return f"ray executor, {config.num_workers} workers ({where})"


def scorer_factory(spec: RewardSpec, config: RewardConfig) -> Callable[[], Scorer]:
    """How to build the service's scorer (again, after its pool failed), started."""
    return lambda: Scorer(spec, config).start()


def serve(settings: ServeSettings, spec: RewardSpec, config: RewardConfig,
          say: Callable[[str], None]) -> int:
    """Serve until SIGTERM or Ctrl-C; 0 after a clean drain."""
    return asyncio.run(_serve(settings, spec, config, say))


async def _serve(settings: ServeSettings, spec: RewardSpec, config: RewardConfig,
                 say: Callable[[str], None]) -> int:
    metrics = Metrics()
    describe = describe_pool(config)
    keeper = PoolKeeper(scorer_factory(spec, config), metrics, describe)
    app = build_app(settings, keeper, metrics, Provenance.of(spec), score_identity(spec, config))
    runner = web.AppRunner(app, handle_signals=False, access_log=None,
                           shutdown_timeout=settings.drain_timeout_s)
    await runner.setup()
    stop = _stop_event()
    try:
        site = web.TCPSite(runner, settings.host, settings.port)
        try:
            await site.start()
        except OSError as e:
            raise ConfigError(f"cannot listen on {settings.host}:{settings.port}: {e.strerror or e}; "
                              f"choose another --port (0 picks a free one) or --host") from e
        keeper.start()
        for address in runner.addresses:
            host, port = address[0], address[1]
            shown = f"[{host}]" if ":" in host else host
            say(f"verl-rewards serve: {spec.display_name} on {describe}; "
                f"listening on http://{shown}:{port}{' (token required)' if settings.token else ''}")
        await stop.wait()
        app[DRAINING].append(True)
        say(f"verl-rewards serve: stopping; finishing {app[QUEUE].depth} sample(s) in flight")
    finally:
        await runner.cleanup()  # stops accepting, waits for in-flight requests
        await app[QUEUE].close()
        await asyncio.to_thread(keeper.close)
    say("verl-rewards serve: stopped")
    return 0


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
