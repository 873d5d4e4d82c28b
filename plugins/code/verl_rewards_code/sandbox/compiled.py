"""Compiled programs, cached per worker process by source hash.

A compile is a sandboxed run (``languages.compile_job``) whose output
directory comes back out of the sandbox into a directory of this process's
cache (``verl-rewards-code-<owner>-cache-XXXX`` under the temporary
directory, removed at exit, or by the next process when this one was
killed). The same source in the same language compiles once per worker: a
sample's tests, and the samples of a group that share an answer, reuse it;
concurrent requests for one source wait for one compile. A failure (the
compiler's first lines) is cached too. The least recently used entries
beyond ``MAX_ENTRIES`` are removed when no run is using them.
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

from .languages import SOURCE_DIR
from .launch import TREE_PREFIX
from .owners import owner_tag
from .records import RunResult

MAX_ENTRIES = 256
ERROR_LINES = 20
ERROR_CHARS = 2000


@dataclass(frozen=True)
class Compiled:
    """A compiled program: its output directory, or why it did not compile."""

    build: str | None
    error: str | None = None


_DRIVER_CPU_LIMIT = re.compile(r"^[\w.+-]+: internal compiler error: CPU time limit exceeded", re.MULTILINE)


def compile_failure(result: RunResult, limits_timeout_s: float) -> str | None:
    """Why a compile run failed (the compiler's first lines, or the limit it hit); None if it worked."""
    if result.setup_error is not None:
        return None  # the sandbox's fault, not the program's: raised by the caller
    out_of_cpu = result.signal is not None and result.signal in (9, 24) and not result.memory_limit_hit
    # g++'s driver survives its cc1plus meeting the CPU limit and reports it on a line of its own
    # ("g++: internal compiler error: CPU time limit exceeded ..."); a line the source makes the
    # compiler print (an #error) starts with the source's location instead.
    driver_saw_cpu_limit = result.exit_code != 0 and _DRIVER_CPU_LIMIT.search(result.stderr + result.stdout) is not None
    if result.timed_out or out_of_cpu or driver_saw_cpu_limit:
        return f"compilation did not finish within {limits_timeout_s:g} s"
    if result.memory_limit_hit:
        return "compilation ran out of memory (compile_memory_mb)"
    if result.output_limit_hit:
        return "compilation wrote more than the output limit"
    if result.artifacts_error is not None:
        return result.artifacts_error
    if result.exit_code == 0:
        return None
    lines = (result.stdout or result.stderr).replace(SOURCE_DIR, "").strip().splitlines()
    return "\n".join(lines[:ERROR_LINES])[:ERROR_CHARS] or f"the compiler exited with {result.exit_code}"


class CompileCache:
    """Compiled programs by key (thread-safe)."""

    def __init__(self, max_entries: int = MAX_ENTRIES) -> None:
        self.max_entries = max_entries
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, Compiled] = OrderedDict()
        self._pending: dict[str, threading.Event] = {}
        self._in_use: dict[str, int] = {}
        self._root: str | None = None
        self.compiles = 0  # compiles run (not cache hits), for monitoring and tests

    def root(self) -> str:
        """This process's cache directory (made on first use; others may read and execute in it)."""
        with self._lock:
            if self._root is None or not os.path.isdir(self._root):
                self._root = tempfile.mkdtemp(prefix=f"{TREE_PREFIX}{owner_tag()}-cache-")
                os.chmod(self._root, 0o711)
            return self._root

    @contextmanager
    def use(self, key: str, compile_into: Callable[[str], str | None]) -> Iterator[Compiled]:
        """The program of ``key``, compiled by ``compile_into(directory)`` (None, or the
        compile error) unless cached; kept while the ``with`` block runs."""
        compiled = self._get(key, compile_into)
        try:
            yield compiled
        finally:
            with self._lock:
                self._in_use[key] -= 1
                if not self._in_use[key]:
                    del self._in_use[key]
                self._evict()

    def _get(self, key: str, compile_into: Callable[[str], str | None]) -> Compiled:
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
            waiting.wait()
        try:
            compiled = self._compile(key, compile_into)
            with self._lock:
                self._entries[key] = compiled
                self._in_use[key] = self._in_use.get(key, 0) + 1
            return compiled
        finally:
            with self._lock:
                del self._pending[key]
            done.set()

    def _compile(self, key: str, compile_into: Callable[[str], str | None]) -> Compiled:
        root = self.root()
        with self._lock:
            self.compiles += 1
        staging = tempfile.mkdtemp(prefix="compiling-", dir=root)
        try:
            error = compile_into(staging)
            if error is not None:
                return Compiled(None, error)
            os.chmod(staging, 0o755)
            final = os.path.join(root, key)
            shutil.rmtree(final, ignore_errors=True)
            os.rename(staging, final)
            return Compiled(final)
        finally:
            shutil.rmtree(staging, ignore_errors=True)

    def _evict(self) -> None:
        while len(self._entries) > self.max_entries:
            key = next((k for k in self._entries if k not in self._in_use), None)
            if key is None:
                return
            entry = self._entries.pop(key)
            if entry.build is not None:
                shutil.rmtree(entry.build, ignore_errors=True)

    def clear(self) -> None:
        """Remove every entry and the cache directory (at exit)."""
        with self._lock:
            self._entries.clear()
            if self._root is not None:
                shutil.rmtree(self._root, ignore_errors=True)
                self._root = None


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
