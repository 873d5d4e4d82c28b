"""Quiet Ray's start-up: what the CLI and the reference trainer share. Imports no Ray."""

from __future__ import annotations

import os
import sys


def quiet_ray_startup() -> None:
    """Hide Ray's INFO/WARNING start-up lines, which are noise on a program's stderr.

    ``ray.init`` takes its logger's level from ``RAY_LOGGER_LEVEL`` as read when
    ray is imported, so this must run before anything imports ray; a value the
    user set wins (``RAY_LOGGER_LEVEL=info`` shows them again).
    """
    if "ray" not in sys.modules:
        os.environ.setdefault("RAY_LOGGER_LEVEL", "error")
