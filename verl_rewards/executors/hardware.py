"""What each reward worker asks Ray for: CPUs, GPUs (fractional allowed) and
custom resources, from ``reward.*`` keys, else the plugin's ``@reward(num_gpus=...)``.

Pure functions, no Ray: :mod:`.ray_pool` turns the request into actor options
and checks it against the cluster before starting workers, so an impossible
request is a clear error at start, not an actor that waits forever.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping

from ..config import RewardConfig
from ..reference import RewardRef

log = logging.getLogger(__name__)


def worker_options(refs: tuple[RewardRef, ...], config: RewardConfig) -> dict[str, object]:
    """Ray actor options for one reward worker (besides ``max_concurrency``)."""
    options: dict[str, object] = {"num_cpus": config.worker_num_cpus}
    gpus = config.worker_num_gpus if config.worker_num_gpus is not None else declared_num_gpus(refs)
    if gpus:
        options["num_gpus"] = gpus
    if config.worker_resources:
        options["resources"] = dict(config.worker_resources)
    return options


def declared_num_gpus(refs: tuple[RewardRef, ...]) -> float:
    """The most GPUs any plugin among ``refs`` declares (``@reward(num_gpus=...)``), else 0.

    Imports each plugin's module in this (the driver's) process to read its
    metadata; a file reward is not executed here, and a plugin that cannot be
    imported here declares nothing (its workers report the import error).
    """
    from ..metadata import metadata_of
    from ..resolve import import_target

    most = 0.0
    for ref in refs:
        if ref.kind != "plugin":
            continue
        try:
            declared = metadata_of(import_target(ref)).num_gpus
        except Exception as e:  # reported by the workers, which must import it
            log.debug("reading %s's declared num_gpus: %s", ref.display_name, e)
            continue
        most = max(most, declared or 0.0)
    return most


def shortfall(
    options: Mapping[str, object], num_workers: int, cluster: Mapping[str, float]
) -> list[str]:
    """Each resource the pool needs beyond what the whole cluster has, as text."""
    wanted: dict[str, float] = {}
    if options.get("num_cpus"):
        wanted["CPU"] = float(options["num_cpus"])  # type: ignore[arg-type]
    if options.get("num_gpus"):
        wanted["GPU"] = float(options["num_gpus"])  # type: ignore[arg-type]
    resources = options.get("resources") or {}
    assert isinstance(resources, Mapping)
    wanted.update({str(k): float(v) for k, v in resources.items() if v})
    return [
        f"{num_workers} worker(s) x {amount:g} {name} = {num_workers * amount:g} "
        f"but the cluster has {cluster.get(name, 0.0):g}"
        for name, amount in wanted.items()
        if cluster.get(name, 0.0) + 1e-9 < num_workers * amount
    ]
