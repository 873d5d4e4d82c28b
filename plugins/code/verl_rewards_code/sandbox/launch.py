"""Run one program once in a sandbox described by an :class:`Isolation`: the sequence.

The launcher makes the run's tree (``tree.py``) and cgroup (``cgroups.py``),
starts the in-sandbox runner (``_runner.py``) behind the isolation's command
prefix (``unshare ...``), or hands the run to a warm server (``warm.py``),
feeds its stdin and reads its stdout, stderr and status through pipes while
it runs (``pump.py``: with caps, output never touches the host's disk), waits
for it without reaping it and kills what is left (``reap.py``), turns what
came out into a result (``results.py``), and removes the cgroup and the tree.

With a mount namespace the program sees none of the tree but ``io/``
(read-only), an empty, size-limited tmpfs at the path of ``work/`` and, for
a compiled language, its compiled program at ``build/`` (read-only).
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import random
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from . import cgroups, phases, reap
from .artifacts import ArtifactSink
from .pump import STARTUP_GRACE_S, Pipes, Streams, pump
from .reap import LAUNCH_ENV, STOP_GRACE_S
from .records import MIB, Isolation, Job, Limits, RunResult
from .results import collect
from .seccomp import program_filter
from .tree import TREE_PREFIX, RunTree, remove_stale_trees, run_tree, write_file

__all__ = [
    "STARTUP_GRACE_S", "STOP_GRACE_S", "TREE_PREFIX", "Launcher", "Place", "execute", "execute_job", "inside_source",
    "prepared", "program_env", "remove_stale_trees", "runner_source", "source_digest",
]

# Fresh uids for root runs: far above any real account or subuid range.
_UID_RANGE = (2_000_000_000, 2_100_000_000)
_PROGRAM_ARGS = ("-I", "-B", "-X", "utf8")


@functools.lru_cache(maxsize=2)
def inside_source(main: str) -> str:
    """The source passed to ``python -c``: ``_inside.py`` (the shared building
    blocks) then ``main`` (``_runner.py`` or ``_server.py``), which uses them."""
    here = Path(__file__)
    return here.with_name("_inside.py").read_text(encoding="utf-8") + "\n" + here.with_name(main).read_text(encoding="utf-8")


def runner_source() -> str:
    """The source of the in-sandbox runner of one run, passed to ``python -c``."""
    return inside_source("_runner.py")


class Launcher(Protocol):
    """Starts a prepared run and pumps its pipes (the cold ``unshare`` runner, or a warm server);
    a compile run's output goes to ``sink`` as it arrives."""

    def __call__(
        self, config: dict[str, Any], stdin: bytes, limits: Limits, python: str, sink: ArtifactSink | None = None
    ) -> Streams: ...


def execute(
    isolation: Isolation, source: str, stdin: str, limits: Limits, python: str, helper_processes: int = 0
) -> RunResult:
    """Run Python ``source`` with ``stdin`` under ``limits`` (plus ``helper_processes``
    of its own machinery) by starting a fresh runner; never raises for the program's faults."""
    return execute_job(isolation, Job.python(source), stdin, limits, python, helper_processes)


def execute_job(
    isolation: Isolation,
    job: Job,
    stdin: str,
    limits: Limits,
    python: str,
    helper_processes: int = 0,
    launcher: Launcher | None = None,
) -> RunResult:
    """Run ``job`` once: a fresh tree and cgroup, then ``launcher`` (default: a
    fresh ``unshare`` runner, the cold path) starts it and pumps its pipes."""
    marks = phases.Marks("launcher")
    with prepared(isolation, job, limits, python, helper_processes, cold=launcher is None, marks=marks) as place:
        config = {**place.config, "profile": marks.on}
        sink = ArtifactSink(job.collect_into, job.artifact_bytes) if job.collect_into else None
        started = time.monotonic()
        try:
            streams = (launcher or _launch_cold)(config, stdin.encode("utf-8"), limits, python, sink)
        except BaseException:
            if sink is not None:
                sink.discard()  # a run its warm server took with it runs again, into the same directory
            raise
        elapsed = time.monotonic() - started
        marks.mark("run ended")
        if not streams.exited and place.uid is not None and not isolation.pid_namespace:
            reap.kill_uid(place.uid)
        if place.cgroup is not None:
            place.cgroup.kill_all()
        oom = place.cgroup is not None and place.cgroup.oom_killed()
        artifacts_error = sink.finish() if sink is not None else None
    marks.mark("sandbox removed")
    return collect(streams, limits, elapsed, oom, artifacts_error, marks.entries())


@dataclass(frozen=True)
class Place:
    """Where a run (or a session of runs) lives on the host: its tree, its cgroup, the
    program's uid and the runner's configuration."""

    isolation: Isolation
    python: str
    tree: RunTree
    cgroup: cgroups.RunCgroup | None
    uid: int | None
    config: dict[str, Any]

    def next_config(self, job: Job, limits: Limits, helper_processes: int) -> dict[str, Any]:
        """The configuration of another run of the same job here, under a fresh uid."""
        uid = _fresh_uid(self.isolation)
        return _run_config(self.isolation, self.tree, limits, self.python, uid, self.cgroup, job, helper_processes)


@contextmanager
def prepared(
    isolation: Isolation, job: Job, limits: Limits, python: str, helper_processes: int, *, cold: bool,
    marks: phases.Marks,
) -> Iterator[Place]:
    """A fresh tree holding ``job``'s files and a fresh cgroup, removed on exit."""
    uid = _fresh_uid(isolation)
    own = 1 + helper_processes + job.extra_tasks  # the runner, the harness's helpers, a runtime's threads
    with run_tree(uid, work=not isolation.mount, stage=cold, fast=isolation.mount) as tree:
        for name, text in job.files.items():
            write_file(tree.io_file(name), text, 0o644)
        marks.mark("tree made")
        with _cgroup(isolation, limits, own) as cgroup:
            marks.mark("cgroup made")
            config = _run_config(isolation, tree, limits, python, uid, cgroup, job, helper_processes)
            yield Place(isolation, python, tree, cgroup, uid, config)


def _fresh_uid(isolation: Isolation) -> int | None:
    return random.SystemRandom().randrange(*_UID_RANGE) if isolation.fresh_uid else None


@functools.lru_cache(maxsize=16)
def source_digest(source: str) -> str:
    """The SHA-256 of a program's source (how a warm server knows a trusted one)."""
    return hashlib.sha256(source.encode("utf-8", errors="surrogatepass")).hexdigest()


@contextmanager
def _cgroup(isolation: Isolation, limits: Limits, own: int) -> Iterator[cgroups.RunCgroup | None]:
    if isolation.cgroups is None:
        yield None
        return
    with cgroups.run_cgroup(isolation.cgroups, limits, own) as run:
        yield run


def _launch_cold(
    config: dict[str, Any], stdin: bytes, limits: Limits, python: str, sink: ArtifactSink | None = None
) -> Streams:
    """Start a fresh runner behind the isolation's command, pump its pipes up to the
    time limit, kill what is left."""
    pipes = Pipes(artifact=bool(config["collect"]))
    config["in_process"] = False  # a fresh runner executes every program
    config |= {f"{name}_fd": pipes.theirs[name] for name in ("status", "stderr", "lifeline", "artifact") if name in pipes.theirs}
    argv = [*config.pop("isolation_command"), python, "-I", "-S", "-c", runner_source(), json.dumps(config)]
    try:
        proc = subprocess.Popen(
            argv,
            stdin=pipes.theirs["stdin"],
            stdout=pipes.theirs["stdout"],
            stderr=pipes.theirs["log"],
            pass_fds=tuple(pipes.theirs[n] for n in ("status", "stderr", "lifeline", "artifact") if n in pipes.theirs),
            start_new_session=True,
            env=LAUNCH_ENV,
            cwd=config["tree_root"],
        )
    except BaseException:
        pipes.close_ours(("lifeline",))
        raise
    finally:
        pipes.close_theirs()
    streams = Streams(sink=sink)
    try:
        exit_fd = reap.pidfd(proc.pid)
        pump(pipes, stdin, limits, streams, exit_fd, lambda: reap.exited(proc))
        if not streams.exited and config["pid_namespace"]:
            reap.stop_namespace(proc)
    finally:
        # The leader is not reaped yet, so its process group id cannot
        # have been reused: this kill reaches only the sandbox.
        reap.kill_group(proc.pid)
        proc.wait()
        pipes.close_ours(("lifeline",))
    streams.returncode = proc.returncode
    return streams


def _run_config(
    isolation: Isolation,
    tree: RunTree,
    limits: Limits,
    python: str,
    uid: int | None,
    cgroup: cgroups.RunCgroup | None,
    job: Job,
    helper_processes: int = 0,
) -> dict[str, Any]:
    """The runner's configuration (JSON): where the run lives, what it runs, its limits.
    Descriptor numbers are added by whoever starts the runner."""
    # Under a user namespace the runner shares the program's uid and counts
    # against its process limit; a fresh uid counts the program alone.
    own = (1 if isolation.drop_caps else 0) + helper_processes + job.extra_tasks
    main = tree.io_file("main.py")
    # A compiled program is shown at <tree>/build (its mount point is made in the run's own root).
    build = os.path.join(tree.root, "build") if isolation.mount else job.artifacts
    places = {"io": tree.io, "build": build or ""}
    args = [part.format_map(places) for part in job.args]
    command = [part.format_map(places) for part in job.command] if job.command else [python, *_PROGRAM_ARGS, main]
    command += args
    return {
        "isolation_command": list(isolation.command),
        "tree_root": tree.root,
        "title": f"verl-rewards-code run {tree.root}",
        "pid_namespace": isolation.pid_namespace,
        "workdir": tree.work,
        "stage_dir": tree.stage,
        "io": tree.io,
        "main": main,
        "artifacts": job.artifacts if isolation.mount else None,
        "build": build,
        "command": command,
        "args": args,
        # Only a warm server's forked interpreter can run main.py without starting Python.
        "in_process": job.command is None,
        "main_digest": source_digest(job.files["main.py"]) if job.command is None and "main.py" in job.files else None,
        "collect": job.collect,
        "artifact_bytes": job.artifact_bytes,
        "merge_stderr": job.merge_stderr,
        "env": {**program_env(tree.work), **job.env},
        "mount": isolation.mount,
        "binds": [*isolation.binds, *job.binds],
        "disk_bytes": limits.disk_mb * MIB,
        # Inside a user namespace the program runs as its root (uid 0 there).
        "work_uid": uid if uid is not None else 0,
        "drop_uid": uid,
        "drop_caps": isolation.drop_caps,
        "kill_uid": not isolation.pid_namespace,
        "rlimits": limits.rlimits(extra_processes=own, address_space_mb=job.address_space_mb),
        "cgroup_procs": cgroup.procs_files if cgroup is not None else [],
        "ipc_namespace": "--ipc" in isolation.command,
        "memory_bytes": limits.memory_mb * MIB,
        "seccomp": _filter(isolation.cgroups is None) if isolation.seccomp else None,
    }


@functools.lru_cache(maxsize=2)
def _filter(refuse_memfd: bool) -> list[tuple[int, int, int, int]]:
    return program_filter(refuse_memfd=refuse_memfd)


def program_env(workdir: str) -> dict[str, str]:
    """A scrubbed environment: nothing of the caller's leaks into the program."""
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": workdir,
        "TMPDIR": workdir,
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "OMP_NUM_THREADS": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
    }
