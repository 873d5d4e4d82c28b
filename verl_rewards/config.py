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

from .errors import ConfigError, UnknownConfigKeyError

Executor = Literal["ray", "local"]
OnError = Literal["score", "raise"]

ConfigSource = Union[Mapping[str, Any], str, os.PathLike, "RewardConfig", None]


@dataclass(frozen=True)
class RewardConfig:
    """The validated ``reward`` section. See ``docs/configuration.md``."""

    plugin: str | None = None
    path: str | None = None
    name: str = "compute_score"
    kwargs: Mapping[str, Any] = field(default_factory=dict)
    executor: Executor = "ray"
    num_workers: int = 2
    timeout_s: float | None = 30.0
    on_error: OnError = "score"
    error_score: float = 0.0
    max_concurrency: int = 32
    chunk_size: int | None = None
    max_sample_crashes: int = 2
    worker_num_cpus: float = 1.0
    ray_address: str | None = None
    ship_package: bool = False

    def replace(self, **changes: Any) -> RewardConfig:
        """A copy with ``changes`` applied and validated."""
        return _validated(dataclasses.replace(self, **changes))


KEYS: tuple[str, ...] = tuple(f.name for f in dataclasses.fields(RewardConfig))


def load_config(source: ConfigSource = None, overrides: Sequence[str] = ()) -> RewardConfig:
    """Build a :class:`RewardConfig` from a mapping, omegaconf node or YAML file,
    then apply dotlist ``overrides`` (``reward.`` prefix optional).

    >>> load_config({"plugin": "gsm8k"}, ["reward.kwargs.method=flexible"]).kwargs
    {'method': 'flexible'}
    """
    if isinstance(source, RewardConfig) and not overrides:
        return source
    section = _merged_section(source, overrides)
    return from_mapping(section)


def from_mapping(section: Mapping[str, Any]) -> RewardConfig:
    """Validate a plain mapping of ``reward`` keys into a :class:`RewardConfig`."""
    for key in section:
        if key not in KEYS:
            raise UnknownConfigKeyError(
                str(key), difflib.get_close_matches(str(key), KEYS, n=2, cutoff=0.5), KEYS
            )
    values = {k: v for k, v in section.items()}
    kwargs = values.get("kwargs")
    if kwargs is None:
        values["kwargs"] = {}
    elif not isinstance(kwargs, Mapping):
        raise ConfigError(f"reward.kwargs must be a mapping, not {type(kwargs).__name__}")
    else:
        values["kwargs"] = dict(kwargs)
    return _validated(RewardConfig(**values))


def _merged_section(source: ConfigSource, overrides: Sequence[str]) -> dict[str, Any]:
    from omegaconf import OmegaConf  # omegaconf is only needed at this boundary

    if isinstance(source, RewardConfig):
        base: Any = OmegaConf.create(dataclasses.asdict(source))
    elif source is None:
        base = OmegaConf.create({})
    elif isinstance(source, (str, os.PathLike)):
        base = _load_yaml(Path(source))
    else:
        base = OmegaConf.create(_plain(source))
    if overrides:
        dotlist = [_strip_prefix(o) for o in overrides]
        try:
            base = OmegaConf.merge(base, OmegaConf.from_dotlist(dotlist))
        except Exception as e:  # omegaconf's grammar errors name the bad token
            raise ConfigError(f"cannot parse override(s) {list(overrides)}: {e}") from e
    container = OmegaConf.to_container(base, resolve=True)
    if not isinstance(container, dict):
        raise ConfigError("the reward section must be a mapping")
    return {str(k): v for k, v in container.items()}


def _load_yaml(path: Path) -> Any:
    from omegaconf import OmegaConf

    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    loaded = OmegaConf.load(path)
    # A whole trainer config holds the section under `reward:`.
    if "reward" in loaded and isinstance(loaded.get("reward"), Mapping):
        return loaded["reward"]
    return loaded


def _plain(source: Mapping[str, Any]) -> Any:
    from omegaconf import DictConfig, OmegaConf

    if isinstance(source, DictConfig):
        return OmegaConf.to_container(source, resolve=True)
    return dict(source)


def _strip_prefix(override: str) -> str:
    if "=" not in override:
        raise ConfigError(f"override {override!r} is not of the form reward.KEY=VALUE")
    return override[len("reward.") :] if override.startswith("reward.") else override


def _validated(cfg: RewardConfig) -> RewardConfig:
    if (cfg.plugin is None) == (cfg.path is None):
        which = "both" if cfg.plugin is not None else "neither"
        raise ConfigError(
            f"set exactly one of reward.plugin (an installed plugin name) or "
            f"reward.path (a .py file); {which} given"
        )
    _check_str("plugin", cfg.plugin, optional=True)
    _check_str("path", cfg.path, optional=True)
    _check_str("name", cfg.name)
    _check_choice("executor", cfg.executor, ("ray", "local"))
    _check_choice("on_error", cfg.on_error, ("score", "raise"))
    _check_int("num_workers", cfg.num_workers, minimum=1)
    _check_int("max_concurrency", cfg.max_concurrency, minimum=1)
    _check_int("max_sample_crashes", cfg.max_sample_crashes, minimum=1)
    _check_number("worker_num_cpus", cfg.worker_num_cpus)
    if cfg.worker_num_cpus < 0:
        raise ConfigError(f"reward.worker_num_cpus must be >= 0, not {cfg.worker_num_cpus!r}")
    if cfg.chunk_size is not None:
        _check_int("chunk_size", cfg.chunk_size, minimum=1)
    if cfg.timeout_s is not None:
        _check_number("timeout_s", cfg.timeout_s, positive=True)
    _check_number("error_score", cfg.error_score)
    _check_str("ray_address", cfg.ray_address, optional=True)
    if not isinstance(cfg.ship_package, bool):
        raise ConfigError(f"reward.ship_package must be true or false, not {cfg.ship_package!r}")
    for key in cfg.kwargs:
        if not isinstance(key, str) or not key.isidentifier():
            raise ConfigError(f"reward.kwargs key {key!r} is not a valid keyword argument name")
    return cfg


def _check_str(key: str, value: object, optional: bool = False) -> None:
    if value is None and optional:
        return
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"reward.{key} must be a non-empty string, not {value!r}")


def _check_choice(key: str, value: object, choices: tuple[str, ...]) -> None:
    if value not in choices:
        raise ConfigError(f"reward.{key} must be one of {', '.join(choices)}; got {value!r}")


def _check_int(key: str, value: object, minimum: int) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"reward.{key} must be an integer >= {minimum}, not {value!r}")


def _check_number(key: str, value: object, positive: bool = False) -> None:
    ok = isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
    if not ok or (positive and value <= 0):  # type: ignore[operator]
        kind = "a positive number" if positive else "a finite number"
        raise ConfigError(f"reward.{key} must be {kind}, not {value!r}")
