"""The seccomp filter: vsock (not network-namespaced), io_uring and new user namespaces refused, everything else allowed."""

from __future__ import annotations

import errno
import platform
import sys
import textwrap

import pytest
from verl_rewards_code.sandbox import isolation_for, run_program
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
