"""``python -m trainer.main [key=value ...]``: the reference GRPO run.

The only place that maps errors to exit codes: 2 for a bad trainer or reward
configuration or a reward that does not import here (reported before any model
is built), 1 for a reward failure
that stops the run (``reward.on_error=raise``, workers that cannot load the
plugin), 0 otherwise.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from trainer import rundir
from trainer.data import DataError, PromptRecord, load_prompts
from trainer.rundir import TrainingStopped
from trainer.settings import DEFAULT_CONFIG, TrainConfig, TrainerConfigError, load_config
from verl_rewards import Scorer
from verl_rewards.errors import ConfigError, PluginLoadError, VerlRewardsError
from verl_rewards.executors.quiet_ray import quiet_ray_startup

USAGE = f"""\
usage: python -m trainer.main [-c FILE.yaml] [key=value ...]

Runs GRPO on a tiny causal LM with the reward chosen by the `reward` section.
  -c, --config FILE   a YAML config used instead of the defaults below (keys it
                      omits take the trainer's built-in values)
Overrides are omegaconf dotlist entries, e.g.
  trainer.total_steps=20 trainer.output_dir=outputs/run1 reward.plugin=copy_digits
  reward.path=my_reward.py reward.executor=local algo.kl_coef=0
Defaults: {DEFAULT_CONFIG}
Writes DIR/metrics.jsonl, DIR/reward_curve.png, DIR/checkpoint/ (DIR = trainer.output_dir;
a checkpoint every trainer.checkpoint_every steps). A DIR that holds a run is reused only
with trainer.overwrite=true, or continued from its checkpoint with trainer.resume=true.
The run stops (exit 1) after trainer.max_failed_steps steps in a row in which every
sample failed. Every data row needs `prompt` and `ground_truth`.
Exit codes: 0 ok, 1 reward failure, 2 configuration or data error."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the trainer with dotlist overrides ``argv``; return the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    try:
        config_file, args = split_config_option(args)
        config, scorer, prompts = prepare(args, config_file)
    except (TrainerConfigError, DataError) as e:
        return _fail(f"config error: {e}", 2)
    except ConfigError as e:
        return _fail(f"reward config error: {e}", 2)
    except PluginLoadError as e:  # the reward does not import (or build) here: say why, in one line
        return _fail(" ".join(str(e).split()), 2)
    name = scorer.provenance.display_name
    print(f"reward: {name} on executor {scorer.config.executor!r}"
          f" ({scorer.config.num_workers} worker(s)); output: {config.trainer.output_dir}",
          flush=True)
    try:
        return train(config, scorer, prompts, name)
    except VerlRewardsError as e:
        return _fail(f"reward failed: {e}", 1)
    except TrainingStopped as e:
        return _fail(f"stopped: {e}", 1)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


def prepare(
    args: Sequence[str], config_file: Path = DEFAULT_CONFIG
) -> tuple[TrainConfig, Scorer, list[PromptRecord]]:
    """Everything that can be wrong with the configuration, checked before any model work."""
    config = load_config(args, config_file)
    scorer = Scorer.from_config(config.reward, config.reward_overrides)
    prompts = load_prompts(Path(config.data.path))
    if config.model.path and not Path(config.model.path).is_dir():
        raise TrainerConfigError(f"model.path {config.model.path!r} is not a directory")
    check_output_dir(config)
    return config, scorer, prompts


def split_config_option(args: Sequence[str]) -> tuple[Path, list[str]]:
    """``-c FILE`` / ``--config FILE`` / ``--config=FILE`` out of ``args``; the rest are overrides."""
    rest: list[str] = []
    config: Path | None = None
    items = iter(args)
    for arg in items:
        if arg in ("-c", "--config"):
            value = next(items, None)
            if value is None:
                raise TrainerConfigError(f"{arg} needs a FILE.yaml")
        elif arg.startswith("--config="):
            value = arg.partition("=")[2]
        else:
            if arg.startswith("-"):
                raise TrainerConfigError(f"unknown option {arg!r}; see --help")
            rest.append(arg)
            continue
        if config is not None:
            raise TrainerConfigError("give -c/--config once")
        config = Path(value)
    return (config or DEFAULT_CONFIG), rest


def check_output_dir(config: TrainConfig) -> None:
    """Refuse to overwrite a run unless told to; check there is a run to resume."""
    out = Path(config.trainer.output_dir)
    if config.trainer.resume:
        _check_resumable(config, out)
        return
    if rundir.holds_a_run(out) and not config.trainer.overwrite:
        resumable = rundir.settle_checkpoint(out) is not None
        raise TrainerConfigError(
            f"trainer.output_dir {out} already holds a run (metrics.jsonl or checkpoint/); "
            f"set trainer.overwrite=true to replace it, "
            + ("trainer.resume=true to continue it, " if resumable else "")
            + "or choose another trainer.output_dir"
            + ("" if resumable else " (it has no checkpoint to resume from)"))
    if config.trainer.overwrite:
        rundir.clear_run(out)  # an old checkpoint must not be resumed as this run's


def _check_resumable(config: TrainConfig, out: Path) -> None:
    """A checkpoint to resume from (one a killed save left counts), readable metrics."""
    from trainer.metrics import MetricsFileError, read_metrics

    if rundir.settle_checkpoint(out) is None:
        raise TrainerConfigError(
            f"trainer.resume=true but {out} holds no checkpoint to resume from "
            f"({rundir.state_file(out)} is missing)")
    _check_same_model_and_data(config, out)
    metrics = out / rundir.METRICS_FILE
    try:
        if metrics.exists():
            read_metrics(metrics)
    except MetricsFileError as e:
        raise TrainerConfigError(f"trainer.resume=true but {e}; fix or remove that line, "
                                 f"or start a new run (trainer.overwrite=true)") from None


def _check_same_model_and_data(config: TrainConfig, out: Path) -> None:
    """A resumed run must have the checkpoint's model and data settings."""
    import yaml

    from trainer.settings import as_dict

    saved_file = out / "config.yaml"
    if not saved_file.is_file():
        return
    saved = yaml.safe_load(saved_file.read_text()) or {}
    now = as_dict(config)
    changed = [f"{section}.{key}" for section in ("model", "data")
               for key in sorted(set(now[section]) | set(saved.get(section) or {}))
               if (saved.get(section) or {}).get(key) != now[section].get(key)]
    if changed:
        raise TrainerConfigError(
            f"trainer.resume=true but {', '.join(changed)} differ from the run in {out} "
            f"({saved_file}); resume with the same settings, or start a new run "
            f"(trainer.overwrite=true or another trainer.output_dir)")


def train(config: TrainConfig, scorer: Scorer, prompts: list[PromptRecord], name: str) -> int:
    """Start the reward executor, run the loop, report where the results are."""
    # torch and transformers load in seconds; import them only once the
    # configuration is known to be good.
    from trainer.loop import run

    started = time.perf_counter()
    with scorer:
        summary = run(config, scorer, prompts, reward_name=name,
                      echo=lambda line: print(line, flush=True))
    out = Path(summary.output_dir)
    print(f"done: {summary.steps} steps in {time.perf_counter() - started:.1f} s; "
          f"reward {_fmt(summary.first_reward)} -> {_fmt(summary.last_reward)} "
          f"(first -> last step); wrote {out / 'metrics.jsonl'}, "
          f"{out / 'reward_curve.png'}" + (f", {out / 'checkpoint'}"
                                             if config.trainer.save_checkpoint else ""),
          flush=True)
    return 0


def _fail(message: str, code: int) -> int:
    print(f"trainer: {message}", file=sys.stderr, flush=True)
    return code


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


if __name__ == "__main__":
    quiet_ray_startup()
    sys.exit(main())
