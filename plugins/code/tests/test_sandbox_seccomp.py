"""The seccomp filter: vsock (not network-namespaced), io_uring, new user namespaces and kernel keys refused, everything else allowed."""

from __future__ import annotations

import errno
import platform
import sys
import textwrap
from pathlib import Path

import pytest
from verl_rewards_code.sandbox import Limits, Sandbox, isolation_for, run_program
from verl_rewards_code.sandbox.seccomp import vsock_filter

RET, JMP_CLASS = 0x06, 0x05


@pytest.mark.parametrize("refuse_memfd", [False, True])
@pytest.mark.parametrize("machine", ["x86_64", "aarch64"])
def test_every_jump_lands_inside_the_filter_and_it_ends_in_a_return(machine: str, refuse_memfd: bool) -> None:
    program = vsock_filter(machine, refuse_memfd)
    for index, (code, jt, jf, _) in enumerate(program):
        if code & 0x07 == JMP_CLASS:
            assert index + 1 + max(jt, jf) < len(program)
    assert program[-1] == (RET, 0, 0, 0x7FFF0000)


def test_a_program_cannot_open_a_vsock_socket_nor_an_io_uring() -> None:
    # Issue 19 row 6: socket(AF_VSOCK) worked inside the sandbox. This
    # machine is a VM with a virtio vsock device; nothing here connects.
    isolation = isolation_for("auto", sys.executable)
    if not isolation.seccomp:
        assert "vsock" in isolation.describe()
        return
    source = """
        import ctypes, errno, socket
        for family, kind in ((socket.AF_VSOCK, socket.SOCK_STREAM), (socket.AF_VSOCK, socket.SOCK_DGRAM)):
            try:
                socket.socket(family, kind).close()
                print("opened")
            except OSError as e:
                print(errno.errorcode[e.errno])
        libc = ctypes.CDLL(None, use_errno=True)
        params = ctypes.create_string_buffer(120)
        print(libc.syscall(425, 8, params), errno.errorcode[ctypes.get_errno()])  # io_uring_setup
        a, b = socket.socketpair()
        socket.socket(socket.AF_INET, socket.SOCK_STREAM).close()
        print("ok")
        """
    result = run_program(textwrap.dedent(source))
    assert result.ok, result.stderr
    assert result.stdout.split() == ["EAFNOSUPPORT", "EAFNOSUPPORT", "-1", "ENOSYS", "ok"]
    assert errno.EAFNOSUPPORT == 97


NEW_USER_NAMESPACE = """
    import ctypes, errno, os, threading
    libc = ctypes.CDLL(None, use_errno=True)
    CLONE_NEWUSER, CLONE_FS, SIGCHLD = 0x10000000, 0x200, 17
    def call(number, *args):
        ctypes.set_errno(0)
        done = libc.syscall(number, *args) != -1
        return "ok" if done else errno.errorcode[ctypes.get_errno()]
    # CLONE_FS makes clone refuse (EINVAL) before it would create anything: only the filter's answer differs.
    arguments = (ctypes.c_uint64 * 11)(CLONE_NEWUSER | CLONE_FS)
    print(call({unshare}, CLONE_NEWUSER))
    print(call({clone}, CLONE_NEWUSER | CLONE_FS | SIGCHLD, 0, 0, 0, 0))
    print(call(435, arguments, 88))  # clone3
    thread = threading.Thread(target=print, args=("a thread starts",))  # glibc falls back from clone3 to clone
    thread.start()
    thread.join()
    child = os.fork()
    if child == 0:
        os._exit(7)
    print(os.waitpid(child, 0)[1] >> 8)
    """


def test_a_program_cannot_create_a_user_namespace() -> None:
    # Issue 26 item 16: unshare(CLONE_NEWUSER) worked, giving the program a
    # root of its own and the kernel code only capabilities reach.
    isolation = isolation_for("auto", sys.executable)
    if not isolation.seccomp:
        assert "vsock" in isolation.describe()
        return
    numbers = {"x86_64": {"unshare": 272, "clone": 56}, "aarch64": {"unshare": 97, "clone": 220}}[platform.machine()]
    result = run_program(textwrap.dedent(NEW_USER_NAMESPACE.format(**numbers)))
    assert result.ok, result.stderr
    assert result.stdout.splitlines() == ["EPERM", "EPERM", "ENOSYS", "a thread starts", "7"]


# add_key, request_key, keyctl (the same numbers as seccomp._ARCHES, written out here).
KEY_CALLS = {"x86_64": (248, 249, 250), "aarch64": (217, 218, 219)}
ADD_KEYS = """
    import ctypes, errno, os
    libc = ctypes.CDLL(None, use_errno=True)
    add_key, request_key, keyctl = {numbers}
    USER_KEYRING, SESSION_KEYRING, JOIN_SESSION_KEYRING = -4, -3, 1
    def call(number, *args):
        ctypes.set_errno(0)
        done = libc.syscall(ctypes.c_long(number), *args) >= 0
        return "ok" if done else errno.errorcode[ctypes.get_errno()]
    print(os.getuid())
    payload = b"x" * 4000
    print(call(add_key, b"user", b"left-behind", payload, ctypes.c_size_t(len(payload)), ctypes.c_int(USER_KEYRING)))
    print(call(keyctl, ctypes.c_int(JOIN_SESSION_KEYRING), b"left-behind"))
    print(call(request_key, b"user", b"left-behind", None, ctypes.c_int(SESSION_KEYRING)))
    """


def key_users() -> dict[int, str]:
    """``/proc/key-users``: each uid the kernel holds keys for, and its counts."""
    users = {}
    for line in Path("/proc/key-users").read_text().splitlines():
        uid, _, counts = line.partition(":")
        users[int(uid)] = counts.strip()
    return users


@pytest.mark.parametrize("mode", ["namespaces (warm)", "namespaces (cold)", "rlimits"])
def test_a_program_cannot_leave_keys_in_the_kernel(mode: str) -> None:
    # Issue 32 item 6: add_key under the run's fresh uid worked, and the key (with
    # the uid's keyrings, about 16 KB) stayed in kernel memory after the run, until reboot.
    isolation = isolation_for("auto" if mode.startswith("namespaces") else "rlimits", sys.executable)
    if not isolation.seccomp:
        assert "vsock" in isolation.describe()
        return
    sandbox = Sandbox(isolation, sys.executable, warm=mode != "namespaces (cold)")
    numbers = KEY_CALLS[platform.machine()]
    result = sandbox.run(textwrap.dedent(ADD_KEYS.format(numbers=numbers)), "", Limits(timeout_s=10.0))
    assert result.ok, result
    uid, *calls = result.stdout.split()
    assert calls == ["EPERM", "EPERM", "EPERM"], result.stdout  # as Docker's default profile answers
    if isolation.fresh_uid:
        assert int(uid) not in key_users()
