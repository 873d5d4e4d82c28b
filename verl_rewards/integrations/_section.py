"""What the verifiers, SkyRL, AReaL and slime adapters share: the reward section
they are given (a plugin name, a mapping, or the environment), one scorer per
section and process, and the per-sample view of a batch result."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from typing import Any, NamedTuple

from ..errors import ConfigError
from ..hosts import check_skip
from ..parsing import json_value
from ..results import BatchResult
from ..scorer import Scorer
from ._common import ProcessCache, scorer_from_section, selection_key, to_container

PLUGIN_ENV = "VERL_REWARDS_PLUGIN"
KWARGS_ENV = "VERL_REWARDS_KWARGS"
CONFIG_ENV = "VERL_REWARDS_CONFIG"

Reward = str | Mapping[str, Any]  # a plugin name (or dist:name), or a whole reward section

_scorers: ProcessCache[Scorer] = ProcessCache()
_env_sections: ProcessCache[dict[str, Any]] = ProcessCache()


class SampleResult(NamedTuple):
    """One sample's share of a :class:`BatchResult`."""

    score: float
    status: str  # "ok", "failed" or "timeout"
    error: str | None
    extra: dict[str, Any]  # the reward's extra keys for this sample (None values dropped)


def section_of(reward: Reward, options: Mapping[str, Any]) -> dict[str, Any]:
    """The reward section for a plugin name or a section, with ``options`` on top."""
    if isinstance(reward, str):
        if not reward.strip():
            raise ConfigError("the reward must be a plugin name (see `verl-rewards list`) or a "
                              "reward section mapping, not an empty string")
        return {"plugin": reward, **to_container(options)}
    if isinstance(reward, Mapping):
        return {**to_container(reward), **to_container(options)}
    raise ConfigError(f"the reward must be a plugin name or a reward section mapping, "
                      f"not {type(reward).__name__} {reward!r:.80}")


def section_from_env(env: Mapping[str, str] | None = None) -> dict[str, Any]:
    """The reward section ``VERL_REWARDS_PLUGIN`` (with ``VERL_REWARDS_KWARGS``, a JSON
    object) or ``VERL_REWARDS_CONFIG`` (a JSON object, or a YAML file) selects."""
    env = os.environ if env is None else env
    plugin = env.get(PLUGIN_ENV, "").strip()
    config = env.get(CONFIG_ENV, "").strip()
    if bool(plugin) == bool(config):
        raise ConfigError(
            f"verl-rewards needs exactly one of {PLUGIN_ENV} (an installed plugin name, see "
            f"`verl-rewards list`) or {CONFIG_ENV} (a reward section: a JSON object or a YAML "
            f"file) in the environment; {'both are' if plugin else 'neither is'} set"
        )
    if plugin:
        return {"plugin": plugin, "kwargs": _json_object(env.get(KWARGS_ENV, ""), KWARGS_ENV)}
    if env.get(KWARGS_ENV, "").strip():
        raise ConfigError(f"{KWARGS_ENV} goes with {PLUGIN_ENV}; with {CONFIG_ENV} put "
                          f"kwargs in the section")
    if config.startswith("{"):
        return _json_object(config, CONFIG_ENV)
    from ..config import read_section

    # The file's own keys only: a key it leaves out keeps the adapters' default
    # (executor: process), not the trainer's (executor: ray).
    return read_section(config)  # a YAML file (a whole trainer config's `reward:` too)


def env_section() -> dict[str, Any]:
    """:func:`section_from_env` for this process's environment, parsed once per value."""
    key = tuple(os.environ.get(name) for name in (PLUGIN_ENV, KWARGS_ENV, CONFIG_ENV))
    return _env_sections.get(key, section_from_env)


def scorer_for(section: Mapping[str, Any], host: str) -> Scorer:
    """The started scorer for ``section`` in this process (built on first use); a
    :class:`ConfigError` first when ``host`` refuses the section's ``on_error``
    (``hosts.py``)."""
    check_skip(host, str(section.get("on_error", "score")))
    return _scorers.get(selection_key(section), lambda: scorer_from_section(section))


def reward_name(scorer: Scorer) -> str:
    """The name a host shows for the reward: the plugin's, or ``composite``."""
    return str(getattr(scorer.ref, "name", "composite"))


def sample_result(result: BatchResult, index: int) -> SampleResult:
    """Sample ``index`` of ``result``."""
    extra = {k: v[index] for k, v in result.extra_info.items() if v[index] is not None}
    return SampleResult(result.scores[index], result.statuses[index], result.errors[index], extra)


def numeric(extra: Mapping[str, Any]) -> dict[str, float]:
    """The finite numbers (and booleans) among ``extra``: what hosts that log floats can log."""
    values: dict[str, float] = {}
    for key, value in extra.items():
        if isinstance(value, (bool, int, float)) and math.isfinite(float(value)):
            values[key] = float(value)
    return values


def _json_object(text: str, name: str) -> dict[str, Any]:
    return json_value(text, name, dict, ConfigError) if text.strip() else {}
