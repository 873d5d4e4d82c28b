"""Trainer configuration: YAML defaults + dotlist overrides -> typed, frozen records.

omegaconf parses and merges against a structured schema, so an unknown key or a
badly typed value outside ``reward`` is an error. The file's ``reward`` section
and the ``reward.*`` overrides are kept apart and handed untouched to the
reward layer (``Scorer.from_config(section, overrides)``), which owns their
validation and how an override combines with the file (a reward chosen on the
command line replaces the file's choice).
"""

from __future__ import annotations

import dataclasses
import difflib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from omegaconf import DictConfig, OmegaConf
from omegaconf.errors import ConfigKeyError, OmegaConfBaseException

DEFAULT_CONFIG = Path(__file__).parent / "config" / "default.yaml"
PROJECT_ROOT = Path(__file__).resolve().parent.parent


LR_SCHEDULES = ("constant", "cosine")


class TrainerConfigError(Exception):
    """The trainer's own configuration (outside ``reward``) is invalid."""


@dataclass(frozen=True)
class ModelConfig:
    """The policy: a random-init tiny Llama, or a local checkpoint when ``path`` is set."""

    path: str | None = None
    hidden_size: int = 64
    num_layers: int = 2
    num_heads: int = 4
    intermediate_size: int = 256
    max_position_embeddings: int = 64


@dataclass(frozen=True)
class DataConfig:
    """The prompt set: a JSONL file of ``prompt``/``data_source``/``ground_truth`` rows."""

    path: str = "examples/data/toy_copy.jsonl"
    prompts_per_step: int = 16


@dataclass(frozen=True)
class RolloutConfig:
    """Sampling: ``n`` completions per prompt (the GRPO group)."""

    n: int = 8
    max_new_tokens: int = 8
    temperature: float = 1.0


@dataclass(frozen=True)
class AlgoConfig:
    """GRPO hyper-parameters."""

    lr: float = 1e-3
    weight_decay: float = 0.0
    clip_eps: float = 0.2
    kl_coef: float = 0.001
    entropy_coef: float = 0.02
    lr_schedule: str = "constant"  # constant | cosine (to lr_min_ratio * lr at the last step)
    lr_min_ratio: float = 0.1
    ppo_epochs: int = 2
    mini_batches: int = 2
    max_grad_norm: float = 1.0
    norm_adv_by_std: bool = True


@dataclass(frozen=True)
class LoopConfig:
    """The ``trainer`` section: length of the run, where results go, seeding, logging."""

    total_steps: int = 500
    output_dir: str = "outputs/trainer"
    seed: int = 0
    log_every: int = 10
    torch_threads: int = 1
    save_checkpoint: bool = True
    checkpoint_every: int = 100  # steps between checkpoints (0: only at the end)
    overwrite: bool = False  # reuse an output_dir that holds a run, discarding it
    resume: bool = False  # continue the run in output_dir from its last checkpoint
    max_failed_steps: int = 5  # stop (exit 1) after this many steps in a row where every sample failed; 0: never


@dataclass(frozen=True)
class TrainConfig:
    """The whole run. ``reward`` and ``reward_overrides`` go to ``verl_rewards`` as they are."""

    model: ModelConfig = field(default_factory=ModelConfig)
    data: DataConfig = field(default_factory=DataConfig)
    rollout: RolloutConfig = field(default_factory=RolloutConfig)
    algo: AlgoConfig = field(default_factory=AlgoConfig)
    trainer: LoopConfig = field(default_factory=LoopConfig)
    reward: dict[str, Any] = field(default_factory=dict)  # the file's section (resolved)
    reward_overrides: tuple[str, ...] = ()  # the ``reward.*`` dotlist entries, in order


def load_config(
    overrides: Sequence[str] = (), config_file: str | Path = DEFAULT_CONFIG
) -> TrainConfig:
    """Merge ``config_file`` and dotlist ``overrides`` (``key.sub=value``) into a checked config.

    ``reward.*`` overrides are not merged here: they are kept, in order, in
    ``reward_overrides`` for the reward layer to apply to the ``reward`` section.
    """
    for item in overrides:
        if "=" not in item:
            raise TrainerConfigError(f"override {item!r} is not of the form key=value")
    reward_overrides = [o for o in overrides if o.startswith("reward.")]
    node = merge_config([o for o in overrides if not o.startswith("reward.")], config_file)
    return to_record(node, reward_overrides)


def merge_config(overrides: Sequence[str], config_file: str | Path = DEFAULT_CONFIG) -> DictConfig:
    """The merged omegaconf tree: schema <- YAML file <- dotlist overrides."""
    schema = OmegaConf.structured(TrainConfig)
    _make_writable(schema)
    try:
        node = OmegaConf.merge(schema, _read_yaml(Path(config_file)))
    except OmegaConfBaseException as e:
        raise TrainerConfigError(f"config file {config_file}: {_describe(e)}") from None
    try:
        node = OmegaConf.merge(node, OmegaConf.from_dotlist(list(overrides)))
    except OmegaConfBaseException as e:
        raise TrainerConfigError(_describe(e)) from None
    assert isinstance(node, DictConfig)
    return node


def _make_writable(node: DictConfig) -> None:
    # Frozen dataclasses make read-only nodes; omegaconf 2.3 (the release verl's
    # hydra pins) then refuses to merge the YAML file into them.
    OmegaConf.set_readonly(node, False)
    for key in node:
        child = node[key]
        if isinstance(child, DictConfig):
            _make_writable(child)


def _read_yaml(path: Path) -> DictConfig:
    if not path.is_file():
        raise TrainerConfigError(f"config file not found: {path}")
    try:
        node = OmegaConf.load(path)
    except OSError as e:
        raise TrainerConfigError(f"cannot read config file {path}: {e.strerror or e}") from None
    except (yaml.YAMLError, OmegaConfBaseException) as e:
        first = " ".join(str(e).split())
        raise TrainerConfigError(f"cannot parse config file {path}: {first}") from None
    if not isinstance(node, DictConfig):
        raise TrainerConfigError(f"config file {path} must hold a mapping of sections "
                                 f"(model, data, rollout, algo, trainer, reward)")
    return node


def to_record(node: DictConfig, reward_overrides: Sequence[str] = ()) -> TrainConfig:
    """Turn a merged tree into frozen dataclasses, checking value ranges.

    Interpolations are resolved here, in the whole tree (so the reward section
    may refer to ``${trainer.seed}``): the reward layer gets a plain section.
    Relative ``data.path`` and ``model.path`` are resolved here too, once, so
    that every use of them (prompts, model, tokenizer) sees the same file.
    """
    raw = OmegaConf.to_container(node, resolve=True)
    assert isinstance(raw, dict)
    raw["data"]["path"] = str(resolve_path(raw["data"]["path"]))
    if raw["model"]["path"]:
        raw["model"]["path"] = str(resolve_path(raw["model"]["path"]))
    config = TrainConfig(
        model=ModelConfig(**raw["model"]),
        data=DataConfig(**raw["data"]),
        rollout=RolloutConfig(**raw["rollout"]),
        algo=AlgoConfig(**raw["algo"]),
        trainer=LoopConfig(**raw["trainer"]),
        reward=dict(raw["reward"]),
        reward_overrides=(*raw["reward_overrides"], *reward_overrides),
    )
    _check_ranges(config)
    return config


def resolve_path(path: str) -> Path:
    """A relative path is looked up from the working directory, then from the project root."""
    candidate = Path(path).expanduser()
    if candidate.is_absolute() or candidate.exists():
        return candidate
    from_root = PROJECT_ROOT / candidate
    return from_root if from_root.exists() else candidate


def as_dict(config: TrainConfig) -> dict[str, Any]:
    """The config as nested plain data, for ``config.yaml`` in the output directory."""
    return {**dataclasses.asdict(config), "reward_overrides": list(config.reward_overrides)}


_POSITIVE: Mapping[str, tuple[str, ...]] = {
    "model": ("hidden_size", "num_layers", "num_heads", "intermediate_size",
              "max_position_embeddings"),
    "data": ("prompts_per_step",),
    "rollout": ("max_new_tokens", "temperature"),
    "algo": ("lr", "ppo_epochs", "mini_batches", "max_grad_norm"),
    "trainer": ("total_steps", "log_every", "torch_threads"),
}
_NON_NEGATIVE: Mapping[str, tuple[str, ...]] = {
    "algo": ("entropy_coef",),
    "trainer": ("checkpoint_every", "max_failed_steps"),
}


def _check_ranges(config: TrainConfig) -> None:
    problems = [
        f"{section}.{name} must be > 0 (got {getattr(getattr(config, section), name)})"
        for section, names in _POSITIVE.items()
        for name in names
        if not getattr(getattr(config, section), name) > 0
    ] + [
        f"{section}.{name} must be >= 0 (got {getattr(getattr(config, section), name)})"
        for section, names in _NON_NEGATIVE.items()
        for name in names
        if getattr(getattr(config, section), name) < 0
    ]
    if config.trainer.overwrite and config.trainer.resume:
        problems.append("set at most one of trainer.overwrite and trainer.resume")
    if config.rollout.n < 2:
        problems.append(f"rollout.n must be >= 2 for group-relative advantages "
                        f"(got {config.rollout.n})")
    if config.algo.lr_schedule not in LR_SCHEDULES:
        problems.append(f"algo.lr_schedule must be one of {', '.join(LR_SCHEDULES)} "
                        f"(got {config.algo.lr_schedule!r})")
    if not 0.0 <= config.algo.lr_min_ratio <= 1.0:
        problems.append(f"algo.lr_min_ratio must be in [0, 1] (got {config.algo.lr_min_ratio})")
    if config.algo.kl_coef < 0 or config.algo.clip_eps <= 0:
        problems.append("algo.kl_coef must be >= 0 and algo.clip_eps > 0")
    if config.model.hidden_size % config.model.num_heads:
        problems.append(f"model.hidden_size ({config.model.hidden_size}) must be divisible "
                        f"by model.num_heads ({config.model.num_heads})")
    batch = config.data.prompts_per_step * config.rollout.n
    if batch % config.algo.mini_batches:
        problems.append(f"algo.mini_batches ({config.algo.mini_batches}) must divide "
                        f"data.prompts_per_step * rollout.n ({batch})")
    if problems:
        raise TrainerConfigError("; ".join(problems))


def _describe(error: OmegaConfBaseException) -> str:
    """omegaconf's messages span several lines; keep the cause and the full key.

    An unknown key is answered with the closest valid keys of its section, not
    omegaconf's message naming a schema class.
    """
    key = getattr(error, "full_key", None)
    if isinstance(error, ConfigKeyError) and key:
        return unknown_key_message(str(key))
    first = str(error).splitlines()[0] if str(error) else type(error).__name__
    return f"{first} (at '{key}')" if key else first


def unknown_key_message(full_key: str) -> str:
    """``unknown key 'trainer.total_step'. Did you mean 'trainer.total_steps'? Valid keys: ...``."""
    *sections, name = full_key.split(".")
    record: Any = TrainConfig
    for section in sections:
        fields = {f.name: f for f in dataclasses.fields(record)}
        if section not in fields or not dataclasses.is_dataclass(fields[section].default_factory):
            return f"unknown key '{full_key}'"
        record = fields[section].default_factory
    valid = [f.name for f in dataclasses.fields(record) if f.name != "reward_overrides"]
    prefix = "".join(f"{s}." for s in sections)
    close = difflib.get_close_matches(name, valid, n=2, cutoff=0.6)
    hint = (" Did you mean " + " or ".join(f"'{prefix}{c}'" for c in close) + "?") if close else ""
    return f"unknown key '{full_key}'.{hint} Valid keys: {', '.join(prefix + v for v in valid)}."
