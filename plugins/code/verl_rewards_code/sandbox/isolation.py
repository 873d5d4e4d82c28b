"""Choose the strongest isolation this machine allows, once per process.

``auto`` probes namespaces (``unshare``) with a trivial program and falls
back to rlimits alone when that fails, logging a warning that says what no
longer holds. The choice is cached per (mode, interpreter) and logged once.
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
import threading
from dataclasses import replace
from typing import Literal

from . import cgroups as cgroups_module
from .launch import execute
from .paths import blocked_dirs, root_binds, traversable_by_others
from .records import Cgroups, Isolation, Limits
from .seccomp import seccomp_available
from .tree import remove_stale_trees

Mode = Literal["auto", "namespaces", "rlimits"]
MODES: tuple[Mode, ...] = ("auto", "namespaces", "rlimits")

logger = logging.getLogger("verl_rewards_code.sandbox")

_PROBE_SOURCE = "print('ok')\n"
_PROBE_LIMITS = Limits(timeout_s=20.0)
_NAMESPACES = ("--mount", "--net", "--pid", "--ipc", "--uts", "--fork", "--kill-child", "--mount-proc")

_lock = threading.Lock()
_chosen: dict[tuple[Mode, str], Isolation] = {}


class SandboxUnavailable(RuntimeError):
    """The requested isolation cannot be had on this machine."""


def isolation_for(mode: Mode, python: str) -> Isolation:
    """The isolation to use for ``mode`` and interpreter ``python`` (probed once, cached)."""
    if mode not in MODES:
        raise ValueError(f"isolation must be one of {MODES}, not {mode!r}")
    key = (mode, python)
    with _lock:
        if key not in _chosen:
            _chosen[key] = _choose(mode, python)
        return _chosen[key]


def _choose(mode: Mode, python: str) -> Isolation:
    if not hasattr(os, "fork"):
        raise SandboxUnavailable("code_exec needs a POSIX system (fork, rlimits)")
    remove_stale_trees()
    reason = "isolation=rlimits was requested"
    if mode != "rlimits":
        candidate = namespaces_isolation(python)
        if candidate is not None:
            candidate, failure = probe_with_kernel_fallbacks(candidate, python)
        else:
            failure = "no `unshare` command on this system"
        if candidate is not None and failure is None:
            logger.info("verl-rewards-code sandbox: %s", candidate.describe())
            return candidate
        reason = str(failure)
        if mode == "namespaces":
            raise SandboxUnavailable(f"namespace isolation is unavailable: {reason}")
    fallback, failure = probe_with_kernel_fallbacks(rlimits_isolation(python), python)
    if failure is not None:
        raise SandboxUnavailable(f"the sandbox cannot run programs: {failure}")
    log = logger.info if mode == "rlimits" else logger.warning
    log("verl-rewards-code sandbox falls back to weaker isolation (%s): %s", reason, fallback.describe())
    return fallback


def namespaces_isolation(python: str) -> Isolation | None:
    """Namespaces via ``unshare``: as root without a user namespace, else inside one."""
    unshare = shutil.which("unshare")
    if not sys.platform.startswith("linux") or unshare is None:
        return None
    cgroups, seccomp = run_cgroups(), seccomp_available()
    if os.geteuid() == 0:
        # Root runs the program as a fresh uid (it must not be root), and
        # counts its processes with a pids cgroup (RLIMIT_NPROC of a fresh
        # uid holds too, but a cgroup also holds without one).
        command: tuple[str, ...] = (unshare, *_NAMESPACES)
        return Isolation(
            "namespaces", command, fresh_uid=True, mount=True, binds=tuple(root_binds(python)),
            cgroups=cgroups, seccomp=seccomp,
        )
    command = (unshare, "--user", "--map-root-user", *_NAMESPACES)
    return Isolation(
        "namespaces", command, drop_caps=True, mount=True, binds=tuple(root_binds(python)),
        cgroups=cgroups, seccomp=seccomp,
    )


def rlimits_isolation(python: str) -> Isolation:
    """Rlimits alone; as root, also a fresh uid when the interpreter and the
    temporary directory are reachable for it (no mount namespace can help),
    and run cgroups and seccomp where the kernel offers them."""
    cgroups, seccomp = run_cgroups(), seccomp_available()
    if os.geteuid() != 0:
        return Isolation("rlimits", cgroups=cgroups, seccomp=seccomp)
    fresh = not blocked_dirs(python) and traversable_by_others(tempfile.gettempdir())
    return Isolation("rlimits", fresh_uid=fresh, nproc_enforced=fresh, cgroups=cgroups, seccomp=seccomp)


_cgroups: list[Cgroups | None] = []


def run_cgroups() -> Cgroups | None:
    """Where this process makes run cgroups (found once; None, with a warning, where it cannot)."""
    if not _cgroups:
        found, reason = cgroups_module.discover()
        if found is None:
            logger.warning(
                "verl-rewards-code sandbox: no run cgroups (%s): a run's processes are counted by "
                "RLIMIT_NPROC only, its memory by RLIMIT_AS (and SysV shared memory by its IPC namespace limits) only",
                reason,
            )
        _cgroups.append(found)
    return _cgroups[0]


def probe_with_kernel_fallbacks(isolation: Isolation, python: str) -> tuple[Isolation, str | None]:
    """Probe ``isolation``; if it fails, probe it without the run cgroup, then
    also without seccomp, and keep the first that works (with a warning
    naming what was dropped and why). The first failure when none works."""
    failure = probe(isolation, python)
    if failure is None:
        return isolation, None
    lesser = [replace(isolation, cgroups=None), replace(isolation, cgroups=None, seccomp=False)]
    for candidate in lesser:
        if candidate != isolation and probe(candidate, python) is None:
            dropped = [
                what
                for what, was, now in (
                    ("the run cgroup (whole-run memory and processes)", isolation.cgroups, candidate.cgroups),
                    ("the seccomp filter (vsock)", isolation.seccomp, candidate.seccomp),
                )
                if was and not now
            ]
            logger.warning("verl-rewards-code sandbox: runs fail (%s); dropped %s", failure, " and ".join(dropped))
            return candidate, None
    return isolation, failure


def probe(isolation: Isolation, python: str) -> str | None:
    """Run a trivial program under ``isolation``: None when it works, else why not."""
    try:
        result = execute(isolation, _PROBE_SOURCE, "", _PROBE_LIMITS, python)
    except OSError as e:
        return f"{type(e).__name__}: {e}"
    if result.setup_error:
        return result.setup_error
    if not result.ok or result.stdout.strip() != "ok":
        return f"probe program failed (exit {result.exit_code}, signal {result.signal}): {result.stderr.strip()[-300:]}"
    return None
