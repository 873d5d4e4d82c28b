"""The GRPO loop: sample -> launch rewards -> log-probs (overlapped) -> advantages -> update."""

from __future__ import annotations

import dataclasses
import random
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import torch
import yaml
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.utils import logging as transformers_logging

from trainer import checkpoint, grpo, rewards
from trainer.data import PromptRecord, batches
from trainer.metrics import MetricsLog, console_line, plot_reward_curve
from trainer.model import build_policy, frozen_copy, parameter_count
from trainer.rollout import Rollout, generate
from trainer.rundir import METRICS_FILE, TrainingStopped, checkpoint_dir
from trainer.settings import TrainConfig, as_dict
from trainer.tokenizer import alphabet_of, build_char_tokenizer, load_tokenizer

if TYPE_CHECKING:
    from verl_rewards import BatchResult, Scorer

Printer = Callable[[str], None]


@dataclass(frozen=True)
class RunSummary:
    """What a finished run produced."""

    output_dir: Path
    steps: int
    first_reward: float | None
    last_reward: float | None


@dataclass
class Policy:
    """The trainable model with its tokenizer, optimiser and (optional) frozen reference."""

    model: PreTrainedModel
    tokenizer: PreTrainedTokenizerBase
    optimizer: torch.optim.Optimizer
    reference: PreTrainedModel | None


def seed_everything(seed: int) -> torch.Generator:
    """Seed Python, NumPy and torch; return a torch generator for mini-batch shuffles."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)
    return torch.Generator().manual_seed(seed)


def build(config: TrainConfig, prompts: Sequence[PromptRecord]) -> Policy:
    """Tokenizer, policy, optimiser and reference model for ``config``."""
    if config.model.path:
        tokenizer = load_tokenizer(config.model.path)
    else:
        tokenizer = build_char_tokenizer(alphabet_of(_texts(prompts)))
    model = build_policy(config.model, tokenizer)
    optimizer = torch.optim.AdamW(
        model.parameters(), lr=config.algo.lr, weight_decay=config.algo.weight_decay
    )
    reference = frozen_copy(model) if config.algo.kl_coef > 0 else None
    return Policy(model, tokenizer, optimizer, reference)


def run(
    config: TrainConfig,
    scorer: Scorer,
    prompts: Sequence[PromptRecord],
    reward_name: str,
    echo: Printer = print,
) -> RunSummary:
    """Train for ``config.trainer.total_steps`` steps; write metrics, curve and checkpoint."""
    started = time.perf_counter()
    threads = torch.get_num_threads()
    torch.set_num_threads(config.trainer.torch_threads)
    try:
        return _run(config, scorer, prompts, reward_name, echo, started)
    finally:
        torch.set_num_threads(threads)  # an in-process caller (a test) gets its setting back


def _run(
    config: TrainConfig,
    scorer: Scorer,
    prompts: Sequence[PromptRecord],
    reward_name: str,
    echo: Printer,
    started: float,
) -> RunSummary:
    generator = seed_everything(config.trainer.seed)
    policy = build(config, prompts)
    out = Path(config.trainer.output_dir)
    out.mkdir(parents=True, exist_ok=True)
    _write_config(out, config, scorer, reward_name)
    echo(f"policy: {parameter_count(policy.model):,} parameters, vocab {len(policy.tokenizer)}; "
         f"{len(prompts)} prompts; {config.data.prompts_per_step} x {config.rollout.n} "
         f"samples per step")
    done = _resume(config, policy, generator, echo)
    failing = FailureWatch(config.trainer.max_failed_steps)
    with _metrics_log(out, done) as log:
        prompt_batches = batches(prompts, config.data.prompts_per_step, config.trainer.seed)
        for _ in range(done):  # the batches the resumed steps already drew
            next(prompt_batches)
        for step in range(done + 1, config.trainer.total_steps + 1):
            lr = grpo.learning_rate(config.algo, step, config.trainer.total_steps)
            for group in policy.optimizer.param_groups:
                group["lr"] = lr
            record, result = train_step(config, policy, scorer, next(prompt_batches), generator)
            record["lr"] = lr
            record = {"step": step, **record, "elapsed_s": time.perf_counter() - started}
            log.write(record)
            if step % config.trainer.log_every == 0 or step == config.trainer.total_steps:
                echo(console_line(record, config.trainer.total_steps))
                for error in record.get("reward_errors", ()):
                    echo(f"    reward error: {error}")
            failing.update(record, result, finish=lambda: finish(config, policy, log.records,
                                                                  reward_name, save=False))
            _periodic_checkpoint(config, policy, step, generator)
        records = log.records
    finish(config, policy, records, reward_name, generator=generator)
    means = [r["reward_mean"] for r in records if r.get("reward_mean") is not None]
    return RunSummary(out, len(records), means[0] if means else None,
                      means[-1] if means else None)


def train_step(
    config: TrainConfig,
    policy: Policy,
    scorer: Scorer,
    prompts: list[PromptRecord],
    generator: torch.Generator,
) -> tuple[dict[str, Any], BatchResult]:
    """One GRPO step; returns its metrics record and the reward batch it trained on.

    With ``reward.on_error: skip`` the samples the reward failed to score are
    left out of their group's statistics and out of the loss.
    """
    clock = [time.perf_counter()]
    rollout = generate(policy.model, policy.tokenizer, prompts, config.rollout.n,
                       config.rollout.max_new_tokens, config.rollout.temperature)
    clock.append(time.perf_counter())
    pending = rewards.launch(scorer, rewards.build_samples(rollout))
    old_logp, ref_logp = _old_and_ref_logprobs(policy, rollout, config.rollout.temperature)
    clock.append(time.perf_counter())
    result, timing = pending.wait(overlapped_until=clock[-1])
    clock.append(time.perf_counter())
    skip = scorer.config.on_error == "skip"
    trainable = rewards.trainable_mask(result) if skip else None
    advantages = grpo.group_advantages(
        rewards.score_tensor(result), config.rollout.n, config.algo.norm_adv_by_std,
        trainable=trainable,
    )
    stats = grpo.update(policy.model, policy.optimizer, rollout, old_logp, ref_logp,
                        advantages, config.algo, config.rollout.temperature, generator, trainable)
    clock.append(time.perf_counter())
    record = _step_record(result, timing, stats, rollout, clock)
    if skip:
        record["reward_skipped"] = result.n_failed + result.n_timed_out
    return record, result


def _step_record(
    result: BatchResult,
    timing: rewards.RewardTiming,
    stats: grpo.UpdateStats,
    rollout: Rollout,
    clock: list[float],
) -> dict[str, Any]:
    """Metrics of one step; ``clock`` holds its start, then the end of each of four stages."""
    start, generated, logprobs, rewarded, end = clock
    record: dict[str, Any] = {
        **rewards.reward_metrics(result, timing),
        "reward_wait_s": rewarded - logprobs,
        **dataclasses.asdict(stats),
        "response_length": rollout.num_tokens / len(rollout.texts),
        "tokens_per_s": rollout.num_tokens / (end - start),
        "time_generate_s": generated - start,
        "time_logprob_s": logprobs - generated,
        "time_update_s": end - rewarded,
        "step_time_s": end - start,
    }
    if result.n_failed or result.n_timed_out:
        record["reward_errors"] = rewards.first_errors(result)
        record["reward_top_error"] = rewards.most_common_error(result)
    return record


@torch.no_grad()
def _old_and_ref_logprobs(
    policy: Policy, rollout: Rollout, temperature: float
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The work the reward batch overlaps with: behaviour and reference log-probs."""
    policy.model.eval()
    old_logp, _ = grpo.token_logprobs(policy.model, rollout, temperature)
    ref_logp = None
    if policy.reference is not None:
        ref_logp, _ = grpo.token_logprobs(policy.reference, rollout, temperature)
    return old_logp, ref_logp


def finish(
    config: TrainConfig, policy: Policy, records: list[dict[str, Any]], reward_name: str,
    save: bool = True, generator: torch.Generator | None = None,
) -> None:
    """Write the reward curve and (unless disabled) the checkpoint."""
    out = Path(config.trainer.output_dir)
    plot_reward_curve(records, out / "reward_curve.png",
                      title=f"GRPO reward: {reward_name} on {Path(config.data.path).name}")
    if save and config.trainer.save_checkpoint and records:
        _save(config, policy, records[-1]["step"], generator)


class FailureWatch:
    """Counts consecutive steps in which every sample failed; stops the run at ``limit``."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.streak = 0
        self.errors: Counter[str] = Counter()  # failed samples per error text, over the streak

    def update(self, record: dict[str, Any], result: BatchResult,
               finish: Callable[[], None]) -> None:
        """Count ``record``'s step; past the limit, call ``finish`` and raise TrainingStopped."""
        if record.get("reward_mean") is not None:
            self.streak = 0
            self.errors.clear()
            return
        self.streak += 1
        self.errors.update(e for e in result.errors if e is not None)
        if self.limit and self.streak >= self.limit:
            finish()
            raise TrainingStopped(self.message(record["step"]))

    def message(self, step: int) -> str:
        """Why the run stopped: the steps, the failed samples, the most common error."""
        failed = sum(self.errors.values())
        error, count = self.errors.most_common(1)[0] if self.errors else ("unknown", 0)
        distinct = f", {len(self.errors)} distinct errors" if len(self.errors) > 1 else ""
        return (f"every sample failed for {self.streak} steps in a row (steps "
                f"{step - self.streak + 1}-{step}; trainer.max_failed_steps={self.limit}): "
                f"{failed} failed samples{distinct}; most common error ({count} of {failed} "
                f"samples): {error}. No checkpoint was written.")


def _resume(
    config: TrainConfig, policy: Policy, generator: torch.Generator, echo: Printer
) -> int:
    """With ``trainer.resume``, restore the checkpoint; return the steps already done."""
    if not config.trainer.resume:
        return 0
    state = checkpoint.load(Path(config.trainer.output_dir))
    if state is None:  # settled before training by trainer.main; kept for direct callers
        raise TrainingStopped(f"nothing to resume in {config.trainer.output_dir}")
    checkpoint.restore(state, policy.model, policy.optimizer, generator)
    echo(f"resumed from step {state.step} ({checkpoint_dir(Path(config.trainer.output_dir))})")
    return state.step


def _write_config(out: Path, config: TrainConfig, scorer: Scorer, reward_name: str) -> None:
    """``config.yaml``: the run's settings with the reward section it actually ran with."""
    effective = {**as_dict(config), "reward": rewards.effective_section(scorer)}
    # The overrides are already in the section; re-applied on reading, they change nothing.
    (out / "config.yaml").write_text(
        f"# reward: {reward_name}\n" + yaml.safe_dump(effective, sort_keys=False))


def _metrics_log(out: Path, done: int) -> MetricsLog:
    path = out / METRICS_FILE
    return MetricsLog.continuing(path, done) if done else MetricsLog(path)


def _periodic_checkpoint(
    config: TrainConfig, policy: Policy, step: int, generator: torch.Generator
) -> None:
    every = config.trainer.checkpoint_every
    if config.trainer.save_checkpoint and every and step % every == 0 \
            and step != config.trainer.total_steps:  # the last one is written by finish
        _save(config, policy, step, generator)


def _save(config: TrainConfig, policy: Policy, step: int, generator: torch.Generator | None) -> None:
    transformers_logging.disable_progress_bar()  # one tiny shard: the bar is noise
    checkpoint.save(Path(config.trainer.output_dir), step, policy.model, policy.tokenizer,
                    policy.optimizer, generator or torch.Generator())


def _texts(prompts: Sequence[PromptRecord]) -> list[str]:
    """Every string the tokenizer must cover: prompts and textual ground truths."""
    texts = [p.prompt for p in prompts]
    texts += [p.ground_truth for p in prompts if isinstance(p.ground_truth, str)]
    return texts
