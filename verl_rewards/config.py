"""The ``reward`` config section -> one validated, frozen :class:`RewardConfig`.

omegaconf parses and merges (dicts, YAML files, dotlists such as
``reward.plugin=gsm8k reward.kwargs.strict=true``); :func:`load_config` turns
the result into a plain dataclass, so no ``DictConfig`` travels deeper.
"""

from __future__ import annotations

import dataclasses
import difflib
import math
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, Union

from .errors import ConfigError, ConfigValueError, UnknownConfigKeyError
from .limits import AUTO, DEFAULT_TIMEOUT_S, Timeout

Executor = Literal["ray", "local", "process"]
EXECUTORS: tuple[str, ...] = ("ray", "local", "process")
OnError = Literal["score", "raise", "skip"]

ConfigSource = Union[Mapping[str, Any], str, "os.PathLike[str]", "RewardConfig", None]


COMPONENT_KEYS = ("plugin", "path", "name", "kwargs", "weight")


@dataclass(frozen=True)
class ComponentConfig:
    """One named, weighted reward of a composite (``reward.rewards.<name>``)."""

    key: str
    plugin: str | None = None
    path: str | None = None
    name: str = "compute_score"
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    weight: float = 1.0


Role = Literal["reward", "outcome", "run"]
PoolScope = Literal["job", "cluster"]

# Each field of RewardConfig has a role (its metadata["role"]):
#   reward   which reward, and what it computes for a sample. The same input under the same
#            reward fields gets the same score, wherever it runs: compared on --resume and
#            against a service's (remote_url), and part of spec.score_identity.
#   outcome  what a failed sample's result becomes. It decides a score too (compared on
#            --resume) but is applied by whoever assembles the batch, so a client of a service
#            or of a shared pool applies its own.
#   run      how and where the work runs; changing it never changes a score (a resume may
#            switch executor, workers or service).
REWARD: Mapping[str, Role] = {"role": "reward"}
OUTCOME: Mapping[str, Role] = {"role": "outcome"}
RUN: Mapping[str, Role] = {"role": "run"}


@dataclass(frozen=True)
class RewardConfig:
    """The validated ``reward`` section. See ``docs/composition.md`` for ``rewards``/``route``.

    Every field's ``metadata["role"]`` says whether it decides a score (see :func:`keys_with_role`).
    """

    plugin: str | None = field(default=None, metadata=REWARD)
    path: str | None = field(default=None, metadata=REWARD)
    name: str = field(default="compute_score", metadata=REWARD)
    kwargs: Mapping[str, Any] = field(default_factory=dict, metadata=REWARD)
    executor: Executor = field(default="ray", metadata=RUN)
    num_workers: int = field(default=2, metadata=RUN)
    # seconds per sample; null: no limit. A sample over it fails: it decides a score.
    timeout_s: Timeout = field(default=AUTO, metadata=REWARD)
    on_error: OnError = field(default="score", metadata=OUTCOME)
    error_score: float = field(default=0.0, metadata=OUTCOME)
    max_concurrency: int = field(default=32, metadata=RUN)
    chunk_size: int | None = field(default=None, metadata=RUN)
    max_sample_crashes: int = field(default=2, metadata=RUN)
    # ray: replace a worker past this memory, or after this many chunks (between chunks)
    worker_max_rss_mb: float | None = field(default=None, metadata=RUN)
    worker_max_calls: int | None = field(default=None, metadata=RUN)
    worker_num_cpus: float = field(default=1.0, metadata=RUN)
    # None: the plugin's @reward(num_gpus=...), else 0
    worker_num_gpus: float | None = field(default=None, metadata=RUN)
    worker_resources: Mapping[str, float] = field(default_factory=dict, metadata=RUN)  # custom Ray resources
    # None: the plugin's @reward(max_batch_size=...), else the chunk
    max_batch_size: int | None = field(default=None, metadata=RUN)
    ray_address: str | None = field(default=None, metadata=RUN)
    # score on a `verl-rewards serve` at this URL (see docs/serve.md)
    remote_url: str | None = field(default=None, metadata=RUN)
    ship_package: bool = field(default=False, metadata=RUN)
    # ray: the plugin imports only on the workers; the driver skips it
    workers_only: bool = field(default=False, metadata=RUN)
    # ray: one pool for every process of the Ray job ("job", or true) or of the whole cluster
    # ("cluster", what `serve --shared-pool` sets) with this reward and config
    share_pool: bool | PoolScope = field(default=False, metadata=RUN)
    # component name -> config; data_source (exact or glob) -> component names
    rewards: Mapping[str, ComponentConfig] | None = field(default=None, metadata=REWARD)
    route: Mapping[str, tuple[str, ...]] | None = field(default=None, metadata=REWARD)

    @property
    def components(self) -> tuple[ComponentConfig, ...]:
        """The validated components of a composite reward (empty for a single reward)."""
        return tuple(self.rewards.values()) if self.rewards else ()

    def as_section(self) -> dict[str, Any]:
        """Every key as a plain value: a section that loads back to this config."""
        plain = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        if self.rewards:
            plain["rewards"] = {
                k: {f.name: getattr(c, f.name) for f in dataclasses.fields(c) if f.name != "key"}
                for k, c in self.rewards.items()
            }
        if self.route:
            plain["route"] = {k: list(v) for k, v in self.route.items()}
        return plain


KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RewardConfig))


def keys_with_role(*roles: Role) -> tuple[str, ...]:
    """The :class:`RewardConfig` keys whose role is one of ``roles``, in field order.

    >>> keys_with_role("outcome")
    ('on_error', 'error_score')
    """
    return tuple(f.name for f in dataclasses.fields(RewardConfig) if f.metadata["role"] in roles)


# Choosing the reward: an override that sets one of these replaces the whole
# choice made by the source (a file's plugin, its rewards and their routes).
SELECTORS = ("plugin", "path", "rewards")


def load_config(
    source: ConfigSource = None, overrides: Sequence[str] = (),
    defaults: Mapping[str, Any] | None = None,
) -> RewardConfig:
    """Build a :class:`RewardConfig` from a mapping, omegaconf node or YAML file,
    then apply dotlist ``overrides`` (``reward.`` prefix optional). An override
    that chooses the reward (``plugin``, ``path`` or ``rewards``) replaces the
    source's choice, routes included. ``defaults`` (an adapter's
    ``executor: local``, say) fill the keys that neither the source nor the
    overrides set; a :class:`RewardConfig` source is already complete.

    >>> load_config({"plugin": "gsm8k"}, ["reward.kwargs.method=flexible"]).kwargs
    {'method': 'flexible'}
    """
    if isinstance(source, RewardConfig) and not overrides:
        return source
    if isinstance(source, Mapping) and not _is_omegaconf(source) and not overrides:
        # Plain values are taken as they are: no ${...} interpolation of, say,
        # a prompt template passed in kwargs by an adapter.
        section: Mapping[str, Any] = source
    else:
        section = _merged_section(source, overrides)
    if defaults and not isinstance(source, RewardConfig):
        section = {**defaults, **section}
    return _from_mapping(section)


def read_section(source: ConfigSource) -> dict[str, Any]:
    """The keys a source sets, as plain values, not yet validated (no defaults added)."""
    return _source_dict(source)


def _from_mapping(section: Mapping[str, Any]) -> RewardConfig:
    for key in section:
        if key not in KEYS:
            raise UnknownConfigKeyError(str(key), _closest(key, KEYS), KEYS)
    values = {k: v for k, v in section.items()}
    values["kwargs"] = _kwargs("reward.kwargs", values.get("kwargs"))
    if values.get("rewards") is not None:
        values["rewards"] = _components(values["rewards"])
    if values.get("route") is not None:
        values["route"] = _route(values["route"], values.get("rewards"))
    return _validated(RewardConfig(**values))


def _kwargs(where: str, value: Any) -> dict[str, Any]:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(f"{where} must be a mapping, not {type(value).__name__}")
    for key in value:
        if not isinstance(key, str) or not key.isidentifier():
            raise ConfigError(f"{where} key {key!r} is not a valid keyword argument name")
    return dict(value)


def _components(value: Any) -> dict[str, ComponentConfig]:
    if not isinstance(value, Mapping) or not value:
        raise ConfigError("reward.rewards must be a non-empty mapping of name -> {plugin|path, weight, kwargs}")
    components = {}
    for key, spec in value.items():
        where = f"reward.rewards.{key}"
        if not isinstance(spec, Mapping):
            raise ConfigError(f"{where} must be a mapping with plugin or path, not {spec!r}")
        for field_name in spec:
            if field_name not in COMPONENT_KEYS:
                raise UnknownConfigKeyError(
                    f"rewards.{key}.{field_name}", _closest(field_name, COMPONENT_KEYS), COMPONENT_KEYS
                )
        component = ComponentConfig(key=str(key), **{**spec, "kwargs": _kwargs(f"{where}.kwargs", spec.get("kwargs"))})
        if (component.plugin is None) == (component.path is None):
            raise ConfigError(f"{where} must set exactly one of plugin or path")
        _check_str(f"rewards.{key}.name", component.name)
        _check_number(f"rewards.{key}.weight", component.weight)
        components[str(key)] = component
    return components


def _route(value: Any, components: Mapping[str, ComponentConfig] | None) -> dict[str, tuple[str, ...]]:
    if not components:
        raise ConfigError("reward.route needs reward.rewards: routes map data sources to named rewards")
    if not isinstance(value, Mapping) or not value:
        raise ConfigError("reward.route must be a non-empty mapping of data_source pattern -> reward name(s)")
    route = {}
    for pattern, targets in value.items():
        names = _route_names(str(pattern), targets)
        for name in names:
            if name not in components:
                close = _closest(name, list(components))
                hint = f" Did you mean '{close[0]}'?" if close else ""
                raise ConfigError(
                    f"reward.route['{pattern}'] names unknown reward '{name}'.{hint} "
                    f"Rewards defined in reward.rewards: {', '.join(components)}."
                )
        if len(set(names)) != len(names):
            raise ConfigError(f"reward.route['{pattern}'] names a reward twice: {list(names)}")
        route[str(pattern)] = names
    return route


def _route_names(pattern: str, targets: Any) -> tuple[str, ...]:
    """A route's target: one reward name or a list of names. A route chooses rewards and
    never weights them, so a mapping of name -> weight is refused rather than read as names."""
    where = f"reward.route['{pattern}']"
    if isinstance(targets, Mapping):
        raise ConfigError(
            f"{where} is a mapping ({dict(targets)!r}); a route names the rewards that score a "
            f"data source (a name or a list of names) and does not weight them: set each weight "
            f"in reward.rewards.NAME.weight (to weight one reward differently for some data "
            f"sources, define it twice under reward.rewards with different weights)")
    if isinstance(targets, str):
        names: tuple[Any, ...] = (targets,)
    elif isinstance(targets, (list, tuple)):
        names = tuple(targets)
    elif targets is None:
        names = ()
    else:
        raise ConfigError(f"{where} must be a reward name or a list of names, not "
                          f"{type(targets).__name__} {targets!r}")
    if not names:
        raise ConfigError(f"{where} names no reward")
    for name in names:
        if not isinstance(name, str):
            raise ConfigError(f"{where} must list reward names, not {type(name).__name__} {name!r}")
    return names


def _merged_section(source: ConfigSource, overrides: Sequence[str]) -> dict[str, Any]:
    """The source and the overrides, each a plain dict resolved once within itself, merged."""
    section = _source_dict(source)
    if overrides:
        changes = _overrides_dict(overrides)
        section = _deep_merge(_without_other_choices(section, changes), changes)
    return section


def _source_dict(source: ConfigSource) -> dict[str, Any]:
    if isinstance(source, RewardConfig):
        return source.as_section()
    if source is None:
        return {}
    if isinstance(source, (str, os.PathLike)):
        return _resolved(_load_yaml(Path(source)), f"config file {source}")
    if _is_omegaconf(source):
        return _resolved(source, "the reward config")
    return dict(source)  # plain values are taken as they are: no ${...} interpolation


def _overrides_dict(overrides: Sequence[str]) -> dict[str, Any]:
    from omegaconf import OmegaConf  # omegaconf is only needed at this boundary

    dotlist = [_strip_prefix(o) for o in overrides]
    try:
        node = OmegaConf.from_dotlist(dotlist)
    except Exception as e:  # omegaconf's grammar errors name the bad token
        raise ConfigError(f"cannot parse override(s) {list(overrides)}: {e}") from e
    return _resolved(node, f"override(s) {list(overrides)}")


def _resolved(node: Any, what: str) -> dict[str, Any]:
    from omegaconf import OmegaConf

    try:
        container = OmegaConf.to_container(node, resolve=True)
    except Exception as e:  # a broken ${interpolation}
        raise ConfigError(f"cannot resolve {what}: {type(e).__name__}: {e}") from e
    if not isinstance(container, dict):
        raise ConfigError(f"{what} must be a mapping")
    return {str(k): v for k, v in container.items()}


def _without_other_choices(section: dict[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    """Drop the source's selectors other than those the overrides set (routes go with rewards)."""
    chosen = [k for k in SELECTORS if k in changes]
    if not chosen:
        return section
    dropped = {k for k in SELECTORS if k not in chosen}
    if "rewards" in dropped:
        dropped.add("route")
    return {k: v for k, v in section.items() if k not in dropped}


def _deep_merge(base: Mapping[str, Any], changes: Mapping[str, Any]) -> dict[str, Any]:
    merged = dict(base)
    for key, value in changes.items():
        if isinstance(value, Mapping) and isinstance(merged.get(key), Mapping):
            merged[key] = _deep_merge(merged[key], value)
        else:
            merged[key] = value
    return merged


def _load_yaml(path: Path) -> Any:
    from omegaconf import DictConfig, OmegaConf

    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        loaded = OmegaConf.load(path)
    except Exception as e:  # YAML syntax or omegaconf grammar: name the file
        raise ConfigError(f"cannot parse config file {path}: {type(e).__name__}: {e}") from e
    if not isinstance(loaded, DictConfig):
        raise ConfigError(f"config file {path} must hold a mapping, not a list")
    # A whole trainer config holds the section under `reward:`.
    section = loaded.get("reward")
    return section if isinstance(section, DictConfig) else loaded


def _is_omegaconf(source: object) -> bool:
    # Checked by module so that a plain dict never imports omegaconf.
    return type(source).__module__.startswith("omegaconf")


def _closest(word: object, choices: Sequence[str]) -> list[str]:
    return difflib.get_close_matches(str(word), choices, n=1, cutoff=0.5)


def _strip_prefix(override: str) -> str:
    """``reward.KEY=VALUE`` -> ``KEY=VALUE``; anything else is a :class:`ConfigError`."""
    key, sep, _ = override.partition("=")
    if not sep:
        raise ConfigError(f"override {override!r} is not of the form reward.KEY=VALUE")
    if not key.startswith("reward."):
        raise ConfigError(f"override {override!r}: overrides start with `reward.` "
                          f"(did you mean {_with_prefix(override)!r}?)")
    return override[len("reward.") :]


def _with_prefix(override: str) -> str:
    """The override as meant: ``plugin=x`` and ``rewrd.plugin=x`` -> ``reward.plugin=x``."""
    first, dot, rest = override.partition(".")
    fields = {f.name for f in dataclasses.fields(RewardConfig)}
    if dot and first not in fields and "=" not in first:  # a misspelled section name
        return f"reward.{rest}"
    return f"reward.{override}"


def _validated(cfg: RewardConfig) -> RewardConfig:
    chosen = [k for k in SELECTORS if getattr(cfg, k) is not None]
    if len(chosen) != 1:
        which = "neither" if not chosen else " and ".join(chosen)
        raise ConfigError(
            f"set exactly one of reward.plugin (an installed plugin name) or "
            f"reward.path (a .py file), or reward.rewards (several weighted rewards); "
            f"{which} given"
        )
    _check_str("plugin", cfg.plugin, optional=True)
    _check_str("path", cfg.path, optional=True)
    _check_str("name", cfg.name)
    _check_choice("executor", cfg.executor, EXECUTORS)
    _check_choice("on_error", cfg.on_error, ("score", "raise", "skip"))
    _check_int("num_workers", cfg.num_workers, minimum=1)
    _check_int("max_concurrency", cfg.max_concurrency, minimum=1)
    _check_int("max_sample_crashes", cfg.max_sample_crashes, minimum=1)
    _check_recycling(cfg)
    _check_number("worker_num_cpus", cfg.worker_num_cpus)
    if cfg.worker_num_cpus < 0:
        raise ConfigError(f"reward.worker_num_cpus must be >= 0, not {cfg.worker_num_cpus!r}")
    if cfg.chunk_size is not None:
        _check_int("chunk_size", cfg.chunk_size, minimum=1)
    _check_timeout(cfg.timeout_s)
    _check_number("error_score", cfg.error_score)
    _check_worker_hardware(cfg)
    _check_str("ray_address", cfg.ray_address, optional=True)
    _check_str("remote_url", cfg.remote_url, optional=True)
    for flag in ("ship_package", "workers_only"):
        if not isinstance(getattr(cfg, flag), bool):
            raise ConfigError(f"reward.{flag} must be true or false, not {getattr(cfg, flag)!r}")
    if cfg.rewards is not None and cfg.kwargs:
        raise ConfigError("reward.kwargs applies to a single reward; with reward.rewards set kwargs per reward")
    return _pool_scope(cfg)


def _pool_scope(cfg: RewardConfig) -> RewardConfig:
    """``share_pool: true`` is ``job`` (one pool per Ray job); ``cluster``: one per cluster."""
    if cfg.share_pool is True:
        return dataclasses.replace(cfg, share_pool="job")
    if cfg.share_pool is False or cfg.share_pool in ("job", "cluster"):
        return cfg
    raise ConfigError(f"reward.share_pool must be false, job (or true: one pool per Ray job) or "
                      f"cluster (one pool per Ray cluster), not {cfg.share_pool!r}")


def _check_worker_hardware(cfg: RewardConfig) -> None:
    """GPUs (fractional allowed), custom Ray resources and the batch-call size."""
    if cfg.worker_num_gpus is not None:
        _check_number("worker_num_gpus", cfg.worker_num_gpus)
        if cfg.worker_num_gpus < 0:
            raise ConfigError(f"reward.worker_num_gpus must be >= 0, not {cfg.worker_num_gpus!r}")
    if not isinstance(cfg.worker_resources, Mapping):
        raise ConfigError(
            f"reward.worker_resources must be a mapping of Ray resource name -> amount, "
            f"not {cfg.worker_resources!r}"
        )
    reserved = {"CPU": "reward.worker_num_cpus", "GPU": "reward.worker_num_gpus"}
    for name, amount in cfg.worker_resources.items():
        if name in reserved:
            raise ConfigError(f"reward.worker_resources cannot set {name!r}; use {reserved[name]}")
        _check_number(f"worker_resources.{name}", amount)
        if amount < 0:
            raise ConfigError(f"reward.worker_resources.{name} must be >= 0, not {amount!r}")
    if cfg.max_batch_size is not None:
        _check_int("max_batch_size", cfg.max_batch_size, minimum=1)


def _check_recycling(cfg: RewardConfig) -> None:
    if cfg.worker_max_rss_mb is not None:
        _check_number("worker_max_rss_mb", cfg.worker_max_rss_mb, positive=True)
    if cfg.worker_max_calls is not None:
        _check_int("worker_max_calls", cfg.worker_max_calls, minimum=1)


def _check_str(key: str, value: object, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip():
        raise ConfigValueError(key, f"reward.{key} must be a non-empty string, not {value!r}")


def _check_choice(key: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        close = _closest(value, choices) if isinstance(value, str) else []
        hint = f" (did you mean {close[0]!r}?)" if close else ""
        raise ConfigValueError(key, f"reward.{key} must be one of {', '.join(choices)}; got {value!r}{hint}")


def _check_int(key: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigValueError(key, f"reward.{key} must be an integer >= {minimum}, not {value!r}")


def _check_timeout(value: object) -> None:
    if value is None or value == AUTO:
        return
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or value <= 0:  # type: ignore[operator]
        raise ConfigValueError("timeout_s",
            f"reward.timeout_s must be a positive number of seconds, 'auto' (the plugin's declared "
            f"timeout, else {DEFAULT_TIMEOUT_S:g} s) or null (no limit), not {value!r}"
        )


def _check_number(key: str, value: object, positive: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (positive and value <= 0):  # type: ignore[operator]
        kind = "a positive number" if positive else "a finite number"
        raise ConfigValueError(key, f"reward.{key} must be {kind}, not {value!r}")
