"""The seccomp filter: vsock (not network-namespaced) and io_uring refused, everything else allowed."""

from __future__ import annotations

import errno
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
