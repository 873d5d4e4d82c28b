"""Check a reward spec in the process that reads the config, before any worker starts.

Each reward whose plugin imports here is imported (never instantiated or
called) and its ``reward.kwargs`` are checked against its signature, so a
misspelt key is a config error naming the accepted keys, not a failure on a
worker after Ray started. A plugin that cannot be imported here (not
installed in a driver that only submits to a cluster, or missing a dependency
only the workers have) is left to the workers.
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from .errors import PluginLoadError, PluginNotInstalledError, RewardKwargsError
from .resolve import BATCH_PARAMS, SAMPLE_PARAMS, import_target

if TYPE_CHECKING:
    from .reference import RewardRef
    from .spec import RewardSpec


def preflight(spec: RewardSpec) -> None:
    """Import each reward of ``spec`` here when its plugin is installed and check its kwargs.

    Raises :class:`RewardKwargsError` (a config error) for kwargs the reward
    does not accept, and :class:`~verl_rewards.errors.PluginLoadError` for a
    plugin whose import fails for a reason other than a missing module.
    """
    from .spec import CompositeRef

    if isinstance(spec, CompositeRef):
        for component in spec.components:
            check_ref(component.ref, f"reward.rewards.{component.key}.kwargs")
    else:
        check_ref(spec)


def check_ref(ref: RewardRef, key: str = "reward.kwargs") -> None:
    """Check one reference's kwargs against its target's signature (import only)."""
    try:
        target = import_target(ref)
    except PluginNotInstalledError:
        return
    except PluginLoadError as e:
        if isinstance(e.cause, ImportError):  # the workers' environment may have it
            return
        raise
    unknown, accepted = unaccepted_kwargs(target, ref.kwargs)
    if unknown:
        listing = ", ".join(accepted) if accepted else "none"
        raise RewardKwargsError(
            f"{key} {', '.join(repr(k) for k in unknown)} not accepted by reward "
            f"{ref.display_name}; it accepts: {listing}"
        )


def unaccepted_kwargs(target: object, kwargs: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The keys of ``kwargs`` that ``target`` cannot take, and the keys it can."""
    try:
        signature = inspect.signature(target)  # type: ignore[arg-type]
    except (TypeError, ValueError):
        return [], []  # not inspectable: the workers' load reports it
    params = signature.parameters.values()
    if any(p.kind is p.VAR_KEYWORD for p in params):
        return [], ["any key"]
    fields = () if inspect.isclass(target) else (*SAMPLE_PARAMS, *BATCH_PARAMS, "prompt", "prompts")
    accepted = [
        p.name for p in params
        if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and p.name not in fields
    ]
    return sorted(k for k in kwargs if k not in accepted), accepted
