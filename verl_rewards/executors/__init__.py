"""Executors score a batch of samples: ``local`` in-process, ``process`` on local
worker processes, ``ray`` on actors, a shared pool's client (``share_pool``), or a
service (``remote_url``).

Only this package knows Ray (``ray_*.py`` and ``shared_pool.py`` import it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from .._inspect import RewardInfo
from ..config import RewardConfig
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec

POOL_HOST_RESTARTS = "pool_host_restarts"  # a batch's metric: its shared pool's host died and was created again


class Executor(Protocol):
    """Scores batches for one reward; started once, closed once."""

    def start(self) -> None:
        """Acquire resources (workers); resolve the reward where it will run."""

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` in order; return outcomes and executor metrics."""

    def close(self) -> None:
        """Release every resource ``start`` acquired."""


def make_executor(spec: RewardSpec, config: RewardConfig, info: RewardInfo) -> Executor:
    """The executor ``config.executor`` names, not yet started (``info``: what the
    driver read about the reward, e.g. its declared GPUs)."""
    if config.remote_url:
        from ..remote import RemoteExecutor

        return RemoteExecutor(spec, config)
    if config.executor == "local":
        from .local import LocalExecutor

        return LocalExecutor(spec, config)
    if config.executor == "process":
        from .process_pool import ProcessExecutor

        return ProcessExecutor(spec, config)
    if config.share_pool:
        from .shared_pool import SharedPoolExecutor

        return SharedPoolExecutor(spec, config, info)
    from .ray_pool import RayExecutor

    return RayExecutor(spec, config, info)
