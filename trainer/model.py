"""The policy: a tiny random-init Llama built from a config, or a local checkpoint."""

from __future__ import annotations

import copy

import torch
from transformers import (
    AutoModelForCausalLM,
    LlamaConfig,
    LlamaForCausalLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from trainer.settings import ModelConfig


def build_policy(config: ModelConfig, tokenizer: PreTrainedTokenizerBase) -> PreTrainedModel:
    """A causal LM for ``tokenizer``: loaded from ``config.path``, or random-init (seeded)."""
    if config.path:
        return load_policy(config.path)
    llama = LlamaConfig(
        vocab_size=len(tokenizer),
        hidden_size=config.hidden_size,
        intermediate_size=config.intermediate_size,
        num_hidden_layers=config.num_layers,
        num_attention_heads=config.num_heads,
        num_key_value_heads=config.num_heads,
        max_position_embeddings=config.max_position_embeddings,
        bos_token_id=tokenizer.bos_token_id,
        eos_token_id=tokenizer.eos_token_id,
        pad_token_id=tokenizer.pad_token_id,
        tie_word_embeddings=True,
    )
    return LlamaForCausalLM(llama)


def load_policy(path: str) -> PreTrainedModel:
    """A checkpoint from a local directory; never reaches a hub."""
    model = AutoModelForCausalLM.from_pretrained(
        path, local_files_only=True, dtype=torch.float32
    )
    assert isinstance(model, PreTrainedModel)
    return model


def frozen_copy(model: PreTrainedModel) -> PreTrainedModel:
    """A reference model for the KL term: same weights, no gradients, eval mode."""
    reference = copy.deepcopy(model)
    reference.eval()
    reference.requires_grad_(False)
    return reference


def parameter_count(model: torch.nn.Module) -> int:
    """Number of trainable parameters."""
    return sum(p.numel() for p in model.parameters() if p.requires_grad)
