"""Building blocks that run inside the sandbox: the minimal root, limits, privileges, the program.

Standard library only, and never imported by the package at run time: its
source is put in front of ``_runner.py`` (one run) or ``_server.py`` (the
warm server) and executed with ``python -c``. A run's configuration is a
JSON object built by ``launch._run_config``; outcomes are JSON lines on the
status descriptor: ``{"setup_error": ...}`` or ``{"exit": n}`` /
``{"signal": n}`` plus usage.
"""

from __future__ import annotations

import ctypes
import errno
import json
import os
import resource
import select
import signal
import stat
import sys
import time
from typing import Any

MS_RDONLY = 1
MS_NOSUID = 2
MS_NODEV = 4
MS_NOEXEC = 8
MS_REMOUNT = 32
MS_NOATIME = 1024
MS_NODIRATIME = 2048
MS_BIND = 4096
MS_MOVE = 8192
MS_REC = 16384
MS_PRIVATE = 1 << 18
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24

MNT_DETACH = 2

# pivot_root has no glibc wrapper; its number differs between architectures.
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "loongarch64": 41, "ppc64le": 203, "s390x": 217}
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")
# As on a host: the standard streams by name, through the run's own /proc (its
# descriptors only: a program has 0, 1 and 2).
_DEVICE_LINKS = (
    ("/dev/fd", "/proc/self/fd"),
    ("/dev/stdin", "/proc/self/fd/0"),
    ("/dev/stdout", "/proc/self/fd/1"),
    ("/dev/stderr", "/proc/self/fd/2"),
)

PR_SET_PDEATHSIG = 1
PR_SET_DUMPABLE = 4
PR_SET_SECCOMP = 22
PR_CAPBSET_DROP = 24
PR_SET_NO_NEW_PRIVS = 38
SECCOMP_MODE_FILTER = 2

# Per-mount flags that a remount must repeat: in a user namespace they are
# locked, and leaving one out makes the remount fail with EPERM.
_KEPT_FLAGS = {
    "nosuid": MS_NOSUID,
    "nodev": MS_NODEV,
    "noexec": MS_NOEXEC,
    "noatime": MS_NOATIME,
    "nodiratime": MS_NODIRATIME,
    "relatime": MS_RELATIME,
    "strictatime": MS_STRICTATIME,
}

_libc = ctypes.CDLL(None, use_errno=True)
# Bound once: a Python program run in a forked process may rebind os._exit.
_exit = os._exit


# Phases this process marked (``mark``), reported with its status when the run is profiled.
PHASES: list[list[Any]] = []


def mark(name: str) -> None:
    """Phase ``name`` of this process ends now: monotonic and this thread's CPU nanoseconds."""
    PHASES.append([name, time.monotonic_ns(), time.thread_time_ns()])


class SetupError(Exception):
    """The sandbox could not be set up as requested."""


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise SetupError(f"{what}: {os.strerror(err)}")


def _mount(source: str | None, target: str, fstype: str | None, flags: int, data: str | None) -> None:
    _check(
        _libc.mount(
            source.encode() if source else None,
            target.encode(),
            fstype.encode() if fstype else None,
            ctypes.c_ulong(flags),
            data.encode() if data else None,
        ),
        f"mount {target}",
    )


def _prctl(option: int, arg: int) -> int:
    return int(_libc.prctl(option, ctypes.c_ulong(arg), 0, 0, 0))


def _unescape(field: str) -> str:
    """Decode the octal escapes (``\\040`` for a space) of /proc/self/mountinfo."""
    return field.encode().decode("unicode_escape").encode("latin-1").decode()


def _mounts() -> list[tuple[str, int]]:
    """(mount point, flags to keep) for every mount, in mountinfo order."""
    mounts = []
    with open("/proc/self/mountinfo") as f:
        for line in f:
            fields = line.split()
            options = fields[5].split(",")
            kept = 0
            for option in options:
                kept |= _KEPT_FLAGS.get(option, 0)
            mounts.append((_unescape(fields[4]), kept))
    return mounts


def _inside(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _bind(source: str, target: str) -> None:
    """Bind ``source`` (a directory, a file, or a symlink, copied as one) at ``target``."""
    os.makedirs(os.path.dirname(target), 0o755, exist_ok=True)
    if os.path.islink(source):
        os.symlink(os.readlink(source), target)
        return
    if os.path.isdir(source):
        os.makedirs(target, 0o755, exist_ok=True)
    else:
        os.close(os.open(target, os.O_WRONLY | os.O_CREAT, 0o644))
    _mount(source, target, None, MS_BIND | MS_REC, None)


def build_root(cfg: dict[str, Any], fresh_proc: bool) -> str:
    """A minimal root on a tmpfs: read-only binds of what the interpreter and the
    language's tools need (``binds``), the run's ``io`` directory (the program
    and, for a compiled language, its ``build``), the run's own /proc, a few
    devices, /dev/fd and /dev/std{in,out,err} (links into /proc/self/fd), and a
    size-limited tmpfs for the working directory and /dev/shm.
    Nothing else of the host (its /tmp, /home, /root, /work, datasets, other
    runs, Ray logs). ``fresh_proc`` mounts a new proc for the caller's PID
    namespace (the warm server's runs); else the caller's /proc is bound
    (``unshare --mount-proc`` made it the run's)."""
    root = os.path.join(cfg["stage_dir"], "root")
    scratch = os.path.join(cfg["stage_dir"], "scratch")
    for path in (root, scratch):
        os.makedirs(path, 0o700, exist_ok=True)
    _mount("tmpfs", root, "tmpfs", MS_NOSUID | MS_NODEV, "mode=0755,size=1m")
    _mount("tmpfs", scratch, "tmpfs", MS_NOSUID | MS_NODEV, f"mode=0755,size={cfg['disk_bytes']}")
    work, shm = os.path.join(scratch, "work"), os.path.join(scratch, "shm")
    os.mkdir(work, 0o700)
    os.mkdir(shm, 0o1777)
    os.chmod(shm, 0o1777)
    os.chown(work, cfg["work_uid"], cfg["work_uid"])
    for source in cfg["binds"]:
        if os.path.lexists(source):
            _bind(source, root + source)
    _bind(cfg["io"], root + cfg["io"])
    if cfg["artifacts"]:
        _bind(cfg["artifacts"], root + cfg["build"])
    if fresh_proc:
        os.makedirs(root + "/proc", 0o755)
        _mount("proc", root + "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, None)
    else:
        _bind("/proc", root + "/proc")
    for device in _DEVICES:
        _bind(device, root + device)
    for link, target in _DEVICE_LINKS:
        os.symlink(target, root + link)
    _bind(work, root + cfg["workdir"])
    _bind(shm, root + "/dev/shm")
    make_read_only(root, [root + cfg["workdir"], root + "/dev/shm"])
    return root


class _MountAttr(ctypes.Structure):
    _fields_ = [("attr_set", ctypes.c_uint64), ("attr_clr", ctypes.c_uint64),
                ("propagation", ctypes.c_uint64), ("userns_fd", ctypes.c_uint64)]


_MOUNT_SETATTR = 442  # the same number on every architecture
_AT_FDCWD, _AT_RECURSIVE, _MOUNT_ATTR_RDONLY = -100, 0x8000, 0x1


def make_read_only(root: str, writable: list[str]) -> None:
    """Every mount under ``root`` read-only but those at ``writable``."""
    if _read_only_tree(root, writable):
        return
    for mount_point, kept in _mounts():
        if _inside(mount_point, root) and mount_point not in writable:
            try:
                _mount(None, mount_point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None)
            except SetupError:
                # A mount hidden under another one cannot be reached by path
                # (nor by the program); anything still writable is fatal.
                if os.statvfs(mount_point).f_flag & os.ST_RDONLY == 0:
                    raise


def set_read_only(path: str, read_only: bool) -> None:
    """Make the mount at ``path`` read-only, or writable (``mount_setattr``, Linux 5.12)."""
    attr = _MountAttr(attr_set=_MOUNT_ATTR_RDONLY) if read_only else _MountAttr(attr_clr=_MOUNT_ATTR_RDONLY)
    done = _libc.syscall(ctypes.c_long(_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), path.encode(),
                         ctypes.c_uint(0), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
    _check(done, f"mount_setattr {path}")


def can_set_read_only() -> bool:
    """Whether this kernel has ``mount_setattr`` (a session's later tests need it)."""
    done = _libc.syscall(ctypes.c_long(_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), b"/", ctypes.c_uint(0),
                         ctypes.byref(_MountAttr()), ctypes.c_size_t(ctypes.sizeof(_MountAttr)))
    return done == 0 or ctypes.get_errno() != errno.ENOSYS


def _read_only_tree(root: str, writable: list[str]) -> bool:
    """Every mount under ``root`` read-only but ``writable``, in one call per mount
    (``mount_setattr``, Linux 5.12); False where the kernel lacks it."""
    for path, flags, attr in [(root, _AT_RECURSIVE, _MountAttr(attr_set=_MOUNT_ATTR_RDONLY)),
                              *((p, 0, _MountAttr(attr_clr=_MOUNT_ATTR_RDONLY)) for p in writable)]:
        done = _libc.syscall(ctypes.c_long(_MOUNT_SETATTR), ctypes.c_int(_AT_FDCWD), path.encode(),
                             ctypes.c_uint(flags), ctypes.byref(attr), ctypes.c_size_t(ctypes.sizeof(attr)))
        if done != 0:
            if ctypes.get_errno() == errno.ENOSYS and path == root:
                return False
            _check(done, f"mount_setattr {path}")
    return True


def pivot(root: str) -> None:
    """Make ``root`` the file system root and detach the host's."""
    number = _PIVOT_ROOT.get(os.uname().machine)
    if number is None:
        raise SetupError(f"pivot_root: no system call number known for {os.uname().machine}")
    os.chdir(root)
    _check(_libc.syscall(ctypes.c_long(number), b".", b"."), "pivot_root")
    _check(_libc.umount2(b".", ctypes.c_int(MNT_DETACH)), "detach the host's root")
    os.chdir("/")


def _drop_bounding_set() -> None:
    cap = 0
    while _prctl(PR_CAPBSET_DROP, cap) == 0:
        cap += 1
    if cap == 0:
        _check(-1, "drop capabilities")


class _CapHeader(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint32), ("pid", ctypes.c_int)]


class _CapData(ctypes.Structure):
    _fields_ = [("effective", ctypes.c_uint32), ("permitted", ctypes.c_uint32), ("inheritable", ctypes.c_uint32)]


def _clear_capabilities() -> None:
    """Empty the effective, permitted and inheritable sets: a program that is not
    executed (the warm server's Python) keeps its parent's capabilities otherwise."""
    header = _CapHeader(0x20080522, 0)  # _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set
    data = (_CapData * 2)()
    _check(_libc.capset(ctypes.byref(header), data), "capset")


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def install_seccomp(instructions: list[list[int]]) -> None:
    """Install the seccomp filter on this process (and, from now on, its children); sets no_new_privs."""
    _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
    _install_seccomp(instructions)


def _install_seccomp(instructions: list[list[int]]) -> None:
    """Install the BPF filter the launcher built (``seccomp.program_filter``); no_new_privs is set."""
    program = (_SockFilter * len(instructions))(*(_SockFilter(*i) for i in instructions))
    fprog = _SockFprog(len(instructions), program)
    _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog), 0, 0), "seccomp")


def join_cgroups(procs_files: list[str]) -> None:
    """Move this process into the run's cgroups before it forks: the program starts inside."""
    for path in procs_files:
        with open(path, "w") as f:
            f.write("0")


def limit_sysv_shm(budget_bytes: int) -> None:
    """In the run's fresh IPC namespace, SysV shared memory (which outlives its
    detaching processes) can never exceed the run's budget."""
    page = os.sysconf("SC_PAGE_SIZE")
    for name, value in (("shmmax", budget_bytes), ("shmall", budget_bytes // page), ("shmmni", 64)):
        try:
            fd = os.open(f"/proc/sys/kernel/{name}", os.O_WRONLY)
        except OSError:
            return  # a user namespace that may not set them: the run's cgroup, if any, still bounds it
        try:
            os.write(fd, str(value).encode())
        except OSError:
            return
        finally:
            os.close(fd)


def report(fd: int, record: dict[str, Any]) -> None:
    os.write(fd, (json.dumps(record) + "\n").encode())


_MAX_FD = 0x7FFFFFFF


def close_all_but(keep: set[int]) -> None:
    """Close every descriptor not in ``keep`` (a forked, not executed, process inherits
    them all): one ``close_range`` per gap between the kept ones."""
    low = -1
    for fd in sorted(keep):
        if fd > low + 1:
            os.closerange(low + 1, fd)
        low = fd
    os.closerange(low + 1, _MAX_FD)


def enter_program(cfg: dict[str, Any], runner_pid: int) -> None:
    """In the forked program process: working directory, limits, privileges,
    descriptors (0, 1, 2 only) and the seccomp filter, in that order."""
    os.chdir(cfg["workdir"])
    os.umask(0o077)
    for name, soft, hard in cfg["rlimits"]:
        limit = getattr(resource, name, None)
        if limit is not None:
            resource.setrlimit(limit, (soft, hard))
    if cfg["drop_uid"] is not None:
        uid = cfg["drop_uid"]
        # The run's pipes were made by root (mode 0600): owned by the program's uid, they
        # can be opened again as /dev/stdin, /dev/stdout, /dev/stderr (/proc/self/fd/N).
        for fd in {0, 1, 1 if cfg["merge_stderr"] else cfg["stderr_fd"]}:
            os.fchown(fd, uid, uid)
        os.setgroups([])
        os.setgid(uid)
        os.setuid(uid)
    elif cfg["drop_caps"]:
        _drop_bounding_set()
        _clear_capabilities()
    if cfg["collect"]:
        os.mkdir(cfg["collect"], 0o700)  # the compiler's output directory, the program's own
    if sys.platform.startswith("linux"):
        if not cfg.get("filtered"):
            _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
        # Changing credentials cleared the parent-death signal: set it again.
        _check(_prctl(PR_SET_PDEATHSIG, signal.SIGKILL), "pdeathsig")
        if os.getppid() != runner_pid:
            os._exit(137)
    os.dup2(1 if cfg["merge_stderr"] else cfg["stderr_fd"], 2)
    if cfg["seccomp"] and not cfg.get("filtered"):  # a warm runner installed it on itself: inherited
        _install_seccomp(cfg["seccomp"])
    if cfg.get("profile"):
        mark("limits, uid, seccomp")
        report(cfg["status_fd"], {"program_phases": PHASES})
    # An executed program keeps the status descriptor until execve (close-on-exec) to report its failure.
    close_all_but({0, 1, 2} if cfg["in_process"] else {0, 1, 2, cfg["status_fd"]})


def start_program(cfg: dict[str, Any], runner_pid: int) -> None:
    """In the forked child: enter the program's limits, then execute its command (never returns)."""
    fd = cfg["status_fd"]
    try:
        os.set_inheritable(fd, False)
        enter_program(cfg, runner_pid)
        argv = cfg["command"]
        os.execve(argv[0], argv, cfg["env"])
    except (OSError, SetupError) as e:
        report(fd, {"setup_error": f"starting the program: {e}"})
    os._exit(127)


def kill_uid(uid: int) -> None:
    """Kill every process of ``uid`` (leftovers when there is no PID namespace)."""
    pid = os.fork()
    if pid == 0:
        try:
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
            os.kill(-1, signal.SIGKILL)
        finally:
            os._exit(0)
    os.waitpid(pid, 0)


def wait_for(child: int, lifeline: int) -> tuple[int, Any]:
    """Wait for the program, reaping orphans meanwhile (as PID 1 they are ours);
    if the launcher dies or gives up (``lifeline`` reads EOF: a worker killed
    mid-run, a deadline), exit at once, which ends the whole run with its PID
    namespace."""
    try:
        child_fd = os.pidfd_open(child)
    except (AttributeError, OSError):
        child_fd = None
    poller = select.poll()  # not select(): inherited descriptor numbers may pass 1024
    if child_fd is not None:
        poller.register(child_fd, select.POLLIN)
        poller.register(lifeline, select.POLLIN)
    while True:
        if child_fd is not None:
            ready = dict(poller.poll(200))
            if lifeline in ready and not os.read(lifeline, 1):
                os._exit(1)
            reap = os.WNOHANG
        else:
            reap = 0
        while True:
            pid, status, usage = os.wait4(-1, reap)
            if pid == child:
                return status, usage
            if pid == 0:
                break


def outcome(status: int, usage: Any) -> dict[str, Any]:
    """The status record of a program that ended with wait ``status`` and ``usage``."""
    record: dict[str, Any] = {"cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss,
                              "page_faults": usage.ru_minflt}
    if os.WIFSIGNALED(status):
        record["signal"] = os.WTERMSIG(status)
    else:
        record["exit"] = os.WEXITSTATUS(status)
    return record


_MAX_COLLECT_FILES = 4096


def send_collected(cfg: dict[str, Any]) -> str | None:
    """After a compiler exited 0: stream the regular files under ``collect`` (its
    output directory in the working directory) to the artifact descriptor, as
    ``{"path", "size", "mode"}`` JSON lines each followed by the bytes. None, or
    why the output could not be sent (too large, too many files). Symbolic links
    and special files are skipped; nothing outside the directory is opened."""
    top = os.path.join(cfg["workdir"], cfg["collect"])
    budget, fd, files = cfg["artifact_bytes"], cfg["artifact_fd"], 0
    pending = [("", os.open(top, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW))]
    while pending:
        prefix, dir_fd = pending.pop()
        try:
            for entry in sorted(os.listdir(dir_fd)):
                path = f"{prefix}{entry}"
                try:
                    opened = os.open(entry, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK, dir_fd=dir_fd)
                except OSError:
                    continue  # a symbolic link (ELOOP) or gone
                info = os.fstat(opened)
                if stat.S_ISDIR(info.st_mode) and path.count("/") < 16:
                    pending.append((path + "/", opened))
                    continue
                try:
                    if not stat.S_ISREG(info.st_mode):
                        continue
                    files += 1
                    budget -= max(1, -(-info.st_size // 4096)) * 4096  # on disk: whole blocks (artifacts.disk_bytes)
                    if budget < 0 or files > _MAX_COLLECT_FILES:
                        return (
                            f"the compiler's output passes its disk limit ({cfg['artifact_bytes']} bytes) "
                            f"or {_MAX_COLLECT_FILES} files"
                        )
                    header = {"path": path, "size": info.st_size, "mode": stat.S_IMODE(info.st_mode)}
                    os.write(fd, (json.dumps(header) + "\n").encode())
                    _copy(opened, fd, info.st_size)
                finally:
                    os.close(opened)
        finally:
            os.close(dir_fd)
    return None


def _copy(source: int, target: int, size: int) -> None:
    while size > 0:
        chunk = os.read(source, min(size, 1 << 20))
        if not chunk:
            raise SetupError("a compiled file shrank while it was sent")
        view = memoryview(chunk)
        while view:
            view = view[os.write(target, view) :]
        size -= len(chunk)


_ARG_AREA: list[tuple[int, int]] = []


def set_title(title: str) -> None:
    """Show ``title`` as this process's command line (``ps``, ``/proc/<pid>/cmdline``):
    a forked run otherwise shows its server's. Best effort: the argument area is
    overwritten in place, never grown (found once: forks share its address)."""
    if not _ARG_AREA:
        try:
            with open("/proc/self/stat", "rb") as f:
                fields = f.read().rsplit(b")", 1)[1].split()
            _ARG_AREA.append((int(fields[45]), int(fields[46])))  # arg_start, arg_end (fields 48 and 49)
        except (OSError, IndexError, ValueError):
            return
    start, end = _ARG_AREA[0]
    data = title.encode()[: max(0, end - start - 1)]
    ctypes.memset(start, 0, end - start)
    ctypes.memmove(start, data, len(data))


def run_program(cfg: dict[str, Any], start: Any, spawn: Any = None) -> dict[str, Any]:
    """Start the program: ``spawn(cfg)`` (its pid) where given, else fork and
    ``start(cfg, runner_pid)`` (never returns); wait for it, send a compiler's
    output; the status record of how it ended."""
    runner_pid = os.getpid()
    if spawn is not None:
        try:
            child = spawn(cfg)
        except OSError as e:
            return {"setup_error": f"starting the program: {e}"}
    else:
        child = os.fork()
    if child == 0:
        del PHASES[:]
        try:
            start(cfg, runner_pid)
        finally:
            _exit(127)  # whatever happened in the program's process, it never returns into the runner's code
    mark("program spawned" if spawn is not None else "program forked")
    status, usage = wait_for(child, cfg["lifeline_fd"])
    mark("program ended")
    record = outcome(status, usage)
    if cfg["collect"] and record.get("exit") == 0:
        try:
            failure = send_collected(cfg)
        except (OSError, SetupError) as e:
            failure = f"reading the compiler's output: {e}"
        if failure is not None:
            record["collect_error"] = failure
    return record


def run_and_report(cfg: dict[str, Any], start: Any) -> int:
    """Run the program (``run_program``) and report how it ended on the status descriptor."""
    record = run_program(cfg, start)
    if cfg.get("profile"):
        record["runner_phases"] = PHASES
    report(cfg["status_fd"], record)
    if cfg["kill_uid"] and cfg["drop_uid"] is not None:
        kill_uid(cfg["drop_uid"])
    return 0
