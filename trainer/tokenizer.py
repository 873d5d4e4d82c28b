"""A character-level tokenizer built in process with the ``tokenizers`` library.

Nothing is downloaded: the vocabulary is the special tokens plus every
character seen in the prompt set, so a tiny model starts with a tiny output
space. A checkpoint's tokenizer is reloaded from its directory instead.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from tokenizers import Regex, Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import AutoTokenizer, PreTrainedTokenizerBase, PreTrainedTokenizerFast

PAD, BOS, EOS, UNK = "<pad>", "<bos>", "<eos>", "<unk>"
SPECIAL_TOKENS = (PAD, BOS, EOS, UNK)


def alphabet_of(texts: Iterable[str]) -> list[str]:
    """The sorted set of characters in ``texts`` (the vocabulary, without specials)."""
    return sorted({char for text in texts for char in text})


def build_char_tokenizer(alphabet: Iterable[str]) -> PreTrainedTokenizerFast:
    """A left-padding character tokenizer over ``alphabet`` that prepends ``<bos>``."""
    vocab = {token: index for index, token in enumerate(SPECIAL_TOKENS)}
    for char in sorted(set(alphabet)):
        if len(char) != 1:
            raise ValueError(f"alphabet entries must be single characters, got {char!r}")
        vocab.setdefault(char, len(vocab))
    core = Tokenizer(models.WordLevel(vocab=vocab, unk_token=UNK))
    core.pre_tokenizer = pre_tokenizers.Split(Regex("."), behavior="isolated")
    core.post_processor = processors.TemplateProcessing(
        single=f"{BOS} $A", special_tokens=[(BOS, vocab[BOS])]
    )
    core.decoder = decoders.Fuse()
    return PreTrainedTokenizerFast(
        tokenizer_object=core,
        bos_token=BOS,
        eos_token=EOS,
        pad_token=PAD,
        unk_token=UNK,
        padding_side="left",
    )


def load_tokenizer(path: str | Path) -> PreTrainedTokenizerBase:
    """A tokenizer saved next to a local checkpoint, set up for left padding."""
    tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
    tokenizer.padding_side = "left"
    if tokenizer.pad_token_id is None:
        tokenizer.pad_token = tokenizer.eos_token
    return tokenizer
