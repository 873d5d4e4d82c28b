"""Which directories a Python interpreter needs, and whether others can reach them."""

from __future__ import annotations

import os
import stat
import sys


def interpreter_dirs(python: str) -> list[str]:
    """The prefixes an interpreter loads from: one per hop of its symlink chain.

    For ``.venv/bin/python -> /root/.pyenv/versions/3.11.7/bin/python3.11``
    these are the venv (site-packages, ``pyvenv.cfg``) and the base
    installation (the binary, ``libpython``, the standard library).
    """
    dirs: set[str] = set()
    path = os.path.abspath(python)
    for _ in range(40):
        dirs.add(os.path.dirname(os.path.realpath(os.path.dirname(path))))
        if not os.path.islink(path):
            break
        path = os.path.join(os.path.dirname(path), os.readlink(path))
    if os.path.realpath(python) == os.path.realpath(sys.executable):
        dirs |= {os.path.realpath(sys.prefix), os.path.realpath(sys.base_prefix)}
    return sorted(dirs)


def traversable_by_others(path: str) -> bool:
    """True when a user unrelated to the owners can reach ``path`` (and list through it)."""
    parts = [p for p in os.path.realpath(path).split("/") if p]
    chain = ["/"] + ["/" + "/".join(parts[: i + 1]) for i in range(len(parts))]
    try:
        return all(os.stat(d).st_mode & stat.S_IXOTH for d in chain)
    except OSError:
        return False


def blocked_dirs(python: str) -> list[str]:
    """The interpreter directories that an unprivileged user cannot reach."""
    return [d for d in interpreter_dirs(python) if not traversable_by_others(d)]


# What a dynamically linked interpreter needs of the host besides its own
# prefixes: the system libraries and the loader's cache (merged-/usr systems
# have /lib, /bin... as symlinks into /usr; they are copied as symlinks).
SYSTEM_PATHS = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/libx32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/localtime",
)


def root_binds(python: str) -> list[str]:
    """The host paths a sandbox root shows (read-only) to run ``python``:
    the system paths and the interpreter's prefixes, none inside another."""
    paths = sorted({*SYSTEM_PATHS, *interpreter_dirs(python)}, key=lambda p: (p.count("/"), p))
    kept: list[str] = []
    for path in paths:
        if not any(path == k or path.startswith(k + "/") for k in kept):
            kept.append(path)
    return sorted(kept)
