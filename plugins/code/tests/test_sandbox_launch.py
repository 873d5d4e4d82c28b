"""What the launcher leaves behind: no host disk through inherited descriptors, no tree after a killed worker,
nothing in the kernel after a run."""

from __future__ import annotations

import fnmatch
import glob
import os
import resource
import signal
import subprocess
import sys
import tempfile
import textwrap
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from verl_rewards_code.sandbox import Limits, Sandbox, run_program
from verl_rewards_code.sandbox import warm as warm_module
from verl_rewards_code.sandbox.launch import TREE_PREFIX
from verl_rewards_code.sandbox.owners import owner_tag


def test_fallocate_on_inherited_descriptors_reserves_no_host_disk() -> None:
    # Issue 19 row 4: stdout/stderr were files in the host's temp dir, and
    # fallocate(KEEP_SIZE) reserved 6 GiB past max_output_bytes and disk_mb.
    source = """
        import ctypes, errno, os
        libc = ctypes.CDLL(None, use_errno=True)
        for fd in (0, 1, 2):
            if libc.fallocate(fd, 1, ctypes.c_long(0), ctypes.c_long(2**30)) == 0:  # FALLOC_FL_KEEP_SIZE
                print("reserved", fd)
            else:
                print(errno.errorcode[ctypes.get_errno()])
            print(os.readlink(f"/proc/self/fd/{fd}").split(":")[0])
        """
    result = run_program(textwrap.dedent(source), "input\n")
    assert result.ok, result.stderr
    assert result.stdout.split() == ["EBADF", "pipe", "ESPIPE", "pipe", "ESPIPE", "pipe"]


def test_output_past_the_cap_stops_the_run_at_once() -> None:
    limits = Limits(timeout_s=30.0, max_output_bytes=64 * 1024)
    for stream in ("sys.stdout", "sys.stderr"):
        started = time.monotonic()
        result = run_program(f"import sys\nwhile True:\n    {stream}.write('x' * 10000)\n", "", limits)
        assert result.output_limit_hit and not result.timed_out and not result.ok
        assert len(result.stdout) <= limits.max_output_bytes
        assert time.monotonic() - started < 20.0  # not the 30 s time limit


def _processes_of_tree(pattern: str) -> list[int]:
    """Pids whose command line names a run tree matching ``pattern`` (the program's main.py path)."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if fnmatch.fnmatch((entry / "cmdline").read_bytes().decode(errors="replace"), f"*{pattern}*"):
                found.append(int(entry.name))
        except (OSError, ValueError):
            continue
    return found


def _wait_for(condition: object, deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        if condition():  # type: ignore[operator]
            return True
        time.sleep(0.1)
    return False


def test_a_killed_worker_leaves_no_sandbox_running_and_its_tree_goes_at_the_next_start() -> None:
    # Issue 19 row 5: a worker killed on a timeout left its tree in /tmp
    # (and, before the runner's lifeline, a sleeping program ran on).
    worker = subprocess.Popen([sys.executable, "-c", textwrap.dedent("""
        from verl_rewards_code.sandbox import Limits, run_program
        run_program("import time\\ntime.sleep(600)", limits=Limits(timeout_s=600))
        """)])
    namespace = os.stat("/proc/self/ns/pid").st_ino
    tree_name = f"{TREE_PREFIX}{namespace}-{worker.pid}-"
    trees = os.path.join(tempfile.gettempdir(), f"{tree_name}*")
    try:
        assert _wait_for(lambda: glob.glob(trees) and _processes_of_tree(tree_name), 60.0)
    finally:
        worker.send_signal(signal.SIGKILL)
        worker.wait()
    assert glob.glob(trees)  # the real fault: nobody removed it
    assert _wait_for(lambda: not _processes_of_tree(tree_name), 10.0)
    subprocess.run([sys.executable, "-c", "from verl_rewards_code.sandbox import Sandbox; Sandbox.resolve()"],
                   check=True, timeout=120)
    assert glob.glob(trees) == []


def test_a_caller_holding_over_1024_descriptors_can_run_programs() -> None:
    # select() cannot watch a descriptor numbered past FD_SETSIZE; a Ray
    # worker with many sockets open gets such numbers for the run's pipes.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < 2048 <= hard or hard == resource.RLIM_INFINITY:
        resource.setrlimit(resource.RLIMIT_NOFILE, (2048, hard))
    held = [os.open(os.devnull, os.O_RDONLY) for _ in range(1100)]
    try:
        result = run_program("print(input())", "past 1024\n")
    finally:
        for fd in held:
            os.close(fd)
        resource.setrlimit(resource.RLIMIT_NOFILE, (soft, hard))
    assert result.ok and result.stdout == "past 1024\n", result


def test_stdin_larger_than_a_pipe_buffer_reaches_the_program_whole() -> None:
    data = "".join(f"{i}\n" for i in range(200_000))  # ~1.3 MB: the launcher feeds the pipe as it drains
    result = run_program("import sys\ndata = sys.stdin.read()\nprint(len(data), data.count('\\n'))", data,
                         Limits(timeout_s=20.0))
    assert result.ok, result.stderr
    assert result.stdout.split() == [str(len(data)), "200000"]


def test_a_program_that_never_reads_its_stdin_still_ends() -> None:
    result = run_program("print('done')", "x" * 2_000_000, Limits(timeout_s=20.0))
    assert result.ok and result.stdout == "done\n"


# A run that makes what it can in the kernel and leaves it: keys (refused: issue 32
# item 6), SysV shared memory, a message queue and a semaphore set, open to all and
# never removed; it also reports its namespaces and its tree.
MAKE_KERNEL_STATE = """
    import ctypes, os, platform
    libc = ctypes.CDLL(None, use_errno=True)
    IPC_CREAT_ALL = 0o1000 | 0o666
    add_key = {"x86_64": 248, "aarch64": 217}[platform.machine()]
    key = libc.syscall(ctypes.c_long(add_key), b"user", b"left-behind", b"x" * 64, ctypes.c_size_t(64),
                       ctypes.c_int(-4))  # the uid's user keyring
    made = [libc.shmget(0, ctypes.c_size_t(1 << 20), IPC_CREAT_ALL), libc.msgget(0, IPC_CREAT_ALL),
            libc.semget(0, 4, IPC_CREAT_ALL)]
    print(os.getuid(), key >= 0, *(m >= 0 for m in made))
    print(os.path.dirname(os.path.dirname(__file__)))
    print(*(os.readlink(f"/proc/self/ns/{kind}") for kind in ("mnt", "net", "pid", "ipc", "uts")))
    """


def _since_boot_ticks() -> int:
    return int(float(Path("/proc/uptime").read_text().split()[0]) * os.sysconf("SC_CLK_TCK"))


def _started_by(ticks: int) -> set[int]:
    """Pids of the processes that started by ``ticks`` since boot."""
    found = set()
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and int((entry / "stat").read_text().rsplit(")", 1)[1].split()[19]) <= ticks:
                found.add(int(entry.name))
        except OSError:
            continue  # gone meanwhile
    return found


def _descendants(pid: int) -> set[int]:
    found, pending = set(), [pid]
    while pending:
        parent = pending.pop()
        for task in Path(f"/proc/{parent}/task").glob("*"):
            try:
                children = {int(c) for c in (task / "children").read_text().split()}
            except OSError:
                continue
            pending += children - found
            found |= children
    return found


def _in_namespaces(namespaces: set[str], pids: set[int]) -> list[str]:
    """Which of ``pids`` is in one of ``namespaces``, or holds a descriptor of one."""
    found = []
    for pid in sorted(pids):
        entry = Path(f"/proc/{pid}")
        try:
            links = [entry / "ns" / kind for kind in ("mnt", "net", "pid", "ipc", "uts")]
            links += [entry / "fd" / fd for fd in os.listdir(entry / "fd")]
            held = {os.readlink(link) for link in links if link.is_symlink()}
        except OSError:
            continue  # gone meanwhile
        found += [f"{pid}: {ns}" for ns in held & namespaces]
    return found


def _sysv_objects_of(uid: int) -> list[str]:
    objects = []
    for kind in ("shm", "msg", "sem"):
        lines = Path(f"/proc/sysvipc/{kind}").read_text().splitlines()
        column = lines[0].split().index("uid")
        objects += [f"{kind}: {line}" for line in lines[1:] if int(line.split()[column]) == uid]
    return objects


@pytest.mark.skipif(os.geteuid() != 0, reason="the run's fresh uid and namespaces are root's (CI runs as root)")
@pytest.mark.parametrize("warm", [True, False], ids=["warm", "cold"])
def test_nothing_a_run_makes_in_the_kernel_outlives_it(warm: bool, processes_of: Callable[[int], list[int]]) -> None:
    sandbox = Sandbox.resolve(warm=warm)
    assert sandbox.isolation.level == "namespaces", sandbox.isolation.describe()
    server = warm_module.server_for(sandbox.isolation, sandbox.python) if warm else None
    assert (server is not None) == warm
    kinds = ("mnt", "net", "pid", "ipc", "uts")
    # The host's namespaces, and the warm server's (it outlives runs by design: the runs share its UTS one).
    lasting = {os.readlink(f"/proc/self/ns/{kind}") for kind in kinds}
    if server is not None:
        lasting |= {os.readlink(f"/proc/{server.server_pid()}/ns/{kind}") for kind in kinds}
    before = _started_by(_since_boot_ticks() - 1)
    result = sandbox.run(textwrap.dedent(MAKE_KERNEL_STATE), "", Limits(timeout_s=10.0))
    assert result.ok, result
    made, tree, namespaces = result.stdout.splitlines()
    uid = int(made.split()[0])
    assert made.split()[1:] == ["False", "True", "True", "True"]  # no key; SysV objects made in the run
    assert processes_of(uid) == []
    # keys: none under the run's uid (it had a user keyring and the key before)
    assert uid not in {int(line.split(":")[0]) for line in Path("/proc/key-users").read_text().splitlines()}
    assert all(line.split()[5] != str(uid) for line in Path("/proc/keys").read_text().splitlines())
    # SysV objects: in the run's IPC namespace, gone with it (none on the host either)
    assert _sysv_objects_of(uid) == []
    # namespaces: the run's own (mount, network, PID, IPC; UTS too on the cold path), held by
    # no process that was there before the run (the scorer, the warm server, any other), nor by
    # what this process or the warm server started since (a freed namespace's number may be
    # given to a namespace other processes make meanwhile: those are not counted)
    fresh = set(namespaces.split()) - lasting
    assert len(fresh) == (4 if warm else 5), (namespaces, lasting)
    machinery = _descendants(os.getpid()) | (_descendants(server.server_pid() or 0) if server else set())
    assert _in_namespaces(fresh, before | machinery) == []
    # mounts: none of the run's tree in the host's mount table, nor in the warm server's
    tables = [Path("/proc/self/mountinfo")]
    if server is not None:
        tables.append(Path(f"/proc/{server.server_pid()}/mountinfo"))
    assert [t for t in tables if tree in t.read_text()] == []
    assert not os.path.exists(tree)
    # cgroups: the run's cgroup is removed
    cgroups = sandbox.isolation.cgroups
    assert cgroups is not None
    prefix = f"{owner_tag()}-"
    assert [n for p in cgroups.parents for n in os.listdir(p) if n.startswith(prefix)] == []
