"""Ship a plugin's package to workers that do not have it installed.

The driver zips the plugin's top-level package once; each worker unpacks it
into a directory named by the archive's sha256 and puts that on ``sys.path``,
so the plugin still imports under its real module name.

The unpacked trees are cached in one private directory per user
(``<tmp>/verl_rewards_shipped-<uid>``, mode 0700, owned by that user). A
cache directory that is a symlink, belongs to someone else or is open to
others is never used (another local user could plant code in it): the worker
unpacks into a fresh private directory instead and logs why. A cached tree is
used only when every file of the archive is in it with the archive's bytes.
"""

from __future__ import annotations

import hashlib
import importlib.util
import io
import logging
import os
import shutil
import stat
import sys
import tempfile
import zipfile
from pathlib import Path

from ..errors import ExecutorError
from ..reference import RewardRef

MAX_BYTES = 64 * 1024 * 1024

log = logging.getLogger(__name__)


def pack(ref: RewardRef) -> bytes:
    """Zip the top-level package that ``ref``'s module belongs to."""
    top = ref.module_name.split(".")[0]
    spec = importlib.util.find_spec(top)
    if spec is None:
        raise ExecutorError(f"cannot ship {ref.display_name}: module '{top}' is not importable here")
    if spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        files = [p for p in sorted(root.rglob("*")) if p.is_file() and "__pycache__" not in p.parts]
        base = root.parent
    elif spec.origin:
        files, base = [Path(spec.origin)], Path(spec.origin).parent
    else:
        raise ExecutorError(f"cannot ship {ref.display_name}: '{top}' has no files to ship")
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path in files:
            archive.write(path, path.relative_to(base).as_posix())
    data = buffer.getvalue()
    if len(data) > MAX_BYTES:
        raise ExecutorError(f"cannot ship {ref.display_name}: its package is {len(data)} bytes zipped")
    return data


def unpack(data: bytes) -> Path:
    """Unpack a shipped package (once per content and user) and put it on ``sys.path``."""
    digest = hashlib.sha256(data).hexdigest()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        base = cache_dir()
        target = base / digest
        if not matches(target, archive):
            target = _install(archive, base, target)
    if str(target) not in sys.path:
        sys.path.insert(0, str(target))
    return target


def cache_dir() -> Path:
    """This user's private cache directory, created 0700; a fresh private one
    when the shared name is taken by anything this user does not own alone."""
    base = Path(tempfile.gettempdir()) / f"verl_rewards_shipped-{os.geteuid()}"
    try:
        base.mkdir(mode=0o700)
    except FileExistsError:
        pass
    problem = _unsafe_parent(base.parent) or private_dir_problem(base)
    if problem is None:
        return base
    fresh = Path(tempfile.mkdtemp(prefix="verl_rewards_shipped-"))
    log.warning("not using the shipped-package cache %s (%s); unpacking into %s instead", base, problem, fresh)
    return fresh


def private_dir_problem(path: Path) -> str | None:
    """Why ``path`` is not a directory private to this user, or None when it is."""
    try:
        info = path.lstat()
    except OSError as e:
        return f"cannot stat it: {e.strerror}"
    if stat.S_ISLNK(info.st_mode):
        return "it is a symlink"
    if not stat.S_ISDIR(info.st_mode):
        return "it is not a directory"
    if info.st_uid != os.geteuid():
        return f"it belongs to uid {info.st_uid}, not {os.geteuid()}"
    if info.st_mode & 0o077:
        return f"its mode is {stat.S_IMODE(info.st_mode):04o}, not 0700"
    return None


def _unsafe_parent(parent: Path) -> str | None:
    """Others could swap our directory for theirs under a parent that they may
    write to without the sticky bit (the usual /tmp has it)."""
    mode = parent.stat().st_mode
    if mode & (stat.S_IWGRP | stat.S_IWOTH) and not mode & stat.S_ISVTX:
        return f"{parent} is writable by others and not sticky"
    return None


def matches(target: Path, archive: zipfile.ZipFile) -> bool:
    """True when every file of ``archive`` is a regular file under ``target``
    with the same bytes, and nothing but bytecode caches was added."""
    if private_dir_problem(target) is not None:
        return False
    expected = {info.filename for info in archive.infolist() if not info.is_dir()}
    for path in target.rglob("*"):
        relative = path.relative_to(target)
        if "__pycache__" in relative.parts or stat.S_ISDIR(path.lstat().st_mode):
            continue
        if relative.as_posix() not in expected:
            return False
    return all(_same_file(target / name, archive.read(name)) for name in expected)


def _same_file(path: Path, content: bytes) -> bool:
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size != len(content):
            return False
        return path.read_bytes() == content
    except OSError:
        return False


def _install(archive: zipfile.ZipFile, base: Path, target: Path) -> Path:
    """Extract into a staging directory and move it to ``target``; another
    worker of this user may do the same at once (the first complete tree wins)."""
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name[:16]}-", dir=base))
    archive.extractall(staging)
    if not matches(staging, archive):
        raise ExecutorError(f"the shipped package did not unpack intact into {staging}")
    try:
        staging.rename(target)
        return target
    except OSError:
        pass  # target exists: another worker's tree, or a broken one
    if matches(target, archive):
        shutil.rmtree(staging, ignore_errors=True)
        return target
    _discard(target)
    try:
        staging.rename(target)
        return target
    except OSError:
        return staging  # lost a second race: use our own intact copy


def _discard(path: Path) -> None:
    """Move a broken cached tree aside and remove it."""
    trash = Path(tempfile.mkdtemp(prefix=".trash-", dir=path.parent))
    try:
        path.rename(trash / "tree")
    except OSError:
        pass
    shutil.rmtree(trash, ignore_errors=True)
