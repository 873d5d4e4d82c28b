"""OpenRLHF reward file: ``--reward.remote_url`` pointing here scores with a plugin.

.. code-block:: bash

    export VERL_REWARDS_PLUGIN=gsm8k                       # name or dist:name
    export VERL_REWARDS_KWARGS='{"method": "flexible"}'    # optional, a JSON object
    python -m openrlhf.cli.train_ppo_ray ... --data.label_key answer \\
        --reward.remote_url "$(python -c 'import verl_rewards.integrations.openrlhf_reward as m; print(m.__file__)')"

``VERL_REWARDS_CONFIG`` (a YAML file, or an inline JSON object) gives a whole
reward section instead: a reward file (``path``/``name``), several weighted
rewards (``rewards``/``route``), and options such as ``timeout_s``.

OpenRLHF (0.11) loads this file by path in each rollout actor, and the
settings are validated right then: a misspelled plugin fails the load, not
every sample. It calls ``reward_func(queries, prompts, labels)``: ``queries`` are prompt + response decoded with special tokens,
``prompts`` the prompts, ``labels`` the ``--data.label_key`` values. The response is
the query after its prompt, with trailing end-of-sequence markers removed; the
label is the ground truth. The result is OpenRLHF's dict of 1-D float tensors:
``rewards``, ``scores`` (the same values) and ``extra_logs``.

Other settings (environment): ``VERL_REWARDS_DATA_SOURCE`` (default
``openrlhf``), ``VERL_REWARDS_TIMEOUT_S`` (default: the plugin's declared
timeout, else 30; ``none`` for no limit),
``VERL_REWARDS_ON_ERROR`` (``score``/``raise``; ``skip`` is refused: see ``docs/skip.md``), ``VERL_REWARDS_ERROR_SCORE``
(default 0.0), ``VERL_REWARDS_STRIP`` (JSON list of suffixes to strip from
responses), ``VERL_REWARDS_LOG_KEYS`` (JSON list of the plugin's extra keys to
log). ``TIMEOUT_S``, ``ON_ERROR`` and ``ERROR_SCORE`` are overrides of the section's keys
(:data:`ENV_OPTIONS`), which ``load_config`` parses and checks. See
``docs/integrations/openrlhf.md``.
"""

from __future__ import annotations

import copy
import math
import os
from collections.abc import Mapping, Sequence
from typing import Any, NamedTuple

# Absolute imports: OpenRLHF loads this file by path, outside its package.
from verl_rewards.config import RewardConfig
from verl_rewards.errors import ConfigError, ConfigValueError
from verl_rewards.hosts import check_skip
from verl_rewards.integrations._common import (
    ADAPTER_DEFAULTS,
    ProcessCache,
    score_batch,
    started,
)
from verl_rewards.integrations._section import CONFIG_ENV, KWARGS_ENV, PLUGIN_ENV, section_from_env
from verl_rewards.parsing import json_value
from verl_rewards.results import BatchResult
from verl_rewards.samples import (
    DEFAULT_STRIP,
    OPENRLHF_DATA_SOURCE,
    STRIP_ENV,
    OpenRLHFBatching,
    Sample,
    openrlhf_samples,
    response_of,
    strip_from_env,
    strip_suffixes,
)
from verl_rewards.scorer import Scorer

__all__ = [
    "DEFAULT_STRIP",
    "ENV_OPTIONS",
    "ENV_VARS",
    "EnvOption",
    "Settings",
    "load_settings",
    "overrides_from_env",
    "prepare",
    "response_of",
    "reward_func",
    "samples_for",
    "score_queries",
    "strip_suffixes",
]



class EnvOption(NamedTuple):
    """A variable that sets one key of the reward section: a dotlist override that
    ``load_config`` parses and checks, as ``reward.KEY=VALUE`` on a command line."""

    key: str
    says: str  # what the variable takes, in the variable's own spelling
    null: tuple[str, ...] = ()  # its words for null


ENV_OPTIONS: Mapping[str, EnvOption] = {
    "VERL_REWARDS_TIMEOUT_S": EnvOption("timeout_s", "seconds or 'none' (no limit), or 'auto'",
                                        null=("none", "")),
    "VERL_REWARDS_ON_ERROR": EnvOption("on_error", "'score' or 'raise'"),
    "VERL_REWARDS_ERROR_SCORE": EnvOption("error_score", "a number"),
}

ENV_VARS = (
    PLUGIN_ENV, CONFIG_ENV, KWARGS_ENV, "VERL_REWARDS_DATA_SOURCE", *ENV_OPTIONS,
    STRIP_ENV, "VERL_REWARDS_LOG_KEYS",
)

_CLUSTER_HINT = (
    "OpenRLHF loads this file in its rollout actors: on a Ray cluster pass the variables to "
    "every worker with --runtime-env-json='{\"env_vars\": {\"VERL_REWARDS_PLUGIN\": \"...\"}}'")

# Read when this file is loaded: in each rollout actor by OpenRLHF 0.11; in the
# driver by older releases, which ship reward_func to their Ray workers by value,
# so these settings travel with it to a worker whose environment lacks them.
_LOADED_ENV = {name: os.environ[name] for name in ENV_VARS if name in os.environ}


def reward_func(queries: list[str], prompts: list[str], labels: list[Any],
                **kwargs: Any) -> dict[str, Any]:
    """OpenRLHF's custom reward function, delegating to a verl-rewards plugin."""
    # By the real module name: OpenRLHF loaded *this* copy as "reward_func", and
    # the resolved plugin must be cached in one real, importable module.
    from verl_rewards.integrations.openrlhf_reward import score_queries

    return score_queries(queries, prompts, labels, defaults=_LOADED_ENV)


class Settings(NamedTuple):
    """The environment's choice of reward and policy, validated."""

    config: RewardConfig  # the validated reward section (plugin, path or rewards, and options)
    batching: OpenRLHFBatching  # the data source and the end markers stripped
    log_keys: tuple[str, ...]


_settings: ProcessCache[tuple[Settings, Scorer]] = ProcessCache()


def score_queries(
    queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any],
    defaults: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Score OpenRLHF queries with the plugin the environment selects.

    ``defaults`` fill settings missing from this process's environment.
    """
    settings, scorer = prepare(defaults)
    samples = samples_for(queries, prompts, labels, settings)
    return _openrlhf_result(score_batch(scorer, samples), settings.log_keys)


def samples_for(queries: Sequence[str], prompts: Sequence[str], labels: Sequence[Any],
                settings: Settings) -> list[Sample]:
    """The samples of one OpenRLHF call (serve's ``/openrlhf`` builds the same)."""
    if not (len(queries) == len(prompts) == len(labels)):
        raise ValueError(f"reward_func got {len(queries)} queries, {len(prompts)} prompts "
                         f"and {len(labels)} labels; expected one of each per sample")
    return openrlhf_samples(queries, prompts, labels, settings.batching)


def prepare(defaults: Mapping[str, str] | None = None) -> tuple[Settings, Scorer]:
    """Validate this process's ``VERL_REWARDS_*`` settings and load the reward (once)."""
    env = {**(defaults or {}), **{k: os.environ[k] for k in ENV_VARS if k in os.environ}}
    return _settings.get(tuple(sorted(env.items())), lambda: _load(env))


def load_settings(env: Mapping[str, str]) -> tuple[Settings, Scorer]:
    """Validate the ``VERL_REWARDS_*`` settings in ``env`` and build (not start) the scorer."""
    try:
        section = section_from_env(env)
    except ConfigError as e:
        raise _located(e, _CLUSTER_HINT) from e
    try:
        scorer = Scorer.from_config(section, overrides_from_env(env), defaults=ADAPTER_DEFAULTS)
    except ConfigError as e:
        raise _located(e, _variable_at_fault(e, env)) from e
    check_skip("openrlhf", scorer.config.on_error)
    settings = Settings(
        config=scorer.config,
        batching=OpenRLHFBatching(env.get("VERL_REWARDS_DATA_SOURCE", OPENRLHF_DATA_SOURCE),
                                  strip_from_env(env)),
        log_keys=tuple(_log_keys(env.get("VERL_REWARDS_LOG_KEYS", ""))),
    )
    return settings, scorer


def _located(error: ConfigError, hint: str = "") -> ConfigError:
    """The same error type, saying where the setting came from."""
    located = copy.copy(error)
    located.args = (f"invalid VERL_REWARDS_* setting: {error}{f'. {hint}' if hint else ''}",)
    return located


def overrides_from_env(env: Mapping[str, str]) -> list[str]:
    """The dotlist overrides the :data:`ENV_OPTIONS` variables in ``env`` make
    (``VERL_REWARDS_TIMEOUT_S=none`` -> ``reward.timeout_s=null``)."""
    overrides = []
    for name, option in ENV_OPTIONS.items():
        if name in env:
            value = env[name].strip()
            overrides.append(f"reward.{option.key}={'null' if value.lower() in option.null else value}")
    return overrides


def _variable_at_fault(error: ConfigError, env: Mapping[str, str]) -> str:
    if isinstance(error, ConfigValueError):
        for name, option in ENV_OPTIONS.items():
            if option.key == error.key and name in env:
                return f"{name} must be {option.says}, not {env[name]!r}"
    return ""


def _log_keys(text: str) -> list[Any]:
    return json_value(text, "VERL_REWARDS_LOG_KEYS", list, ConfigError) if text.strip() else []


def _load(env: Mapping[str, str]) -> tuple[Settings, Scorer]:
    settings, scorer = load_settings(env)
    return settings, started(scorer)


def _openrlhf_result(result: BatchResult, log_keys: Sequence[str]) -> dict[str, Any]:
    import torch  # OpenRLHF runs on torch; verl-rewards itself does not need it

    rewards = torch.tensor(result.scores, dtype=torch.float32)
    # Fixed keys: OpenRLHF concatenates extra_logs across batches key by key.
    logs = {"reward_failed": torch.tensor([float(s != "ok") for s in result.statuses])}
    for key in log_keys:
        values = result.extra_info.get(key) or [None] * len(result)
        logs[key] = torch.tensor([_loggable(v) for v in values], dtype=torch.float32)
    return {"rewards": rewards, "scores": rewards.clone(), "extra_logs": logs}


def _loggable(value: Any) -> float:
    try:
        number = float(value)
    except (TypeError, ValueError):
        return 0.0
    return number if math.isfinite(number) else 0.0


# OpenRLHF loads this file by path (module name "reward_func") in each rollout
# actor: check the settings and load the reward now, so that a misspelled plugin
# fails the load instead of every sample (OpenRLHF logs and drops per-sample errors).
if __name__ != "verl_rewards.integrations.openrlhf_reward":
    from verl_rewards.integrations.openrlhf_reward import prepare as _prepare

    _prepare(_LOADED_ENV)
