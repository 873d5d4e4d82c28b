"""GRPO: group-normalised advantages, a clipped policy-gradient loss, an optional KL term."""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from transformers import PreTrainedModel

from trainer.rollout import Rollout, TokenBatch
from trainer.settings import AlgoConfig


@dataclass(frozen=True)
class UpdateStats:
    """Averages over the optimiser steps of one training step."""

    loss: float
    pg_loss: float
    kl: float
    clip_frac: float
    grad_norm: float
    entropy: float


def token_logprobs(
    model: PreTrainedModel, batch: TokenBatch, temperature: float, with_entropy: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Log-probabilities of the sampled response tokens, ``[B, R]`` (and their entropy).

    Logits are divided by the sampling temperature and suppressed tokens
    masked, so these are the log-probabilities of the distribution the
    tokens were drawn from.
    """
    # Left padding shifts every prompt; positions must count real tokens only,
    # as generate() did, or the log-probs would not be those of the sampler.
    position_ids = (batch.attention_mask.cumsum(dim=1) - 1).clamp(min=0)
    logits = model(
        input_ids=batch.input_ids,
        attention_mask=batch.attention_mask,
        position_ids=position_ids,
    ).logits
    logits = logits[:, batch.prompt_length - 1 : -1].float() / temperature
    if batch.suppressed:
        logits[..., list(batch.suppressed)] = float("-inf")
    log_probs = torch.log_softmax(logits, dim=-1)
    chosen = log_probs.gather(-1, batch.responses.unsqueeze(-1)).squeeze(-1)
    # Padding after EOS is a suppressed token (log-prob -inf); zero it so that
    # masked means stay finite.
    chosen = torch.where(batch.response_mask.bool(), chosen, 0.0)
    if not with_entropy:
        return chosen, None
    probs = log_probs.exp()
    # Suppressed tokens have probability 0 and log-probability -inf: 0 * -inf is NaN,
    # in the forward pass and in the gradient of an entropy bonus.
    entropy = -(probs * torch.where(probs > 0, log_probs, 0.0)).sum(dim=-1)
    return chosen, entropy


def group_advantages(
    scores: torch.Tensor, group_size: int, norm_by_std: bool = True, eps: float = 1e-6,
    trainable: torch.Tensor | None = None,
) -> torch.Tensor:
    """Each score minus its group's mean (divided by the group's std when ``norm_by_std``).

    ``scores`` is ``[G * group_size]`` with groups contiguous; a group whose
    samples all scored the same gets zero advantage. ``trainable`` (bool, same
    shape) leaves the other samples out of their group's mean and std and gives
    them zero advantage: a sample the reward failed to score (``on_error:
    skip``) says nothing about the policy.
    """
    if scores.numel() % group_size:
        raise ValueError(f"{scores.numel()} scores do not split into groups of {group_size}")
    grouped = scores.float().view(-1, group_size)
    keep = (torch.ones_like(grouped) if trainable is None
            else trainable.float().view(-1, group_size))
    # A skipped sample's placeholder score (error_score, even NaN) must not leak in.
    grouped = torch.where(keep.bool(), grouped, 0.0)
    count = keep.sum(dim=1, keepdim=True)
    mean = grouped.sum(dim=1, keepdim=True) / count.clamp(min=1.0)
    centred = (grouped - mean) * keep
    if norm_by_std:
        # The unbiased std of the kept samples, as torch.std gives for a full group.
        var = (centred**2).sum(dim=1, keepdim=True) / (count - 1.0).clamp(min=1.0)
        centred = centred / (var.sqrt() + eps)
    return centred.view(-1)


def learning_rate(algo: AlgoConfig, step: int, total_steps: int) -> float:
    """The learning rate of 1-based ``step``: ``algo.lr``, or cosine-decayed from it to
    ``algo.lr_min_ratio * algo.lr`` at ``total_steps`` (a function of the step alone, so a
    resumed run continues the same schedule)."""
    if algo.lr_schedule == "constant" or total_steps <= 1:
        return algo.lr
    progress = min(1.0, (step - 1) / (total_steps - 1))
    floor = algo.lr * algo.lr_min_ratio
    return floor + (algo.lr - floor) * 0.5 * (1.0 + math.cos(math.pi * progress))


def masked_mean(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """Mean of ``values`` over positions where ``mask`` is 1 (token-mean aggregation)."""
    return (values * mask).sum() / mask.sum().clamp(min=1.0)


def clipped_pg_loss(
    logp: torch.Tensor,
    old_logp: torch.Tensor,
    advantages: torch.Tensor,
    mask: torch.Tensor,
    clip_eps: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """PPO's clipped surrogate with one advantage per sequence; returns (loss, clip fraction)."""
    ratio = torch.exp(logp - old_logp)
    adv = advantages.unsqueeze(-1)
    unclipped = -adv * ratio
    clipped = -adv * torch.clamp(ratio, 1.0 - clip_eps, 1.0 + clip_eps)
    loss = masked_mean(torch.maximum(unclipped, clipped), mask)
    clip_frac = masked_mean((clipped > unclipped).float(), mask)
    return loss, clip_frac


def kl_to_reference(logp: torch.Tensor, ref_logp: torch.Tensor) -> torch.Tensor:
    """Per-token KL(policy || reference), the non-negative "k3" estimator GRPO uses."""
    log_ratio = (ref_logp - logp).clamp(-20.0, 20.0)
    return torch.exp(log_ratio) - log_ratio - 1.0


def update(
    model: PreTrainedModel,
    optimizer: torch.optim.Optimizer,
    rollout: Rollout,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor | None,
    advantages: torch.Tensor,
    algo: AlgoConfig,
    temperature: float,
    generator: torch.Generator,
    trainable: torch.Tensor | None = None,
) -> UpdateStats:
    """``algo.ppo_epochs`` passes over the batch in ``algo.mini_batches`` shuffled slices.

    Samples with ``trainable`` False are out of the loss (no token of theirs
    counts); a slice with no trainable token takes no optimiser step.
    """
    model.train()
    size = rollout.input_ids.shape[0]
    keep = torch.ones(size, dtype=torch.bool) if trainable is None else trainable.bool()
    totals = torch.zeros(6)
    steps = 0
    for _ in range(algo.ppo_epochs):
        order = torch.randperm(size, generator=generator)
        for rows in order.chunk(algo.mini_batches):
            if not keep[rows].any():
                continue
            totals += _minibatch_step(
                model, optimizer, rollout.select(rows), old_logp[rows],
                None if ref_logp is None else ref_logp[rows], advantages[rows], algo, temperature,
                keep[rows],
            )
            steps += 1
    loss, pg_loss, kl, clip_frac, grad_norm, entropy = (totals / max(steps, 1)).tolist()
    return UpdateStats(loss, pg_loss, kl, clip_frac, grad_norm, entropy)


def minibatch_loss(
    model: PreTrainedModel,
    batch: TokenBatch,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor | None,
    advantages: torch.Tensor,
    algo: AlgoConfig,
    temperature: float,
    trainable: torch.Tensor,
) -> tuple[torch.Tensor, torch.Tensor]:
    """The loss to minimise and its detached parts ``[loss, pg, kl, clip_frac, entropy]``.

    Token-mean over the response tokens of the ``trainable`` samples only.
    """
    mask = batch.response_mask * trainable.float().unsqueeze(-1)
    logp, entropy = token_logprobs(model, batch, temperature, with_entropy=True)
    assert entropy is not None
    pg_loss, clip_frac = clipped_pg_loss(logp, old_logp, advantages, mask, algo.clip_eps)
    kl = torch.zeros(())
    if ref_logp is not None:
        kl = masked_mean(kl_to_reference(logp, ref_logp), mask)
    mean_entropy = masked_mean(entropy, mask)
    loss = pg_loss + algo.kl_coef * kl - algo.entropy_coef * mean_entropy
    parts = torch.stack([loss.detach(), pg_loss.detach(), kl.detach(), clip_frac,
                         mean_entropy.detach()]).float()
    return loss, parts


def _minibatch_step(
    model: PreTrainedModel,
    optimizer: torch.optim.Optimizer,
    batch: TokenBatch,
    old_logp: torch.Tensor,
    ref_logp: torch.Tensor | None,
    advantages: torch.Tensor,
    algo: AlgoConfig,
    temperature: float,
    trainable: torch.Tensor,
) -> torch.Tensor:
    loss, parts = minibatch_loss(model, batch, old_logp, ref_logp, advantages, algo,
                                 temperature, trainable)
    optimizer.zero_grad(set_to_none=True)
    loss.backward()
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), algo.max_grad_norm)
    optimizer.step()
    loss_, pg_loss, kl, clip_frac, entropy = parts
    return torch.stack([loss_, pg_loss, kl, clip_frac, grad_norm.detach().float(), entropy])
