"""What each reward worker asks Ray for: CPUs, GPUs (fractional allowed) and
custom resources, from ``reward.*`` keys, else the plugin's ``@reward(num_gpus=...)``.

Pure functions, no Ray: :mod:`.ray_pool` (and the verl manager, when it is
built) check the request against the cluster before starting workers, so an
impossible request is a clear error at start, not an actor that waits forever.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..config import RewardConfig


def worker_options(config: RewardConfig, declared_num_gpus: float = 0.0) -> dict[str, object]:
    """Ray actor options for one reward worker (besides ``max_concurrency``);
    ``declared_num_gpus``: the most any of its rewards declares (``RewardInfo.num_gpus``)."""
    options: dict[str, object] = {"num_cpus": config.worker_num_cpus}
    gpus = config.worker_num_gpus if config.worker_num_gpus is not None else declared_num_gpus
    if gpus:
        options["num_gpus"] = gpus
    if config.worker_resources:
        options["resources"] = dict(config.worker_resources)
    return options


def unplaceable(
    options: Mapping[str, object], config: RewardConfig, cluster: Mapping[str, float],
    prefix: str = "reward.",
) -> str | None:
    """Why the cluster can never place the pool (naming the keys to change, under
    ``prefix``), or None when it can."""
    missing = shortfall(options, config.num_workers, cluster)
    if not missing:
        return None
    return (f"{'; '.join(missing)}. Lower {prefix}num_workers, {prefix}worker_num_cpus, "
            f"{prefix}worker_num_gpus or {prefix}worker_resources, or start Ray with those "
            f"resources (ray start --num-cpus N --num-gpus N --resources '{{...}}')")


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
