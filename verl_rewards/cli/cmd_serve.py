"""``verl-rewards serve``: the reward service over HTTP."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from .argtypes import positive_int

NAME = "serve"
HELP = "Serve the reward a config selects over HTTP (native, OpenRLHF, slime, NeMo-Gym)."
EPILOG = """\
examples:
  verl-rewards serve reward.plugin=gsm8k reward.num_workers=4
  VERL_REWARDS_TOKEN=s3cret verl-rewards serve --host 0.0.0.0 --port 8000 -c reward.yaml
  curl -s localhost:8000/v1/score -d '{"samples": [{"data_source": "openai/gsm8k",
       "solution_str": "#### 72", "ground_truth": "72"}]}'

Endpoints: GET /healthz /readyz /metrics /v1/info; POST /v1/score /openrlhf /slime
/nemo_gym/verify /seed_session. With a token (VERL_REWARDS_TOKEN or --token-file)
every endpoint but /healthz needs `Authorization: Bearer TOKEN` or ?token=TOKEN.
Listening beyond loopback without a token is refused (exit 2). SIGTERM or
Ctrl-C: stop accepting, finish in-flight requests, close the pool, exit 0.
See docs/serve.md."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    from ..serve.settings import DEFAULT_PORT

    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    parser.add_argument("--port", type=_port, default=DEFAULT_PORT,
                        help=f"port (default {DEFAULT_PORT}; 0 picks a free one and prints it)")
    parser.add_argument("-c", "--config", type=Path, metavar="FILE.yaml",
                        help="YAML config: a trainer config with a `reward:` section, or a bare one")
    parser.add_argument("--token-file", type=Path, metavar="FILE",
                        help="read the token from FILE (else VERL_REWARDS_TOKEN)")
    parser.add_argument("--max-body-mb", type=float, default=16.0, metavar="MB",
                        help="largest request body (413 past it; default 16)")
    parser.add_argument("--max-samples", type=positive_int, default=4096, metavar="N",
                        help="most samples in one request (413 past it; default 4096)")
    parser.add_argument("--max-queue", type=positive_int, default=16384, metavar="N",
                        help="most samples waiting or scoring (429 past it; default 16384)")
    parser.add_argument("--max-batch", type=positive_int, default=4096, metavar="N",
                        help="most samples per pool batch (default 4096)")
    parser.add_argument("--drain-timeout", type=float, default=300.0, metavar="S",
                        help="on SIGTERM, how long in-flight requests may still take (default 300)")
    parser.add_argument("--shared-pool", action="store_true",
                        help="score on the Ray cluster's shared pool for this reward (sets "
                             "reward.share_pool=cluster): every serve front end joined to the "
                             "cluster with the same reward section uses one pool")
    parser.add_argument("--data-source", metavar="NAME",
                        help="data_source of samples from protocols that carry none (default: "
                             "openrlhf, slime, nemo_gym)")
    parser.add_argument("overrides", nargs="*", metavar="reward.KEY=VALUE",
                        help="config overrides, e.g. reward.plugin=gsm8k reward.num_workers=4")


def run(args: argparse.Namespace) -> int:
    """Validate the config and the bind, then serve until SIGTERM."""
    from ..serve.auth import check_bind, load_token
    from ..serve.runner import print_line, serve
    from ..serve.settings import ServeSettings
    from .cmd_score import _scorer
    from .errors import UsageError

    # Ray's C++ failure-signal handler would turn SIGTERM into an abort after our
    # drain (exit 134 instead of 0); the drain is this process's SIGTERM handling.
    os.environ.setdefault("RAY_DISABLE_FAILURE_SIGNAL_HANDLER", "1")
    token = load_token(args.token_file)
    check_bind(args.host, token)
    # --shared-pool is reward.share_pool=cluster: one pool per Ray cluster for this section
    overrides = [*args.overrides, "reward.share_pool=cluster"] if args.shared_pool else args.overrides
    scorer = _scorer(args.config, overrides)  # validated, nothing started
    if args.shared_pool and scorer.config.executor == "local":
        raise UsageError("--shared-pool needs reward.executor=ray (a local executor runs in "
                         "this process and cannot be shared)")
    settings = ServeSettings(
        host=args.host, port=args.port, token=token,
        max_body_bytes=int(args.max_body_mb * 1024 * 1024), max_samples=args.max_samples,
        max_queue=args.max_queue, max_batch=args.max_batch, drain_timeout_s=args.drain_timeout,
        data_source=args.data_source,
    )
    return serve(settings, scorer.ref, scorer.config, print_line)


def _port(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"expected a port number 0-65535, got {text!r}")
    return value
