"""The seccomp filter of sandboxed programs: no vsock, no io_uring, no new user namespaces, no kernel keys.

The network namespace leaves a program only a loopback that is down, but
vsock (``AF_VSOCK``, a VM's channel to its host) is not network-namespaced.
io_uring can open sockets (``IORING_OP_SOCKET``) without the ``socket``
system call, so it is refused too. A user namespace of its own would give the
program a root (and capabilities) there, and with them the kernel's code for
mounts, netfilter and more that an unprivileged process cannot otherwise
reach: ``unshare`` and ``clone`` with ``CLONE_NEWUSER`` fail with ``EPERM``,
and ``clone3`` (whose flags are in memory a filter cannot read) with
``ENOSYS``, which makes the C library fall back to ``clone``. The kernel's
key retention service (``add_key``, ``request_key``, ``keyctl``) is refused
with ``EPERM``, as Docker's default profile does: keys are not namespaced by
anything a run gets fresh, so a key a program added under its uid would stay
in kernel memory after the run, until reboot. Without a run cgroup to account
them, ``memfd_create`` is refused too. Anything else is allowed: the filter is
a few BPF instructions, built here and installed by the runner just before
the program starts (after ``no_new_privs``).
"""

from __future__ import annotations

import errno
import platform
from typing import NamedTuple

AF_VSOCK = 40
CLONE_NEWUSER = 0x10000000
_X32_BIT = 0x40000000


class _Arch(NamedTuple):
    audit: int
    socket: int
    memfd_create: int
    clone: int
    unshare: int
    keys: tuple[int, ...]  # add_key, request_key, keyctl


_ARCHES = {
    "x86_64": _Arch(audit=0xC000003E, socket=41, memfd_create=319, clone=56, unshare=272, keys=(248, 249, 250)),
    "aarch64": _Arch(audit=0xC00000B7, socket=198, memfd_create=279, clone=220, unshare=97, keys=(217, 218, 219)),
}
_IO_URING = (425, 426, 427)  # io_uring_setup, io_uring_enter, io_uring_register: the same everywhere
_CLONE3 = 435

_LD_W_ABS, _JEQ_K, _JGE_K, _JSET_K, _RET_K = 0x20, 0x15, 0x35, 0x45, 0x06
_RET_ALLOW, _RET_KILL_PROCESS, _RET_ERRNO = 0x7FFF0000, 0x80000000, 0x00050000
# struct seccomp_data: nr at 0, arch at 4, args[0] at 16 (its low 32 bits on little endian).
_NR, _ARCH_OFFSET, _ARG0 = 0, 4, 16

Instruction = tuple[int, int, int, int]
# A jump target: the next instruction (0) or a label.
_Target = int | str


def seccomp_available() -> bool:
    """This kernel has seccomp filters and the filter knows this machine's system calls."""
    if platform.machine() not in _ARCHES:
        return False
    try:
        with open("/proc/self/status") as f:
            return any(line.startswith("Seccomp_filters:") for line in f)
    except OSError:
        return False


def program_filter(machine: str | None = None, refuse_memfd: bool = False) -> list[Instruction]:
    """The BPF program ``(code, jt, jf, k)``: another ABI is killed; ``socket(AF_VSOCK, ...)``
    fails with EAFNOSUPPORT; ``unshare``/``clone`` with CLONE_NEWUSER, and the key system
    calls (``add_key``, ``request_key``, ``keyctl``), with EPERM; ``clone3``,
    io_uring (and with ``refuse_memfd``, ``memfd_create``: where no cgroup can account a
    memfd's pages) with ENOSYS; everything else is allowed (the last instruction)."""
    arch = _ARCHES[machine or platform.machine()]
    enosys = [_CLONE3, *_IO_URING, *([arch.memfd_create] if refuse_memfd else [])]
    source: list[tuple[int, _Target, _Target, int] | str] = [
        (_LD_W_ABS, 0, 0, _ARCH_OFFSET),
        (_JEQ_K, 0, "kill", arch.audit),
        (_LD_W_ABS, 0, 0, _NR),
        (_JGE_K, "kill", 0, _X32_BIT),  # x32 system calls of x86_64: not for our programs
        (_JEQ_K, "socket", 0, arch.socket),
        (_JEQ_K, "newuser", 0, arch.unshare),
        (_JEQ_K, "newuser", 0, arch.clone),
        *[(_JEQ_K, "eperm", 0, nr) for nr in arch.keys],
        *[(_JEQ_K, "enosys", 0, nr) for nr in enosys],
        (_RET_K, 0, 0, _RET_ALLOW),
        "socket",
        (_LD_W_ABS, 0, 0, _ARG0),
        (_JEQ_K, "eafnosupport", "allow", AF_VSOCK),
        "newuser",
        (_LD_W_ABS, 0, 0, _ARG0),
        (_JSET_K, "eperm", "allow", CLONE_NEWUSER),
        "kill",
        (_RET_K, 0, 0, _RET_KILL_PROCESS),  # i386 or x32 entry points
        "eafnosupport",
        (_RET_K, 0, 0, _RET_ERRNO | errno.EAFNOSUPPORT),
        "eperm",
        (_RET_K, 0, 0, _RET_ERRNO | errno.EPERM),
        "enosys",
        (_RET_K, 0, 0, _RET_ERRNO | errno.ENOSYS),
        "allow",
        (_RET_K, 0, 0, _RET_ALLOW),
    ]
    return _assemble(source)


# The name the filter had when it refused vsock and io_uring only.
vsock_filter = program_filter


def _assemble(source: list[tuple[int, _Target, _Target, int] | str]) -> list[Instruction]:
    """Resolve labels (the strings) into BPF's forward jump offsets."""
    labels: dict[str, int] = {}
    instructions: list[tuple[int, _Target, _Target, int]] = []
    for item in source:
        if isinstance(item, str):
            labels[item] = len(instructions)
        else:
            instructions.append(item)

    def offset(target: _Target, at: int) -> int:
        if isinstance(target, int):
            return target
        jump = labels[target] - at - 1
        if not 0 <= jump <= 255:
            raise ValueError(f"seccomp filter: jump to {target!r} out of range")
        return jump

    return [(code, offset(jt, at), offset(jf, at), k) for at, (code, jt, jf, k) in enumerate(instructions)]
