"""Symbolic equality checks with a deadline that always holds.

SymPy can run for minutes (or forever) on adversarial input, and neither a
thread nor ``signal.alarm`` (main thread only, blind to C code) can stop it
reliably inside a reward worker. So the checks run in a child process
(``_symbolic_worker.py``), started on first use and reused. A request may
take ``timeout_s`` seconds waiting for its turn (one request at a time) and
for the answer; the child's start (importing SymPy and math-verify, ~1-2 s)
is not counted: it is bounded by ``STARTUP_TIMEOUT_S`` alone, so the same
answer gets the same verdict whether or not the child had to (re)start
first. Past the deadline a request is "undecided" and the child, which was
computing, is killed; the next request restarts it. Inputs are also kept
short (``latex_expr.MAX_CHARS``) so that most checks end in milliseconds.
"""

from __future__ import annotations

import atexit
import functools
import importlib.util
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from .latex_expr import FUNCTIONS

logger = logging.getLogger("verl_rewards_math.symbolic")

# A child that has not started (imported SymPy) by then is killed and replaced.
STARTUP_TIMEOUT_S = 60.0
_FUNCTION_NAMES = json.dumps(sorted(set(FUNCTIONS.values())))


class SymbolicWorker:
    """A lazily started, restartable child process answering equality requests.

    ``command`` gives the child's argv when it (re)starts (default: this plugin's
    ``_symbolic_worker.py``); any child speaking the same protocol works (a
    ``{"ready": true}`` line once ready, then one JSON answer line carrying the
    request's ``id`` per JSON request line).
    """

    def __init__(
        self, startup_timeout_s: float = STARTUP_TIMEOUT_S, command: Callable[[], list[str]] | None = None
    ) -> None:
        self._startup_timeout_s = startup_timeout_s
        self._command = command or _worker_command
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()
        self._buffer = b""
        self._ready = False
        self._started_at = 0.0
        self._last_id = 0

    def request(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
        """Send one request; its answer, or None when the deadline passed or the worker failed.

        ``timeout_s`` bounds waiting for another thread's request and for the
        answer; a (re)start of the child in between is not counted.
        """
        began = time.monotonic()
        if timeout_s <= 0 or not self._lock.acquire(timeout=timeout_s):
            logger.debug("symbolic check abandoned: the worker stayed busy for %g s", timeout_s)
            return None
        try:
            return self._exchange(payload, timeout_s - (time.monotonic() - began))
        finally:
            self._lock.release()

    def start(self) -> bool:
        """Start the child now (if it is not running) and wait until it is ready; whether it is."""
        if not self._lock.acquire(timeout=self._startup_timeout_s):
            return False
        try:
            self._ensure_ready()
            return True
        except (OSError, ValueError, TimeoutError) as e:
            logger.debug("symbolic worker did not start: %s", e)
            self._kill()
            return False
        finally:
            self._lock.release()

    def close(self) -> None:
        """Stop the worker (it is restarted on the next request)."""
        with self._lock:
            self._kill()

    def _exchange(self, payload: dict[str, Any], budget_s: float) -> dict[str, Any] | None:
        try:
            proc = self._ensure_ready()
            deadline = time.monotonic() + budget_s
            assert proc.stdin is not None
            self._last_id += 1
            request_id = self._last_id
            proc.stdin.write((json.dumps({**payload, "id": request_id}) + "\n").encode())
            proc.stdin.flush()
            answer = json.loads(self._read_line(proc, deadline))
            if not isinstance(answer, dict) or answer.get("id") != request_id:
                raise ValueError(f"reply {str(answer)[:80]!r} does not answer request {request_id}")
            return answer
        except (OSError, ValueError, TimeoutError) as e:
            logger.debug("symbolic check abandoned: %s", e)
            self._kill()
            return None
        except BaseException:
            # E.g. verl-rewards' SampleTimeout, raised into this thread at any
            # point: the answer to this request may still arrive, and must not
            # be read as the answer to the next one.
            self._kill()
            raise

    def _ensure_ready(self) -> subprocess.Popen[bytes]:
        if self._owner != os.getpid():
            # A forked copy of this object: the pipes belong to the parent's worker.
            self._proc, self._buffer, self._ready, self._owner = None, b"", False, os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            self._kill()
            self._proc = subprocess.Popen(
                self._command(),
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            self._started_at = time.monotonic()
        if not self._ready:
            hello = json.loads(self._read_line(self._proc, self._started_at + self._startup_timeout_s))
            if not isinstance(hello, dict) or hello.get("ready") is not True:
                raise ValueError(f"unexpected greeting from the symbolic worker: {str(hello)[:80]!r}")
            self._ready = True
        return self._proc

    def _read_line(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError("no answer by the deadline")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise OSError("the symbolic worker exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _kill(self) -> None:
        proc, self._proc, self._buffer, self._ready = self._proc, None, b"", False
        if proc is not None and self._owner == os.getpid():
            proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()


def _worker_source() -> str:
    return Path(__file__).with_name("_symbolic_worker.py").read_text(encoding="utf-8")


def _worker_command() -> list[str]:
    return [sys.executable, "-c", _worker_source(), json.dumps(sys.path), _FUNCTION_NAMES]


_worker = SymbolicWorker()
atexit.register(_worker.close)


def ensure_started() -> bool:
    """Start the symbolic child if it is not running, waiting (at most ``STARTUP_TIMEOUT_S``) until it is ready."""
    return _worker.start()


def sympy_equal(a: str, b: str, timeout_s: float) -> bool | None:
    """Whether two SymPy expression strings are equal; None when undecided in time."""
    answer = _worker.request({"op": "sympy", "a": a, "b": b}, timeout_s)
    return None if answer is None else answer.get("equal")


@functools.cache
def math_verify_installed() -> bool:
    """Whether the optional ``math-verify`` package can be imported (without importing it)."""
    return importlib.util.find_spec("math_verify") is not None


def math_verify_equal(pairs: list[tuple[str, str]], timeout_s: float) -> bool | None:
    """Whether math-verify finds any ``(gold, pred)`` pair of LaTeX answers equal; None when undecided in time."""
    boxed = [[f"\\boxed{{{gold}}}", f"\\boxed{{{pred}}}"] for gold, pred in pairs]
    answer = _worker.request({"op": "math_verify", "pairs": boxed}, timeout_s)
    return None if answer is None else answer.get("equal")
