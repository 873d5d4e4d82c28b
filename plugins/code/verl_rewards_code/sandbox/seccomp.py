"""A seccomp filter for sandboxed programs: no vsock sockets, no io_uring (and no memfds without a cgroup).

The network namespace leaves a program only a loopback that is down, but
vsock (``AF_VSOCK``, a VM's channel to its host) is not network-namespaced.
io_uring can open sockets (``IORING_OP_SOCKET``) without the ``socket``
system call, so it is refused too. Anything else is allowed: the filter is a
few BPF instructions, built here and installed by the runner just before it
executes the program (after ``no_new_privs``).
"""

from __future__ import annotations

import errno
import platform

# (audit arch, socket, memfd_create syscall numbers) per machine; io_uring's are the same everywhere.
_ARCHES = {"x86_64": (0xC000003E, 41, 319), "aarch64": (0xC00000B7, 198, 279)}
_IO_URING = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register
AF_VSOCK = 40
_X32_BIT = 0x40000000

_LD_W_ABS, _JEQ_K, _JGE_K, _RET_K = 0x20, 0x15, 0x35, 0x06
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
# struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low 32 bits on little endian).
_NR, _ARCH_OFFSET, _ARG0 = 0, 4, 16

Instruction = tuple[int, int, int, int]


def seccomp_available() -> bool:
    """This kernel has seccomp filters and the filter knows this machine's system calls."""
    if platform.machine() not in _ARCHES:
        return False
    try:
        with open("/proc/self/status") as f:
            return any(line.startswith("Seccomp_filters:") for line in f)
    except OSError:
        return False


def vsock_filter(machine: str | None = None, refuse_memfd: bool = False) -> list[Instruction]:
    """The BPF program ``(code, jt, jf, k)``: another ABI is killed, ``socket(AF_VSOCK, ...)``
    fails with EAFNOSUPPORT, io_uring (and with ``refuse_memfd``, ``memfd_create``:
    where no cgroup can account a memfd's pages) with ENOSYS; everything else is allowed."""
    arch, socket_nr, memfd_nr = _ARCHES[machine or platform.machine()]
    refused = [*_IO_URING, *([memfd_nr] if refuse_memfd else [])]
    # Each check jumps to the ENOSYS return right after the last one; the last falls through to allow.
    checks = [(_JEQ_K, len(refused) - 1 - i, 0, nr) for i, nr in enumerate(refused)]
    checks[-1] = (_JEQ_K, 0, 1, refused[-1])
    return [
        (_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        (_JEQ_K, 1, 0, arch),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),  # i386 or x32 entry points: not for a Python program
        (_LD_W_ABS, 0, 0, _NR),
        (_JGE_K, 0, 1, _X32_BIT),
        (_RET_K, 0, 0, _RET_KILL_PROCESS),
        (_JEQ_K, 0, 3, socket_nr),
        (_LD_W_ABS, 0, 0, _ARG0),
        (_JEQ_K, 0, len(checks) + 2, AF_VSOCK),  # not vsock: on to allow
        (_RET_K, 0, 0, _RET_ERRNO | errno.EAFNOSUPPORT),
        *checks,
        (_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS),
        (_RET_K, 0, 0, _RET_ALLOW),
    ]
