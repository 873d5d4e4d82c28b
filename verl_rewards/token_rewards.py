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

if TYPE_CHECKING:
    import torch


class TokenRewards(NamedTuple):
    """verl's ``reward_tensor`` and ``reward_extra_info``."""

    token_level_scores: torch.Tensor  # (batch, response_length), float32
    reward_extra_info: dict[str, np.ndarray]


def last_valid_positions(response_mask: torch.Tensor) -> torch.Tensor:
    """Index of each row's last non-zero mask entry (0 for an all-zero row)."""
    length = response_mask.shape[-1]
    flipped_first = response_mask.flip(-1).ne(0).to(torch_module().int8).argmax(-1)
    last = length - 1 - flipped_first
    empty = response_mask.ne(0).sum(-1) == 0
    return last.masked_fill(empty, 0)


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
