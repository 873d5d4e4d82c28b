"""Glue to the reward layer: rollouts -> samples, an async launch timed for overlap,
a batch result -> score tensor and step metrics.

The trainer imports no reward: the ``Scorer`` it is given was built from the
``reward`` config section alone.
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections import Counter
from collections.abc import Mapping
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import torch

from trainer.rollout import Rollout

if TYPE_CHECKING:
    from verl_rewards import BatchResult, Scorer


def effective_section(scorer: Scorer) -> dict[str, Any]:
    """The ``reward`` section the scorer runs with: overrides applied, every default filled
    in, and ``timeout_s: auto`` replaced by the timeout it resolves to (when known here)."""
    section: dict[str, Any] = _plain(scorer.config)
    if section["timeout_s"] == "auto":
        section["timeout_s"] = _declared_timeout(scorer)
    return section


def _plain(value: Any) -> Any:
    """Dataclasses, mappings and tuples as plain YAML-able data."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {f.name: _plain(getattr(value, f.name)) for f in dataclasses.fields(value)
                if f.name != "key"}  # a component's key is its name in ``rewards``
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value


def _declared_timeout(scorer: Scorer) -> float | str | None:
    """The timeout ``auto`` resolves to for a single reward (the one rule in
    :mod:`verl_rewards.limits`, read from ``scorer.info``); a composite (one timeout
    per component) or a reward not importable here keeps ``auto``."""
    from verl_rewards.errors import VerlRewardsError
    from verl_rewards.limits import limits_for
    from verl_rewards.reference import RewardRef

    if not isinstance(scorer.ref, RewardRef):
        return "auto"
    try:
        return limits_for(scorer.config).for_reward(scorer.info).timeout_s
    except VerlRewardsError:  # e.g. installed on the workers only
        return "auto"


def build_samples(rollout: Rollout) -> list[dict[str, Any]]:
    """One reward sample per sequence; ``extra_info`` adds prompt index, group and length."""
    lengths = rollout.response_lengths
    return [
        {
            "data_source": record.data_source,
            "solution_str": text,
            "ground_truth": record.ground_truth,
            "prompt": record.prompt,  # the text the response was generated from
            "extra_info": {
                **record.extra_info,
                "prompt_index": record.row,
                "sample_index": i % rollout.group_size,
                "response_length": length,
            },
        }
        for i, (record, text, length) in enumerate(zip(rollout.records, rollout.texts, lengths))
    ]


@dataclass
class PendingReward:
    """A reward batch in flight, with the clock readings needed to measure overlap."""

    future: Future[BatchResult]
    submitted_at: float
    done_at: list[float] = field(default_factory=list)

    def wait(self, overlapped_until: float) -> tuple[BatchResult, RewardTiming]:
        """Block for the result; ``overlapped_until`` is when the trainer's own work ended."""
        result = self.future.result()
        finished = self.done_at[0] if self.done_at else time.perf_counter()
        return result, RewardTiming.measure(self.submitted_at, finished, overlapped_until)


@dataclass(frozen=True)
class RewardTiming:
    """How long the reward batch took and how much of that the trainer did not wait for."""

    latency_s: float
    hidden_s: float

    @property
    def hidden_frac(self) -> float:
        """Share of the reward latency hidden behind log-prob work (1.0 when instant)."""
        return 1.0 if self.latency_s <= 0 else self.hidden_s / self.latency_s

    @classmethod
    def measure(cls, submitted: float, finished: float, overlapped_until: float) -> RewardTiming:
        """From three clock readings: launch, completion, end of the overlapping work."""
        latency = max(0.0, finished - submitted)
        hidden = max(0.0, min(finished, overlapped_until) - submitted)
        return cls(latency_s=latency, hidden_s=min(hidden, latency))


def launch(scorer: Scorer, samples: list[dict[str, Any]]) -> PendingReward:
    """Submit ``samples`` without blocking; the completion time is recorded by callback."""
    submitted_at = time.perf_counter()  # before submit(): its synchronous part counts too
    pending = PendingReward(future=scorer.submit(samples), submitted_at=submitted_at)
    # A done-callback stamps the moment the result arrived, even while the
    # trainer is still busy computing log-probs; that is what makes the
    # overlap measurable rather than inferred.
    pending.future.add_done_callback(lambda _: pending.done_at.append(time.perf_counter()))
    return pending


def score_tensor(result: BatchResult) -> torch.Tensor:
    """The scores the advantages are computed from (failed samples carry ``error_score``)."""
    return torch.tensor([float(s) for s in result.scores], dtype=torch.float32)


def trainable_mask(result: BatchResult) -> torch.Tensor:
    """True for each sample the reward itself scored (``BatchResult.trainable``)."""
    return torch.tensor(result.trainable, dtype=torch.bool)


def reward_metrics(result: BatchResult, timing: RewardTiming) -> dict[str, float | int | None]:
    """Per-step reward metrics; the mean and std cover the samples the plugin scored."""
    returned = result.ok_scores()
    return {
        "reward_mean": _mean(returned),
        "reward_std": _std(returned),
        "reward_min": min(returned) if returned else None,
        "reward_max": max(returned) if returned else None,
        "reward_failed": result.n_failed,
        "reward_timed_out": result.n_timed_out,
        "reward_latency_s": timing.latency_s,
        "reward_hidden_s": timing.hidden_s,
        "reward_hidden_frac": timing.hidden_frac,
        **extra_means(result),
    }


def extra_means(result: BatchResult) -> dict[str, float]:
    """``reward_extra/<key>``: the mean of each numeric per-sample extra the reward returned."""
    means: dict[str, float] = {}
    for key, values in result.extra_info.items():
        numbers = [v for v, st in zip(values, result.statuses) if st == "ok" and v is not None]
        if numbers and all(isinstance(v, (int, float)) for v in numbers):
            means[f"reward_extra/{key}"] = float(sum(numbers)) / len(numbers)
    return means


def first_errors(result: BatchResult, limit: int = 3) -> list[str]:
    """Up to ``limit`` distinct error messages of a batch, for the log."""
    seen: list[str] = []
    for error in result.errors:
        if error is not None and error not in seen:
            seen.append(error)
            if len(seen) == limit:
                break
    return seen


def most_common_error(result: BatchResult) -> tuple[str, int] | None:
    """The batch's most frequent error message and how many samples it failed."""
    counts = Counter(e for e in result.errors if e is not None)
    return counts.most_common(1)[0] if counts else None


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def _std(values: list[float]) -> float | None:
    if not values:
        return None
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))
