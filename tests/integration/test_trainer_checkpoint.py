"""Checkpoints and metrics survive real faults: a kill between the checkpoint's two renames,
a metrics line torn mid-write, a full disk while saving."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from trainer.main import main
from trainer.settings import PROJECT_ROOT

TINY = [
    "model.hidden_size=32", "model.num_heads=2", "model.num_layers=1",
    "model.intermediate_size=64", "data.prompts_per_step=4", "rollout.n=4",
    "rollout.max_new_tokens=6", "trainer.log_every=1", "reward.executor=local",
]

# Runs the trainer and SIGKILLs itself right after the final checkpoint's first rename
# (checkpoint -> checkpoint.old), before checkpoint.new is renamed into place.
KILLED_BETWEEN_RENAMES = """
import os, signal, sys
from pathlib import Path

real_rename = Path.rename

def rename(self, target):
    moved = real_rename(self, target)
    if Path(target).name == "checkpoint.old":  # the first save has no checkpoint to set aside
        os.kill(os.getpid(), signal.SIGKILL)
    return moved

Path.rename = rename
from trainer.main import main
sys.exit(main(sys.argv[1:]))
"""


def _steps(out: Path) -> list[int]:
    return [json.loads(line)["step"] for line in (out / "metrics.jsonl").read_text().splitlines()]


def _checkpoint_step(directory: Path) -> int:
    import torch

    return int(torch.load(directory / "trainer_state.pt", weights_only=False)["step"])


def test_a_kill_between_the_two_renames_resumes_from_the_newer_checkpoint(tmp_path, capsys):
    out = tmp_path / "run"
    args = [*TINY, "trainer.total_steps=3", "trainer.checkpoint_every=2",
            f"trainer.output_dir={out}"]
    killed = subprocess.run([sys.executable, "-c", KILLED_BETWEEN_RENAMES, *args],
                            cwd=PROJECT_ROOT, capture_output=True, text=True, timeout=600)
    assert killed.returncode == -9, killed.stderr[-2000:]
    # Two complete checkpoints (step 2 set aside, step 3 written), none in place.
    assert not (out / "checkpoint").exists()
    assert _checkpoint_step(out / "checkpoint.old") == 2
    assert _checkpoint_step(out / "checkpoint.new") == 3

    assert main([*TINY, "trainer.total_steps=4", f"trainer.output_dir={out}",
                  "trainer.resume=true"]) == 0
    assert "resumed from step 3" in capsys.readouterr().out
    assert _steps(out) == [1, 2, 3, 4]
    assert sorted(p.name for p in out.iterdir() if p.name.startswith("checkpoint")) == [
        "checkpoint"]
    assert _checkpoint_step(out / "checkpoint") == 4


def test_a_torn_last_metrics_line_is_dropped_on_resume(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TINY, "trainer.total_steps=2", f"trainer.output_dir={out}"]) == 0
    # What a kill while writing step 3's record leaves: a line cut short, no newline.
    with (out / "metrics.jsonl").open("a") as f:
        f.write('{"step": 3, "reward_mean": 0.31, "reward_std": 0.0')
    capsys.readouterr()
    assert main([*TINY, "trainer.total_steps=3", f"trainer.output_dir={out}",
                  "trainer.resume=true"]) == 0
    assert "resumed from step 2" in capsys.readouterr().out
    assert _steps(out) == [1, 2, 3]
    assert all(line.endswith("}") for line in (out / "metrics.jsonl").read_text().splitlines())


def test_a_bad_metrics_line_before_the_end_refuses_resume_naming_it(tmp_path, capsys):
    out = tmp_path / "run"
    assert main([*TINY, "trainer.total_steps=2", f"trainer.output_dir={out}"]) == 0
    lines = (out / "metrics.jsonl").read_text().splitlines(keepends=True)
    (out / "metrics.jsonl").write_text(lines[0][:20] + "\n" + lines[1])
    capsys.readouterr()
    assert main([*TINY, "trainer.total_steps=3", f"trainer.output_dir={out}",
                  "trainer.resume=true"]) == 2
    assert capsys.readouterr().err.startswith(
        f"trainer: config error: trainer.resume=true but {out / 'metrics.jsonl'}, line 1: "
        f"not a JSON record")


@pytest.fixture
def small_disk(make_tmpfs: Callable[[str], Path]) -> Path:
    """A real 320 KiB tmpfs (the tests run as root, as CI does): room for one tiny checkpoint."""
    return make_tmpfs("320k")


def test_a_full_disk_while_checkpointing_stops_with_a_clear_error_and_keeps_the_last_one(
        small_disk, capsys):
    out = small_disk / "run"
    args = [*TINY, "trainer.total_steps=6", "trainer.checkpoint_every=1",
            f"trainer.output_dir={out}"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("trainer: stopped: cannot write the checkpoint of step 2 to "
                          f"{out / 'checkpoint.new'}: "), err
    assert "the file system is full (" in err and "Traceback" not in err
    assert f"The checkpoint of step 1 ({out / 'checkpoint'}) is kept" in err
    assert "trainer.resume=true" in err
    assert not (out / "checkpoint.new").exists()  # the partial copy is gone, the space is back
    assert _checkpoint_step(out / "checkpoint") == 1
    assert _steps(out) == [1, 2]

    # Room again (the run moved elsewhere): it resumes from what was kept.
    moved = small_disk.parent / "moved"
    shutil.copytree(out, moved)
    assert main([*TINY, "trainer.total_steps=3", f"trainer.output_dir={moved}",
                 "trainer.resume=true"]) == 0
    assert "resumed from step 1" in capsys.readouterr().out
    assert _steps(moved) == [1, 2, 3]
