"""A cgroup per run: the kernel bounds the whole run's processes and memory.

RLIMIT_NPROC does not bind root, and RLIMIT_AS counts address space, not
SysV shared memory left attached to nothing, memfds parked in a socket or
tmpfs pages. A run's memory cgroup charges all of those, and its pids cgroup
counts every task. Each run gets ``<hierarchy>/verl-rewards-code/<owner>-<n>``
(cgroup v2 when its root offers ``memory`` and ``pids``, else the v1
``memory`` and ``pids`` hierarchies); the runner joins it before it forks,
so every process of the run is inside from its first instruction.
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass

from .owners import made_by_a_dead_process, owner_tag
from .records import MIB, Cgroups, Limits

logger = logging.getLogger("verl_rewards_code.sandbox")

PARENT = "verl-rewards-code"
_counter = itertools.count()


@dataclass(frozen=True)
class RunCgroup:
    """The directories of one run's cgroup (one for v2; memory and pids for v1)."""

    cgroups: Cgroups
    dirs: tuple[str, ...]

    @property
    def procs_files(self) -> list[str]:
        """What the runner writes ``0`` into to join."""
        return [os.path.join(d, "cgroup.procs") for d in self.dirs]

    def oom_killed(self) -> bool:
        """A process of the run was killed at the memory limit."""
        return self.oom_kills() > 0

    def oom_kills(self) -> int:
        """How many processes of the run (or of its session's tests so far) were killed at the memory limit."""
        events = "memory.events" if self.cgroups.version == 2 else "memory.oom_control"
        return _counter_in(os.path.join(self.dirs[0], events), "oom_kill")

    def kill_all(self, deadline_s: float = 10.0) -> None:
        """SIGKILL every process left in the run (those without a PID namespace to die with)."""
        procs = os.path.join(self.dirs[-1], "cgroup.procs")
        end = time.monotonic() + deadline_s
        while time.monotonic() < end:
            pids = _read_pids(procs)
            if not pids:
                return
            for pid in pids:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.005)

    def remove(self) -> None:
        for path in self.dirs:
            _rmdir(path)


def discover() -> tuple[Cgroups | None, str]:
    """The cgroup hierarchies this process may create run cgroups in, or None and why not."""
    try:
        mounts = _cgroup_mounts()
    except OSError as e:
        return None, f"cannot read /proc/self/mountinfo: {e}"
    v2 = mounts.get("cgroup2")
    if v2 is not None and {"memory", "pids"} <= _controllers(v2):
        found: tuple[Cgroups | None, str] = _prepare(Cgroups(2, (os.path.join(v2, PARENT),)), v2)
        if found[0] is not None:
            return found
    memory, pids = mounts.get("memory"), mounts.get("pids")
    if memory is None or pids is None:
        return None, "no cgroup v2 root with memory and pids controllers, nor v1 memory and pids hierarchies"
    return _prepare(Cgroups(1, (os.path.join(memory, PARENT), os.path.join(pids, PARENT))), None)


def _prepare(cgroups: Cgroups, v2_root: str | None) -> tuple[Cgroups | None, str]:
    """Create the parent directories and prove a run cgroup can be made and limited."""
    try:
        if v2_root is not None:
            _enable(v2_root)
        for parent in cgroups.parents:
            os.makedirs(parent, exist_ok=True)
            if v2_root is not None:
                _enable(parent)
        remove_stale(cgroups)
        with run_cgroup(cgroups, Limits()) as _run:
            pass
    except OSError as e:
        return None, f"cannot create cgroups under {', '.join(cgroups.parents)}: {e}"
    return cgroups, ""


def _enable(directory: str) -> None:
    with open(os.path.join(directory, "cgroup.subtree_control"), "w") as f:
        f.write("+memory +pids")


@contextlib.contextmanager
def run_cgroup(cgroups: Cgroups, limits: Limits, own_processes: int = 1) -> Iterator[RunCgroup]:
    """A fresh cgroup with the run's limits: ``memory_mb`` for everything it holds
    (no swap), ``max_processes`` tasks plus the sandbox's ``own_processes``."""
    name = f"{owner_tag()}-{next(_counter)}"
    run = RunCgroup(cgroups, tuple(os.path.join(p, name) for p in cgroups.parents))
    memory = str(limits.memory_mb * MIB)
    tasks = str(limits.max_processes + own_processes)
    try:
        for path in run.dirs:
            os.mkdir(path, 0o700)
        if cgroups.version == 2:
            _write(run.dirs[0], "memory.max", memory)
            _write(run.dirs[0], "memory.swap.max", "0", optional=True)
            _write(run.dirs[0], "pids.max", tasks)
        else:
            _write(run.dirs[0], "memory.limit_in_bytes", memory)
            _write(run.dirs[0], "memory.memsw.limit_in_bytes", memory, optional=True)
            _write(run.dirs[1], "pids.max", tasks)
        yield run
    finally:
        run.kill_all()
        run.remove()


def remove_stale(cgroups: Cgroups) -> None:
    """Remove run cgroups whose creating process is gone (killed before it could clean up)."""
    for parent in cgroups.parents:
        try:
            names = os.listdir(parent)
        except OSError:
            continue
        for name in names:
            if made_by_a_dead_process(name):
                stale = RunCgroup(cgroups, (os.path.join(parent, name),))
                stale.kill_all(deadline_s=1.0)
                _rmdir(stale.dirs[0])


def _write(directory: str, name: str, value: str, optional: bool = False) -> None:
    path = os.path.join(directory, name)
    if optional and not os.path.exists(path):
        return
    with open(path, "w") as f:
        f.write(value)


def _rmdir(path: str) -> None:
    # A cgroup whose last task is still exiting is busy for a moment.
    for delay in (0.001, 0.005, 0.02, 0.05, 0.1, 0.2, 0.5, 0):
        try:
            os.rmdir(path)
            return
        except FileNotFoundError:
            return
        except OSError:
            time.sleep(delay)
    logger.warning("verl-rewards-code sandbox: could not remove cgroup %s (removed at the next start)", path)


def _read_pids(path: str) -> list[int]:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            return [int(line) for line in os.read(fd, 1 << 20).split()]
        finally:
            os.close(fd)
    except (OSError, ValueError):
        return []


def _counter_in(path: str, key: str) -> int:
    try:
        fd = os.open(path, os.O_RDONLY)
        try:
            text = os.read(fd, 65536).decode()
        finally:
            os.close(fd)
        for line in text.splitlines():
            name, _, value = line.partition(" ")
            if name == key:
                return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _controllers(root: str) -> set[str]:
    try:
        with open(os.path.join(root, "cgroup.controllers")) as f:
            return set(f.read().split())
    except OSError:
        return set()


def _cgroup_mounts() -> dict[str, str]:
    """Mount points: ``cgroup2`` for the unified hierarchy, else each v1 controller's name."""
    mounts: dict[str, str] = {}
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            separator = fields.index("-")
            fstype, options = fields[separator + 1], fields[separator + 3].split(",")
            point = fields[4].encode().decode("unicode_escape").encode("latin-1").decode()
            if fstype == "cgroup2":
                mounts.setdefault("cgroup2", point)
            elif fstype == "cgroup":
                for controller in ("memory", "pids"):
                    if controller in options:
                        mounts.setdefault(controller, point)
    return mounts
