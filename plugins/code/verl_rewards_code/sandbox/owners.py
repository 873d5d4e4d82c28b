"""Names that say which process made a run's tree or cgroup, so leftovers of dead processes can be found.

A name starts with ``<pid namespace inode>-<pid>``: a pid means something
only in its own PID namespace (containers sharing ``/tmp`` or a cgroup tree
see each other's names), so a leftover is stale only when it was made in
this namespace by a pid that is gone.
"""

from __future__ import annotations

import os


def _namespace() -> str:
    try:
        return str(os.stat("/proc/self/ns/pid").st_ino)
    except OSError:
        return "0"


def owner_tag() -> str:
    """``<pid namespace>-<pid>`` of this process."""
    return f"{_namespace()}-{os.getpid()}"


def made_by_a_dead_process(name: str) -> bool:
    """``name`` starts with the tag of a process of this PID namespace that no longer exists."""
    parts = name.split("-")
    if len(parts) < 2 or parts[0] != _namespace() or not parts[1].isdigit():
        return False
    try:
        os.kill(int(parts[1]), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    return False
