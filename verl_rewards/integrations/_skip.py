"""``on_error: skip`` in the hosts: how a failed sample is marked so the host leaves
it out of training instead of learning from ``error_score`` (``docs/skip.md``)."""

from __future__ import annotations

from typing import Any

from ..results import BatchResult

__all__ = ["SKIP_NEEDS_MANAGER", "SKIP_UNAVAILABLE_OPENRLHF", "TRAINABLE_KEY", "trainable_flags",
           "trl_scores", "verl_leaves_out_failed_sessions"]

# The per-sample extra-info key the verl adapters add under skip: 1.0 when the
# reward itself scored the sample, 0.0 when it failed (scored ``error_score``).
TRAINABLE_KEY = "trainable"

SKIP_NEEDS_MANAGER = (
    "on_error: skip needs verl-rewards' verl RewardManager: through "
    "reward.custom_reward_function (compute_score) a failed sample can only return a score, which "
    "verl trains on. Set reward.reward_manager.source=importlib, "
    "reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl, "
    "reward.reward_manager.name=RewardManager and +reward.verl_rewards.on_error=skip "
    "(see docs/skip.md), or use on_error: score")

SKIP_UNAVAILABLE_OPENRLHF = (
    "VERL_REWARDS_ON_ERROR=skip: OpenRLHF 0.11 cannot leave one sample out of training (a "
    "reward it cannot read fails the whole batch, and its dynamic filtering drops whole groups "
    "by their mean score); use VERL_REWARDS_ON_ERROR=score, which logs each failed sample as "
    "reward_failed (see docs/skip.md)")


def trl_scores(result: BatchResult, on_error: str) -> list[float | None]:
    """TRL's rewards for ``result``: under skip, ``None`` for a sample the reward did not
    score (TRL turns it into NaN, leaves it out of the reward mean and zeroes its advantage)."""
    if on_error != "skip":
        return list(result.scores)
    return [s if ok else None for s, ok in zip(result.scores, result.trainable)]


def trainable_flags(result: BatchResult) -> list[float]:
    """Per sample, 1.0 when the reward scored it and 0.0 when it failed: a float, so verl
    can average it into its metrics and read it as a filter metric."""
    return [1.0 if ok else 0.0 for ok in result.trainable]


def verl_leaves_out_failed_sessions(config: Any) -> bool:
    """Whether verl leaves a sample out of training when its reward call raises: its v1
    trainer (``trainer.use_v1``, the default in 0.9) scoring each rollout session as it
    ends (no colocated reward model, the check verl's own DAPO filter makes). There a
    session that raises is never stored, and its group is marked ``failure``."""
    trainer = _get(config, "trainer")
    reward_model = _get(_get(config, "reward"), "reward_model")
    streaming = not _get(reward_model, "enable", False) or _get(reward_model, "enable_resource_pool",
                                                                 False)
    return bool(_get(trainer, "use_v1", False)) and bool(streaming)


def _get(config: Any, key: str, default: Any = None) -> Any:
    return config.get(key, default) if config is not None and hasattr(config, "get") else default
