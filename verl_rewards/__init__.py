"""verl-rewards: reward functions for LLM RL as installable plugins.

Rewards are entry points in group ``verl_rewards``; processes exchange a
small picklable :class:`RewardRef` and resolve it themselves.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ._inspect import RewardInfo
    from .config import RewardConfig, load_config
    from .discovery import PluginRecord, find_plugins
    from .errors import (
        AmbiguousPluginError,
        ConfigError,
        PluginLoadError,
        PluginNotFoundError,
        RewardError,
        RewardValueError,
        VerlRewardsError,
    )
    from .limits import time_left
    from .metadata import Example, RewardMeta, reward
    from .reference import RewardRef
    from .remote import RemoteScorer
    from .results import BatchResult, Provenance
    from .samples import Sample
    from .scorer import Scorer

    __version__: str

# Public names are imported on first use (PEP 562): `verl-rewards list`, the
# pytest plugin and a plugin importing `reward` then load only what they use
# (importing every submodule costs more than the entry-point scan `list` does).
_EXPORTS: dict[str, str] = {
    "RewardInfo": "_inspect",
    "RewardConfig": "config", "load_config": "config",
    "PluginRecord": "discovery", "find_plugins": "discovery",
    "AmbiguousPluginError": "errors", "ConfigError": "errors", "PluginLoadError": "errors",
    "PluginNotFoundError": "errors", "RewardError": "errors", "RewardValueError": "errors",
    "VerlRewardsError": "errors",
    "time_left": "limits",
    "Example": "metadata", "RewardMeta": "metadata", "reward": "metadata",
    "RewardRef": "reference",
    "RemoteScorer": "remote",
    "BatchResult": "results", "Provenance": "results",
    "Sample": "samples",
    "Scorer": "scorer",
}


def __getattr__(name: str) -> Any:
    if name in _EXPORTS:
        value = getattr(importlib.import_module(f".{_EXPORTS[name]}", __name__), name)
    elif name == "__version__":
        value = _version()
    else:  # a submodule not imported yet, as an eager package would have it
        try:
            value = importlib.import_module(f".{name}", __name__)
        except ModuleNotFoundError as e:
            if e.name != f"{__name__}.{name}":
                raise
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("verl-rewards")
    except metadata.PackageNotFoundError:  # running from a source tree
        return "0+unknown"


__all__ = [
    "AmbiguousPluginError",
    "BatchResult",
    "ConfigError",
    "Example",
    "PluginLoadError",
    "PluginNotFoundError",
    "PluginRecord",
    "Provenance",
    "RemoteScorer",
    "RewardConfig",
    "RewardError",
    "RewardInfo",
    "RewardMeta",
    "RewardRef",
    "RewardValueError",
    "Sample",
    "Scorer",
    "VerlRewardsError",
    "__version__",
    "find_plugins",
    "load_config",
    "reward",
    "time_left",
]
