"""The warm sandbox server: namespaces and an interpreter made once, a fresh run forked per test.

Executed as ``python -I -B -X utf8 -c <_inside.py + this source> <config json>``
behind ``unshare`` (``warm.WarmServer``): PID 1 of a PID namespace of its own,
in private mount, network, IPC and UTS namespaces, as root (or as root of the
caller's user namespace). It loads the standard library modules it needs and
the launcher's trusted programs (the assert harness: compiled and loaded
once, ``trusted`` in its config) and nothing of any program, then waits on a
socket for runs. A run is one ``SOCK_SEQPACKET`` message: the run's JSON
configuration (as for ``_runner.py``) plus its pipes as ``SCM_RIGHTS``
descriptors; the program's source, stdin and output never pass through the
server. For each run it:

1. makes a fresh PID namespace for its next child only (``unshare(CLONE_NEWPID)``,
   then ``setns`` back to its own) and forks the run's runner, PID 1 there;
2. the runner closes everything of the server's, joins the run's cgroup,
   enters fresh mount, IPC and network namespaces, builds the run's minimal
   root (a fresh /proc) and ``pivot_root``s into it;
3. for each test, the runner mounts a fresh tmpfs for the working directory
   and ``/dev/shm`` and forks the program process: limits, a fresh uid (or no
   capabilities), ``no_new_privs``, descriptors 0-2 only, the seccomp filter;
   then it either executes a command (a compiled program, ``node``, a
   compiler) or, for Python, runs ``main.py`` as ``__main__`` in the forked
   interpreter, skipping the interpreter's start (a trusted program, the
   harness, already loaded).

A run may be a **session**: the tests of one sample, which run the same
program. Its first request carries a ``session`` socket; after each test the
runner kills every other process of its PID namespace and reaps them,
removes the test's working directory and ``/dev/shm`` (their tmpfs) and the
test's SysV objects, and says on the status pipe whether it can take another
test (``{"reusable": ...}``); the next test arrives on the session socket,
gets a fresh IPC namespace, tmpfs and uid, and a fresh fork of the runner. A
test that did not end well (a timeout, a setup error) ends the session.

The server itself never runs program code, and each run starts from the
server's untouched state: nothing a run did (files, processes, memory,
environment) reaches the next one. A ``{"kill": id}`` message kills a run's
runner (and with it its PID namespace); the server exits when its socket
closes (its launcher is gone), and its whole PID namespace with it.
"""

import _thread
import atexit
import builtins
import gc
import hashlib
import json
import os
import resource
import select
import signal
import socket
import sys
import types
from importlib.machinery import SourceFileLoader
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # at run time these come from _inside.py, put in front of this source
    from ._inside import (
        _DEVICE_LINKS,
        _DEVICES,
        MS_BIND,
        MS_NODEV,
        MS_NOEXEC,
        MS_NOSUID,
        MS_PRIVATE,
        MS_REC,
        PHASES,
        PR_SET_DUMPABLE,
        SetupError,
        _check,
        _exit,
        _libc,
        _mount,
        _prctl,
        can_set_read_only,
        close_all_but,
        enter_program,
        install_seccomp,
        limit_sysv_shm,
        make_read_only,
        mark,
        pivot,
        report,
        run_program,
        set_read_only,
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
MNT_DETACH = 2
_MAX_FDS = 16
_RUN_FDS = ("stderr", "status", "lifeline", "artifact")
_IPC_RMID = 0
_JOIN_STACK = 64 * 1024
_M_ARENA_MAX = -8
# Room a spawned program's limits must leave above what the runner itself holds and used.
_MARGIN_AS = 64 * 1024 * 1024
_MARGIN_CPU_S = 1
# Trusted programs (the launcher's own, e.g. the assert harness) by the SHA-256 of their source.
_TRUSTED: dict[str, types.ModuleType] = {}
# How each bind's source looks on the host (a directory, a file, a link, missing), found once.
_PLANS: dict[tuple[str, ...], list[tuple[str, str, str]]] = {}


def serve() -> int:
    """Answer run requests on the control socket until it closes."""
    for name in PRELOADED:
        __import__(name)
    config = json.loads(sys.argv[1])
    for source in config.get("trusted", ()):
        _load_trusted(source)
    control = socket.socket(fileno=config["control_fd"])
    own_pid_namespace = os.open("/proc/self/ns/pid", os.O_RDONLY)
    # Runs mount their roots under this tmpfs of the server's own, not on the
    # host tree: removing a host directory that is a mount point of a dying
    # namespace waits for the kernel to detach it (~30 ms).
    stage = config["stage"]
    _mount("tmpfs", stage, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0700,size=1m")
    set_title("verl-rewards-code warm sandbox server")
    # What is loaded now is never collected: a forked run does not copy pages to scan it.
    gc.collect()
    gc.freeze()
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
                request["plan"] = _plan(tuple(request["binds"]))
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


def _load_trusted(source: str) -> None:
    """Compile and load a trusted program once (its ``main()`` runs in each run's program process)."""
    digest = hashlib.sha256(source.encode("utf-8")).hexdigest()
    module = types.ModuleType("verl_rewards_code_trusted")
    exec(compile(source, "main.py", "exec", dont_inherit=True), module.__dict__)
    if callable(module.__dict__.get("preload")):
        module.preload()  # what every run of it would do first (the harness: its evaluators' prelude)
    if callable(module.__dict__.get("main")):
        _TRUSTED[digest] = module


def _plan(binds: tuple[str, ...]) -> list[tuple[str, str, str]]:
    """``(host path, kind, link target)`` for each bind and device, kind one of
    ``dir``, ``file``, ``link`` (copied as a link) or ``missing``; found once per set."""
    plan = _PLANS.get(binds)
    if plan is None:
        plan = []
        for source in (*binds, *_DEVICES):
            if os.path.islink(source):
                plan.append((source, "link", os.readlink(source)))
            elif os.path.isdir(source):
                plan.append((source, "dir", ""))
            elif os.path.exists(source):
                plan.append((source, "file", ""))
            else:
                plan.append((source, "missing", ""))
        _PLANS[binds] = plan
    return plan


def _remove_stage(path: str) -> None:
    """A finished run's mount points (its namespace, and every mount in it, is gone)."""
    for directory in (os.path.join(path, "root"), path):
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
    if request.get("profile"):
        del PHASES[:]
        mark("request received")
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
    if request.get("profile") and pid is not None:
        mark("runner forked")
        report(fds["status"], {"server_phases": PHASES})
    return pid


def _runner(cfg: dict[str, Any], fds: dict[str, int], control: socket.socket) -> None:
    """PID 1 of the run: take the run's descriptors, drop the server's, isolate, run its tests (never returns)."""
    del PHASES[:]
    control.detach()
    session_fd = fds.pop("session", None)
    run_fds = _take_descriptors(fds, {session_fd} if session_fd is not None else set())
    session = socket.socket(fileno=session_fd) if session_fd is not None else None
    set_title(cfg["title"])
    status = run_fds["status"]
    mark("descriptors")
    os.mkdir(cfg["stage_dir"], 0o700)
    try:
        # One thread at most may unshare a mount namespace: before the cgroup thread starts.
        _check(_libc.unshare(CLONE_NEWNS | CLONE_NEWIPC | CLONE_NEWNET), "unshare mount, IPC and network namespaces")
        joined = _join_cgroups_meanwhile(cfg["cgroup_procs"])
        _mount(None, "/", None, MS_REC | MS_PRIVATE, None)  # the server's mounts follow the host's; the run's do not
        limit_sysv_shm(cfg["memory_bytes"])
        mark("namespaces")
        root = _build_root(cfg)
        mark("root built")
        pivot(root)
        mark("pivoted")
        failure = joined()
        if failure is not None:
            report(status, {"setup_error": f"joining the run's cgroup: {failure}"})
            _exit(0)
        mark("cgroup joined")
        _prctl(PR_SET_DUMPABLE, 0)
        devnull = os.open("/dev/null", os.O_RDWR)
        if cfg["seccomp"]:
            # The program's filter on the runner itself (it needs none of what the filter refuses):
            # every process of the run inherits it, and executed programs start without Python.
            install_seccomp(cfg["seccomp"])
    except (OSError, SetupError) as e:
        report(status, {"setup_error": f"mount namespace: {e}"})
        _exit(0)
    filtered = bool(cfg["seccomp"])
    reusable = session is not None and can_set_read_only()  # a later test needs mount_setattr (Linux 5.12)
    first = True
    while True:
        cfg |= {f"{name}_fd": fd for name, fd in run_fds.items()}
        cfg["filtered"] = filtered
        try:
            if not first:
                _fresh_ipc_namespace(cfg["memory_bytes"])
                mark("IPC namespace")
            _mount_scratch(cfg)
        except (OSError, SetupError) as e:
            report(status, {"setup_error": f"the run's working directory: {e}"})
            _exit(0)
        mark("working directory")
        record = run_program(cfg, _start_python if cfg["in_process"] else start_program, _spawner(cfg))
        if session is None:
            if cfg.get("profile"):
                record["runner_phases"] = PHASES
            report(status, record)
            _exit(0)  # the server reaps this runner; the run's namespaces die with it
        report(status, record)
        _end_test()
        ending: dict[str, Any] = {"reusable": reusable}
        if cfg.get("profile"):
            ending["runner_phases"] = PHASES
        report(status, ending)
        del PHASES[:]
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        for fd in run_fds.values():
            os.close(fd)  # the status pipe's end: the launcher has the test's result, and every process of it is gone
        if not _clear_test(cfg):
            _exit(0)  # the launcher's next test finds this runner gone, and starts a new one
        mark("previous test cleared")
        request = _next_request(session)
        if request is None:
            _exit(0)  # the session is over
        cfg, received = request
        run_fds = {name: received[name] for name in _RUN_FDS if name in received}
        for fd in run_fds.values():
            os.set_inheritable(fd, False)
        for fd, name in ((0, "stdin"), (1, "stdout"), (2, "log")):
            os.dup2(received[name], fd)
            os.close(received[name])
        status = run_fds["status"]
        mark("request received")
        first = False


def _spawner(cfg: dict[str, Any]) -> Any:
    """How this runner starts an executed program without forking Python (``_spawn``), or
    None where it cannot: a Python program, no fresh uid (capabilities are dropped in a
    forked child), or limits the runner cannot take on itself (see ``_spawn``)."""
    if cfg["in_process"] or cfg["drop_uid"] is None or not cfg.get("filtered"):
        return None
    for name, soft, hard in cfg["rlimits"]:
        limit = getattr(resource, name, None)
        if limit is None:
            continue
        held = resource.getrlimit(limit)[1]
        if not _within(hard, held) or (limit == resource.RLIMIT_AS and _within(soft, _own_address_space() + _MARGIN_AS)):
            return None
        if limit == resource.RLIMIT_CPU and _within(soft, _own_cpu_s() + _MARGIN_CPU_S):
            return None
    return _spawn


def _within(value: int, bound: int) -> bool:
    """``value`` <= ``bound``, where either may be ``RLIM_INFINITY``."""
    return bound == resource.RLIM_INFINITY or (value != resource.RLIM_INFINITY and value <= bound)


def _own_address_space() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def _own_cpu_s() -> int:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return int(usage.ru_utime + usage.ru_stime) + 1


def _spawn(cfg: dict[str, Any]) -> int:
    """Start the program's command with ``posix_spawn`` (a vfork: no copy of this
    interpreter) under the test's uid and limits. The runner takes the limits on
    itself (it may only lower hard limits: root may lack CAP_SYS_RESOURCE; a
    session's tests share them but for the CPU limit, which only falls as its time
    budget shrinks) and, for the moment of the spawn, the test's uid as its real uid
    (its effective uid stays root); the child resets its effective uid to the real
    one before it executes the command. The runner's seccomp filter and
    no_new_privs are inherited; its own descriptors are close-on-exec."""
    uid = cfg["drop_uid"]
    stderr = 1 if cfg["merge_stderr"] else cfg["stderr_fd"]
    for fd in {0, 1, stderr}:
        os.fchown(fd, uid, uid)  # as /dev/stdin, /dev/stdout, /dev/stderr the program may open them again
    os.chdir(cfg["workdir"])
    old_umask = os.umask(0o077)
    try:
        if cfg["collect"]:
            os.mkdir(cfg["collect"], 0o700)
            os.chown(cfg["collect"], uid, uid)
        for name, soft, hard in cfg["rlimits"]:
            limit = getattr(resource, name, None)
            if limit is not None and resource.getrlimit(limit) != (soft, hard):
                resource.setrlimit(limit, (soft, hard))
        os.setresgid(uid, 0, 0)
        os.setresuid(uid, 0, 0)
        try:
            argv = cfg["command"]
            return os.posix_spawn(argv[0], argv, cfg["env"], file_actions=[(os.POSIX_SPAWN_DUP2, stderr, 2)],
                                  resetids=True)
        finally:
            os.setresuid(0, 0, 0)
            os.setresgid(0, 0, 0)
    finally:
        os.umask(old_umask)
        os.chdir("/")


def _join_cgroups_meanwhile(procs_files: list[str]) -> Any:
    """Move this runner into the run's cgroups from a thread, while the runner builds its
    root: a cgroup v1 move waits for an RCU grace period (10-15 ms here), not for the
    CPU. The returned function waits for the move: None, or why it failed. The runner
    waits for it before it forks the program, which so starts inside."""
    if not procs_files:
        return lambda: None
    fds = [os.open(path, os.O_WRONLY) for path in procs_files]  # opened now, before the root changes
    done = _thread.allocate_lock()
    done.acquire()
    failure: list[str] = []

    def join() -> None:
        try:
            for fd in fds:
                os.write(fd, b"0")  # the writer's thread group: the runner, this thread included
        except OSError as e:
            failure.append(str(e))
        finally:
            for fd in fds:
                os.close(fd)
            done.release()

    # Every forked program inherits this runner's mappings (its address-space limit counts
    # them): a small stack (the C library keeps a finished thread's), and the main malloc
    # arena for the thread (a thread's own arena reserves 64 MB).
    _libc.mallopt(_M_ARENA_MAX, 1)
    _thread.stack_size(_JOIN_STACK)
    try:
        _thread.start_new_thread(join, ())
    finally:
        _thread.stack_size(0)

    def joined() -> str | None:
        done.acquire()
        _libc.mallopt(_M_ARENA_MAX, 0)  # the default again, for the programs' own threads
        return failure[0] if failure else None

    return joined


def _take_descriptors(fds: dict[str, int], keep: set[int]) -> dict[str, int]:
    """The run's stdin, stdout and log become 0, 1 and 2; every descriptor of the server's
    is closed; the run's other pipes (by name) are returned."""
    for fd, name in ((0, "stdin"), (1, "stdout"), (2, "log")):
        os.dup2(fds[name], fd)
    run_fds = {name: fds[name] for name in _RUN_FDS if name in fds}
    close_all_but({0, 1, 2, *run_fds.values(), *keep})
    for fd in (*run_fds.values(), *keep):
        os.set_inheritable(fd, False)  # received descriptors are inheritable; a spawned program gets 0-2 only
    return run_fds


def _build_root(cfg: dict[str, Any]) -> str:
    """The run's minimal root on a tmpfs (as ``_inside.build_root``, without the working
    directory, which each test gets fresh): the binds, the run's ``io`` and ``build``,
    a fresh /proc, the devices and /dev links, mount points for the working directory
    and ``/dev/shm``; all of it read-only."""
    root = os.path.join(cfg["stage_dir"], "root")
    os.mkdir(root, 0o700)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    made: set[str] = set()
    for source, kind, target in cfg["plan"]:
        if kind != "missing":
            _bind_planned(source, root + source, kind, target, made)
    _bind_planned(cfg["io"], root + cfg["io"], "dir", "", made)
    if cfg["artifacts"]:
        _bind_planned(cfg["artifacts"], root + cfg["build"], "dir", "", made)
    os.mkdir(root + "/proc", 0o755)
    _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    _makedirs(root + "/dev/shm", made)
    for link, target in _DEVICE_LINKS:
        os.symlink(target, root + link)
    _makedirs(root + cfg["workdir"], made)
    make_read_only(root, [])
    return root


def _makedirs(path: str, made: set[str]) -> None:
    if path not in made:
        os.makedirs(path, 0o755, exist_ok=True)
        made.add(path)


def _bind_planned(source: str, target: str, kind: str, link: str, made: set[str]) -> None:
    _makedirs(os.path.dirname(target), made)
    if kind == "link":
        os.symlink(link, target)
        return
    if kind == "dir":
        _makedirs(target, made)
    else:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    _mount(source, target, None, MS_BIND | MS_REC, None)


def _mount_scratch(cfg: dict[str, Any]) -> None:
    """A fresh tmpfs of ``disk_bytes`` for this test: its ``work`` directory at the working
    directory and its ``shm`` at ``/dev/shm``, stacked over the tmpfs itself (mounted
    there first), which so stays out of reach."""
    _mount("tmpfs", "/dev/shm", "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0755,size={cfg['disk_bytes']}")
    os.mkdir("/dev/shm/work", 0o700)
    os.mkdir("/dev/shm/shm", 0o1777)
    os.chmod("/dev/shm/shm", 0o1777)
    os.chown("/dev/shm/work", cfg["work_uid"], cfg["work_uid"])
    _mount("/dev/shm/work", cfg["workdir"], None, MS_BIND, None)
    _mount("/dev/shm/shm", "/dev/shm", None, MS_BIND, None)


def _end_test() -> None:
    """After a test: kill and reap every other process of the run."""
    try:
        os.kill(-1, signal.SIGKILL)  # as PID 1: every other process of this PID namespace
    except ProcessLookupError:
        pass
    while True:
        try:
            os.waitpid(-1, 0)
        except ChildProcessError:
            break
    mark("test's processes reaped")


def _clear_test(cfg: dict[str, Any]) -> bool:
    """Remove what a test left: its working directory and ``/dev/shm`` (their tmpfs), and its
    SysV objects (the memory they hold is free before the next test). False if that failed."""
    try:
        for path in (cfg["workdir"], "/dev/shm", "/dev/shm"):
            _check(_libc.umount2(path.encode(), MNT_DETACH), f"unmount {path}")
        _remove_sysv_objects()
    except (OSError, SetupError):
        return False
    return True


def _remove_sysv_objects() -> None:
    """Remove what a test left in its IPC namespace, so its memory is free before the next test
    (the namespace itself is freed later, by the kernel)."""
    for kind in ("shm", "msg", "sem"):
        fd = os.open(f"/proc/sysvipc/{kind}", os.O_RDONLY)
        try:
            text = b""
            while chunk := os.read(fd, 65536):
                text += chunk
        finally:
            os.close(fd)
        identifiers = [int(line.split()[1]) for line in text.splitlines()[1:]]
        for ident in identifiers:
            if kind == "sem":
                _libc.semctl(ident, 0, _IPC_RMID)
            else:
                (_libc.shmctl if kind == "shm" else _libc.msgctl)(ident, _IPC_RMID, None)


def _fresh_ipc_namespace(memory_bytes: int) -> None:
    """A fresh IPC namespace for the next test, its SysV shared memory within the run's
    budget (written through the run's read-only /proc, made writable meanwhile)."""
    _check(_libc.unshare(CLONE_NEWIPC), "unshare an IPC namespace")
    set_read_only("/proc", False)
    try:
        limit_sysv_shm(memory_bytes)
    finally:
        set_read_only("/proc", True)


def _next_request(session: socket.socket) -> tuple[dict[str, Any], dict[str, int]] | None:
    """The session's next test: its configuration and pipes; None when the launcher ended the session."""
    try:
        message, fds, _flags, _address = socket.recv_fds(session, 1 << 20, _MAX_FDS)
    except OSError:
        return None
    if not message:
        return None
    request = json.loads(message)
    return request, dict(zip(request["fds"], fds))


def _start_python(cfg: dict[str, Any], runner_pid: int) -> None:
    """In the program process: enter its limits, then run ``main.py`` in this interpreter (never returns)."""
    try:
        enter_program(cfg, runner_pid)
    except (OSError, SetupError) as e:
        report(cfg["status_fd"], {"setup_error": f"starting the program: {e}"})
        _exit(127)
    _exit(_run_main(cfg["main"], cfg["args"], cfg["env"], _TRUSTED.get(cfg.get("trusted_main") or "")))


def _run_main(path: str, args: list[str], env: dict[str, str], trusted: types.ModuleType | None) -> int:
    """Run ``path`` as ``python -I -B -X utf8 path *args`` would; the exit status.
    A ``trusted`` program (its source is ``path``'s, loaded by the server) runs its ``main()``."""
    _prctl(PR_SET_DUMPABLE, 1)  # as an executed program is
    _fresh_interpreter_state(path, args, env, trusted)
    main = sys.modules["__main__"]
    interrupted = False
    try:
        if trusted is not None:
            trusted.main()
        else:
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


def _fresh_interpreter_state(path: str, args: list[str], env: dict[str, str], trusted: types.ModuleType | None) -> None:
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
    main = trusted if trusted is not None else types.ModuleType("__main__")
    main.__dict__.update(
        __name__="__main__", __file__=path, __cached__=None, __builtins__=builtins,
        __loader__=SourceFileLoader("__main__", path),
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
