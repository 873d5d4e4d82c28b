"""Checkpoints a run can continue from: model, optimiser, step and random states.

``DIR/checkpoint/`` holds the model and tokenizer (``save_pretrained``, loadable
as ``model.path``) plus ``trainer_state.pt`` for ``trainer.resume=true``. A new
checkpoint is written beside the old one (``checkpoint.new``), marked complete,
then swapped in, so a run killed at any point keeps a complete checkpoint, which
:func:`trainer.rundir.settle_checkpoint` puts back in place.
"""

from __future__ import annotations

import json
import random
import shutil
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import torch
from safetensors import SafetensorError
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from trainer.rundir import (
    COMPLETE_FILE,
    STATE_FILE,
    CheckpointError,
    checkpoint_dir,
    fresh_dir,
    mark_complete,
    old_dir,
    settle_checkpoint,
)

FULL_DISK_BYTES = 1 << 20  # less free than this after a failed write: the disk is the cause


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
    """Write the checkpoint for ``step`` and swap it in; return its directory.

    A write that fails (a full disk) removes the partial copy and raises
    :class:`CheckpointError`; the previous checkpoint stays in place.
    """
    final, fresh, old = checkpoint_dir(output_dir), fresh_dir(output_dir), old_dir(output_dir)
    shutil.rmtree(fresh, ignore_errors=True)
    try:
        _write(fresh, step, model, tokenizer, optimizer, generator)
    # torch reports a failed write as a RuntimeError ("unexpected pos ..."), safetensors
    # as its own error type.
    except (OSError, RuntimeError, SafetensorError) as e:
        message = _write_failure(output_dir, step, e)  # before the partial copy is freed
        shutil.rmtree(fresh, ignore_errors=True)
        raise CheckpointError(message) from e
    shutil.rmtree(old, ignore_errors=True)
    if final.exists():
        final.rename(old)
    fresh.rename(final)
    shutil.rmtree(old, ignore_errors=True)
    return final


def _write(
    directory: Path, step: int, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase,
    optimizer: torch.optim.Optimizer, generator: torch.Generator,
) -> None:
    model.save_pretrained(directory)
    tokenizer.save_pretrained(directory)
    torch.save({
        "step": step, "model": model.state_dict(), "optimizer": optimizer.state_dict(),
        "generator": generator.get_state(),
        "rng": (random.getstate(), np.random.get_state(), torch.get_rng_state()),
    }, directory / STATE_FILE)
    mark_complete(directory, step)


def _write_failure(output_dir: Path, step: int, error: BaseException) -> str:
    """What failed, why (torch's own message rarely says), what is kept, what to do."""
    cause = (f"{error.strerror} (errno {error.errno})"
             if isinstance(error, OSError) and error.strerror
             else " ".join(str(error).split())[:200] or type(error).__name__)
    try:
        free = shutil.disk_usage(output_dir).free
    except OSError:
        free = None
    if free is not None and free < FULL_DISK_BYTES:
        cause += f"; the file system is full ({free // 1024:,} KiB free)"
    return (f"cannot write the checkpoint of step {step} to {fresh_dir(output_dir)}: {cause}. "
            f"{_kept(output_dir)}; metrics.jsonl holds every step so far. Free space (or "
            f"copy the run elsewhere), then continue with trainer.resume=true; "
            f"trainer.checkpoint_every=0 or trainer.save_checkpoint=false writes fewer "
            f"checkpoints.")


def _kept(output_dir: Path) -> str:
    """What the run still has on disk, in words."""
    final = checkpoint_dir(output_dir)
    if not (final / STATE_FILE).is_file():
        return "No earlier checkpoint exists"
    try:
        step = int(json.loads((final / COMPLETE_FILE).read_text(encoding="utf-8"))["step"])
    except (OSError, ValueError, KeyError, TypeError):
        return f"The previous checkpoint ({final}) is kept"
    return f"The checkpoint of step {step} ({final}) is kept"


def load(output_dir: Path) -> TrainerState | None:
    """The state saved in ``output_dir``'s checkpoint, or None when it has none."""
    settled = settle_checkpoint(output_dir)
    if settled is None:
        return None
    path = settled / STATE_FILE
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
