"""Executors score a batch of samples: ``local`` in-process, ``ray`` on actors.

Only this package knows Ray, and only :mod:`.ray_pool` imports it.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from ..config import RewardConfig
from ..outcomes import Outcome
from ..samples import Sample
from ..spec import RewardSpec


class Executor(Protocol):
    """Scores batches for one reward; started once, closed once."""

    def start(self) -> None:
        """Acquire resources (workers); resolve the reward where it will run."""

    def run(self, samples: Sequence[Sample], stop_on_error: bool) -> tuple[list[Outcome], dict[str, float]]:
        """Score ``samples`` in order; return outcomes and executor metrics."""

    def close(self) -> None:
        """Release every resource ``start`` acquired."""


def make_executor(spec: RewardSpec, config: RewardConfig) -> Executor:
    """The executor ``config.executor`` names (a service's, with ``remote_url``), not yet started."""
    if config.remote_url:
        from ..remote import RemoteExecutor

        return RemoteExecutor(spec, config)
    if config.executor == "local":
        from .local import LocalExecutor

        return LocalExecutor(spec, config)
    from .ray_pool import RayExecutor

    return RayExecutor(spec, config)
