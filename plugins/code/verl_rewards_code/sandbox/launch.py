"""Run one program once in a sandbox described by an :class:`Isolation`.

The launcher prepares a fresh directory tree, starts the in-sandbox runner
(``_runner.py``) behind the isolation's command prefix (``unshare ...``) in a
fresh cgroup (when the isolation has them), feeds its stdin and reads its
stdout, stderr and status through pipes while it runs (with caps: output never
touches the host's disk), waits for it without reaping it, kills what is
left, and removes the tree. The tree, per run::

    verl-rewards-code-<owner>-XXXX/  0711 root: the program can pass but not list
      io/                    0755: main.py, main.cpp... (0644)
      work/                  0700, owned by the program's uid: its cwd, HOME, TMPDIR
      stage/                 0700: mount points for the runner's minimal root

With a mount namespace the program sees none of this tree but ``io/``
(read-only), an empty, size-limited tmpfs at the path of ``work/`` and, for
a compiled language, its compiled program at ``build/`` (read-only). The
same tree serves a warm server's run (``warm.py``), whose runner is forked
from the server instead of started by ``unshare``. A
tree whose owner (``owners.owner_tag``: PID namespace and pid) is gone (a
worker killed mid-run) is removed the next time a process chooses its
isolation.
"""

from __future__ import annotations

import functools
import glob
import json
import os
import random
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from . import cgroups
from .artifacts import ArtifactSink
from .owners import made_by_a_dead_process, owner_tag
from .records import MIB, Isolation, Job, Limits, RunResult
from .seccomp import program_filter

TREE_PREFIX = "verl-rewards-code-"

# Startup of the namespaces and the interpreter is not the program's time.
STARTUP_GRACE_S = 1.0
# How long the kernel may take to kill every process of a timed-out run.
STOP_GRACE_S = 10.0
STDERR_TAIL_BYTES = 4096
# Fresh uids for root runs: far above any real account or subuid range.
_UID_RANGE = (2_000_000_000, 2_100_000_000)
_LAUNCH_ENV = {"PATH": "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"}
_PROGRAM_ARGS = ("-I", "-B", "-X", "utf8")


@dataclass(frozen=True)
class _Tree:
    root: str
    io: str
    work: str
    stage: str

    def io_file(self, name: str) -> str:
        return os.path.join(self.io, name)


@functools.lru_cache(maxsize=2)
def inside_source(main: str) -> str:
    """The source passed to ``python -c``: ``_inside.py`` (the shared building
    blocks) then ``main`` (``_runner.py`` or ``_server.py``), which uses them."""
    here = Path(__file__)
    return here.with_name("_inside.py").read_text(encoding="utf-8") + "\n" + here.with_name(main).read_text(encoding="utf-8")


def runner_source() -> str:
    """The source of the in-sandbox runner of one run, passed to ``python -c``."""
    return inside_source("_runner.py")


class Launcher(Protocol):
    """Starts a prepared run and pumps its pipes (the cold ``unshare`` runner, or a warm server);
    a compile run's output goes to ``sink`` as it arrives."""

    def __call__(
        self, config: dict[str, Any], stdin: bytes, limits: Limits, python: str, sink: ArtifactSink | None = None
    ) -> Streams: ...


def execute(
    isolation: Isolation, source: str, stdin: str, limits: Limits, python: str, helper_processes: int = 0
) -> RunResult:
    """Run Python ``source`` with ``stdin`` under ``limits`` (plus ``helper_processes``
    of its own machinery) by starting a fresh runner; never raises for the program's faults."""
    return execute_job(isolation, Job.python(source), stdin, limits, python, helper_processes)


def execute_job(
    isolation: Isolation,
    job: Job,
    stdin: str,
    limits: Limits,
    python: str,
    helper_processes: int = 0,
    launcher: Launcher | None = None,
) -> RunResult:
    """Run ``job`` once: a fresh tree and cgroup, then ``launcher`` (default: a
    fresh ``unshare`` runner, the cold path) starts it and pumps its pipes."""
    uid = random.SystemRandom().randrange(*_UID_RANGE) if isolation.fresh_uid else None
    own = 1 + helper_processes + job.extra_tasks  # the runner, the harness's helpers, a runtime's threads
    cold = launcher is None
    with _tree(uid, work=not isolation.mount, stage=cold) as tree, _cgroup(isolation, limits, own) as cgroup:
        for name, text in job.files.items():
            _write(tree.io_file(name), text, 0o644)
        config = _run_config(isolation, tree, limits, python, uid, cgroup, job, helper_processes)
        sink = ArtifactSink(job.collect_into, job.artifact_bytes) if job.collect_into else None
        started = time.monotonic()
        try:
            streams = (launcher or _launch_cold)(config, stdin.encode("utf-8"), limits, python, sink)
        except BaseException:
            if sink is not None:
                sink.discard()  # a run its warm server took with it runs again, into the same directory
            raise
        elapsed = time.monotonic() - started
        if not streams.exited and uid is not None and not isolation.pid_namespace:
            _kill_uid(uid)
        if cgroup is not None:
            cgroup.kill_all()
        oom = cgroup is not None and cgroup.oom_killed()
        artifacts_error = sink.finish() if sink is not None else None
        return _collect(streams, limits, elapsed, oom, artifacts_error)


@contextmanager
def _cgroup(isolation: Isolation, limits: Limits, own: int) -> Iterator[cgroups.RunCgroup | None]:
    if isolation.cgroups is None:
        yield None
        return
    with cgroups.run_cgroup(isolation.cgroups, limits, own) as run:
        yield run


@dataclass
class Streams:
    """What the launcher read from a run's pipes, within the caps."""

    stdout: bytearray = field(default_factory=bytearray)
    stderr_tail: bytearray = field(default_factory=bytearray)
    stderr_total: int = 0
    status: bytearray = field(default_factory=bytearray)
    log: bytearray = field(default_factory=bytearray)
    sink: ArtifactSink | None = None
    exited: bool = False
    output_limit_hit: bool = False
    returncode: int = 0


class Pipes:
    """A run's pipes: the launcher's ends (``ours``) and the run's (``theirs``, to hand over)."""

    NAMES = ("stdin", "stdout", "log", "stderr", "status", "lifeline")

    def __init__(self, artifact: bool, reaped: bool = False) -> None:
        self.ours: dict[str, int] = {}
        self.theirs: dict[str, int] = {}
        for name in (*self.NAMES, *(["artifact"] if artifact else []), *(["reaped"] if reaped else [])):
            read_end, write_end = os.pipe()
            # The run reads stdin and the lifeline; it writes everything else.
            mine, its = (write_end, read_end) if name in ("stdin", "lifeline") else (read_end, write_end)
            self.ours[name], self.theirs[name] = mine, its

    def close_theirs(self) -> None:
        for fd in self.theirs.values():
            os.close(fd)
        self.theirs = {}

    def close_ours(self, names: tuple[str, ...]) -> None:
        for name in names:
            fd = self.ours.pop(name, None)
            if fd is not None:
                os.close(fd)


def _launch_cold(
    config: dict[str, Any], stdin: bytes, limits: Limits, python: str, sink: ArtifactSink | None = None
) -> Streams:
    """Start a fresh runner behind the isolation's command, pump its pipes up to the
    time limit, kill what is left."""
    pipes = Pipes(artifact=bool(config["collect"]))
    config["in_process"] = False  # a fresh runner executes every program
    config |= {f"{name}_fd": pipes.theirs[name] for name in ("status", "stderr", "lifeline", "artifact") if name in pipes.theirs}
    argv = [*config.pop("isolation_command"), python, "-I", "-S", "-c", runner_source(), json.dumps(config)]
    try:
        proc = subprocess.Popen(
            argv,
            stdin=pipes.theirs["stdin"],
            stdout=pipes.theirs["stdout"],
            stderr=pipes.theirs["log"],
            pass_fds=tuple(pipes.theirs[n] for n in ("status", "stderr", "lifeline", "artifact") if n in pipes.theirs),
            start_new_session=True,
            env=_LAUNCH_ENV,
            cwd=config["tree_root"],
        )
    except BaseException:
        pipes.close_ours(("lifeline",))
        raise
    finally:
        pipes.close_theirs()
    streams = Streams(sink=sink)
    try:
        exit_fd = _pidfd(proc.pid)
        pump(pipes, stdin, limits, streams, exit_fd, lambda: _exited(proc))
        if not streams.exited and config["pid_namespace"]:
            _stop_namespace(proc)
    finally:
        # The leader is not reaped yet, so its process group id cannot
        # have been reused: this kill reaches only the sandbox.
        _kill_group(proc.pid)
        proc.wait()
        pipes.close_ours(("lifeline",))
    streams.returncode = proc.returncode
    return streams


def pump(
    pipes: Pipes,
    stdin: bytes,
    limits: Limits,
    streams: Streams,
    exit_fd: int | None,
    exited: Callable[[], bool] | None,
) -> None:
    """Feed stdin and read every output pipe until the run ends, the time limit
    passes, or the output passes ``max_output_bytes`` (then stop early). The
    run has ended when ``exit_fd`` (a pidfd) is readable, when ``exited()``
    says so (polled), or, with neither, when its status pipe closes (its
    runner, the only holder, exited). Closes every pipe but the lifeline
    (and ``reaped``)."""
    deadline = time.monotonic() + limits.timeout_s + STARTUP_GRACE_S
    names = ("stdout", "stderr", "log", "status", "artifact")
    readers = {pipes.ours[name]: name for name in names if name in pipes.ours}
    stdin_fd = pipes.ours["stdin"]
    writer: int | None = stdin_fd
    os.set_blocking(stdin_fd, False)
    pending = memoryview(stdin)
    # poll, not select: a worker may hold more than FD_SETSIZE (1024) descriptors.
    poller = select.poll()
    for fd in [*readers, *([exit_fd] if exit_fd is not None else [])]:
        poller.register(fd, select.POLLIN)
    poller.register(stdin_fd, select.POLLOUT)
    try:
        while True:
            if writer is not None and not pending:
                poller.unregister(writer)
                os.close(writer)
                writer = None
            left = deadline - time.monotonic()
            if left <= 0:
                return
            wait_s = min(left, 0.01) if exit_fd is None and exited is not None else left
            events = dict(poller.poll(wait_s * 1000))
            if writer is not None and writer in events:
                try:
                    pending = pending[os.write(writer, pending[:65536]) :]
                except BrokenPipeError:
                    pending = pending[:0]
            status_closed = False
            for fd in [fd for fd in events if fd in readers]:
                name = readers[fd]
                if not _read_into(fd, readers, streams, limits):
                    streams.output_limit_hit = True
                    return
                if fd not in readers:
                    poller.unregister(fd)
                    status_closed |= name == "status"
            if (
                (exit_fd is not None and exit_fd in events)
                or (exit_fd is None and exited is not None and exited())
                or (exit_fd is None and exited is None and status_closed)
            ):
                streams.exited = True
                _drain(readers, streams, limits)
                return
    finally:
        for fd in [*readers, *([writer] if writer is not None else []), *([exit_fd] if exit_fd is not None else [])]:
            os.close(fd)
        pipes.ours = {k: v for k, v in pipes.ours.items() if k in ("lifeline", "reaped")}


def _read_into(fd: int, readers: dict[int, str], streams: Streams, limits: Limits) -> bool:
    """Read what ``fd`` has; False when the run's output passed its cap."""
    chunk = os.read(fd, 65536)
    name = readers[fd]
    if not chunk:
        del readers[fd]
        os.close(fd)
        return True
    if name == "stdout":
        streams.stdout += chunk
        if len(streams.stdout) >= limits.max_output_bytes:
            del streams.stdout[limits.max_output_bytes :]
            return False
    elif name == "stderr":
        streams.stderr_total += len(chunk)
        streams.stderr_tail = (streams.stderr_tail + chunk)[-STDERR_TAIL_BYTES:]
        return streams.stderr_total < limits.max_output_bytes
    elif name == "artifact":
        if streams.sink is not None:
            streams.sink.feed(chunk)  # written as it arrives; past the disk limit, dropped and refused
    else:
        # The runner's own status and log are small; a cap still bounds them.
        target = streams.status if name == "status" else streams.log
        if len(target) < limits.max_output_bytes:
            target += chunk
    return True


def _drain(readers: dict[int, str], streams: Streams, limits: Limits) -> None:
    """After the runner exited: read what its pipes still hold, without waiting
    for processes that escaped it (without a PID namespace) to close them."""
    for fd in list(readers):
        os.set_blocking(fd, False)
        while fd in readers:
            try:
                if not _read_into(fd, readers, streams, limits):
                    streams.output_limit_hit = True
                    return
            except BlockingIOError:
                break


def _pidfd(pid: int) -> int | None:
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None


def _wait_unreaped(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait until ``proc`` exits or ``timeout`` passes, leaving it unreaped."""
    pidfd = _pidfd(proc.pid)
    if pidfd is not None:
        try:
            poller = select.poll()
            poller.register(pidfd, select.POLLIN)
            return bool(poller.poll(timeout * 1000))
        finally:
            os.close(pidfd)
    deadline = time.monotonic() + timeout
    while not _exited(proc):
        if time.monotonic() >= deadline:
            return False
        time.sleep(0.005)
    return True


def _exited(proc: subprocess.Popen[bytes]) -> bool:
    if hasattr(os, "waitid"):
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    return proc.poll() is not None


def _run_config(
    isolation: Isolation,
    tree: _Tree,
    limits: Limits,
    python: str,
    uid: int | None,
    cgroup: cgroups.RunCgroup | None,
    job: Job,
    helper_processes: int = 0,
) -> dict[str, Any]:
    """The runner's configuration (JSON): where the run lives, what it runs, its limits.
    Descriptor numbers are added by whoever starts the runner."""
    # Under a user namespace the runner shares the program's uid and counts
    # against its process limit; a fresh uid counts the program alone.
    own = (1 if isolation.drop_caps else 0) + helper_processes + job.extra_tasks
    main = tree.io_file("main.py")
    # A compiled program is shown at <tree>/build (its mount point is made in the run's own root).
    build = os.path.join(tree.root, "build") if isolation.mount else job.artifacts
    places = {"io": tree.io, "build": build or ""}
    args = [part.format_map(places) for part in job.args]
    command = [part.format_map(places) for part in job.command] if job.command else [python, *_PROGRAM_ARGS, main]
    command += args
    return {
        "isolation_command": list(isolation.command),
        "tree_root": tree.root,
        "title": f"verl-rewards-code run {tree.root}",
        "pid_namespace": isolation.pid_namespace,
        "workdir": tree.work,
        "stage_dir": tree.stage,
        "io": tree.io,
        "main": main,
        "artifacts": job.artifacts if isolation.mount else None,
        "build": build,
        "command": command,
        "args": args,
        # Only a warm server's forked interpreter can run main.py without starting Python.
        "in_process": job.command is None,
        "collect": job.collect,
        "artifact_bytes": job.artifact_bytes,
        "merge_stderr": job.merge_stderr,
        "env": {**program_env(tree.work), **job.env},
        "mount": isolation.mount,
        "binds": [*isolation.binds, *job.binds],
        "disk_bytes": limits.disk_mb * MIB,
        # Inside a user namespace the program runs as its root (uid 0 there).
        "work_uid": uid if uid is not None else 0,
        "drop_uid": uid,
        "drop_caps": isolation.drop_caps,
        "kill_uid": not isolation.pid_namespace,
        "rlimits": limits.rlimits(extra_processes=own, address_space_mb=job.address_space_mb),
        "cgroup_procs": cgroup.procs_files if cgroup is not None else [],
        "ipc_namespace": "--ipc" in isolation.command,
        "memory_bytes": limits.memory_mb * MIB,
        "seccomp": program_filter(refuse_memfd=isolation.cgroups is None) if isolation.seccomp else None,
    }


def program_env(workdir: str) -> dict[str, str]:
    """A scrubbed environment: nothing of the caller's leaks into the program."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }


def _stop_namespace(proc: subprocess.Popen[bytes]) -> None:
    """Kill the runner (PID 1 of the run's namespace) and wait for ``unshare`` to see it die.

    The kernel tears a PID namespace down while its init exits, and
    ``unshare`` waits for that, so once it has exited no process of the run
    is left. Killing ``unshare`` first would return while they still die.
    """
    for pidfd in _child_pidfds(proc.pid):
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass
        finally:
            os.close(pidfd)
    _wait_unreaped(proc, STOP_GRACE_S)


def _child_pidfds(pid: int) -> list[int]:
    """Pidfds of ``pid``'s children, opened race-free (a child is re-checked after opening)."""
    path = Path(f"/proc/{pid}/task/{pid}/children")
    opened = []
    try:
        for child in [int(c) for c in path.read_text().split()]:
            try:
                opened.append((child, os.pidfd_open(child)))
            except OSError:
                continue  # already gone
        still = {int(c) for c in path.read_text().split()}
    except (OSError, AttributeError, ValueError):
        still = set()
    kept = []
    for child, fd in opened:
        # An exited child may have been reaped and its pid reused since the
        # first read; one that is still listed is the process the pidfd holds.
        if child in still:
            kept.append(fd)
        else:
            os.close(fd)
    return kept


def _kill_group(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _kill_uid(uid: int) -> None:
    """Kill every process of the run's uid: those that left the process group."""
    kill = shutil.which("kill") or "/bin/kill"
    subprocess.run(
        [kill, "-KILL", "-1"],
        user=uid,
        group=uid,
        extra_groups=[],
        env=_LAUNCH_ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
        timeout=10,
    )


def _collect(streams: Streams, limits: Limits, elapsed: float, oom: bool, artifacts_error: str | None) -> RunResult:
    """Turn what a run's pipes carried into a :class:`RunResult`."""
    status = _parse_status(streams.status.decode("utf-8", errors="replace"))
    stderr = streams.stderr_tail.decode("utf-8", errors="replace")
    setup_error = status.get("setup_error")
    ended = "exit" in status or "signal" in status
    if streams.exited and setup_error is None and not ended and not oom:
        # A runner killed at the run's memory limit (the OOM killer may pick it
        # over the program's processes) ended a run that hit its limit: not a sandbox fault.
        log = streams.log.decode("utf-8", errors="replace")
        setup_error = f"the sandbox exited with {streams.returncode} before the program ended: {log.strip()[-500:]}"
    return RunResult(
        stdout=streams.stdout.decode("utf-8", errors="replace"),
        stderr=stderr,
        exit_code=status.get("exit"),
        signal=status.get("signal"),
        timed_out=not streams.exited and not streams.output_limit_hit,
        output_limit_hit=(
            streams.output_limit_hit or "[Errno 27] File too large" in stderr or status.get("signal") == signal.SIGXFSZ
        ),
        setup_error=setup_error,
        wall_time_s=elapsed,
        cpu_time_s=status.get("cpu_s"),
        max_rss_kb=status.get("maxrss_kb"),
        memory_limit_hit=oom,
        artifacts_error=status.get("collect_error") or artifacts_error,
    )


def _parse_status(text: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            # The first setup error is the cause; later ones are its echoes.
            for key, value in record.items():
                merged.setdefault(key, value)
    return merged


def _write(path: str, text: str, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


def remove_stale_trees() -> None:
    """Remove run trees left by processes that died mid-run (a worker killed on a timeout)."""
    for root in glob.glob(os.path.join(tempfile.gettempdir(), f"{TREE_PREFIX}*")):
        if made_by_a_dead_process(os.path.basename(root)[len(TREE_PREFIX) :]):
            _remove(root)


@contextmanager
def _tree(uid: int | None, work: bool = True, stage: bool = True) -> Iterator[_Tree]:
    """A run's tree; ``work`` (the working directory on the host's disk: without a
    mount namespace) and ``stage`` (the cold runner's mount points) only when used."""
    root = tempfile.mkdtemp(prefix=f"{TREE_PREFIX}{owner_tag()}-")
    try:
        tree = _Tree(root, *(os.path.join(root, name) for name in ("io", "work", "stage")))
        os.chmod(root, 0o711)
        for path, mode, wanted in ((tree.io, 0o755, True), (tree.work, 0o700, work), (tree.stage, 0o700, stage)):
            if wanted:
                os.mkdir(path)
                os.chmod(path, mode)
        if uid is not None and work:
            os.chown(tree.work, uid, uid)
        yield tree
    finally:
        _remove(root)


def _remove(root: str) -> None:
    shutil.rmtree(root, ignore_errors=True)
    if os.path.exists(root):
        # A program may leave read-only directories behind; their owner may chmod them.
        for parent, dirs, _files in os.walk(root):
            for name in dirs:
                os.chmod(os.path.join(parent, name), 0o700)
        shutil.rmtree(root, ignore_errors=True)
