"""Records of the sandbox: how it isolates, the limits of a run, and what came out of it."""

from __future__ import annotations

import math
import os
import resource
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Literal

MIB = 1024 * 1024


# The least address space a process gets: enough to start Python (~15 MB).
MIN_PROCESS_MB = 32


@dataclass(frozen=True)
class Limits:
    """Resource limits for one run of a program, for the whole run.

    ``timeout_s`` is wall-clock time for the program; its CPU-time limit is
    derived from it (``ceil(timeout_s)`` seconds per process, SIGKILL one
    second later). ``memory_mb`` is the run's memory budget: everything it
    holds (processes, shared memory, memfds, its in-memory disk), enforced by
    the run's memory cgroup where there is one. ``max_processes`` bounds the
    processes and threads it may have at once (the run's pids cgroup, and
    RLIMIT_NPROC, which counts a run's fresh uid or user namespace).
    ``disk_mb`` is the size of its working directory and ``/dev/shm``
    together (a tmpfs, so it is memory too). Each process gets RLIMIT_AS of
    ``process_memory_mb`` = ``(memory_mb - disk_mb) // max_processes``, so
    rlimits alone keep ``max_processes x process_memory_mb + disk_mb <=
    memory_mb`` for mapped memory and a single hog gets a ``MemoryError``.
    ``max_output_bytes`` bounds stdout and stderr (the run is stopped past
    it) and any file it writes (RLIMIT_FSIZE).
    """

    timeout_s: float = 5.0
    memory_mb: int = 1024
    max_output_bytes: int = 4 * MIB
    max_processes: int = 4
    max_open_files: int = 256
    disk_mb: int = 64

    def __post_init__(self) -> None:
        for name in ("timeout_s", "memory_mb", "max_output_bytes", "max_processes", "max_open_files", "disk_mb"):
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, not {getattr(self, name)!r}")
        if self.process_memory_mb < MIN_PROCESS_MB:
            raise ValueError(
                f"memory_mb={self.memory_mb} leaves {self.process_memory_mb} MB per process "
                f"((memory_mb - disk_mb={self.disk_mb}) // max_processes={self.max_processes}); "
                f"each process needs at least {MIN_PROCESS_MB} MB"
            )

    @property
    def cpu_s(self) -> int:
        """The CPU-time limit in seconds (soft: SIGXCPU; SIGKILL one second later)."""
        return max(1, math.ceil(self.timeout_s))

    @property
    def process_memory_mb(self) -> int:
        """Each process's address space: the run's budget less its disk, shared by its processes."""
        return (self.memory_mb - self.disk_mb) // self.max_processes

    def rlimits(self, extra_processes: int = 0, address_space_mb: int | None = None) -> list[tuple[str, int, int]]:
        """``(resource name, soft, hard)`` triples; ``extra_processes`` are the sandbox's own
        (or a runtime's threads); ``address_space_mb`` replaces ``process_memory_mb``
        (0: no address-space limit, for runtimes that reserve large ranges they never
        touch: the run's memory cgroup then bounds what they use)."""
        nproc = self.max_processes + extra_processes
        mb = self.process_memory_mb if address_space_mb is None else address_space_mb
        memory = mb * MIB if mb else resource.RLIM_INFINITY
        return [
            ("RLIMIT_CPU", self.cpu_s, self.cpu_s + 1),
            ("RLIMIT_AS", memory, memory),
            ("RLIMIT_FSIZE", self.max_output_bytes, self.max_output_bytes),
            ("RLIMIT_NPROC", nproc, nproc),
            ("RLIMIT_NOFILE", self.max_open_files, self.max_open_files),
            ("RLIMIT_CORE", 0, 0),
        ]


@dataclass(frozen=True)
class RunResult:
    """What one run of a program did.

    Exactly one of ``exit_code`` and ``signal`` is set when the program ran to
    its end; ``timed_out`` means it was killed at the wall-clock limit, and
    ``setup_error`` that the sandbox itself failed (the program never ran).
    ``memory_limit_hit``: a process of the run (the program's, or the sandbox's
    own runner) was killed at the run's memory limit, or the language's runtime
    reported running out of its memory. ``compile_error``: the program did not
    compile (the compiler's first lines; it never ran). ``artifacts_error``: a
    compiler's output could not be taken out of the sandbox (too large).
    ``profile``: where the run's time went, phase by phase, when profiling was on
    (``phases.py``): ``(process, phase, monotonic seconds, that process's CPU seconds)``.
    """

    stdout: str
    stderr: str
    exit_code: int | None = None
    signal: int | None = None
    timed_out: bool = False
    output_limit_hit: bool = False
    setup_error: str | None = None
    wall_time_s: float = 0.0
    cpu_time_s: float | None = None
    max_rss_kb: int | None = None
    memory_limit_hit: bool = False
    compile_error: str | None = None
    artifacts_error: str | None = None
    profile: tuple[tuple[str, str, float, float], ...] = ()

    @property
    def ok(self) -> bool:
        """The program ran and exited with status 0."""
        return self.exit_code == 0 and not self.timed_out and self.setup_error is None


@dataclass(frozen=True)
class Job:
    """What one run executes, beyond Python's ``main.py``: the files of its
    read-only ``io/`` directory and a command, with what its language needs.

    ``command`` (None: ``python main.py``, run in the warm interpreter when
    there is one) may use ``{io}`` (the ``io/`` directory as the program sees
    it) and ``{build}`` (``artifacts``, a host directory shown read-only: a
    compiled program). ``collect`` names a directory the command writes in its
    working directory (a compiler's output), sent out of the sandbox into
    ``collect_into`` (at most ``artifact_bytes`` on disk, written as it
    arrives) after it exited 0.
    ``args`` follow the command (``{io}`` allowed: files of ``files``).
    ``binds`` are host paths the command needs (a toolchain), shown read-only;
    ``extra_tasks`` the threads its runtime starts for itself (the JVM's),
    allowed on top of ``max_processes``; ``address_space_mb`` as for
    :meth:`Limits.rlimits`. ``merge_stderr`` sends stderr to stdout (a
    compiler's messages, whose first lines matter).
    """

    files: Mapping[str, str]
    command: tuple[str, ...] | None = None
    args: tuple[str, ...] = ()
    artifacts: str | None = None
    collect: str | None = None
    collect_into: str | None = None
    artifact_bytes: int = 0
    binds: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    extra_tasks: int = 0
    address_space_mb: int | None = None
    merge_stderr: bool = False

    @classmethod
    def python(cls, source: str) -> Job:
        """Python ``source`` as ``main.py``."""
        return cls({"main.py": source})

    def with_inputs(self, files: Mapping[str, str], args: tuple[str, ...]) -> Job:
        """This job with more read-only ``files`` in ``io/`` and ``args`` for its program
        (a special judge's ``input output answer``)."""
        for name in files:
            if not name or "/" in name or name in (".", "..", "build") or name in self.files:
                raise ValueError(f"a run's extra file must be a plain name other than the program's, not {name!r}")
        return replace(self, files={**self.files, **files}, args=(*self.args, *args))


@dataclass(frozen=True)
class Cgroups:
    """Where run cgroups are made: cgroup ``version`` 2 (one parent directory)
    or 1 (the ``memory`` then the ``pids`` hierarchy's parent directory)."""

    version: Literal[1, 2]
    parents: tuple[str, ...]

    def describe(self) -> str:
        where = ", ".join(self.parents)
        return f"a cgroup v{self.version} per run ({where}): memory_mb bounds all the run holds, max_processes its tasks"


@dataclass(frozen=True)
class Isolation:
    """How programs are isolated: the command prefix and what the runner sets up.

    ``command`` goes before the runner (e.g. ``unshare --net --pid ...``);
    ``fresh_uid`` runs each program under a new unprivileged uid (when the
    caller is root, whose process count RLIMIT_NPROC would not limit);
    ``drop_caps`` empties the capability bounding set (inside a user
    namespace); ``mount`` runs the program in a minimal root of its own that
    shows only ``binds`` (host paths, read-only: the interpreter and system
    libraries), its program file and a private, size-limited working directory.
    ``cgroups`` bounds each run's memory (anonymous, SysV shm, memfd, tmpfs) and
    tasks in the kernel; ``seccomp`` refuses ``socket(AF_VSOCK)`` (vsock is not
    network-namespaced), io_uring (which could open one past the filter), new
    user namespaces and kernel keys (which would outlive the run).
    """

    level: Literal["namespaces", "rlimits"]
    command: tuple[str, ...] = ()
    fresh_uid: bool = False
    drop_caps: bool = False
    mount: bool = False
    binds: tuple[str, ...] = ()
    nproc_enforced: bool = True
    cgroups: Cgroups | None = None
    seccomp: bool = False

    @property
    def pid_namespace(self) -> bool:
        """Every process of a run dies with it."""
        return "--pid" in self.command

    @property
    def network_blocked(self) -> bool:
        """The program sees only an unconfigured loopback device."""
        return "--net" in self.command

    def describe(self) -> str:
        """One line for logs: what holds and what does not."""
        holds = ["rlimits (cpu, address space, file size, open files"]
        holds[0] += ", processes)" if self.nproc_enforced else ")"
        if self.cgroups is not None:
            holds.append(self.cgroups.describe())
        if self.seccomp:
            memfd = "" if self.cgroups is not None else ", no memfds: no cgroup would count them"
            holds.append(f"seccomp (no vsock sockets, no io_uring, no new user namespaces, no kernel keys{memfd})")
        if self.command:
            spaces = [flag[2:] for flag in self.command if flag in _NAMESPACE_FLAGS]
            holds.append("namespaces (" + ", ".join(spaces) + ")")
        if self.mount:
            holds.append(
                "a minimal read-only root (the interpreter and system libraries; no host /tmp, /home, "
                "/root, /work, /var) with a private size-limited working directory"
            )
        if self.fresh_uid:
            holds.append("a fresh unprivileged uid per run")
        if self.drop_caps:
            holds.append("no capabilities")
        missing = []
        if not self.network_blocked:
            missing.append("network")
        if not self.pid_namespace:
            missing.append("PID namespace (escaped processes live until their CPU limit)")
        if not self.mount:
            missing.append(
                "file system (the program can read every file its uid may, e.g. world-readable "
                "datasets; its disk use is bounded per file only)"
            )
        if not self.nproc_enforced and self.cgroups is None:
            missing.append("process limit (RLIMIT_NPROC does not bind root)")
        if self.cgroups is None:
            missing.append(
                "whole-run memory and processes as one budget (no writable cgroup hierarchy with memory "
                "and pids: rlimits per process, SysV shared memory by the IPC namespace's limits)"
            )
        if not self.seccomp:
            missing.append("vsock (no seccomp filter on this kernel or architecture)")
        if not self.fresh_uid and not (self.pid_namespace and self.mount):
            who = "root" if os.geteuid() == 0 else "the caller's uid"
            missing.append(
                f"user (the program runs as {who}: it can signal the caller's processes "
                "and read and write whatever the caller can)"
            )
        text = f"{self.level}: " + "; ".join(holds)
        return text + (f"; NOT isolated: {', '.join(missing)}" if missing else "")


_NAMESPACE_FLAGS = ("--user", "--mount", "--net", "--pid", "--ipc", "--uts")
