"""Token-level reward tensors in verl's layout, from a :class:`BatchResult`.

verl's reward managers return a float tensor shaped like the responses, with
each sample's score at its last valid response token and zeros elsewhere,
plus the reward's extra info as per-sample arrays. This builds both with one
scatter (no per-item Python indexing), on whatever device the mask lives.
torch is imported only when this module is used.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np

from .results import BatchResult
from .samples import Sample

if TYPE_CHECKING:
    import torch


class TokenRewards(NamedTuple):
    """verl's ``reward_tensor`` and ``reward_extra_info``."""

    token_level_scores: torch.Tensor  # (batch, response_length), float32
    reward_extra_info: dict[str, np.ndarray]


def last_valid_positions(response_mask: torch.Tensor) -> torch.Tensor:
    """Index of each row's last non-zero mask entry (0 for an all-zero row)."""
    # The running count peaks first at the last valid token, and argmax returns
    # the first maximum: one pass, no flip, any padding side.
    return response_mask.ne(0).cumsum(-1).argmax(-1)


def token_level_rewards(
    result: BatchResult | Sequence[float], response_mask: torch.Tensor
) -> TokenRewards:
    """Place each sample's score at its last valid response token.

    ``response_mask`` is ``(batch, response_length)`` (bool or 0/1, any
    padding side). A row with no valid token gets its score at position 0.
    """
    torch = torch_module()
    scores = result.scores if isinstance(result, BatchResult) else list(result)
    if response_mask.dim() != 2 or response_mask.shape[0] != len(scores):
        raise ValueError(
            f"response_mask must be (batch={len(scores)}, response_length); got {tuple(response_mask.shape)}"
        )
    values = torch.tensor(scores, dtype=torch.float32, device=response_mask.device)
    tensor = torch.zeros(response_mask.shape, dtype=torch.float32, device=response_mask.device)
    tensor.scatter_(1, last_valid_positions(response_mask).unsqueeze(1), values.unsqueeze(1))
    extra = extra_info_arrays(result) if isinstance(result, BatchResult) else {}
    return TokenRewards(tensor, extra)


def decode_responses(tokenizer: Any, responses: torch.Tensor, response_mask: torch.Tensor) -> list[str]:
    """Decode each row's valid response tokens (any padding side) in one batch call."""
    valid = response_mask.ne(0)
    flat = responses[valid].tolist()  # valid ids only, row by row, in one conversion
    ids, start = [], 0
    for n in valid.sum(-1).tolist():
        ids.append(flat[start : start + n])
        start += n
    return decode_ids(tokenizer, ids)


def decode_ids(tokenizer: Any, ids: list[list[int]], skip_special_tokens: bool = False) -> list[str]:
    """Decode lists of token ids in one batch call, as ``tokenizer.decode`` would each."""
    backend = getattr(tokenizer, "backend_tokenizer", None)
    if backend is None or getattr(tokenizer, "clean_up_tokenization_spaces", False):
        return list(tokenizer.batch_decode(ids, skip_special_tokens=skip_special_tokens))
    # A fast tokenizer's Rust backend decodes the batch in one call; transformers'
    # batch_decode first walks every token id in Python to type-check it (2-3x slower).
    return list(backend.decode_batch(ids, skip_special_tokens=skip_special_tokens))


def score_responses(
    scorer: Any, tokenizer: Any, responses: torch.Tensor, response_mask: torch.Tensor,
    data_sources: Sequence[str], ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None,
) -> tuple[BatchResult, TokenRewards]:
    """Token ids to a token-level reward tensor: decode once, score once, scatter once."""
    texts = decode_responses(tokenizer, responses, response_mask)
    extras = extra_infos if extra_infos is not None else [None] * len(texts)
    samples = list(map(Sample, data_sources, texts, ground_truths, extras))
    result = scorer.score(samples)
    return result, token_level_rewards(result, response_mask)


def extra_info_arrays(result: BatchResult) -> dict[str, np.ndarray]:
    """Extra-info columns as arrays (numeric when every value is, else object)."""
    columns: dict[str, np.ndarray] = {}
    for key, values in result.extra_info.items():
        columns[key] = _as_array(values)
    columns["error"] = _as_array(result.errors)
    return columns


def _as_array(values: list[Any]) -> np.ndarray:
    if values and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in values):
        return np.asarray(values, dtype=np.float64)
    array = np.empty(len(values), dtype=object)
    array[:] = values
    return array


def torch_module() -> Any:
    """torch, imported on first use (it is an optional dependency)."""
    import torch

    return torch
