"""``verl-rewards serve``: the reward service over HTTP."""

from __future__ import annotations

import argparse
import os
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .argtypes import positive_int

if TYPE_CHECKING:
    from ..serve.ors.tasks import TaskSet

NAME = "serve"
HELP = ("Serve the reward a config selects over HTTP (native, OpenRLHF, slime, NeMo-Gym; "
        "with --tasks, an Open Reward Standard environment).")
EPILOG = """\
examples:
  verl-rewards serve reward.plugin=gsm8k reward.num_workers=4
  VERL_REWARDS_TOKEN=s3cret verl-rewards serve --host 0.0.0.0 --port 8000 -c reward.yaml
  verl-rewards serve --dev reward.plugin=gsm8k reward.executor=local   # development only
  verl-rewards serve --tasks train.parquet --tasks test=test.jsonl reward.plugin=gsm8k
  curl -s localhost:8000/v1/score -d '{"samples": [{"data_source": "openai/gsm8k",
       "solution_str": "#### 72", "ground_truth": "72"}]}'

Endpoints: GET /healthz /readyz /metrics /v1/info; POST /v1/score /openrlhf /slime
/nemo_gym/verify /seed_session. With --tasks, the Open Reward Standard's routes too
(an environment named after the reward, tool submit(answer); its base URL is
/v1/info's ors_url). With a token (VERL_REWARDS_TOKEN or --token-file) every endpoint
but /healthz and /health needs `Authorization: Bearer TOKEN`, `X-API-Key: TOKEN` or
?token=TOKEN.
Listening beyond loopback without a token is refused (exit 2), and so is
reward.executor=local without --dev; an address that cannot be bound exits 1.
SIGTERM or Ctrl-C: stop accepting, finish in-flight requests, close the pool,
exit 0. See docs/serve.md."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments (their defaults are :class:`ServeSettings`')."""
    from ..serve.settings import MIB, ServeSettings

    d = ServeSettings()
    parser.add_argument("--host", default=d.host, help=f"address to listen on (default {d.host})")
    parser.add_argument("--port", type=_port, default=d.port,
                        help=f"port (default {d.port}; 0 picks a free one and prints it)")
    parser.add_argument("-c", "--config", type=Path, metavar="FILE.yaml",
                        help="YAML config: a trainer config with a `reward:` section, or a bare one")
    parser.add_argument("--token-file", type=Path, metavar="FILE",
                        help="read the token from FILE (else VERL_REWARDS_TOKEN)")
    parser.add_argument("--max-body-mb", type=float, default=d.max_body_bytes / MIB, metavar="MB",
                        help=f"largest request body (413 past it; default {d.max_body_bytes / MIB:g})")
    parser.add_argument("--max-samples", type=positive_int, default=d.max_samples, metavar="N",
                        help=f"most samples in one request (413 past it; default {d.max_samples})")
    parser.add_argument("--max-queue", type=positive_int, default=d.max_queue, metavar="N",
                        help=f"most samples waiting or scoring (429 past it; default {d.max_queue})")
    parser.add_argument("--max-queue-mb", type=float, default=d.max_queue_bytes / MIB, metavar="MB",
                        help=f"most request bytes being read, waiting or scoring (429 past it; the "
                             f"server holds 1.5-7x this in memory; default {d.max_queue_bytes / MIB:g})")
    parser.add_argument("--max-batch", type=positive_int, default=d.max_batch, metavar="N",
                        help=f"most samples per pool batch (default {d.max_batch})")
    parser.add_argument("--drain-timeout", type=float, default=d.drain_timeout_s, metavar="S",
                        help=f"on SIGTERM, how long in-flight requests may still take "
                             f"(default {d.drain_timeout_s:g})")
    parser.add_argument("--shared-pool", action="store_true",
                        help="score on the Ray cluster's shared pool for this reward (sets "
                             "reward.share_pool=cluster): every serve front end joined to the "
                             "cluster with the same reward section uses one pool")
    parser.add_argument("--data-source", metavar="NAME",
                        help="data_source of samples from protocols that carry none (default: "
                             "openrlhf, slime, nemo_gym)")
    parser.add_argument("--tasks", action="append", metavar="[SPLIT=]FILE", default=[],
                        help="also serve the reward as an Open Reward Standard environment whose "
                             "tasks are FILE's rows (JSONL or Parquet: data_source, prompt, "
                             "ground_truth or verl's reward_model.ground_truth, extra_info); a bare "
                             "FILE is split train; repeat for more splits (needs verl-rewards[ors])")
    parser.add_argument("--max-sessions", type=positive_int, default=d.max_sessions, metavar="N",
                        help=f"most Open Reward Standard sessions open at once (429 past it; "
                             f"default {d.max_sessions})")
    parser.add_argument("--dev", action="store_true",
                        help="development mode: allow reward.executor=local, which scores in the "
                             "server process (a reward stuck in C blocks every request; a crash "
                             "ends the service)")
    parser.add_argument("overrides", nargs="*", metavar="reward.KEY=VALUE",
                        help="config overrides, e.g. reward.plugin=gsm8k reward.num_workers=4")


def run(args: argparse.Namespace) -> int:
    """Validate the config and the bind, then serve until SIGTERM."""
    _require_serve_extra()
    from ..serve.auth import check_bind, load_token
    from ..serve.runner import print_line, serve
    from ..serve.settings import MIB, ServeSettings
    from .reward_section import scorer_from_args

    # Ray's C++ failure-signal handler would turn SIGTERM into an abort after our
    # drain (exit 134 instead of 0); the drain is this process's SIGTERM handling.
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
    token = load_token(args.token_file)
    check_bind(args.host, token)
    # --shared-pool is reward.share_pool=cluster: one pool per Ray cluster for this section
    overrides = [*args.overrides, "reward.share_pool=cluster"] if args.shared_pool else args.overrides
    settings = ServeSettings(
        host=args.host, port=args.port, token=token,
        max_body_bytes=int(args.max_body_mb * MIB), max_samples=args.max_samples,
        max_queue=args.max_queue, max_queue_bytes=int(args.max_queue_mb * MIB),
        max_batch=args.max_batch, drain_timeout_s=args.drain_timeout,
        data_source=args.data_source, dev=args.dev, max_sessions=args.max_sessions,
    )
    tasks = load_tasks(args.tasks) if args.tasks else None
    scorer = scorer_from_args(args.config, overrides)  # validated and inspected, nothing started
    return serve(settings, scorer, print_line, tasks)


def load_tasks(options: Sequence[str]) -> TaskSet:
    """The tasks ``--tasks`` names, by split (each file read with ``score``'s row readers);
    a usage error names the option, file and row at fault."""
    _require_ors_extra()
    from ..serve.ors.tasks import TaskSet, parse_tasks_option
    from .errors import UsageError

    splits: dict[str, tuple[Any, ...]] = {}
    for text in options:
        try:
            split, path = parse_tasks_option(text)
        except ValueError as e:
            raise UsageError(str(e)) from None
        if split in splits:
            raise UsageError(f"--tasks {text}: split {split!r} is given twice; one file per split")
        splits[split] = _read_tasks(text, path)
    return TaskSet(splits)


def _read_tasks(option: str, path: Path) -> tuple[Any, ...]:
    from ..serve.ors.tasks import task_from_row
    from .errors import InputError
    from .rowbase import label
    from .rowio import read_batches

    tasks = []
    for batch in read_batches(path, 1024):
        for row, where in zip(batch.rows, batch.where):
            try:
                tasks.append(task_from_row(row))
            except ValueError as e:
                raise InputError(f"--tasks {option}: {label(path, 'input')}, {where}: {e}") from None
    if not tasks:
        raise InputError(f"--tasks {option}: {label(path, 'input')} holds no rows: a split needs tasks")
    return tuple(tasks)


def _require_ors_extra() -> None:
    """--tasks needs the openreward package: say how to get it."""
    from .errors import UsageError

    # openreward logs every tool call (and a raise with its traceback) to stdout, read from
    # this at import: the service's own log and metrics say what happened.
    os.environ.setdefault("OPENREWARD_LOG_LEVEL", "CRITICAL")
    try:
        import openreward.environments  # noqa: F401
    except ImportError as e:
        raise UsageError(f"verl-rewards serve --tasks needs the openreward package ({e}): "
                         f"pip install 'verl-rewards[serve,ors]' (Python 3.11 or later; from a "
                         f"checkout: pip install -e '.[serve,ors]')") from e


def _require_serve_extra() -> None:
    """The service's dependencies are an extra: say how to get them."""
    from .errors import UsageError

    try:
        import aiohttp  # noqa: F401
        import prometheus_client  # noqa: F401
    except ImportError as e:
        raise UsageError(f"verl-rewards serve needs aiohttp and prometheus_client ({e}): "
                         f"pip install 'verl-rewards[serve]' (from a checkout: pip install -e '.[serve]')") from e


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}")
    return value
