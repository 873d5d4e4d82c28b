"""Checkpoints a run can continue from: model, optimiser, step and random states.

``DIR/checkpoint/`` holds the model and tokenizer (``save_pretrained``, loadable
as ``model.path``) plus ``trainer_state.pt`` for ``trainer.resume=true``. A new
checkpoint is written beside the old one and swapped in, so a run killed while
saving keeps the previous one.
"""

from __future__ import annotations

import random
import shutil
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from trainer.rundir import STATE_FILE, checkpoint_dir, state_file


class TrainerState(NamedTuple):
    """What a resumed run restores."""

    step: int
    model: dict[str, Any]
    optimizer: dict[str, Any]
    generator: torch.Tensor
    rng: tuple[Any, Any, torch.Tensor]  # Python, NumPy, torch


def save(
    output_dir: Path, step: int, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
    optimizer: torch.optim.Optimizer, generator: torch.Generator,
) -> Path:
    """Write the checkpoint for ``step`` and swap it in; return its directory."""
    final = checkpoint_dir(output_dir)
    fresh = final.with_name(final.name + ".new")
    shutil.rmtree(fresh, ignore_errors=True)
    model.save_pretrained(fresh)
    tokenizer.save_pretrained(fresh)
    torch.save({
        "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
        "generator": generator.get_state(),
        "rng": (random.getstate(), np.random.get_state(), torch.get_rng_state()),
    }, fresh / STATE_FILE)
    old = final.with_name(final.name + ".old")
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    fresh.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def load(output_dir: Path) -> TrainerState | None:
    """The state saved in ``output_dir``'s checkpoint, or None when it has none."""
    path = state_file(output_dir)
    if not path.is_file():
        return None
    raw = torch.load(path, weights_only=False)
    return TrainerState(step=int(raw["step"]), model=raw["model"], optimizer=raw["optimizer"],
                        generator=raw["generator"], rng=tuple(raw["rng"]))


def restore(
    state: TrainerState, model: PreTrainedModel, optimizer: torch.optim.Optimizer,
    generator: torch.Generator,
) -> None:
    """Put ``state`` back into a freshly built model, optimiser and random generators."""
    model.load_state_dict(state.model)
    optimizer.load_state_dict(state.optimizer)
    generator.set_state(state.generator)
    python_state, numpy_state, torch_state = state.rng
    random.setstate(python_state)
    np.random.set_state(numpy_state)
    torch.set_rng_state(torch_state)
