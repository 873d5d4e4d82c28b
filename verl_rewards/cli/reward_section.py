"""The reward section a command line selects (``-c FILE`` and ``reward.*`` overrides),
built into a :class:`~verl_rewards.Scorer` once; shared by ``score`` and ``serve``."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from ..scorer import Scorer


def scorer_from_args(config: Path | None, overrides: Sequence[str]) -> Scorer:
    """The scorer the config selects; a config error says whether the file or the
    overrides brought it."""
    from ..config import read_section
    from ..errors import ConfigError
    from ..scorer import Scorer

    if config is not None:
        read_section(config)  # the file's own errors (missing, unparsable, no mapping) name it
    try:
        return Scorer.from_config(config, overrides)
    except ConfigError as e:
        if config is None:
            raise
        raise ConfigError(f"{e} ({_source_of(e, config, overrides)}{_section_hint(config)})") from e


def _source_of(error: Exception, config: Path, overrides: Sequence[str]) -> str:
    """Whether ``config`` alone has ``error`` (there are no overrides, or the file
    alone fails the same way), or the overrides brought it."""
    from ..errors import ConfigError
    from ..scorer import Scorer

    if not overrides:
        return f"in config file {config}"
    try:
        Scorer.from_config(config)  # validates and inspects; starts nothing
    except ConfigError as alone:
        if str(alone) == str(error):
            return f"in config file {config}"
    except Exception:  # noqa: BLE001 - only to say where; the error itself is known
        pass
    return f"from the overrides on config file {config}"


def _section_hint(config: Path) -> str:
    """A top-level ``rewards:`` holding one reward's keys is a typo for ``reward:``."""
    import dataclasses

    import yaml

    from ..config import RewardConfig

    try:
        data = yaml.safe_load(config.read_text(encoding="utf-8"))
    except Exception:  # noqa: BLE001 - only a hint; the error itself is already known
        return ""
    rewards = data.get("rewards") if isinstance(data, dict) and "reward" not in data else None
    keys = {f.name for f in dataclasses.fields(RewardConfig)}
    if isinstance(rewards, dict) and set(rewards) & keys - {"rewards"}:
        return "; its top-level `rewards:` holds one reward's keys: did you mean `reward:`?"
    return ""
