"""A run's directory tree on the host: the program's read-only files, and the runner's mount points.

Per run (or per session of runs of one sample)::

    verl-rewards-code-<owner>-XXXX/  0711 root: the program can pass but not list
      io/                    0755: main.py, main.cpp... (0644)
      work/                  0700, owned by the program's uid: its cwd, HOME, TMPDIR (no mount namespace only)
      stage/                 0700: mount points for the cold runner's minimal root

The tree's name is under the temporary directory. With a mount namespace the
program never writes to it (its working directory is a tmpfs of its own), so
the tree itself is made on a tmpfs (``/dev/shm``) where there is one, and the
temporary directory holds a symbolic link to it: making and removing it then
never waits for a disk (``rmdir`` on an ext4 mounted with ``discard`` waited
4-12 ms, twice a run). A tree whose owner (``owners.owner_tag``: PID
namespace and pid) is gone (a worker killed mid-run) is removed the next time
a process chooses its isolation.
"""

from __future__ import annotations

import glob
import os
import secrets
import shutil
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from .owners import made_by_a_dead_process, owner_tag

TREE_PREFIX = "verl-rewards-code-"
# Where trees of runs with a mount namespace live when it is a tmpfs of its own.
FAST_DIR = "/dev/shm"
_TMPFS_MAGIC = 0x01021994


@dataclass(frozen=True)
class RunTree:
    """A run's tree: ``root`` (as named under the temporary directory), its ``io``,
    ``work`` and ``stage`` directories, and ``real``: where ``root`` is stored
    (itself, or its target on a tmpfs)."""

    root: str
    io: str
    work: str
    stage: str
    real: str

    def io_file(self, name: str) -> str:
        return os.path.join(self.io, name)


@contextmanager
def run_tree(uid: int | None, *, work: bool = True, stage: bool = True, fast: bool = False) -> Iterator[RunTree]:
    """A fresh tree, removed on exit; ``work`` (the working directory on the host:
    without a mount namespace) and ``stage`` (the cold runner's mount points) only
    when used; ``fast``: on a tmpfs, linked from the temporary directory, where
    there is one (only for runs whose working directory is not on the host)."""
    root, real = _make_root(fast)
    try:
        io, work_dir, stage_dir = (os.path.join(root, name) for name in ("io", "work", "stage"))
        tree = RunTree(root, io, work_dir, stage_dir, real)
        os.chmod(real, 0o711)
        for name, mode, wanted in (("io", 0o755, True), ("work", 0o700, work), ("stage", 0o700, stage)):
            if wanted:
                path = os.path.join(real, name)
                os.mkdir(path)
                os.chmod(path, mode)
        if uid is not None and work:
            os.chown(os.path.join(real, "work"), uid, uid)
        yield tree
    finally:
        remove(root)


def _make_root(fast: bool) -> tuple[str, str]:
    """A new tree root under the temporary directory: ``(name there, real path)``."""
    prefix = f"{TREE_PREFIX}{owner_tag()}-"
    tmp = tempfile.gettempdir()
    if not fast or not _fast_dir_for(tmp):
        root = tempfile.mkdtemp(prefix=prefix)
        return root, root
    for _ in range(100):
        name = prefix + secrets.token_hex(4)
        real = os.path.join(FAST_DIR, name)
        try:
            os.mkdir(real, 0o700)
        except FileExistsError:
            continue
        link = os.path.join(tmp, name)
        try:
            os.symlink(real, link)
        except FileExistsError:
            os.rmdir(real)
            continue
        except OSError:
            os.rmdir(real)
            raise
        return link, real
    raise FileExistsError(f"no free name for a run tree in {tmp} and {FAST_DIR}")


_fast: dict[str, bool] = {}


def _fast_dir_for(tmp: str) -> bool:
    """``FAST_DIR`` is a tmpfs this process may write that is not ``tmp``'s own file system."""
    if tmp not in _fast:
        try:
            usable = (
                os.statvfs(FAST_DIR).f_flag & os.ST_RDONLY == 0
                and os.access(FAST_DIR, os.W_OK | os.X_OK)
                and os.stat(FAST_DIR).st_dev != os.stat(tmp).st_dev
                and _is_tmpfs(FAST_DIR)
            )
        except OSError:
            usable = False
        _fast[tmp] = usable
    return _fast[tmp]


def _is_tmpfs(path: str) -> bool:
    try:
        with open("/proc/self/mountinfo") as f:
            for line in f:
                fields = line.split()
                if fields[4] == path:
                    return fields[fields.index("-") + 1] == "tmpfs"
    except (OSError, ValueError, IndexError):
        pass
    return False


def write_file(path: str, text: str, mode: int) -> None:
    """Create ``path`` (it must not exist) holding ``text``, with ``mode``."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        view = memoryview(text.encode("utf-8"))
        while view:
            view = view[os.write(fd, view) :]
        os.fchmod(fd, mode)
    finally:
        os.close(fd)


def remove(root: str) -> None:
    """Remove a tree (and, for a linked one, its target on the tmpfs)."""
    try:
        info = os.lstat(root)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(info.st_mode):
        target = os.readlink(root)
        os.unlink(root)
        if os.path.dirname(target) == FAST_DIR and os.path.basename(target) == os.path.basename(root):
            _remove_dir(target)
        return
    _remove_dir(root)


def _remove_dir(root: str) -> None:
    if os.path.islink(root):
        os.unlink(root)  # never followed: only what the tree itself holds is removed
        return
    shutil.rmtree(root, ignore_errors=True)
    if os.path.exists(root):
        # A program may leave read-only directories behind; their owner may chmod them.
        for parent, dirs, _files in os.walk(root):
            for name in dirs:
                os.chmod(os.path.join(parent, name), 0o700)
        shutil.rmtree(root, ignore_errors=True)


def remove_stale_trees() -> None:
    """Remove run trees left by processes that died mid-run (a worker killed on a timeout)."""
    for place in dict.fromkeys((tempfile.gettempdir(), FAST_DIR)):
        for root in glob.glob(os.path.join(place, f"{TREE_PREFIX}*")):
            if made_by_a_dead_process(os.path.basename(root)[len(TREE_PREFIX) :]):
                remove(root)
