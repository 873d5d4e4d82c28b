"""Compiled programs, cached per worker process by source hash, bounded in bytes.

A compile is a sandboxed run (``languages.compile_job``) whose output
directory comes back out of the sandbox, written as it arrives
(``artifacts.ArtifactSink``), into a directory of this process's cache
(``verl-rewards-code-<owner>-cache-XXXX`` under the temporary directory,
removed at exit, or by the next process when this one was killed). The same
source in the same language compiles once per worker: a sample's tests, and
the samples of a group that share an answer, reuse it; concurrent requests
for one source wait for one compile. A compiler's verdict on the source (a
program, or its error messages) is cached; a compile stopped by one of its
limits (time, memory, output) is not, since another compile with other
limits (or on a quieter machine) may finish. The least recently used entries
are removed, when no run is using them, while the cache holds more than
``MAX_ENTRIES`` entries or ``MAX_BYTES`` bytes on disk.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import re
import shutil
import tempfile
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import NamedTuple

from .artifacts import disk_bytes
from .languages import SOURCE_DIR
from .owners import owner_tag
from .records import MIB, RunResult
from .tree import TREE_PREFIX

MAX_ENTRIES = 256
# Bytes on disk of one worker's compiled programs: the compile disk limit (one compile's
# largest output) again. A C++ binary is tens of KB, a Rust one a few MB.
MAX_BYTES = 256 * MIB
ERROR_LINES = 20
ERROR_CHARS = 2000


@dataclass(frozen=True)
class Compiled:
    """A compiled program: its output directory, or why it did not compile; ``size``
    its bytes on disk; ``cached`` False for a failure that met the compile's limits."""

    build: str | None
    error: str | None = None
    size: int = 0
    cached: bool = True


class Failure(NamedTuple):
    """Why a compile failed; ``limited``: it met one of its limits (time, memory, output,
    disk), so the verdict is the limits' and not the source's alone."""

    message: str
    limited: bool = False


_DRIVER_CPU_LIMIT = re.compile(r"^[\w.+-]+: internal compiler error: CPU time limit exceeded", re.MULTILINE)


def compile_failure(result: RunResult, limits_timeout_s: float) -> Failure | None:
    """Why a compile run failed (the compiler's first lines, or the limit it hit); None if it worked."""
    if result.setup_error is not None:
        return None  # the sandbox's fault, not the program's: raised by the caller
    killed = result.signal is not None and result.signal in (9, 24)
    # g++'s driver survives its cc1plus meeting the CPU limit and reports it on a line of its own
    # ("g++: internal compiler error: CPU time limit exceeded ..."); a line the source makes the
    # compiler print (an #error) starts with the source's location instead.
    driver_saw_cpu_limit = result.exit_code != 0 and _DRIVER_CPU_LIMIT.search(result.stderr + result.stdout) is not None
    if result.timed_out or (killed and not result.memory_limit_hit) or driver_saw_cpu_limit:
        return Failure(f"compilation did not finish within {limits_timeout_s:g} s", limited=True)
    if result.memory_limit_hit:
        return Failure("compilation ran out of memory (compile_memory_mb)", limited=True)
    if result.output_limit_hit:
        return Failure("compilation wrote more than the output limit", limited=True)
    if result.artifacts_error is not None:
        return Failure(result.artifacts_error, limited=True)
    if result.exit_code == 0:
        return None
    lines = (result.stdout or result.stderr).replace(SOURCE_DIR, "").strip().splitlines()
    message = "\n".join(lines[:ERROR_LINES])[:ERROR_CHARS] or f"the compiler exited with {result.exit_code}"
    # A compiler killed by a signal (not its own error report) may not fail the next time.
    return Failure(message, limited=result.signal is not None)


class CompileCache:
    """Compiled programs by key (thread-safe), at most ``max_entries`` and ``max_bytes``
    on disk besides the entries in use."""

    def __init__(self, max_entries: int = MAX_ENTRIES, max_bytes: int = MAX_BYTES) -> None:
        self.max_entries = max_entries
        self.max_bytes = max_bytes
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, Compiled] = OrderedDict()
        self._bytes = 0
        self._pending: dict[str, threading.Event] = {}
        self._in_use: dict[str, int] = {}
        self._root: str | None = None
        self.compiles = 0  # compiles run (not cache hits), for monitoring and tests

    @property
    def bytes(self) -> int:
        """Bytes on disk of the cached programs."""
        with self._lock:
            return self._bytes

    def root(self) -> str:
        """This process's cache directory (made on first use; others may read and execute in it)."""
        with self._lock:
            if self._root is None or not os.path.isdir(self._root):
                self._root = tempfile.mkdtemp(prefix=f"{TREE_PREFIX}{owner_tag()}-cache-")
                os.chmod(self._root, 0o711)
            return self._root

    @contextmanager
    def use(self, key: str, compile_into: Callable[[str], Failure | None]) -> Iterator[Compiled]:
        """The program of ``key``, compiled by ``compile_into(directory)`` (None, or why it
        failed) unless cached; kept while the ``with`` block runs."""
        compiled = self._get(key, compile_into)
        try:
            yield compiled
        finally:
            if compiled.cached:
                with self._lock:
                    self._in_use[key] -= 1
                    if not self._in_use[key]:
                        del self._in_use[key]
                    self._evict()

    def _get(self, key: str, compile_into: Callable[[str], Failure | None]) -> Compiled:
        while True:
            with self._lock:
                if key in self._entries:
                    self._entries.move_to_end(key)
                    self._in_use[key] = self._in_use.get(key, 0) + 1
                    return self._entries[key]
                waiting = self._pending.get(key)
                if waiting is None:
                    done = self._pending[key] = threading.Event()
                    break
            waiting.wait()  # then the entry is there, or (a failure at the limits) compile again
        try:
            compiled = self._compile(key, compile_into)
            if compiled.cached:
                with self._lock:
                    self._entries[key] = compiled
                    self._bytes += compiled.size
                    self._in_use[key] = self._in_use.get(key, 0) + 1
            return compiled
        finally:
            with self._lock:
                del self._pending[key]
            done.set()

    def _compile(self, key: str, compile_into: Callable[[str], Failure | None]) -> Compiled:
        root = self.root()
        with self._lock:
            self.compiles += 1
        staging = tempfile.mkdtemp(prefix="compiling-", dir=root)
        try:
            failure = compile_into(staging)
            if failure is not None:
                return Compiled(None, failure.message, cached=not failure.limited)
            size = _disk_usage(staging)
            os.chmod(staging, 0o755)
            final = os.path.join(root, key)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(staging, final)
            return Compiled(final, size=size)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _evict(self) -> None:
        while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
            key = next((k for k in self._entries if k not in self._in_use), None)
            if key is None:
                return
            entry = self._entries.pop(key)
            self._bytes -= entry.size
            if entry.build is not None:
                shutil.rmtree(entry.build, ignore_errors=True)

    def clear(self) -> None:
        """Remove every entry and the cache directory (at exit)."""
        with self._lock:
            self._entries.clear()
            self._bytes = 0
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None


def _disk_usage(directory: str) -> int:
    """Bytes on disk of the files under ``directory`` (whole blocks), and of its directories."""
    total = 0
    for parent, _dirs, files in os.walk(directory):
        total += disk_bytes(0)
        for name in files:
            total += disk_bytes(os.lstat(os.path.join(parent, name)).st_size)
    return total


def cache_key(language: str, identity: str, source: str) -> str:
    """The cache key of ``source`` compiled by a toolchain of ``identity``."""
    digest = hashlib.sha256()
    for part in (language, identity, source):
        digest.update(part.encode("utf-8", errors="surrogatepass") + b"\0")
    return digest.hexdigest()[:40]


CACHE = CompileCache()


def _reset_in_child() -> None:
    global CACHE
    CACHE = CompileCache()  # a forked worker compiles into a cache of its own


os.register_at_fork(after_in_child=_reset_in_child)
atexit.register(lambda: CACHE.clear())
