"""The warm sandbox server: namespaces and an interpreter made once, a fresh run forked per test.

Executed as ``python -I -B -X utf8 -c <_inside.py + this source> <config json>``
behind ``unshare`` (``warm.WarmServer``): PID 1 of a PID namespace of its own,
in private mount, network, IPC and UTS namespaces, as root (or as root of the
caller's user namespace). It loads the standard library modules it needs and
nothing of any program, then waits on a socket for runs. A run is one
``SOCK_SEQPACKET`` message: the run's JSON configuration (as for
``_runner.py``) plus its pipes as ``SCM_RIGHTS`` descriptors; the program's
source, stdin and output never pass through the server. For each run it:

1. makes a fresh PID namespace for its next child only (``unshare(CLONE_NEWPID)``,
   then ``setns`` back to its own) and forks the run's runner, PID 1 there;
2. the runner closes everything of the server's, joins the run's cgroup,
   enters fresh mount, IPC and network namespaces, builds the run's minimal
   root (a fresh /proc, its tmpfs) and ``pivot_root``s into it;
3. the runner forks the program process: limits, a fresh uid (or no
   capabilities), ``no_new_privs``, descriptors 0-2 only, the seccomp filter;
   then it either executes a command (a compiled program, ``node``, a
   compiler) or, for Python, runs ``main.py`` as ``__main__`` in the forked
   interpreter, skipping the interpreter's start.

The server itself never runs program code, and each run starts from the
server's untouched state: nothing a run did (files, processes, memory,
environment) reaches the next one. A ``{"kill": id}`` message kills a run's
runner (and with it its PID namespace); the server exits when its socket
closes (its launcher is gone), and its whole PID namespace with it.
"""

import atexit
import builtins
import json
import os
import select
import signal
import socket
import sys
import types
from importlib.machinery import SourceFileLoader
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time these come from _inside.py, put in front of this source
    from ._inside import (
        MS_NODEV,
        MS_NOSUID,
        MS_PRIVATE,
        MS_REC,
        PR_SET_DUMPABLE,
        SetupError,
        _check,
        _exit,
        _libc,
        _mount,
        _prctl,
        build_root,
        close_all_but,
        enter_program,
        limit_sysv_shm,
        pivot,
        report,
        run_and_report,
        set_title,
        start_program,
    )

# Standard library modules programs (and the assert harness) commonly import,
# loaded once here so that a forked program finds them loaded: nothing of any
# program, and `random` reseeds itself in every forked child.
PRELOADED = (
    "ast", "bisect", "cmath", "collections", "dataclasses", "decimal", "fractions", "functools", "heapq",
    "itertools", "math", "operator", "random", "re", "string", "typing",
)

CLONE_NEWNS = 0x00020000
CLONE_NEWIPC = 0x08000000
CLONE_NEWNET = 0x40000000
CLONE_NEWPID = 0x20000000
_MAX_FDS = 16


def serve() -> int:
    """Answer run requests on the control socket until it closes."""
    for name in PRELOADED:
        __import__(name)
    config = json.loads(sys.argv[1])
    control = socket.socket(fileno=config["control_fd"])
    own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY)
    # Runs mount their roots under this tmpfs of the server's own, not on the
    # host tree: removing a host directory that is a mount point of a dying
    # namespace waits for the kernel to detach it (~30 ms).
    stage = config["stage"]
    _mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m")
    set_title("verl-rewards-code warm sandbox server")
    poller = select.poll()
    poller.register(control, select.POLLIN)
    runners: dict[int, tuple[int, str, int | None]] = {}  # pidfd -> (pid, run id, its "reaped" pipe)
    by_id: dict[str, int] = {}
    while True:
        for fd, _ in poller.poll():
            if fd in runners:
                pid, run_id, reaped = runners.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                os.waitpid(pid, 0)
                by_id.pop(run_id, None)
                _remove_stage(os.path.join(stage, run_id))
                if reaped is not None:
                    os.close(reaped)  # tells the launcher the run's last process is gone
                continue
            message, fds, _flags, _address = socket.recv_fds(control, 1 << 20, _MAX_FDS)
            if not message:
                return 0  # the launcher is gone
            reaped = started = None
            try:
                request = json.loads(message)
                named = dict(zip(request.get("fds", ()), fds))
                reaped = named.pop("reaped", None)
                if "kill" in request:
                    _kill(by_id.get(request["kill"]))
                    continue
                request["stage_dir"] = os.path.join(stage, request["id"])
                started = _fork_run(request, named, control, own_pid_namespace, (runners, by_id))
            finally:
                for received in fds:
                    if received != reaped or started is None:
                        os.close(received)
            if started is not None:
                pidfd = os.pidfd_open(started)
                runners[pidfd] = (started, request["id"], reaped)
                by_id[request["id"]] = started
                poller.register(pidfd, select.POLLIN)


def _remove_stage(path: str) -> None:
    """A finished run's mount points (its namespace, and every mount in it, is gone)."""
    for directory in (os.path.join(path, "root"), os.path.join(path, "scratch"), path):
        try:
            os.rmdir(directory)
        except OSError:
            pass


def _kill(pid: int | None) -> None:
    if pid is not None:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass


def _fork_run(
    request: dict[str, Any], fds: dict[str, int], control: socket.socket, own_ns: int, others: tuple[dict[Any, Any], ...]
) -> int | None:
    """Fork the run's runner as PID 1 of a fresh PID namespace; None (reported) if that fails.
    The runner forgets ``others`` (the server's records of other runs)."""
    try:
        _check(_libc.unshare(CLONE_NEWPID), "unshare a PID namespace")
        pid = os.fork()
    except (OSError, SetupError) as e:
        report(fds["status"], {"setup_error": f"warm sandbox: starting the run: {e}"})
        pid = None
    if pid == 0:
        try:
            for records in others:
                records.clear()
            _runner(request, fds, control)
        except BaseException as e:  # noqa: BLE001 (reported to the launcher, whatever it is)
            try:
                report(fds["status"], {"setup_error": f"warm sandbox runner: {type(e).__name__}: {e}"})
            except OSError:
                pass
        finally:
            _exit(1)  # a run's processes never return into the server's loop
    # The next child of the server must not be PID 1 of this run's namespace
    # (nor can the server unshare again before it returns to its own).
    _check(_libc.setns(own_ns, CLONE_NEWPID), "return to the server's PID namespace")
    return pid


def _runner(cfg: dict[str, Any], fds: dict[str, int], control: socket.socket) -> None:
    """PID 1 of the run: take the run's descriptors, drop the server's, isolate, run (never returns)."""
    control.detach()
    sys.stdout.flush()
    sys.stderr.flush()
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "log")):
        os.dup2(fds[name], fd)
    cfg |= {f"{name}_fd": fds[name] for name in ("stderr", "status", "lifeline", "artifact") if name in fds}
    close_all_but({0, 1, 2, *(cfg[f"{n}_fd"] for n in ("stderr", "status", "lifeline", "artifact") if f"{n}_fd" in cfg)})
    set_title(cfg["title"])
    status = cfg["status_fd"]
    os.mkdir(cfg["stage_dir"], 0o700)
    try:
        joiner = _join_cgroups_meanwhile(cfg["cgroup_procs"])
    except OSError as e:
        report(status, {"setup_error": f"joining the run's cgroup: {e}"})
        _exit(0)
    try:
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET), "unshare mount, IPC and network namespaces")
        _mount(None, "/", None, MS_REC | MS_PRIVATE, None)  # the server's mounts follow the host's; the run's do not
        limit_sysv_shm(cfg["memory_bytes"])
        pivot(build_root(cfg, fresh_proc=True))
        _prctl(PR_SET_DUMPABLE, 0)
    except (OSError, SetupError) as e:
        report(status, {"setup_error": f"mount namespace: {e}"})
        _exit(0)
    if joiner is not None and os.waitpid(joiner, 0)[1] != 0:
        report(status, {"setup_error": "joining the run's cgroup failed"})
        _exit(0)
    _exit(run_and_report(cfg, _start_python if cfg["in_process"] else start_program))


def _join_cgroups_meanwhile(procs_files: list[str]) -> int | None:
    """Move this runner (PID 1 of its namespace) into the run's cgroups from a child,
    while the runner builds its root: a cgroup v1 move waits for an RCU grace
    period (10-15 ms here). The runner waits for the child before it forks the
    program, which so starts inside. The child stays in the server's mount
    namespace (it was forked before the runner left it) and cgroup."""
    if not procs_files:
        return None
    child = os.fork()
    if child == 0:
        joined = 1
        try:
            for path in procs_files:
                with open(path, "w") as f:
                    f.write("1")  # PID 1 of this namespace: the runner
            joined = 0
        finally:
            _exit(joined)
    return child


def _start_python(cfg: dict[str, Any], runner_pid: int) -> None:
    """In the program process: enter its limits, then run ``main.py`` in this interpreter (never returns)."""
    try:
        enter_program(cfg, runner_pid)
    except (OSError, SetupError) as e:
        report(cfg["status_fd"], {"setup_error": f"starting the program: {e}"})
        _exit(127)
    _exit(_run_main(cfg["main"], cfg["args"], cfg["env"]))


def _run_main(path: str, args: list[str], env: dict[str, str]) -> int:
    """Run ``path`` as ``python -I -B -X utf8 path *args`` would; the exit status."""
    _prctl(PR_SET_DUMPABLE, 1)  # as an executed program is
    _fresh_interpreter_state(path, args, env)
    main = sys.modules["__main__"]
    interrupted = False
    try:
        with open(path, "rb") as f:
            code = compile(f.read(), path, "exec", dont_inherit=True)
        exec(code, main.__dict__)
        status = 0
    except SystemExit as e:
        status = _exit_status(e.code)
    except BaseException as e:  # noqa: BLE001 (the program's: printed as Python prints it)
        # Python's own traceback starts at the program's frame, not this one.
        tb = e.__traceback__
        e = e.with_traceback(tb.tb_next if tb is not None else None)
        sys.excepthook(type(e), e, e.__traceback__)
        interrupted = isinstance(e, KeyboardInterrupt)
        status = 1
    status = _finalize(status)
    if interrupted:
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGINT)
    return status


def _fresh_interpreter_state(path: str, args: list[str], env: dict[str, str]) -> None:
    """What a fresh ``python path *args`` has: its argv, environment, standard streams and ``__main__``."""
    os.environ.clear()
    os.environ.update(env)
    sys.argv = [path, *args]
    sys.orig_argv = [sys.executable, "-I", "-B", "-X", "utf8", path, *args]
    if not getattr(sys.flags, "safe_path", False):  # Python 3.10: -I does not imply -P
        sys.path[0] = os.path.dirname(path)
    for name, fd, mode in (("stdin", 0, "r"), ("stdout", 1, "w"), ("stderr", 2, "w")):
        old = getattr(sys, f"__{name}__")
        # open() sizes the buffer from the descriptor, as the interpreter's start does.
        stream = open(fd, mode, encoding=old.encoding, errors=old.errors, newline="\n", closefd=False)
        stream.buffer.raw.name = f"<{name}>"  # type: ignore[attr-defined]
        if name == "stderr":
            stream.reconfigure(line_buffering=True)  # type: ignore[attr-defined]
        setattr(sys, name, stream)
        setattr(sys, f"__{name}__", stream)
    main = types.ModuleType("__main__")
    main.__dict__.update(
        __file__=path, __cached__=None, __builtins__=builtins, __loader__=SourceFileLoader("__main__", path)
    )
    sys.modules["__main__"] = main


def _exit_status(code: object) -> int:
    """The process status of ``SystemExit(code)``, as the interpreter computes it."""
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


def _finalize(status: int) -> int:
    """Wait for non-daemon threads, run ``atexit`` handlers, flush the streams (120 if stdout cannot be)."""
    threading = sys.modules.get("threading")
    if threading is not None:
        try:
            threading._shutdown()
        except BaseException:  # noqa: BLE001
            pass
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except BaseException:  # noqa: BLE001
            if stream is sys.stdout:
                status = 120
    return status


sys.exit(serve())
