"""The sandbox's entry points: choose the isolation once, then run programs with it."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import threading
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass

from . import compiled, languages, warm
from .isolation import Mode, SandboxUnavailable, isolation_for
from .launch import execute_job
from .records import Isolation, Job, Limits, RunResult

# Compiling gets its own budget: g++ -O2 on <bits/stdc++.h> holds about 200 MB
# and takes 2-3 s of CPU; a JVM (javac) needs its threads.
COMPILE_LIMITS = Limits(timeout_s=60.0, memory_mb=2048, max_output_bytes=64 * 1024 * 1024, max_processes=8,
                        disk_mb=256)


@dataclass(frozen=True)
class Sandbox:
    """An isolation level resolved for one interpreter, ready to run programs.

    ``language`` is what :meth:`run` runs (``python`` unless
    :meth:`for_language` chose another); ``warm`` runs programs from this
    process's warm server where the isolation allows one (``warm.py``), else
    each run starts a fresh sandbox. Safe to use from several threads.
    """

    isolation: Isolation
    python: str
    language: str = "python"
    warm: bool = True
    compile_limits: Limits = COMPILE_LIMITS

    @classmethod
    def resolve(cls, mode: Mode = "auto", python: str | None = None, *, warm: bool = True) -> Sandbox:
        """The isolation for ``mode`` (probed once per process) and ``python``
        (default: this interpreter, so programs see the same installed packages)."""
        interpreter = python or sys.executable
        return cls(isolation_for(mode, interpreter), interpreter, warm=warm)

    def for_language(self, language: str, compile_limits: Limits | None = None) -> Sandbox:
        """This sandbox running ``language`` (a name of ``languages.LANGUAGES``); raises
        :class:`~verl_rewards_code.sandbox.languages.ToolchainMissing` naming the tool
        this machine lacks."""
        if language != "python":
            languages.toolchain(language)
        return dataclasses.replace(self, language=language, compile_limits=compile_limits or self.compile_limits)

    def run(
        self,
        source: str,
        stdin: str = "",
        limits: Limits | None = None,
        *,
        helper_processes: int = 0,
        files: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> RunResult:
        """Run ``source`` (in :attr:`language`) once with ``stdin``, under ``limits``.

        ``helper_processes`` are processes ``source`` starts for its own
        machinery (the assert harness's program process) on top of
        ``limits.max_processes``. ``files`` (name: text) are shown read-only
        next to the program, and ``args`` passed to it, where ``{io}`` is their
        directory: a testlib checker gets ``files={"input.txt": ...,
        "output.txt": ..., "answer.txt": ...}`` and ``args=("{io}/input.txt",
        "{io}/output.txt", "{io}/answer.txt")``. The program's faults (exceptions, signals,
        limits, timeouts) come back in the :class:`RunResult`; a program that
        does not compile comes back with ``compile_error`` set (compiling once
        per source per worker: see :meth:`compile`).
        """
        return self._run(self.execute, source, stdin, limits, helper_processes, files, args)

    def session(self) -> Session:
        """Runs of one program (the tests of one sample) in one sandbox where the isolation
        has a warm server (a fresh process, working directory, IPC namespace and uid per
        run; see :class:`~verl_rewards_code.sandbox.warm.WarmSession`); elsewhere each run
        is a fresh sandbox. Close it (or use it as a context manager) when done."""
        return Session(self)

    def sessions(self) -> Sessions:
        """A session per thread (tests run on several threads), all closed together."""
        return Sessions(self)

    def _run(
        self,
        execute: Callable[[Job, str, Limits, int], RunResult],
        source: str,
        stdin: str,
        limits: Limits | None,
        helper_processes: int,
        files: Mapping[str, str] | None,
        args: Sequence[str],
        hold: Callable[[str], compiled.Compiled] | None = None,
    ) -> RunResult:
        limits = limits or Limits()
        extra, arguments = dict(files or {}), tuple(args)
        if self.language == "python":
            return execute(Job.python(source).with_inputs(extra, arguments), stdin, limits, helper_processes)
        cgroups = self.isolation.cgroups is not None
        if self.language not in languages.COMPILED:
            job = languages.run_job(self.language, source, None, limits, cgroups).with_inputs(extra, arguments)
            return _runtime_out_of_memory(execute(job, stdin, limits, helper_processes), self.language)
        with contextlib.ExitStack() as stack:
            program = hold(source) if hold is not None else stack.enter_context(self._compiled(source))
            if program.error is not None:
                return RunResult(stdout="", stderr=program.error, compile_error=program.error)
            job = languages.run_job(self.language, source, program.build, limits, cgroups).with_inputs(extra, arguments)
            result = execute(job, stdin, limits, helper_processes)
        return _runtime_out_of_memory(result, self.language)

    def compile(self, source: str) -> str | None:
        """Compile ``source`` now (cached per worker by its hash): None when it
        compiled (or needs no compiling), else the compiler's first lines."""
        if self.language not in languages.COMPILED:
            return None
        with self._compiled(source) as program:
            return program.error

    def execute(self, job: Job, stdin: str, limits: Limits, helper_processes: int = 0) -> RunResult:
        """Run ``job`` once: on this process's warm server when there is one, else in a fresh sandbox."""
        server = warm.server_for(self.isolation, self.python) if self.warm else None
        if server is None:
            return execute_job(self.isolation, job, stdin, limits, self.python, helper_processes)
        return warm.run_warm(server, job, stdin, limits, helper_processes)

    def _compiled(self, source: str) -> AbstractContextManager[compiled.Compiled]:
        chain = languages.toolchain(self.language)
        key = compiled.cache_key(self.language, chain.identity, source)
        return compiled.CACHE.use(key, lambda into: self._compile_into(source, into))

    def _compile_into(self, source: str, into: str) -> compiled.Failure | None:
        limits = self.compile_limits
        job = languages.compile_job(self.language, source, limits, into, self.isolation.cgroups is not None)
        result = self.execute(job, "", limits)
        if result.setup_error is not None:
            raise SandboxUnavailable(f"compiling a {self.language} program: {result.setup_error}")
        return compiled.compile_failure(result, limits.timeout_s)


class Session:
    """Runs of one program in one sandbox (:meth:`Sandbox.session`); not thread-safe."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        server = warm.server_for(sandbox.isolation, sandbox.python) if sandbox.warm else None
        self._warm = warm.WarmSession(server) if server is not None else None
        self._held = contextlib.ExitStack()
        self._programs: dict[str, compiled.Compiled] = {}

    def run(
        self,
        source: str,
        stdin: str = "",
        limits: Limits | None = None,
        *,
        helper_processes: int = 0,
        files: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> RunResult:
        """As :meth:`Sandbox.run`, in this session's sandbox."""
        return self.sandbox._run(self._execute, source, stdin, limits, helper_processes, files, args, self._hold)

    def _execute(self, job: Job, stdin: str, limits: Limits, helper_processes: int) -> RunResult:
        if self._warm is None:
            return self.sandbox.execute(job, stdin, limits, helper_processes)
        return self._warm.run(job, stdin, limits, helper_processes)

    def _hold(self, source: str) -> compiled.Compiled:
        """The compiled program of ``source``, kept in the cache while the session may run it."""
        if source not in self._programs:
            self._programs[source] = self._held.enter_context(self.sandbox._compiled(source))
        return self._programs[source]

    def close(self) -> None:
        """End the session: its sandbox is removed."""
        try:
            if self._warm is not None:
                self._warm.close()
        finally:
            self._programs.clear()
            self._held.close()

    def __enter__(self) -> Session:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class Sessions:
    """A :class:`Session` per thread (:meth:`Sandbox.sessions`), with :meth:`run` as theirs."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self._lock = threading.Lock()
        self._mine = threading.local()
        self._all: list[Session] = []

    def run(
        self,
        source: str,
        stdin: str = "",
        limits: Limits | None = None,
        *,
        helper_processes: int = 0,
        files: Mapping[str, str] | None = None,
        args: Sequence[str] = (),
    ) -> RunResult:
        """As :meth:`Sandbox.run`, in the calling thread's session."""
        session: Session | None = getattr(self._mine, "session", None)
        if session is None:
            session = self._mine.session = Session(self.sandbox)
            with self._lock:
                self._all.append(session)
        return session.run(source, stdin, limits, helper_processes=helper_processes, files=files, args=args)

    def close(self) -> None:
        """End every thread's session."""
        with self._lock:
            sessions, self._all = self._all, []
        for session in sessions:
            session.close()

    def __enter__(self) -> Sessions:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _runtime_out_of_memory(result: RunResult, language: str) -> RunResult:
    """A runtime that reports running out of its memory (a JVM's heap, ``std::bad_alloc``) hit the memory limit."""
    if result.ok or result.memory_limit_hit:
        return result
    if any(marker in result.stderr for marker in languages.OUT_OF_MEMORY[language]):
        return dataclasses.replace(result, memory_limit_hit=True)
    return result


def run_program(
    source: str,
    stdin: str = "",
    limits: Limits | None = None,
    *,
    isolation: Mode = "auto",
    python: str | None = None,
    language: str = "python",
) -> RunResult:
    """Run ``source`` once with ``stdin``, in a sandbox, under ``limits``.

    The program's faults (exceptions, signals, limits, timeouts) come back in
    the :class:`RunResult`; only an unusable sandbox raises
    (:class:`~verl_rewards_code.sandbox.isolation.SandboxUnavailable`).
    """
    return Sandbox.resolve(isolation, python).for_language(language).run(source, stdin, limits)
