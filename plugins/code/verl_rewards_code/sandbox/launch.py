"""Run one program once in a sandbox described by an :class:`Isolation`.

The launcher prepares a fresh directory tree, starts the in-sandbox runner
(``_runner.py``) behind the isolation's command prefix (``unshare ...``), waits
for it without reaping it, kills its whole process group, and collects the
outputs. The tree, per run::

    verl-rewards-code-XXXX/  0711 root: the program can pass but not list
      io/                    0755: main.py (0644); stdin, stdout, stderr, status
                             and sandbox.log (0600, reached only through
                             inherited fds)
      work/                  0700, owned by the program's uid: its cwd, HOME, TMPDIR
      stage/                 0700: mount points for the runner's minimal root

With a mount namespace the program sees none of this tree but ``io/main.py``
(read-only) and an empty, size-limited tmpfs at the path of ``work/``.
"""

from __future__ import annotations

import functools
import json
import os
import random
import select
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .records import MIB, Isolation, Limits, RunResult

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


@functools.lru_cache(maxsize=1)
def runner_source() -> str:
    """The source of the in-sandbox runner, passed to ``python -c``."""
    return Path(__file__).with_name("_runner.py").read_text(encoding="utf-8")


def execute(isolation: Isolation, source: str, stdin: str, limits: Limits, python: str) -> RunResult:
    """Run ``source`` with ``stdin`` under ``limits``; never raises for the program's faults."""
    uid = random.SystemRandom().randrange(*_UID_RANGE) if isolation.fresh_uid else None
    with _tree(uid) as tree:
        _write(tree.io_file("main.py"), source, 0o644)
        _write(tree.io_file("stdin"), stdin, 0o600)
        started = time.monotonic()
        finished, returncode = _launch(isolation, tree, limits, python, uid)
        elapsed = time.monotonic() - started
        if not finished and uid is not None and not isolation.pid_namespace:
            _kill_uid(uid)
        return _collect(tree, limits, finished, returncode, elapsed)


def _launch(
    isolation: Isolation, tree: _Tree, limits: Limits, python: str, uid: int | None
) -> tuple[bool, int]:
    """Start the runner, wait up to the time limit, kill what is left; (finished, rc)."""
    with (
        open(tree.io_file("stdin"), "rb") as fin,
        open(tree.io_file("stdout"), "wb") as fout,
        open(tree.io_file("stderr"), "wb") as ferr,
        open(tree.io_file("sandbox.log"), "wb") as flog,
        open(tree.io_file("status"), "wb") as fstatus,
    ):
        fds = {"status_fd": fstatus.fileno(), "stderr_fd": ferr.fileno()}
        config = _runner_config(isolation, tree, limits, python, uid, fds)
        argv = [*isolation.command, python, "-I", "-S", "-c", runner_source(), json.dumps(config)]
        proc = subprocess.Popen(
            argv,
            stdin=fin,
            stdout=fout,
            stderr=flog,
            pass_fds=tuple(fds.values()),
            start_new_session=True,
            env=_LAUNCH_ENV,
            cwd=tree.root,
        )
        try:
            finished = _wait_unreaped(proc, limits.timeout_s + STARTUP_GRACE_S)
            if not finished and isolation.pid_namespace:
                _stop_namespace(proc)
        finally:
            # The leader is not reaped yet, so its process group id cannot
            # have been reused: this kill reaches only the sandbox.
            _kill_group(proc.pid)
            proc.wait()
    return finished, proc.returncode


def _runner_config(
    isolation: Isolation, tree: _Tree, limits: Limits, python: str, uid: int | None, fds: dict[str, int]
) -> dict[str, Any]:
    # Under a user namespace the runner shares the program's uid and counts
    # against its process limit; a fresh uid counts the program alone.
    own = 1 if isolation.drop_caps else 0
    return {
        "workdir": tree.work,
        "stage_dir": tree.stage,
        "program": tree.io_file("main.py"),
        "python": python,
        "python_args": list(_PROGRAM_ARGS),
        "env": _program_env(tree.work),
        "mount": isolation.mount,
        "binds": list(isolation.binds),
        "disk_bytes": limits.disk_mb * MIB,
        # Inside a user namespace the program runs as its root (uid 0 there).
        "work_uid": uid if uid is not None else 0,
        "drop_uid": uid,
        "drop_caps": isolation.drop_caps,
        "kill_uid": not isolation.pid_namespace,
        "rlimits": limits.rlimits(extra_processes=own),
        **fds,
    }


def _program_env(workdir: str) -> dict[str, str]:
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


def _wait_unreaped(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    """Wait until ``proc`` exits or ``timeout`` passes, leaving it unreaped."""
    try:
        pidfd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):
        return _poll_unreaped(proc, timeout)
    try:
        return bool(select.select([pidfd], [], [], timeout)[0])
    finally:
        os.close(pidfd)


def _poll_unreaped(proc: subprocess.Popen[bytes], timeout: float) -> bool:
    if not hasattr(os, "waitid"):
        try:
            proc.wait(timeout)
            return True
        except subprocess.TimeoutExpired:
            return False
    deadline = time.monotonic() + timeout
    delay = 0.001
    while True:
        if os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
            return True
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.02)


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


def _collect(tree: _Tree, limits: Limits, finished: bool, returncode: int, elapsed: float) -> RunResult:
    """Turn the files left by a run into a :class:`RunResult`."""
    status = _read_status(tree.io_file("status"))
    stdout, stdout_full = _read_head(tree.io_file("stdout"), limits.max_output_bytes)
    stderr, stderr_full = _read_tail(tree.io_file("stderr"), limits.max_output_bytes)
    setup_error = status.get("setup_error")
    if finished and setup_error is None and "exit" not in status and "signal" not in status:
        log, _ = _read_tail(tree.io_file("sandbox.log"), limits.max_output_bytes)
        setup_error = f"the sandbox exited with {returncode} before the program ended: {log.strip()[-500:]}"
    return RunResult(
        stdout=stdout,
        stderr=stderr,
        exit_code=status.get("exit"),
        signal=status.get("signal"),
        timed_out=not finished,
        output_limit_hit=stdout_full or stderr_full or "[Errno 27] File too large" in stderr,
        setup_error=setup_error,
        wall_time_s=elapsed,
        cpu_time_s=status.get("cpu_s"),
        max_rss_kb=status.get("maxrss_kb"),
    )


def _read_status(path: str) -> dict[str, Any]:
    merged: dict[str, Any] = {}
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            try:
                record = json.loads(line)
            except ValueError:
                continue
            if isinstance(record, dict):
                # The first setup error is the cause; later ones are its echoes.
                for key, value in record.items():
                    merged.setdefault(key, value)
    return merged


def _read_head(path: str, limit: int) -> tuple[str, bool]:
    """The first ``limit`` bytes of a file, decoded, and whether it reached ``limit``."""
    with open(path, "rb") as f:
        data = f.read(limit)
    return data.decode("utf-8", errors="replace"), len(data) >= limit


def _read_tail(path: str, limit: int) -> tuple[str, bool]:
    """The last bytes of a file, decoded, and whether the file reached ``limit``."""
    size = os.path.getsize(path)
    with open(path, "rb") as f:
        f.seek(max(0, size - STDERR_TAIL_BYTES))
        data = f.read()
    return data.decode("utf-8", errors="replace"), size >= limit


def _write(path: str, text: str, mode: int) -> None:
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "w", encoding="utf-8") as f:
        f.write(text)
    os.chmod(path, mode)


@contextmanager
def _tree(uid: int | None) -> Iterator[_Tree]:
    root = tempfile.mkdtemp(prefix="verl-rewards-code-")
    try:
        tree = _Tree(root, *(os.path.join(root, name) for name in ("io", "work", "stage")))
        os.chmod(root, 0o711)
        for path, mode in ((tree.io, 0o755), (tree.work, 0o700), (tree.stage, 0o700)):
            os.mkdir(path)
            os.chmod(path, mode)
        if uid is not None:
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
