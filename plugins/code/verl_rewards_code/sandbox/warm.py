"""The warm sandbox, host side: one server per worker process, interpreter and isolation.

A :class:`WarmServer` starts ``_server.py`` once behind the isolation's
``unshare`` command (its own PID, mount, network, IPC and UTS namespaces)
and hands it each run: the run's configuration and pipes over a
``SOCK_SEQPACKET`` socket pair. The server forks the run's runner into fresh
PID, mount, IPC and network namespaces, so a run costs two forks instead of
``unshare``, a runner's interpreter start and the program's. Everything else
(the tree, the cgroup, the pipes and their caps, the deadline, the result) is
``launch.execute_job``'s, as on the cold path.

Thread-safe: runs from several threads share a server. A server that dies
(killed, or out of memory) is rebuilt, and the runs it held are run again
(at most ``RETRIES`` times). A server that cannot start makes this process
use the cold path, with a warning.
"""

from __future__ import annotations

import atexit
import json
import logging
import os
import select
import shutil
import socket
import subprocess
import tempfile
import threading
import time
import uuid
from typing import Any

from .artifacts import ArtifactSink
from .launch import _LAUNCH_ENV, STOP_GRACE_S, TREE_PREFIX, Pipes, Streams, execute_job, inside_source, pump
from .owners import owner_tag
from .records import Isolation, Job, Limits, RunResult

logger = logging.getLogger("verl_rewards_code.sandbox")

RETRIES = 2
_PROBE = Job.python("print('ok')\n")
_PROBE_LIMITS = Limits(timeout_s=20.0)
_SERVER_ARGS = ("-I", "-B", "-X", "utf8")
_LOG_TAIL = 4096
_PF_EXITING = 0x4
_START_S = 10.0


class ServerGone(Exception):
    """The warm server died while it held a run (or before it got it)."""


class WarmServer:
    """One warm server process and the socket to it; restarted when it dies."""

    def __init__(self, isolation: Isolation, python: str) -> None:
        self.isolation = isolation
        self.python = python
        self.generation = 0
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._control: socket.socket | None = None
        self._pid: int | None = None
        self._stage: str | None = None
        self._log = bytearray()

    def start(self) -> None:
        """Start the server (``unshare ... python -c _server``); it waits for runs."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_read, log_write = os.pipe()
        # Host mounts made later (a temporary directory on a new tmpfs) must
        # reach the server's namespace; each run's copy is made private.
        command = [*self.isolation.command, "--propagation", "slave"]
        self._stage = tempfile.mkdtemp(prefix=f"{TREE_PREFIX}{owner_tag()}-server-")
        config = {"control_fd": theirs.fileno(), "stage": self._stage}
        argv = [*command, self.python, *_SERVER_ARGS, "-c", inside_source("_server.py"), json.dumps(config)]
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log_write,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
                env=_LAUNCH_ENV,
                cwd="/",
            )
        except BaseException:
            ours.close()
            os.close(log_read)
            raise
        finally:
            theirs.close()
            os.close(log_write)
        self._control = ours
        self._log = bytearray()
        threading.Thread(target=self._read_log, args=(log_read, self._log), daemon=True,
                         name="verl-rewards-code warm server log").start()
        self._pid = self._find_server_pid()

    def _find_server_pid(self) -> int | None:
        """The server: ``unshare``'s child (it forks it at once)."""
        assert self._proc is not None
        deadline = time.monotonic() + _START_S
        while time.monotonic() < deadline and self._proc.poll() is None:
            try:
                with open(f"/proc/{self._proc.pid}/task/{self._proc.pid}/children") as f:
                    children = f.read().split()
            except OSError:
                return None
            if children:
                return int(children[0])
            time.sleep(0.001)
        return None

    @staticmethod
    def _read_log(fd: int, into: bytearray) -> None:
        with os.fdopen(fd, "rb", buffering=0) as f:
            while chunk := f.read(65536):
                into += chunk
                del into[:-_LOG_TAIL]

    def alive(self) -> bool:
        """The server runs: not exiting, and its end of the socket is open.

        A server that is killed takes its runs with it while it exits (as PID
        1 of their PID namespace), before ``unshare``, which also holds the
        socket, sees it gone: its ``PF_EXITING`` flag is what is set by then.
        """
        if self._proc is None or self._control is None or self._proc.poll() is not None or self._pid is None:
            return False
        try:
            with open(f"/proc/{self._pid}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            return False
        if fields[0] in ("Z", "X", "x") or int(fields[6]) & _PF_EXITING:
            return False
        poller = select.poll()
        poller.register(self._control, select.POLLIN)
        return not any(event & (select.POLLHUP | select.POLLERR) for _, event in poller.poll(0))

    def server_pid(self) -> int | None:
        """The server's pid (the child of its ``unshare``), for operators and tests."""
        return self._pid

    def stop(self) -> None:
        """Close the socket (the server exits, and every run it holds with it) and reap it."""
        control, proc = self._control, self._proc
        self._control = self._proc = self._pid = None
        if control is not None:
            control.close()
        if proc is not None:
            try:
                proc.wait(timeout=STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, 9)
                proc.wait()
        if self._stage is not None:
            shutil.rmtree(self._stage, ignore_errors=True)
            self._stage = None

    def restart(self, generation: int) -> None:
        """Rebuild the server if it is still the one of ``generation`` (another thread may have)."""
        with self._lock:
            if self.generation != generation:
                return
            logger.warning(
                "verl-rewards-code warm sandbox server died (%s); rebuilding it and re-running its runs",
                self._log.decode(errors="replace").strip()[-300:] or "no message",
            )
            self.stop()
            self.start()
            self.generation += 1

    def send(self, request: dict[str, Any], fds: list[int]) -> int:
        """Hand a run to the server; the server generation it went to."""
        with self._lock:
            generation, control = self.generation, self._control
            if control is None:
                raise ServerGone("the warm server is stopped")
            try:
                socket.send_fds(control, [json.dumps(request).encode()], fds)
            except OSError as e:
                raise ServerGone(f"sending a run: {e}") from e
        return generation

    def launch(
        self, config: dict[str, Any], stdin: bytes, limits: Limits, python: str, sink: ArtifactSink | None = None
    ) -> Streams:
        """Start one run on the server and pump its pipes (a :class:`launch.Launcher`)."""
        pipes = Pipes(artifact=bool(config["collect"]), reaped=True)
        run_id = uuid.uuid4().hex
        names = list(pipes.theirs)
        request = {**config, "id": run_id, "fds": names}
        seen = self.generation
        try:
            generation = self.send(request, [pipes.theirs[name] for name in names])
        except ServerGone:
            pipes.close_theirs()
            pipes.close_ours(tuple(pipes.ours))
            self.restart(seen)
            raise
        pipes.close_theirs()
        streams = Streams(sink=sink)
        try:
            try:
                pump(pipes, stdin, limits, streams, exit_fd=None, exited=None)
            finally:
                pipes.close_ours(("lifeline",))  # the runner exits at once, and its PID namespace with it
            if not streams.exited:
                self._kill(run_id, generation)
            # The server closes its end once it reaped the runner: the run's
            # cgroup is then empty, and its removal does not wait.
            _wait_closed(pipes.ours["reaped"], STOP_GRACE_S)
        finally:
            pipes.close_ours(("reaped",))
        if not _ended(streams) and not self.alive():
            self.restart(generation)
            raise ServerGone("the warm server died during the run")
        return streams

    def _kill(self, run_id: str, generation: int) -> None:
        """Make sure a stopped run's runner is gone (it exits on its lifeline already)."""
        try:
            if self.generation == generation:
                self.send({"kill": run_id}, [])
        except ServerGone:
            pass


def _wait_closed(fd: int, timeout_s: float) -> None:
    """Wait until the write end of pipe ``fd`` is closed everywhere (or ``timeout_s`` passes)."""
    deadline = time.monotonic() + timeout_s
    poller = select.poll()
    poller.register(fd, select.POLLIN)
    while (left := deadline - time.monotonic()) > 0:
        if poller.poll(left * 1000) and not os.read(fd, 4096):
            return


def _ended(streams: Streams) -> bool:
    """The run's status says the program ended or the sandbox failed (its server did not die)."""
    text = streams.status.decode("utf-8", errors="replace")
    return any(key in text for key in ('"exit"', '"signal"', '"setup_error"'))


_servers: dict[tuple[Isolation, str], WarmServer | None] = {}
_registry_lock = threading.Lock()


def server_for(isolation: Isolation, python: str) -> WarmServer | None:
    """This process's warm server for ``isolation`` and ``python``, started (and probed) on
    first use; None where a warm server cannot work here (then runs take the cold path)."""
    if isolation.level != "namespaces" or not isolation.pid_namespace or not isolation.mount:
        return None
    key = (isolation, python)
    with _registry_lock:
        if key not in _servers:
            _servers[key] = _start_probed(isolation, python)
        return _servers[key]


def _start_probed(isolation: Isolation, python: str) -> WarmServer | None:
    server = WarmServer(isolation, python)
    try:
        server.start()
        result = execute_job(isolation, _PROBE, "", _PROBE_LIMITS, python, launcher=server.launch)
        failure = result.setup_error or (None if result.ok and result.stdout == "ok\n" else repr(result))
    except (OSError, ServerGone) as e:
        failure = f"{type(e).__name__}: {e}"
    if failure is None:
        logger.info("verl-rewards-code sandbox: a warm server per worker (pid %s)", server.server_pid())
        return server
    server.stop()
    logger.warning("verl-rewards-code sandbox: no warm server (%s); every run starts a fresh sandbox", failure)
    return None


def run_warm(
    server: WarmServer, job: Job, stdin: str, limits: Limits, helper_processes: int = 0
) -> RunResult:
    """Run ``job`` on ``server``; a run its dying server took with it runs again on the rebuilt one."""
    failure = None
    for attempt in range(RETRIES + 1):
        try:
            return execute_job(server.isolation, job, stdin, limits, server.python, helper_processes, server.launch)
        except ServerGone as e:
            failure = e
            time.sleep(0.01 * (attempt + 1))
    return RunResult(stdout="", stderr="", setup_error=f"the warm sandbox server died {RETRIES + 1} times: {failure}")


def _forget_in_child() -> None:
    """A forked worker (multiprocessing) starts its own servers; its copies of the
    parent's sockets are closed so that the parent's servers still see their end."""
    global _registry_lock
    _registry_lock = threading.Lock()
    for server in _servers.values():
        if server is not None and server._control is not None:
            server._control.close()
    _servers.clear()


def _stop_all() -> None:
    for server in _servers.values():
        if server is not None:
            server.stop()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(_stop_all)
