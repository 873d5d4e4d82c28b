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

Packing refuses a symlink that leads out of the package (it would ship what
it points at, ``/etc/shadow`` say, to every worker). Both sides cap the
unpacked size (a sparse or highly compressible file zips to almost nothing)
and copy files in chunks, so no worker holds a whole file in memory.
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
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import IO

from ..errors import ExecutorError
from ..reference import RewardRef

MAX_BYTES = 64 * 1024 * 1024  # the zipped package, as it travels to every worker
MAX_UNPACKED_BYTES = 256 * 1024 * 1024  # its files, as each worker writes them
MAX_FILES = 20_000
_CHUNK = 1024 * 1024

log = logging.getLogger(__name__)


def pack(ref: RewardRef, max_unpacked: int = MAX_UNPACKED_BYTES) -> bytes:
    """Zip the top-level package that ``ref``'s module belongs to.

    Refuses a link that leads out of the package (it would ship whatever it
    points at, to every worker) and a package over ``max_unpacked`` bytes.
    """
    base, files = _package_files(ref)
    _check_size(ref, [(path.relative_to(base).as_posix(), path.stat().st_size) for path in files],
                max_unpacked)
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        written = 0
        for path in files:
            name = path.relative_to(base).as_posix()
            info = zipfile.ZipInfo.from_file(path, name)
            info.compress_type = zipfile.ZIP_DEFLATED
            with path.open("rb") as source, archive.open(info, "w") as sink:
                written += _copy(source, sink, (written, max_unpacked),
                                 f"cannot ship {ref.display_name}: its file {name}")
            if buffer.tell() > MAX_BYTES:
                break
    if buffer.tell() > MAX_BYTES:
        raise ExecutorError(f"cannot ship {ref.display_name}: its package is over {MAX_BYTES} "
                            f"bytes zipped; install it on every node instead of setting "
                            f"reward.ship_package=true")
    return buffer.getvalue()


def _package_files(ref: RewardRef) -> tuple[Path, list[Path]]:
    """The directory archive names are relative to, and the files to ship."""
    top = ref.module_name.split(".")[0]
    spec = importlib.util.find_spec(top)
    if spec is None:
        raise ExecutorError(f"cannot ship {ref.display_name}: module '{top}' is not importable here")
    if spec.submodule_search_locations:
        root = Path(next(iter(spec.submodule_search_locations)))
        real = Path(os.path.realpath(root))
        try:
            return root.parent, list(_walk(root, real, frozenset({real})))
        except _LinkOutside as e:
            raise ExecutorError(
                f"cannot ship {ref.display_name}: {e.link} is a link to {e.points_to}, outside "
                f"its package {real}; replace the link with a copy or remove it") from None
    if spec.origin:
        return Path(spec.origin).parent, [Path(spec.origin)]
    raise ExecutorError(f"cannot ship {ref.display_name}: '{top}' has no files to ship")


class _LinkOutside(Exception):
    def __init__(self, link: Path, points_to: Path) -> None:
        super().__init__(str(link))
        self.link, self.points_to = link, points_to


def _walk(directory: Path, root: Path, ancestors: frozenset[Path]) -> Iterator[Path]:
    """Regular files under ``directory`` (links followed only within ``root``), sorted."""
    with os.scandir(directory) as scan:
        entries = sorted(scan, key=lambda e: e.name)
    for entry in entries:
        path = Path(entry.path)
        if entry.name == "__pycache__":
            continue
        real = Path(os.path.realpath(path))
        if entry.is_symlink() and not real.is_relative_to(root):
            raise _LinkOutside(path, real)
        if entry.is_dir():
            if real in ancestors:  # a link back up the tree: walking it would never end
                raise _LinkOutside(path, real)
            yield from _walk(path, root, ancestors | {real})
        elif entry.is_file():
            yield path
        # sockets, FIFOs, devices and dangling links hold no code to import


def _check_size(ref: RewardRef, sizes: list[tuple[str, int]], max_unpacked: int) -> None:
    total = sum(size for _, size in sizes)
    if total > max_unpacked:
        name, size = max(sizes, key=lambda item: item[1])
        raise ExecutorError(
            f"cannot ship {ref.display_name}: its files come to {total} bytes unpacked (limit "
            f"{max_unpacked}; the largest is {name}, {size} bytes); install it on every node "
            f"instead of setting reward.ship_package=true")


def _copy(source: IO[bytes], sink: IO[bytes], budget: tuple[int, int], what: str) -> int:
    """Copy in chunks while ``used + copied`` stays within ``limit`` (``budget = (used,
    limit)``); the number of bytes copied."""
    used, limit = budget
    copied = 0
    while chunk := source.read(_CHUNK):
        copied += len(chunk)
        if used + copied > limit:
            raise ExecutorError(f"{what} takes the package past {limit} bytes unpacked "
                                f"(it grew while packing, or the archive understates its size)")
        sink.write(chunk)
    return copied


def unpack(data: bytes, max_unpacked: int = MAX_UNPACKED_BYTES) -> Path:
    """Unpack a shipped package (once per content and user) and put it on ``sys.path``.

    Files are streamed to disk in chunks; an archive over ``max_unpacked``
    bytes (as declared, or as it actually inflates), with too many files or
    with a name that leaves the target directory is refused.
    """
    digest = hashlib.sha256(data).hexdigest()
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        _check_members(archive, max_unpacked)
        base = cache_dir()
        target = base / digest
        if not matches(target, archive):
            target = _install(archive, base, target, max_unpacked)
    if str(target) not in sys.path:
        sys.path.insert(0, str(target))
    return target


def _check_members(archive: zipfile.ZipFile, max_unpacked: int) -> None:
    """Refuse, before writing anything: too many files, a name twice or outside the
    target, more than ``max_unpacked`` bytes declared."""
    members = archive.infolist()
    if len(members) > MAX_FILES:
        raise ExecutorError(f"the shipped package holds {len(members)} files (limit {MAX_FILES})")
    counts = Counter(info.filename.rstrip("/") for info in members)
    twice = sorted(name for name, count in counts.items() if count > 1)
    if twice:
        raise ExecutorError(f"the shipped package names {twice[0]!r} twice")
    for info in members:
        parts = info.filename.rstrip("/").split("/")
        if info.filename.startswith("/") or "\\" in info.filename or "\0" in info.filename \
                or any(part in ("", ".", "..") for part in parts):
            raise ExecutorError(f"the shipped package holds an unsafe file name: {info.filename!r}")
    declared = sum(info.file_size for info in members)
    if declared > max_unpacked:
        raise ExecutorError(f"the shipped package unpacks to {declared} bytes "
                            f"(limit {max_unpacked}); refusing to unpack it")


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
    return all(_same_file(target / name, archive, name) for name in expected)


def _same_file(path: Path, archive: zipfile.ZipFile, name: str) -> bool:
    """``path`` is a regular file holding member ``name``'s bytes (compared in chunks)."""
    try:
        info = path.lstat()
        if not stat.S_ISREG(info.st_mode) or info.st_size != archive.getinfo(name).file_size:
            return False
        with path.open("rb") as disk, archive.open(name) as packed:
            while chunk := packed.read(_CHUNK):
                if disk.read(len(chunk)) != chunk:
                    return False
            return disk.read(1) == b""
    except (OSError, zipfile.BadZipFile):
        return False


def _install(archive: zipfile.ZipFile, base: Path, target: Path, max_unpacked: int) -> Path:
    """Extract into a staging directory and move it to ``target``; another
    worker of this user may do the same at once (the first complete tree wins)."""
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name[:16]}-", dir=base))
    try:
        _extract(archive, staging, max_unpacked)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
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


def _extract(archive: zipfile.ZipFile, staging: Path, max_unpacked: int) -> None:
    """Stream every member into ``staging``, never writing more than ``max_unpacked`` bytes."""
    written = 0
    for info in archive.infolist():
        destination = staging / info.filename
        if info.is_dir():
            destination.mkdir(parents=True, exist_ok=True)
            continue
        destination.parent.mkdir(parents=True, exist_ok=True)
        try:
            with archive.open(info) as packed, destination.open("xb") as disk:
                written += _copy(packed, disk, (written, max_unpacked),
                                 f"the shipped package's {info.filename}")
        except zipfile.BadZipFile as e:
            raise ExecutorError(f"the shipped package is corrupt at {info.filename}: {e}") from e
        except OSError as e:
            raise ExecutorError(f"cannot unpack the shipped package's {info.filename} into "
                                f"{staging}: {e.strerror or e}") from e


def _discard(path: Path) -> None:
    """Move a broken cached tree aside and remove it."""
    trash = Path(tempfile.mkdtemp(prefix=".trash-", dir=path.parent))
    try:
        path.rename(trash / "tree")
    except OSError:
        pass
    shutil.rmtree(trash, ignore_errors=True)
