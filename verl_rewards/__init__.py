"""verl-rewards: reward functions for LLM RL as installable plugins.

Rewards are entry points in group ``verl_rewards``; processes exchange a
small picklable :class:`RewardRef` and resolve it themselves.
"""

from __future__ import annotations

from importlib import metadata as _metadata

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
from .metadata import Example, RewardMeta, reward
from .reference import RewardRef
from .results import BatchResult, Provenance
from .samples import Sample
from .scorer import Scorer

try:
    __version__ = _metadata.version("verl-rewards")
except _metadata.PackageNotFoundError:  # running from a source tree
    __version__ = "0+unknown"

__all__ = [
    "AmbiguousPluginError",
    "BatchResult",
    "ConfigError",
    "Example",
    "PluginLoadError",
    "PluginNotFoundError",
    "PluginRecord",
    "Provenance",
    "RewardConfig",
    "RewardError",
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
]
