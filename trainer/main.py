"""``python -m trainer.main [key=value ...]``: the reference GRPO run.

The only place that maps errors to exit codes: 2 for a bad trainer or reward
configuration (reported before any model is built), 1 for a reward failure
that stops the run (``reward.on_error=raise``, workers that cannot load the
plugin), 0 otherwise.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

from trainer.data import DataError, PromptRecord, load_prompts
from trainer.settings import DEFAULT_CONFIG, TrainConfig, TrainerConfigError, load_config
from verl_rewards import Scorer
from verl_rewards.errors import ConfigError, VerlRewardsError

USAGE = f"""\
usage: python -m trainer.main [key=value ...]

Runs GRPO on a tiny causal LM with the reward chosen by the `reward` section.
Overrides are omegaconf dotlist entries, e.g.
  trainer.total_steps=20 trainer.output_dir=outputs/run1 reward.plugin=copy_digits
  reward.path=my_reward.py reward.executor=local algo.kl_coef=0
Defaults: {DEFAULT_CONFIG}
Writes DIR/metrics.jsonl, DIR/reward_curve.png, DIR/checkpoint/ (DIR = trainer.output_dir).
Exit codes: 0 ok, 1 reward failure, 2 configuration error."""


def main(argv: Sequence[str] | None = None) -> int:
    """Run the trainer with dotlist overrides ``argv``; return the process exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if any(a in ("-h", "--help") for a in args):
        print(USAGE)
        return 0
    try:
        config, scorer, prompts = prepare(args)
    except (TrainerConfigError, DataError) as e:
        return _fail(f"config error: {e}", 2)
    except ConfigError as e:
        return _fail(f"reward config error: {e}", 2)
    name = scorer.provenance.display_name
    print(f"reward: {name} on executor {scorer.config.executor!r}"
          f" ({scorer.config.num_workers} worker(s)); output: {config.trainer.output_dir}",
          flush=True)
    try:
        return train(config, scorer, prompts, name)
    except VerlRewardsError as e:
        return _fail(f"reward failed: {e}", 1)
    except KeyboardInterrupt:
        return _fail("interrupted", 130)


def prepare(args: Sequence[str]) -> tuple[TrainConfig, Scorer, list[PromptRecord]]:
    """Everything that can be wrong with the configuration, checked before any model work."""
    config = load_config(args)
    scorer = Scorer.from_config(config.reward, config.reward_overrides)
    prompts = load_prompts(Path(config.data.path))
    if config.model.path and not Path(config.model.path).is_dir():
        raise TrainerConfigError(f"model.path {config.model.path!r} is not a directory")
    return config, scorer, prompts


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
    sys.exit(main())
