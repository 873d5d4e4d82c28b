"""What an output directory holds, read without importing torch."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

METRICS_FILE = "metrics.jsonl"
STATE_FILE = "trainer_state.pt"
# Written last into a checkpoint being saved: its presence marks the checkpoint
# complete, and it names the step without loading torch.
COMPLETE_FILE = "checkpoint.json"
FRESH_SUFFIX, OLD_SUFFIX = ".new", ".old"


class TrainingStopped(Exception):
    """The run stopped early (every sample failed for too many steps, nothing to resume)."""


class CheckpointError(TrainingStopped):
    """A checkpoint could not be written (a full disk, say); the previous one is kept."""


def checkpoint_dir(output_dir: Path) -> Path:
    """Where ``output_dir``'s checkpoint lives."""
    return output_dir / "checkpoint"


def fresh_dir(output_dir: Path) -> Path:
    """Where a checkpoint is written before it is swapped in."""
    return output_dir / ("checkpoint" + FRESH_SUFFIX)


def old_dir(output_dir: Path) -> Path:
    """Where the previous checkpoint waits while the new one is swapped in."""
    return output_dir / ("checkpoint" + OLD_SUFFIX)


def state_file(output_dir: Path) -> Path:
    """The resumable state inside ``output_dir``'s checkpoint."""
    return checkpoint_dir(output_dir) / STATE_FILE


def holds_a_run(output_dir: Path) -> bool:
    """True when ``output_dir`` has a run's metrics or checkpoint (a half-swapped one too)."""
    return (output_dir / METRICS_FILE).exists() or any(
        d.exists() for d in (checkpoint_dir(output_dir), fresh_dir(output_dir), old_dir(output_dir)))


def clear_run(output_dir: Path) -> None:
    """Remove what a previous run left in ``output_dir`` (checkpoint, metrics, plot, config)."""
    for directory in (checkpoint_dir(output_dir), fresh_dir(output_dir), old_dir(output_dir)):
        shutil.rmtree(directory, ignore_errors=True)
    for name in (METRICS_FILE, "reward_curve.png", "config.yaml"):
        (output_dir / name).unlink(missing_ok=True)


def mark_complete(directory: Path, step: int) -> None:
    """Write ``directory``'s completion marker (durably: it is the commit point)."""
    tmp = directory / (COMPLETE_FILE + ".tmp")
    with tmp.open("w", encoding="utf-8") as f:
        json.dump({"step": step}, f)
        f.flush()
        os.fsync(f.fileno())
    tmp.replace(directory / COMPLETE_FILE)


def settle_checkpoint(output_dir: Path) -> Path | None:
    """Make ``checkpoint/`` the newest complete checkpoint in ``output_dir``; None if none.

    A save killed between its two renames leaves ``checkpoint.old`` and
    ``checkpoint.new`` and no ``checkpoint/``; killed earlier, an incomplete
    ``checkpoint.new``. The newest complete one is moved into place and the
    leftovers removed, so a resume always finds what the run last saved.
    """
    final = checkpoint_dir(output_dir)
    complete = [(step, d) for d in (final, fresh_dir(output_dir), old_dir(output_dir))
                if (step := _complete_step(d, is_final=d == final)) is not None]
    if not complete:
        return None
    # Highest step wins; on a tie the directory already in place (listed first) does.
    best = max(complete, key=lambda item: item[0])[1]
    if best != final:
        if final.exists():
            shutil.rmtree(final)
        best.rename(final)
    for leftover in (fresh_dir(output_dir), old_dir(output_dir)):
        shutil.rmtree(leftover, ignore_errors=True)
    return final


def _complete_step(directory: Path, is_final: bool) -> int | None:
    """The step of a complete checkpoint in ``directory`` (-1 if it predates markers), else None."""
    if not (directory / STATE_FILE).is_file():
        return None
    try:
        return int(json.loads((directory / COMPLETE_FILE).read_text(encoding="utf-8"))["step"])
    except (OSError, ValueError, KeyError, TypeError):
        # Without a readable marker only a directory that was renamed into place is
        # known to be whole: checkpoint/ (or checkpoint.old, which was checkpoint/).
        return -1 if is_final or directory.name.endswith(OLD_SUFFIX) else None
