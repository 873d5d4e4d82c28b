"""A run's tree: on a tmpfs, linked from the temporary directory, removed whole; stale trees of dead processes."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from verl_rewards_code.sandbox import tree
from verl_rewards_code.sandbox.owners import owner_tag


@pytest.fixture
def fast_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """``/dev/shm`` when it is a tmpfs apart from the temporary directory (this machine's), else skip."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    tree._fast.clear()
    if not tree._fast_dir_for(str(tmp_path)):
        pytest.skip("/dev/shm is not a tmpfs of its own here")
    return Path(tree.FAST_DIR)


def test_a_tree_lives_on_the_tmpfs_and_is_linked_from_the_temporary_directory(fast_dir: Path, tmp_path: Path) -> None:
    with tree.run_tree(None, work=False, stage=True, fast=True) as made:
        root = Path(made.root)
        assert root.parent == tmp_path and root.name.startswith(f"{tree.TREE_PREFIX}{owner_tag()}-")
        assert root.is_symlink() and Path(made.real) == fast_dir / root.name
        assert sorted(p.name for p in root.iterdir()) == ["io", "stage"]
        assert oct(Path(made.real).stat().st_mode & 0o777) == "0o711"
        Path(made.io, "main.py").write_text("print(1)\n")
    assert not os.path.lexists(made.root) and not os.path.exists(made.real)


def test_a_tree_whose_working_directory_is_on_the_host_is_a_plain_directory(fast_dir: Path, tmp_path: Path) -> None:
    # Without a mount namespace the program works in the tree: it stays on the host's disk, bounded per file.
    with tree.run_tree(None, work=True, stage=False, fast=False) as made:
        assert not Path(made.root).is_symlink() and made.real == made.root and Path(made.work).is_dir()
    assert not os.path.exists(made.root)


def test_removing_a_stale_tree_never_follows_a_planted_link(fast_dir: Path, tmp_path: Path) -> None:
    # A dead owner's name linking to a directory of someone else's: the link goes, the directory stays.
    victim = tmp_path / "victim"
    (victim / "sub").mkdir(parents=True)
    (victim / "sub").chmod(0o755)
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    name = f"{tree.TREE_PREFIX}{os.stat('/proc/self/ns/pid').st_ino}-{dead.stdout.strip()}-planted"
    (tmp_path / name).symlink_to(victim)
    (fast_dir / name).symlink_to(victim)
    tree.remove_stale_trees()
    assert not os.path.lexists(tmp_path / name) and not os.path.lexists(fast_dir / name)
    assert (victim / "sub").is_dir() and oct((victim / "sub").stat().st_mode & 0o777) == "0o755"


def test_a_stale_tree_goes_from_both_places(fast_dir: Path, tmp_path: Path) -> None:
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    name = f"{tree.TREE_PREFIX}{os.stat('/proc/self/ns/pid').st_ino}-{dead.stdout.strip()}-left"
    (fast_dir / name / "io").mkdir(parents=True)
    (tmp_path / name).symlink_to(fast_dir / name)
    tree.remove_stale_trees()
    assert not os.path.lexists(tmp_path / name) and not os.path.exists(fast_dir / name)
