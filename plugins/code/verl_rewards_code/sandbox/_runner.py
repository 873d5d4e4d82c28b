"""In-sandbox runner: build a minimal root in the mount namespace, then run one program under limits.

This file is executed as ``python -I -S -c <this source> <config json>``, as the
first process inside the new namespaces (PID 1 of the PID namespace when there
is one), so it uses the standard library only and never imports the package.

It forks the program as its child, so the program is an ordinary process
(PID 1 ignores most signals, which would silently disable SIGXCPU) and the
runner, which the program cannot signal, stays in charge. The program's stderr
is a descriptor of its own (the runner's, shared with ``unshare``, is not).
Outcomes are written as JSON lines to the status file descriptor that the
launcher passes in:
``{"setup_error": ...}`` or ``{"exit": n}`` / ``{"signal": n}`` plus usage.
When the runner exits, the kernel kills everything left in its PID namespace.
"""

from __future__ import annotations

import ctypes
import json
import os
import resource
import select
import signal
import sys
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
MS_RELATIME = 1 << 21
MS_STRICTATIME = 1 << 24

MNT_DETACH = 2

# pivot_root has no glibc wrapper; its number differs between architectures.
_PIVOT_ROOT = {"x86_64": 155, "aarch64": 41, "riscv64": 41, "loongarch64": 41, "ppc64le": 203, "s390x": 217}
_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom")

PR_SET_PDEATHSIG = 1
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


def _build_root(cfg: dict[str, Any]) -> str:
    """A minimal root on a tmpfs: read-only binds of what the interpreter needs
    (``binds``) and the program file, the run's own /proc, a few devices, and a
    size-limited tmpfs for the working directory and /dev/shm. Nothing else of
    the host (its /tmp, /home, /root, /work, datasets, other runs, Ray logs)."""
    root = os.path.join(cfg["stage_dir"], "root")
    scratch = os.path.join(cfg["stage_dir"], "scratch")
    for path in (root, scratch):
        os.mkdir(path, 0o700)
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
    _bind(cfg["program"], root + cfg["program"])
    _bind("/proc", root + "/proc")  # unshare --mount-proc made it this PID namespace's
    for device in _DEVICES:
        _bind(device, root + device)
    _bind(work, root + cfg["workdir"])
    _bind(shm, root + "/dev/shm")
    writable = {root + cfg["workdir"], root + "/dev/shm"}
    for mount_point, kept in _mounts():
        if _inside(mount_point, root) and mount_point not in writable:
            try:
                _mount(None, mount_point, None, MS_REMOUNT | MS_BIND | MS_RDONLY | kept, None)
            except SetupError:
                # A mount hidden under another one cannot be reached by path
                # (nor by the program); anything still writable is fatal.
                if os.statvfs(mount_point).f_flag & os.ST_RDONLY == 0:
                    raise
    return root


def _pivot(root: str) -> None:
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


class _SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_ushort), ("jt", ctypes.c_ubyte), ("jf", ctypes.c_ubyte), ("k", ctypes.c_uint32)]


class _SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.POINTER(_SockFilter))]


def _install_seccomp(instructions: list[list[int]]) -> None:
    """Install the BPF filter the launcher built (``seccomp.vsock_filter``); no_new_privs is set."""
    program = (_SockFilter * len(instructions))(*(_SockFilter(*i) for i in instructions))
    fprog = _SockFprog(len(instructions), program)
    _check(_libc.prctl(PR_SET_SECCOMP, ctypes.c_ulong(SECCOMP_MODE_FILTER), ctypes.byref(fprog), 0, 0), "seccomp")


def _join_cgroups(procs_files: list[str]) -> None:
    """Move this runner into the run's cgroups before it forks: the program starts inside."""
    for path in procs_files:
        with open(path, "w") as f:
            f.write("0")


def _limit_sysv_shm(budget_bytes: int) -> None:
    """In the run's fresh IPC namespace, SysV shared memory (which outlives its
    detaching processes) can never exceed the run's budget."""
    page = os.sysconf("SC_PAGE_SIZE")
    for name, value in (("shmmax", budget_bytes), ("shmall", budget_bytes // page), ("shmmni", 64)):
        try:
            with open(f"/proc/sys/kernel/{name}", "w") as f:
                f.write(str(value))
        except OSError:
            return  # a user namespace that may not set them: the run's cgroup, if any, still bounds it


def _report(fd: int, record: dict[str, Any]) -> None:
    os.write(fd, (json.dumps(record) + "\n").encode())


def _exec_program(cfg: dict[str, Any], runner_pid: int) -> None:
    """In the forked child: apply limits, drop privileges, exec the program."""
    fd = cfg["status_fd"]
    try:
        os.chdir(cfg["workdir"])
        os.umask(0o077)
        for name, soft, hard in cfg["rlimits"]:
            limit = getattr(resource, name, None)
            if limit is not None:
                resource.setrlimit(limit, (soft, hard))
        if cfg["drop_uid"] is not None:
            uid = cfg["drop_uid"]
            os.setgroups([])
            os.setgid(uid)
            os.setuid(uid)
        elif cfg["drop_caps"]:
            _drop_bounding_set()
        if sys.platform.startswith("linux"):
            _check(_prctl(PR_SET_NO_NEW_PRIVS, 1), "no_new_privs")
            # Changing credentials cleared the parent-death signal: set it again.
            _check(_prctl(PR_SET_PDEATHSIG, signal.SIGKILL), "pdeathsig")
            if os.getppid() != runner_pid:
                os._exit(137)
        os.dup2(cfg["stderr_fd"], 2)
        os.close(cfg["stderr_fd"])
        os.set_inheritable(fd, False)
        if cfg["seccomp"]:
            _install_seccomp(cfg["seccomp"])
        python = cfg["python"]
        os.execve(python, [python, *cfg["python_args"], cfg["program"]], cfg["env"])
    except (OSError, SetupError) as e:
        _report(fd, {"setup_error": f"starting the program: {e}"})
    os._exit(127)


def _kill_uid(uid: int) -> None:
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


def _wait_for(child: int, lifeline: int) -> tuple[int, Any]:
    """Wait for the program, reaping orphans meanwhile (as PID 1 they are ours);
    if the launcher dies (``lifeline`` reads EOF: a worker killed mid-run),
    exit at once, which ends the whole run with its PID namespace."""
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


def main() -> int:
    """Run the program described by the JSON config in ``sys.argv[1]``."""
    cfg = json.loads(sys.argv[1])
    fd = cfg["status_fd"]
    os.set_inheritable(cfg["stderr_fd"], False)
    os.set_inheritable(cfg["lifeline_fd"], False)
    try:
        _join_cgroups(cfg["cgroup_procs"])
    except OSError as e:
        _report(fd, {"setup_error": f"joining the run's cgroup: {e}"})
        return 0
    if cfg["ipc_namespace"]:
        _limit_sysv_shm(cfg["memory_bytes"])
    try:
        if cfg["mount"]:
            _pivot(_build_root(cfg))
    except (OSError, SetupError) as e:
        _report(fd, {"setup_error": f"mount namespace: {e}"})
        return 0
    runner_pid = os.getpid()
    child = os.fork()
    if child == 0:
        _exec_program(cfg, runner_pid)
    status, usage = _wait_for(child, cfg["lifeline_fd"])
    record: dict[str, Any] = {"cpu_s": usage.ru_utime + usage.ru_stime, "maxrss_kb": usage.ru_maxrss}
    if os.WIFSIGNALED(status):
        record["signal"] = os.WTERMSIG(status)
    else:
        record["exit"] = os.WEXITSTATUS(status)
    _report(fd, record)
    if cfg["kill_uid"] and cfg["drop_uid"] is not None:
        _kill_uid(cfg["drop_uid"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
