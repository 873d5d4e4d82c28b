"""A tiny sequence-classification reward model built in code: no download.

``save_tiny_classifier`` writes a one-layer Llama classifier and a character
tokenizer with a chat template to a folder. With ``zero_head`` the score head
is all zeros, so every input scores exactly 0.0 (0.5 normalised): that is the
self-test model ``verl-rewards check hf_reward_model`` runs, end to end
(template, tokenizer, batching, forward pass), with a known answer.
"""

from __future__ import annotations

import os
import string
import tempfile
from pathlib import Path

SELF_TEST_MODEL = "verl-rewards-models:self-test"  # ':' cannot occur in a hub model id

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
CHAT_TEMPLATE = (
    "{{ bos_token }}{% for m in messages %}[{{ m['role'] }}]{{ m['content'] }}{{ eos_token }}{% endfor %}"
)


def save_tiny_classifier(path: str | os.PathLike[str], *, zero_head: bool = False, seed: int = 0,
                         hidden_size: int = 16, layers: int = 1) -> Path:
    """Write a tiny random-init (seeded) classifier and its tokenizer to ``path``."""
    import torch
    from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers
    from transformers import LlamaConfig, LlamaForSequenceClassification, PreTrainedTokenizerFast

    vocab = {token: i for i, token in enumerate((PAD, BOS, EOS, UNK))}
    for char in string.printable:
        vocab.setdefault(char, len(vocab))
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.decoder = decoders.Fuse()
    tokenizer = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=core, bos_token=BOS, eos_token=EOS, pad_token=PAD, unk_token=UNK,
    )
    tokenizer.chat_template = CHAT_TEMPLATE
    config = LlamaConfig(  # type: ignore[call-arg]
        vocab_size=len(vocab), hidden_size=hidden_size, intermediate_size=2 * hidden_size,
        num_hidden_layers=layers, num_attention_heads=2, num_key_value_heads=2,
        max_position_embeddings=4096, num_labels=1, pad_token_id=vocab[PAD],
        bos_token_id=vocab[BOS], eos_token_id=vocab[EOS],
    )
    torch.manual_seed(seed)
    model = LlamaForSequenceClassification(config)  # type: ignore[no-untyped-call]
    if zero_head:
        with torch.no_grad():
            model.score.weight.zero_()
    target = Path(path)
    model.save_pretrained(target)
    tokenizer.save_pretrained(target)
    return target


def self_test_model_path() -> Path:
    """The zero-head self-test model, built once per machine and version under the temp dir."""
    from . import __version__

    target = Path(tempfile.gettempdir()) / f"verl-rewards-models-{__version__}-self-test"
    if (target / "config.json").is_file():
        return target
    staging = Path(tempfile.mkdtemp(prefix=target.name + ".", dir=target.parent))
    save_tiny_classifier(staging, zero_head=True)
    try:
        os.replace(staging, target)  # atomic: a concurrent builder's copy wins, equally good
    except OSError:
        import shutil

        shutil.rmtree(staging, ignore_errors=True)
    return target
