"""The run's cgroup as root: processes and memory bounded for the whole run, in every isolation mode.

Real faults (issue 19, rows 1 and 3): 400 sleeping children against
``max_processes=4`` (RLIMIT_NPROC does not bind root), SysV shared memory
attached, filled and detached (it outlives its processes and RLIMIT_AS), and
memfds written without mapping and parked in a unix socket.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import sys
import textwrap
from dataclasses import replace
from pathlib import Path

import pytest
from verl_rewards_code.code_exec import compute_score
from verl_rewards_code.sandbox import Isolation, Limits, Sandbox, isolation_for, launch
from verl_rewards_code.sandbox import isolation as isolation_module
from verl_rewards_code.sandbox.owners import owner_tag
from verl_rewards_code.sandbox.records import Cgroups

NEEDS_ROOT = pytest.mark.skipif(os.geteuid() != 0, reason="cgroups are made by root (CI runs as root)")


def user_namespace(namespaces: Isolation) -> Isolation:
    """What a caller who is not root gets. Root can build it too, but its
    namespace root is then the real root, which RLIMIT_NPROC does not bind."""
    command = (shutil.which("unshare") or "unshare", "--user", "--map-root-user", *isolation_module._NAMESPACES)
    return Isolation("namespaces", command, drop_caps=True, mount=True, binds=namespaces.binds,
                     cgroups=namespaces.cgroups, seccomp=namespaces.seccomp, nproc_enforced=os.geteuid() != 0)


def modes() -> dict[str, Isolation]:
    chosen = isolation_for("auto", sys.executable)
    found = {"rlimits": isolation_for("rlimits", sys.executable)}
    if chosen.level == "namespaces":
        found |= {"namespaces": chosen, "user namespace": user_namespace(chosen)}
    return found


def run(isolation: Isolation, source: str, limits: Limits) -> tuple[str, bool]:
    result = launch.execute(isolation, textwrap.dedent(source), "", limits, sys.executable)
    assert result.setup_error is None, result.setup_error
    return result.stdout, result.memory_limit_hit


def run_cgroups_of_this_process(isolation: Isolation) -> list[str]:
    assert isolation.cgroups is not None
    prefix = f"{owner_tag()}-"
    return [n for p in isolation.cgroups.parents for n in os.listdir(p) if n.startswith(prefix)]


FORK_400 = """
    import os, time
    children = 0
    for _ in range(400):
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            time.sleep(30)
            os._exit(0)
        children += 1
    print(children)
    """


@NEEDS_ROOT
@pytest.mark.parametrize("mode", ["namespaces", "user namespace", "rlimits"])
def test_a_program_cannot_fork_past_max_processes_in_any_mode(mode: str) -> None:
    isolation = modes().get(mode)
    if isolation is None:
        pytest.fail(f"unshare exists but the sandbox fell back: {isolation_for('auto', sys.executable).describe()}")
    if isolation.cgroups is None and not isolation.nproc_enforced:
        # Nothing in the kernel can count a root program's processes: say so at start-up.
        assert "process limit" in isolation.describe()
        return
    limits = Limits(timeout_s=10.0, memory_mb=512, max_processes=4, disk_mb=16)
    stdout, _ = run(isolation, FORK_400, limits)
    assert 0 < int(stdout) < limits.max_processes  # issue 19: 400 in rlimits mode as root
    if isolation.cgroups is not None:
        assert run_cgroups_of_this_process(isolation) == []  # every child killed, the cgroup removed


@NEEDS_ROOT
def test_the_start_up_line_says_which_limits_hold() -> None:
    for isolation in modes().values():
        text = isolation.describe()
        if isolation.cgroups is not None:
            assert f"a cgroup v{isolation.cgroups.version} per run" in text and "whole-run memory" not in text
        else:
            assert "NOT isolated" in text and "whole-run memory" in text


SYSV_SHM = """
    import ctypes, os
    libc = ctypes.CDLL(None, use_errno=True)
    libc.shmat.restype = ctypes.c_void_p
    segment, held = 32 * 1024 * 1024, 0
    for _ in range(24):
        sid = libc.shmget(0, ctypes.c_size_t(segment), 0o1000 | 0o600)  # IPC_PRIVATE, IPC_CREAT
        if sid < 0:
            break
        address = libc.shmat(sid, None, 0)
        if address in (None, ctypes.c_void_p(-1).value):
            break
        ctypes.memset(address, 1, segment)
        libc.shmdt(ctypes.c_void_p(address))  # detached, the segment lives on
        held += segment
        print(held // 2**20, flush=True)
    """

MEMFDS = """
    import os, socket
    parked, peer = socket.socketpair(socket.AF_UNIX, socket.SOCK_DGRAM)
    chunk, held = b"x" * 2**20, 0
    for _ in range(256):
        try:
            fd = os.memfd_create("m")
            for _ in range(4):
                os.write(fd, chunk)  # never mapped: RLIMIT_AS does not see it
            socket.send_fds(parked, [b"."], [fd])  # in flight: not even an open descriptor
            os.close(fd)
        except OSError:
            break
        held += 4
        print(held, flush=True)
    """


@NEEDS_ROOT
@pytest.mark.parametrize(("attack", "unbounded_mb"), [(SYSV_SHM, 768), (MEMFDS, 1024)], ids=["sysv shm", "memfd"])
def test_memory_outside_the_address_space_counts_against_the_run_budget(attack: str, unbounded_mb: int) -> None:
    isolation = isolation_for("auto", sys.executable)
    limits = Limits(timeout_s=20.0, memory_mb=256, max_output_bytes=4 * 2**20, max_processes=4, disk_mb=16)
    if isolation.cgroups is None:
        # Without a cgroup: SysV shm within the IPC namespace's shmall, memfd_create refused by seccomp.
        assert "whole-run memory" in isolation.describe()
        if isolation.level == "namespaces" and isolation.seccomp:
            stdout, _ = run(isolation, attack, limits)
            assert int((stdout.split() or ["0"])[-1]) <= limits.memory_mb
        return
    stdout, memory_limit_hit = run(isolation, attack, limits)
    held_mb = int(stdout.split()[-1])
    # Before: every segment (768 MB) or memfd (1024 MB) was held against 256 MB.
    assert 0 < held_mb <= limits.memory_mb < unbounded_mb
    assert memory_limit_hit


@NEEDS_ROOT
def test_a_run_killed_at_its_memory_limit_is_a_memory_failure() -> None:
    truth = json.dumps({"inputs": [""], "outputs": ["1024\n"]})
    result = compute_score("apps", textwrap.dedent(MEMFDS), truth, memory_mb=256, disk_mb=16)
    isolation = isolation_for("auto", sys.executable)
    assert result["score"] == 0.0
    assert result["test_statuses"] == ("memory" if isolation.cgroups is not None else "fail")


def test_a_cgroup_hierarchy_that_fails_at_run_time_is_dropped_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    chosen = isolation_for("auto", sys.executable)
    unusable = Cgroups(1, (str(tmp_path / "gone" / "memory"), str(tmp_path / "gone" / "pids")))
    with caplog.at_level(logging.WARNING, logger="verl_rewards_code.sandbox"):
        kept, failure = isolation_module.probe_with_kernel_fallbacks(replace(chosen, cgroups=unusable), sys.executable)
    assert failure is None and kept == replace(chosen, cgroups=None)
    assert "dropped the run cgroup (whole-run memory and processes)" in caplog.text
    assert "No such file or directory" in caplog.text


# A program of a few MB that parks memfds in a socket: the memory is charged to
# the run but is in no process's RSS, so the OOM killer picks the biggest
# process of the run: the sandbox's own runner (a Python process), not the program.
MEMFDS_CPP = r"""
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>
#include <cstring>

int main() {
    int pair[2];
    socketpair(AF_UNIX, SOCK_DGRAM, 0, pair);
    static char chunk[1 << 20];
    std::memset(chunk, 'x', sizeof chunk);
    for (int i = 0; i < 1024; ++i) {
        int fd = memfd_create("m", 0);
        if (fd < 0) return 1;
        for (int j = 0; j < 4; ++j) write(fd, chunk, sizeof chunk);
        char byte = '.', control[CMSG_SPACE(sizeof(int))] = {};
        iovec data{&byte, 1};
        msghdr message{};
        message.msg_iov = &data;
        message.msg_iovlen = 1;
        message.msg_control = control;
        message.msg_controllen = sizeof control;
        cmsghdr* header = CMSG_FIRSTHDR(&message);
        header->cmsg_level = SOL_SOCKET;
        header->cmsg_type = SCM_RIGHTS;
        header->cmsg_len = CMSG_LEN(sizeof(int));
        std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
        if (sendmsg(pair[0], &message, 0) < 0) return 2;  // in flight: not even an open descriptor
        close(fd);
    }
}
"""


@NEEDS_ROOT
def test_a_runner_killed_at_the_memory_limit_is_a_memory_failure() -> None:
    # Issue 26 item 16: the OOM killer picked the runner, and the test's status was sandbox_error.
    isolation = isolation_for("auto", sys.executable)
    if isolation.cgroups is None:
        assert "whole-run memory" in isolation.describe()
        return
    limits = Limits(timeout_s=20.0, memory_mb=256, max_processes=4, disk_mb=16)
    result = Sandbox.resolve().for_language("cpp").run(MEMFDS_CPP, "", limits)
    # The program never ended by itself: its runner was killed first, and the run with it.
    assert (result.exit_code, result.signal, result.setup_error) == (None, None, None), result
    assert result.memory_limit_hit
    truth = json.dumps({"inputs": [""], "outputs": [""]})
    scored = compute_score("apps", f"```cpp\n{MEMFDS_CPP}```", truth, memory_mb=256, disk_mb=16)
    assert (scored["score"], scored["test_statuses"]) == (0.0, "memory")
