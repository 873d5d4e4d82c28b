"""What an output directory holds, read without importing torch."""

from __future__ import annotations

from pathlib import Path

METRICS_FILE = "metrics.jsonl"
STATE_FILE = "trainer_state.pt"


class TrainingStopped(Exception):
    """The run stopped early (every sample failed for too many steps, nothing to resume)."""


def checkpoint_dir(output_dir: Path) -> Path:
    """Where ``output_dir``'s checkpoint lives."""
    return output_dir / "checkpoint"


def state_file(output_dir: Path) -> Path:
    """The resumable state inside ``output_dir``'s checkpoint."""
    return checkpoint_dir(output_dir) / STATE_FILE


def holds_a_run(output_dir: Path) -> bool:
    """True when ``output_dir`` has a run's metrics or checkpoint."""
    return (output_dir / METRICS_FILE).exists() or checkpoint_dir(output_dir).exists()


def clear_run(output_dir: Path) -> None:
    """Remove what a previous run left in ``output_dir`` (checkpoint, metrics, plot, config)."""
    import shutil

    shutil.rmtree(checkpoint_dir(output_dir), ignore_errors=True)
    for name in (METRICS_FILE, "reward_curve.png", "config.yaml"):
        (output_dir / name).unlink(missing_ok=True)
