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
import contextlib
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
import weakref
from typing import Any

from . import phases
from .artifacts import ArtifactSink
from .launch import Place, execute_job, inside_source, prepared, source_digest
from .owners import owner_tag
from .pump import Pipes, Streams, pump
from .reap import LAUNCH_ENV, STOP_GRACE_S, wait_closed
from .records import Isolation, Job, Limits, RunResult
from .results import collect
from .tree import TREE_PREFIX

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
        self.trusted: frozenset[str] = frozenset()

    def start(self) -> None:
        """Start the server (``unshare ... python -c _server``); it waits for runs."""
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        log_read, log_write = os.pipe()
        # Host mounts made later (a temporary directory on a new tmpfs) must
        # reach the server's namespace; each run's copy is made private.
        command = [*self.isolation.command, "--propagation", "slave"]
        self._stage = tempfile.mkdtemp(prefix=f"{TREE_PREFIX}{owner_tag()}-server-")
        trusted = list(_trusted)
        config = {"control_fd": theirs.fileno(), "stage": self._stage, "trusted": trusted}
        self.trusted = frozenset(source_digest(source) for source in trusted)
        argv = [*command, self.python, *_SERVER_ARGS, "-c", inside_source("_server.py"), json.dumps(config)]
        try:
            self._proc = subprocess.Popen(
                argv,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log_write,
                pass_fds=(theirs.fileno(),),
                start_new_session=True,
                env=LAUNCH_ENV,
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
        pipes, run_id, generation = self.start_run(config)
        try:
            streams = self.pump_run(pipes, stdin, limits, sink, run_id, generation)
        finally:
            pipes.close_ours(("lifeline",))
        self.finish_run(pipes, streams, run_id, generation)
        return streams

    def start_run(self, config: dict[str, Any], session: socket.socket | None = None) -> tuple[Pipes, str, int]:
        """Hand a run (or the first test of a session, whose runner gets ``session``)
        to the server: its pipes (ours), its id and the server generation it went to."""
        pipes = Pipes(artifact=bool(config["collect"]), reaped=True)
        run_id = uuid.uuid4().hex
        names = list(pipes.theirs)
        fds = [pipes.theirs[name] for name in names]
        if session is not None:
            names.append("session")
            fds.append(session.fileno())
        request = {**config, "id": run_id, "fds": names, "trusted_main": self.trusted_digest(config)}
        seen = self.generation
        try:
            generation = self.send(request, fds)
        except ServerGone:
            pipes.close_theirs()
            pipes.close_ours(tuple(pipes.ours))
            self.restart(seen)
            raise
        finally:
            if session is not None:
                session.close()
        pipes.close_theirs()
        return pipes, run_id, generation

    def pump_run(
        self, pipes: Pipes, stdin: bytes, limits: Limits, sink: ArtifactSink | None, run_id: str, generation: int
    ) -> Streams:
        """Feed and read a run's pipes until its status pipe closes or its time is up."""
        streams = Streams(sink=sink)
        pump(pipes, stdin, limits, streams, exit_fd=None, exited=None)
        return streams

    def finish_run(self, pipes: Pipes, streams: Streams, run_id: str, generation: int) -> None:
        """After its lifeline closed: make sure the run's runner is gone, wait until the server
        reaped it (its cgroup is then empty), and raise :class:`ServerGone` if the server died."""
        try:
            if not streams.exited:
                self._kill(run_id, generation)
            # The server closes its end once it reaped the runner: the run's
            # cgroup is then empty, and its removal does not wait.
            wait_closed(pipes.ours["reaped"], STOP_GRACE_S)
        finally:
            pipes.close_ours(("reaped",))
        if not _ended(streams) and not self.alive():
            self.restart(generation)
            raise ServerGone("the warm server died during the run")

    def trusted_digest(self, config: dict[str, Any]) -> str | None:
        """The digest of the run's ``main.py`` when it is a trusted program this server loaded."""
        digest = config.get("main_digest")
        return digest if config["in_process"] and digest in self.trusted else None

    def _kill(self, run_id: str, generation: int) -> None:
        """Make sure a stopped run's runner is gone (it exits on its lifeline already)."""
        try:
            if self.generation == generation:
                self.send({"kill": run_id}, [])
        except ServerGone:
            pass


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


class WarmSession:
    """The tests of one sample (one program) in one warm sandbox.

    The first test starts a runner that keeps its namespaces, root and cgroup
    (``_server.py``); each later test gets a fresh process, working directory,
    ``/dev/shm``, IPC namespace and uid in it, after every process of the test
    before was killed. A test whose job, memory or process limits differ from
    the session's, or one after a test that did not end well (a timeout, a
    setup error, the output cap, the memory limit), starts a new session. Used
    by one thread at a time; :meth:`close` ends it (the runner exits, its
    cgroup and tree are removed).
    """

    def __init__(self, server: WarmServer) -> None:
        self.server = server
        self._socket: socket.socket | None = None
        self._stack: contextlib.ExitStack | None = None
        self._place: Place | None = None
        self._reaped: int | None = None
        self._run_id = ""
        self._generation = 0
        self._key: tuple[Any, ...] = ()
        _live_sessions.add(self)

    def run(self, job: Job, stdin: str, limits: Limits, helper_processes: int = 0) -> RunResult:
        """Run one test of the session's program (``job``); a test its dying server took
        with it runs again in a new session on the rebuilt server."""
        key = session_key(job, limits, helper_processes)
        if self._socket is not None and key != self._key:
            self.close()
        failure = None
        for attempt in range(RETRIES + 1):
            try:
                return self._run(job, stdin, limits, helper_processes, key)
            except ServerGone as e:
                self._abandon()
                failure = e
                time.sleep(0.01 * (attempt + 1))
        return RunResult(stdout="", stderr="", setup_error=f"the warm sandbox server died {RETRIES + 1} times: {failure}")

    def _run(self, job: Job, stdin: str, limits: Limits, helper_processes: int, key: tuple[Any, ...]) -> RunResult:
        result = self._run_once(job, stdin, limits, helper_processes, key)
        if result is None:  # the session's runner was gone before it took the test: a new session runs it
            self.close()
            result = self._run_once(job, stdin, limits, helper_processes, key)
        assert result is not None  # a first test always has a result
        return result

    def _run_once(
        self, job: Job, stdin: str, limits: Limits, helper_processes: int, key: tuple[Any, ...]
    ) -> RunResult | None:
        marks = phases.Marks("launcher")
        later = self._socket is not None
        pipes = self._next(job, limits, helper_processes, marks) if later else None
        if pipes is None:  # no session yet, or its runner is gone: start one
            self.close()
            later = False
            pipes = self._start(job, limits, helper_processes, key, marks)
        assert self._place is not None
        place = self._place
        oom_before = place.cgroup.oom_kills() if place.cgroup is not None else 0
        started = time.monotonic()
        streams = Streams()
        try:
            pump(pipes, stdin.encode("utf-8"), limits, streams, exit_fd=None, exited=None)
        finally:
            pipes.close_ours(("lifeline",))  # a test that did not end: its runner exits at once
        elapsed = time.monotonic() - started
        marks.mark("run ended")
        if (later and streams.exited and not streams.status and not streams.stdout and not streams.stderr_total
                and not (place.cgroup is not None and place.cgroup.oom_kills() > oom_before)):
            return None  # nothing at all: the runner had exited after the test before (it could not clear it)
        reusable = streams.exited and '"reusable": true' in streams.status.decode("utf-8", errors="replace")
        if not reusable:
            self._end(streams)
        oom = place.cgroup is not None and place.cgroup.oom_kills() > oom_before
        if not reusable:
            self.close()
            marks.mark("sandbox removed")
        return collect(streams, limits, elapsed, oom, None, marks.entries())

    def _start(self, job: Job, limits: Limits, helper_processes: int, key: tuple[Any, ...], marks: phases.Marks) -> Pipes:
        """The session's first test: a tree, a cgroup and a runner that keeps them."""
        stack = contextlib.ExitStack()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            place = stack.enter_context(prepared(self.server.isolation, job, limits, self.server.python,
                                                 helper_processes, cold=False, marks=marks))
            config = {**place.config, "profile": marks.on}
            pipes, run_id, generation = self.server.start_run(config, session=theirs)
        except BaseException:
            ours.close()
            theirs.close()
            stack.close()
            raise
        marks.mark("sent")
        self._socket, self._stack, self._place, self._key = ours, stack, place, key
        self._run_id, self._generation = run_id, generation
        self._reaped = pipes.ours.pop("reaped")
        return pipes

    def _next(self, job: Job, limits: Limits, helper_processes: int, marks: phases.Marks) -> Pipes | None:
        """A later test: its pipes and configuration (a fresh uid) straight to the session's runner."""
        assert self._socket is not None and self._place is not None
        place = self._place
        # The runner installed the seccomp filter on itself with the first test: every later one inherits it.
        config = {**place.next_config(job, limits, helper_processes), "profile": marks.on, "seccomp": None}
        config["trusted_main"] = self.server.trusted_digest(config)
        pipes = Pipes(artifact=False)
        names = list(pipes.theirs)
        try:
            socket.send_fds(self._socket, [json.dumps({**config, "fds": names}).encode()], list(pipes.theirs.values()))
        except OSError:
            pipes.close_theirs()
            pipes.close_ours(tuple(pipes.ours))
            return None
        pipes.close_theirs()
        marks.mark("sent")
        return pipes

    def _end(self, streams: Streams) -> None:
        """The runner exits (its lifeline and the session's socket are closed): wait until
        the server reaped it; raise :class:`ServerGone` when the server died meanwhile."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if not streams.exited:
            self.server._kill(self._run_id, self._generation)
        if self._reaped is not None:
            wait_closed(self._reaped, STOP_GRACE_S)
        if not _ended(streams) and not self.server.alive():
            self._close_reaped()
            if self._stack is not None:
                self._stack.close()
                self._stack = None
            self.server.restart(self._generation)
            raise ServerGone("the warm server died during the run")

    def close(self) -> None:
        """End the session: its runner exits, then its cgroup and tree are removed."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        if self._reaped is not None:
            wait_closed(self._reaped, STOP_GRACE_S)
            self._close_reaped()
        if self._stack is not None:
            stack, self._stack, self._place = self._stack, None, None
            stack.close()

    def _close_reaped(self) -> None:
        if self._reaped is not None:
            os.close(self._reaped)
            self._reaped = None

    def _abandon(self) -> None:
        """After the server died: what is left of the session goes (its runner died with the server)."""
        if self._socket is not None:
            self._socket.close()
            self._socket = None
        self._close_reaped()
        if self._stack is not None:
            stack, self._stack, self._place = self._stack, None, None
            stack.close()

    def _forget(self) -> None:
        """In a forked child: drop the parent's session without touching its runner, cgroup or tree."""
        if self._socket is not None:
            self._socket.close()
        self._socket, self._stack, self._place = None, None, None
        self._close_reaped()


_live_sessions: weakref.WeakSet[WarmSession] = weakref.WeakSet()


def session_key(job: Job, limits: Limits, helper_processes: int) -> tuple[Any, ...]:
    """What tests of one session share: the job (program, command, files, toolchain) and
    the limits its runner holds (memory and processes: its cgroup)."""
    return (
        sorted(job.files.items()), job.command, job.args, job.artifacts, job.binds, sorted(job.env.items()),
        job.extra_tasks, job.address_space_mb, job.merge_stderr, job.collect, job.collect_into,
        limits.memory_mb, limits.max_processes, helper_processes,
    )


def trust_python(source: str) -> None:
    """Have warm servers started from now on compile and load ``source``, a Python program
    of the caller's own (the assert harness), once: a run of it calls its ``main()``
    in the forked interpreter instead of compiling it. Never a program under test."""
    if source not in _trusted:
        _trusted.append(source)


_trusted: list[str] = []


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
    for session in list(_live_sessions):
        session._forget()


def _stop_all() -> None:
    for server in _servers.values():
        if server is not None:
            server.stop()


os.register_at_fork(after_in_child=_forget_in_child)
atexit.register(_stop_all)
