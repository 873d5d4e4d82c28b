"""Sampling: ``n`` completions per prompt with ``model.generate``, as one padded batch."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
from transformers import GenerationConfig, PreTrainedModel, PreTrainedTokenizerBase

from trainer.data import PromptRecord


@dataclass(frozen=True)
class TokenBatch:
    """Sequences as token tensors: all that log-probabilities are computed from."""

    input_ids: torch.Tensor  # [B, P + R], prompt left-padded, response right-padded
    attention_mask: torch.Tensor  # [B, P + R]
    response_mask: torch.Tensor  # [B, R] float, 1 up to and including the first EOS
    prompt_length: int  # P
    suppressed: tuple[int, ...] = ()  # token ids the sampler may never emit

    def select(self, rows: torch.Tensor) -> TokenBatch:
        """The sequences ``rows`` (a shuffled mini-batch, say): tokens only."""
        return TokenBatch(self.input_ids[rows], self.attention_mask[rows],
                          self.response_mask[rows], self.prompt_length, self.suppressed)

    @property
    def responses(self) -> torch.Tensor:
        """Response token ids, ``[B, R]``."""
        return self.input_ids[:, self.prompt_length :]

    @property
    def response_lengths(self) -> list[int]:
        """Tokens per response (EOS included when one was sampled)."""
        return [int(n) for n in self.response_mask.sum(dim=1).tolist()]

    @property
    def num_tokens(self) -> int:
        """Response tokens generated in the batch."""
        return int(self.response_mask.sum().item())


@dataclass(frozen=True, kw_only=True)
class Rollout(TokenBatch):
    """One sampled batch: ``group_size`` sequences per prompt, a prompt's contiguous."""

    records: list[PromptRecord]  # one per sequence
    texts: list[str]  # decoded responses, special tokens removed
    group_size: int


@torch.no_grad()
def generate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    prompts: Sequence[PromptRecord],
    n: int,
    max_new_tokens: int,
    temperature: float,
) -> Rollout:
    """Sample ``n`` completions for each prompt from the full softmax at ``temperature``."""
    records = [record for record in prompts for _ in range(n)]
    suppressed = suppressed_tokens(tokenizer)
    encoded = tokenizer([r.prompt for r in records], return_tensors="pt", padding=True)
    config = GenerationConfig(
        do_sample=True,
        temperature=temperature,
        top_k=0,
        top_p=1.0,
        max_new_tokens=max_new_tokens,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        bos_token_id=tokenizer.bos_token_id,
        suppress_tokens=list(suppressed) or None,
    )
    was_training = model.training
    model.eval()
    output = model.generate(
        input_ids=encoded["input_ids"],
        attention_mask=encoded["attention_mask"],
        generation_config=config,
    )
    model.train(was_training)
    prompt_length = encoded["input_ids"].shape[1]
    responses = output[:, prompt_length:]
    mask = response_mask(responses, tokenizer.eos_token_id)
    return Rollout(
        records=records,
        input_ids=output,
        attention_mask=torch.cat([encoded["attention_mask"], mask.long()], dim=1),
        response_mask=mask,
        prompt_length=prompt_length,
        texts=tokenizer.batch_decode(
            torch.where(mask.bool(), responses, tokenizer.pad_token_id), skip_special_tokens=True
        ),
        group_size=n,
        suppressed=suppressed,
    )


def suppressed_tokens(tokenizer: PreTrainedTokenizerBase) -> tuple[int, ...]:
    """Padding, BOS and UNK: special tokens that would vanish from the decoded text.

    A sampled ``<pad>`` would be invisible to the reward yet count as a token,
    so these are masked out of both the sampler and the log-probs. EOS stays.
    """
    ids = {tokenizer.pad_token_id, tokenizer.bos_token_id, tokenizer.unk_token_id}
    ids.discard(None)
    ids.discard(tokenizer.eos_token_id)
    return tuple(sorted(i for i in ids if i is not None))


def response_mask(responses: torch.Tensor, eos_token_id: int) -> torch.Tensor:
    """1.0 for each response token up to and including the first EOS, else 0.0."""
    is_eos = (responses == eos_token_id).long()
    eos_seen_before = torch.cumsum(is_eos, dim=1) - is_eos
    return (eos_seen_before == 0).float()
