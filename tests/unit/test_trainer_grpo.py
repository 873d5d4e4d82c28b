"""trainer.grpo and trainer.rollout: advantages, losses, masks, and log-probs that match sampling."""

from __future__ import annotations

import math

import pytest
import torch
from transformers import GenerationConfig

from trainer import grpo
from trainer.data import PromptRecord
from trainer.model import build_policy
from trainer.rollout import TokenBatch, generate, response_mask, suppressed_tokens
from trainer.settings import AlgoConfig, ModelConfig
from trainer.tokenizer import build_char_tokenizer

TINY = ModelConfig(hidden_size=32, num_layers=1, num_heads=2, intermediate_size=64)


def _prompts(*texts: str) -> list[PromptRecord]:
    return [PromptRecord(i, t, "toy", t[:-1], {}) for i, t in enumerate(texts)]


@pytest.fixture
def policy():
    torch.manual_seed(0)
    tok = build_char_tokenizer("0123456789:")
    return build_policy(TINY, tok), tok


def test_group_advantages_are_normalised_within_each_group():
    adv = grpo.group_advantages(torch.tensor([1.0, 0.0, 0.5, 0.5, 2.0, 4.0]), group_size=2)
    s = 1 / math.sqrt(2)  # std of two values 1 apart is 1/sqrt(2)
    torch.testing.assert_close(adv, torch.tensor([0.5 / s, -0.5 / s, 0.0, 0.0, -1 / (2 * s), 1 / (2 * s)]),
                               rtol=1e-4, atol=1e-4)
    centred = grpo.group_advantages(torch.tensor([1.0, 0.0, 2.0, 4.0]), 2, norm_by_std=False)
    assert centred.tolist() == [0.5, -0.5, -1.0, 1.0]


def test_group_advantages_reject_a_ragged_batch():
    with pytest.raises(ValueError, match="do not split into groups of 4"):
        grpo.group_advantages(torch.zeros(6), 4)


def test_clipped_loss_stops_the_gradient_past_the_clip_range():
    old = torch.zeros(1, 2)
    mask = torch.ones(1, 2)
    adv = torch.tensor([1.0])
    inside = torch.tensor([[0.05, 0.05]], requires_grad=True)
    loss, clip_frac = grpo.clipped_pg_loss(inside, old, adv, mask, clip_eps=0.2)
    loss.backward()
    assert loss.item() == pytest.approx(-math.exp(0.05)) and clip_frac.item() == 0.0
    assert inside.grad is not None and inside.grad.abs().sum() > 0
    beyond = torch.tensor([[0.5, 0.5]], requires_grad=True)  # ratio 1.65 > 1.2, advantage > 0
    loss, clip_frac = grpo.clipped_pg_loss(beyond, old, adv, mask, clip_eps=0.2)
    loss.backward()
    assert loss.item() == pytest.approx(-1.2) and clip_frac.item() == 1.0
    assert beyond.grad is not None and beyond.grad.abs().sum() == 0


def test_masked_positions_do_not_count():
    values = torch.tensor([[1.0, 100.0], [3.0, 5.0]])
    mask = torch.tensor([[1.0, 0.0], [1.0, 1.0]])
    assert grpo.masked_mean(values, mask).item() == 3.0


def test_kl_is_zero_for_equal_policies_and_positive_otherwise():
    logp = torch.log(torch.tensor([0.5, 0.2]))
    assert grpo.kl_to_reference(logp, logp).tolist() == [0.0, 0.0]
    assert (grpo.kl_to_reference(logp, torch.log(torch.tensor([0.25, 0.4]))) > 0).all()


def test_response_mask_keeps_tokens_up_to_and_including_the_first_eos():
    responses = torch.tensor([[5, 2, 0, 0], [5, 6, 7, 8], [2, 5, 2, 0]])
    assert response_mask(responses, eos_token_id=2).tolist() == [
        [1, 1, 0, 0], [1, 1, 1, 1], [1, 0, 0, 0]]


def test_rollout_groups_samples_and_never_emits_invisible_tokens(policy):
    model, tok = policy
    rollout = generate(model, tok, _prompts("12:", "9:"), n=3, max_new_tokens=6, temperature=1.0)
    assert [r.row for r in rollout.records] == [0, 0, 0, 1, 1, 1]
    assert rollout.input_ids.shape == (6, rollout.prompt_length + 6)
    assert suppressed_tokens(tok) == (0, 1, 3)
    live = rollout.responses[rollout.response_mask.bool()]
    assert not any(t in (0, 1, 3) for t in live.tolist())
    assert [len(t) for t in rollout.texts] == [
        n - int(tok.eos_token_id in row.tolist())
        for n, row in zip(rollout.response_lengths, rollout.responses)]


def test_logprobs_match_the_sampler_even_with_left_padding(policy):
    model, tok = policy
    prompts = _prompts("1234:", "9:")
    torch.manual_seed(1)
    rollout = generate(model, tok, prompts, n=2, max_new_tokens=5, temperature=0.7)
    torch.manual_seed(1)
    encoded = tok([p.prompt for p in prompts for _ in range(2)], return_tensors="pt", padding=True)
    reference = model.generate(**encoded, generation_config=GenerationConfig(
        do_sample=True, temperature=0.7, top_k=0, top_p=1.0, max_new_tokens=5,
        pad_token_id=0, eos_token_id=2, suppress_tokens=[0, 1, 3],
        output_logits=True, return_dict_in_generate=True))
    assert torch.equal(reference.sequences, rollout.input_ids)
    # What the sampler drew from: raw logits at the temperature, suppressed tokens removed.
    sampler = torch.stack(reference.logits, 1).float() / 0.7
    sampler[..., [0, 1, 3]] = float("-inf")
    sampler = torch.log_softmax(sampler, dim=-1)
    expected = sampler.gather(-1, rollout.responses.unsqueeze(-1)).squeeze(-1)
    mask = rollout.response_mask.bool()
    logp, entropy = grpo.token_logprobs(model, rollout, temperature=0.7, with_entropy=True)
    torch.testing.assert_close(logp[mask], expected[mask], atol=1e-5, rtol=1e-5)
    assert torch.isfinite(logp).all() and torch.isfinite(entropy).all()


def test_update_moves_probability_towards_positive_advantages(policy):
    model, tok = policy
    torch.manual_seed(0)
    rollout = generate(model, tok, _prompts("12:"), n=4, max_new_tokens=4, temperature=1.0)
    with torch.no_grad():
        old, _ = grpo.token_logprobs(model, rollout, 1.0)
    advantages = torch.tensor([1.0, -1.0, 1.0, -1.0])
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    algo = AlgoConfig(lr=1e-2, kl_coef=0.1, mini_batches=2, ppo_epochs=2)
    stats = grpo.update(model, optimizer, rollout, old, old.clone(), advantages, algo, 1.0,
                        torch.Generator().manual_seed(0))
    assert all(math.isfinite(v) for v in vars(stats).values())
    with torch.no_grad():
        new, _ = grpo.token_logprobs(model, rollout, 1.0)
    delta = ((new - old) * rollout.response_mask).sum(dim=1)  # per-sequence log-prob change
    assert delta[advantages > 0].mean() > delta[advantages < 0].mean()


def test_a_mini_batch_is_the_selected_rows_tokens_and_gives_their_logprobs(policy):
    model, tok = policy
    rollout = generate(model, tok, _prompts("12:", "9:"), n=2, max_new_tokens=4, temperature=1.0)
    rows = torch.tensor([3, 0])
    batch = rollout.select(rows)
    assert type(batch) is TokenBatch  # no records or texts to keep in step
    assert torch.equal(batch.input_ids, rollout.input_ids[rows])
    assert torch.equal(batch.response_mask, rollout.response_mask[rows])
    assert (batch.prompt_length, batch.suppressed) == (rollout.prompt_length, rollout.suppressed)
    with torch.no_grad():
        whole, _ = grpo.token_logprobs(model, rollout, 1.0)
        part, _ = grpo.token_logprobs(model, batch, 1.0)
    torch.testing.assert_close(part, whole[rows], atol=1e-5, rtol=1e-5)


def test_a_skipped_sample_leaves_its_groups_advantages_as_if_it_were_absent():
    scores = torch.tensor([1.0, 0.0, 0.5, 0.25, 9.0, 2.0, 4.0, 3.0])
    trainable = torch.tensor([True, True, True, True, False, True, True, True])
    for norm in (True, False):
        adv = grpo.group_advantages(scores, 4, norm, trainable=trainable)
        without = grpo.group_advantages(torch.tensor([2.0, 4.0, 3.0]), 3, norm)
        torch.testing.assert_close(adv[:4], grpo.group_advantages(scores[:4], 4, norm))
        assert adv[4].item() == 0.0
        torch.testing.assert_close(adv[5:], without)
    # Whatever placeholder a failed sample carries (error_score, even NaN) stays out.
    poisoned = scores.clone()
    poisoned[4] = float("nan")
    torch.testing.assert_close(grpo.group_advantages(poisoned, 4, trainable=trainable),
                               grpo.group_advantages(scores, 4, trainable=trainable))


def test_a_group_with_one_trainable_sample_gets_zero_advantage():
    adv = grpo.group_advantages(torch.tensor([0.3, 0.9]), 2,
                                trainable=torch.tensor([True, False]))
    assert adv.tolist() == [0.0, 0.0]


def _loss_and_grads(model, batch, advantages, trainable):
    model.zero_grad(set_to_none=True)
    with torch.no_grad():
        old, _ = grpo.token_logprobs(model, batch, 1.0)
    algo = AlgoConfig(kl_coef=0.1, entropy_coef=0.01)
    loss, _ = grpo.minibatch_loss(model, batch, old - 0.05, old + 0.1, advantages, algo, 1.0,
                                  trainable)
    loss.backward()
    return loss.detach(), [p.grad.clone() for p in model.parameters()]


def test_a_skipped_sample_contributes_no_loss_and_no_gradient(policy):
    model, tok = policy
    torch.manual_seed(0)
    rollout = generate(model, tok, _prompts("12:", "9:"), n=2, max_new_tokens=4, temperature=1.0)
    advantages = torch.tensor([1.0, -1.0, 0.5, 2.0])
    trainable = torch.tensor([True, True, True, False])
    loss, grads = _loss_and_grads(model, rollout, advantages, trainable)
    kept = torch.tensor([0, 1, 2])
    alone_loss, alone_grads = _loss_and_grads(model, rollout.select(kept), advantages[kept],
                                              torch.ones(3, dtype=torch.bool))
    torch.testing.assert_close(loss, alone_loss)
    for grad, alone in zip(grads, alone_grads):
        torch.testing.assert_close(grad, alone, atol=1e-7, rtol=1e-5)
    # Its advantage does not matter either: the sample is out of the loss, not zero-weighted.
    _, other = _loss_and_grads(model, rollout, torch.tensor([1.0, -1.0, 0.5, -50.0]), trainable)
    for grad, again in zip(grads, other):
        torch.testing.assert_close(grad, again, atol=1e-7, rtol=1e-5)


def test_update_takes_no_optimiser_step_when_no_sample_is_trainable(policy):
    model, tok = policy
    rollout = generate(model, tok, _prompts("12:"), n=4, max_new_tokens=4, temperature=1.0)
    with torch.no_grad():
        old, _ = grpo.token_logprobs(model, rollout, 1.0)
    before = [p.detach().clone() for p in model.parameters()]
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2, weight_decay=0.1)
    stats = grpo.update(model, optimizer, rollout, old, None, torch.ones(4), AlgoConfig(), 1.0,
                        torch.Generator().manual_seed(0), torch.zeros(4, dtype=torch.bool))
    assert stats.loss == 0.0 and stats.grad_norm == 0.0
    assert all(torch.equal(b, p) for b, p in zip(before, model.parameters()))


def test_cosine_learning_rate_runs_from_lr_to_its_floor_and_constant_stays():
    cosine = AlgoConfig(lr=1e-3, lr_schedule="cosine", lr_min_ratio=0.1)
    rates = [grpo.learning_rate(cosine, step, 5) for step in range(1, 6)]
    assert rates[0] == pytest.approx(1e-3) and rates[-1] == pytest.approx(1e-4)
    assert rates[2] == pytest.approx(0.55e-3) and rates == sorted(rates, reverse=True)
    assert grpo.learning_rate(AlgoConfig(lr=1e-3), 4, 5) == 1e-3


def test_the_entropy_bonus_raises_entropy():
    torch.manual_seed(0)
    model = build_policy(TINY, build_char_tokenizer("0123456789:"))
    tok = build_char_tokenizer("0123456789:")
    rollout = generate(model, tok, _prompts("12:"), n=4, max_new_tokens=4, temperature=1.0)
    with torch.no_grad():
        old, before = grpo.token_logprobs(model, rollout, 1.0, with_entropy=True)
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-2)
    algo = AlgoConfig(lr=1e-2, kl_coef=0.0, entropy_coef=1.0)
    for _ in range(5):
        grpo.update(model, optimizer, rollout, old, None, torch.zeros(4), algo, 1.0,
                    torch.Generator().manual_seed(0))
    with torch.no_grad():
        _, after = grpo.token_logprobs(model, rollout, 1.0, with_entropy=True)
    mask = rollout.response_mask.bool()
    assert after[mask].mean() > before[mask].mean()
