"""``on_error: skip`` in every host: the one table of what each host does with a failed
sample (refuse, honour, or the host's own drop), read by every adapter and endpoint (public: the integrations and serve share it).

``docs/skip.md``'s table is :func:`markdown_table` (a docs test keeps them equal).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, NamedTuple

from .errors import ConfigError
from .results import BatchResult

__all__ = ["HOSTS", "TRAINABLE_KEY", "HostSkip", "Policy", "check_skip", "markdown_table",
           "refusal", "trl_scores", "verl_leaves_out_failed_sessions"]

# refuse: the host cannot leave one sample out, so skip is an error naming what to use;
# honour: the failed sample reaches the host marked as such, and the host leaves it out;
# drop: the adapter uses the host's own way of dropping a sample (a raise it rejects, a flag).
Policy = Literal["refuse", "honour", "drop"]


class HostSkip(NamedTuple):
    """What one host (an adapter, or a serve endpoint) does under ``on_error: skip``."""

    title: str  # the host, as docs/skip.md names it
    policy: Policy
    failed_sample: str  # what a failed sample does there (docs/skip.md's table)
    reason: str  # why, read from the host's own code
    counted: str = ""  # where the failed samples show
    instead: str = ""  # refuse: what to use (the refusal names it)


HOSTS: Mapping[str, HostSkip] = {
    "trl": HostSkip(
        "TRL 1.16 `GRPOTrainer`", "honour",
        "reward `None`: left out of the reward mean and std, advantage 0",
        "TRL turns a `None` reward into NaN (`_calculate_rewards`) and leaves NaN rows out of "
        "its group statistics",
        counted="`rewards/NAME/failed`, `rewards/NAME/skipped`"),
    "verl_manager": HostSkip(
        "verl 0.9.1 `RewardManager`, v1 trainer (the default)", "drop",
        "its session raises `SkippedSample`: the trajectory is never stored",
        "verl's v1 agent loop marks a session whose reward call raises `failure` and never "
        "writes its trajectory to the replay buffer",
        counted="verl's error log; `training/rollout_failure/evicted_samples` (async)"),
    "verl_legacy": HostSkip(
        "verl 0.9.1 `RewardManager`, legacy trainer, colocated reward model, or its batch call",
        "refuse",
        "refused (`ConfigError` when the manager is built, or at the batch call)",
        "verl's legacy trainer and a colocated reward model score a batch in one call, where a "
        "raise fails the whole batch, and `rm_scores` has no per-sample mask",
        instead="verl's v1 trainer (trainer.use_v1=true, the default) without a colocated reward "
                "model, or on_error: score (each failed sample's `error` in reward_extra_info)"),
    "verl_function": HostSkip(
        "verl `custom_reward_function` (`compute_score`)", "refuse",
        "refused (`ConfigError` at the first call)",
        "a reward function's only output is a score, which verl trains on",
        instead="verl-rewards' RewardManager: reward.reward_manager.source=importlib "
                "reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl "
                "reward.reward_manager.name=RewardManager +reward.verl_rewards.on_error=skip"),
    "openrlhf": HostSkip(
        "OpenRLHF 0.11.2 reward file", "refuse",
        "refused (`ConfigError` when OpenRLHF loads the file)",
        "OpenRLHF has no per-sample drop: a reward it cannot read fails the whole batch, and its "
        "dynamic filtering drops whole groups by their mean score",
        instead="VERL_REWARDS_ON_ERROR=score, which logs each failed sample as reward_failed"),
    "verifiers": HostSkip(
        "verifiers 0.4", "refuse",
        "refused (`ConfigError` when the reward is built)",
        "a verifiers task reward returns a float that verifiers records as the rollout's reward; "
        "no flag a reward can set leaves one rollout out (`AgentInfo.trainable` is the env's), "
        "and a reward that raises fails the rollout (`trace.ok = False`), which a trainer may "
        "still train on",
        instead="on_error: raise (verifiers marks that rollout failed, the others keep their "
                "scores) or on_error: score (`<reward>/failed` in trace.metrics)"),
    "skyrl": HostSkip(
        "skyrl-gym 0.4", "refuse",
        "refused (`ConfigError` when the environment is made)",
        "a skyrl-gym environment's step returns a float reward (observations, reward, done, "
        "metadata) that SkyRL trains on, with no field that leaves a trajectory out; a step "
        "that raises is not caught",
        instead="on_error: score (the step's metadata['status'] and the environment metric "
                "'failed' show each failed sample)"),
    "areal": HostSkip(
        "AReaL 1.0.4 (`AsyncRewardWrapper`)", "drop",
        "the reward raises `SkippedSample`: AReaL retries it, then rejects the episode",
        "AsyncRewardWrapper retries a raising reward (max_retries, 3) and re-raises; AReaL's "
        "WorkflowExecutor turns an episode that raises into a rejected rollout, never trained on",
        counted="AReaL's `rollout/rejected`; the log"),
    "slime": HostSkip(
        "slime (`--custom-rm-path`)", "drop",
        "`sample.remove_sample = True`: slime leaves the sample out",
        "slime's `Sample.remove_sample` is its own per-sample drop",
        counted='`sample.metadata["verl_rewards"]["status"]`'),
    "serve_native": HostSkip(
        "`verl-rewards serve` `POST /v1/score`", "honour",
        "`statuses[i]` is `failed` or `timeout`; a `RemoteScorer` client applies its own `on_error`",
        "the answer carries every sample's status beside its score",
        counted="`statuses`, `/metrics`"),
    "serve_openrlhf": HostSkip(
        "`verl-rewards serve` `POST /openrlhf`", "refuse",
        "refused: every request answers 409, naming what to use",
        "OpenRLHF has no per-sample drop: a reward it cannot read fails the whole batch, and its "
        "dynamic filtering drops whole groups by their mean score",
        instead="a service with on_error: score (each failed sample is reward_failed in "
                "extra_logs)"),
    "serve_slime": HostSkip(
        "`verl-rewards serve` `POST /slime`", "refuse",
        "refused: every request answers 409, naming what to use",
        "slime's remote_rm reads one number per sample and trains on it",
        instead="the slime adapter (--custom-rm-path verl_rewards.integrations.slime.reward), "
                "which sets remove_sample, or a service with on_error: score"),
    "serve_nemo_gym": HostSkip(
        "`verl-rewards serve` `POST /nemo_gym/verify`", "drop",
        "`mask_sample: true` (with `failure_kind: verifier_error`)",
        "NeMo-Gym's BaseVerifyResponse.mask_sample excludes a sample whose reward is not a valid "
        "measurement",
        counted="`failure_kind`, `failure_reason`"),
    "serve_ors": HostSkip(
        "`verl-rewards serve --tasks` (Open Reward Standard `submit`)", "honour",
        "the tool output's `reward` is `None` (`finished: true`), its `metadata` has `status` and "
        "`error`; TRL's `OpenRewardSpec` then gives `None`, left out of training; `score_group` "
        "answers an error event for a group with a failed candidate",
        "ToolOutput.reward is optional (no reward observed), and TRL's OpenRewardSpec reward "
        "function returns None for a rollout without one; GroupScore.reward is required, and "
        "ORS says never to fabricate one",
        counted="`metadata.status`, `/metrics`"),
    "trainer": HostSkip(
        "the reference trainer", "honour",
        "masked out of its group's mean and std and out of the loss",
        "the trainer reads BatchResult.trainable", counted="`reward_skipped`"),
    "cli_score": HostSkip(
        "`verl-rewards score`", "honour", '`"score": null`, with the sample\'s `error` and `status`',
        "the output row keeps the status", counted="the summary"),
}

# The per-sample extra-info key the verl manager adds under skip: 1.0 when the
# reward itself scored the sample, 0.0 when it failed.
TRAINABLE_KEY = "trainable"


def refusal(host: str) -> str:
    """The message that refuses ``on_error: skip`` in ``host`` and says what to use."""
    row = HOSTS[host]
    message = f"on_error: skip is refused in {row.title}: {row.reason}. Use {row.instead}"
    return message.replace("`", "") + ". See docs/skip.md"


def check_skip(host: str, on_error: str) -> None:
    """Raise :class:`ConfigError` (:func:`refusal`) when ``on_error`` is skip and ``host``
    cannot leave a sample out."""
    if on_error == "skip" and HOSTS[host].policy == "refuse":
        raise ConfigError(refusal(host))


def markdown_table() -> str:
    """docs/skip.md's table of every host."""
    lines = ["| host | policy | a failed sample under `skip` | where failures show |",
             "|---|---|---|---|"]
    lines += [f"| {r.title} | {r.policy} | {r.failed_sample} | {r.counted} |" for r in HOSTS.values()]
    return "\n".join(lines) + "\n"


def trl_scores(result: BatchResult, on_error: str) -> list[float | None]:
    """TRL's rewards for ``result``: under skip, ``None`` for a sample the reward did not
    score (TRL turns it into NaN, leaves it out of the reward mean and zeroes its advantage)."""
    if on_error != "skip":
        return list(result.scores)
    return [s if ok else None for s, ok in zip(result.scores, result.trainable)]


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
