"""Symbolic equality checks with a deadline that always holds.

SymPy can run for minutes (or forever) on adversarial input, and neither a
thread nor ``signal.alarm`` (main thread only, blind to C code) can stop it
reliably inside a reward worker. So the checks run in a child process
(``_symbolic_worker.py``), started on first use and reused; each request gets
``timeout_s`` seconds, after which the child is killed (and restarted on the
next request) and the answer is "undecided". Inputs are also kept short
(``latex_expr.MAX_CHARS``) so that most checks end in milliseconds.
"""

from __future__ import annotations

import atexit
import importlib.util
import json
import logging
import os
import select
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

logger = logging.getLogger("verl_rewards_math.symbolic")

STARTUP_TIMEOUT_S = 60.0


class SymbolicWorker:
    """A lazily started, restartable child process answering equality requests."""

    def __init__(self, startup_timeout_s: float = STARTUP_TIMEOUT_S) -> None:
        self._startup_timeout_s = startup_timeout_s
        self._lock = threading.Lock()
        self._proc: subprocess.Popen[bytes] | None = None
        self._owner = os.getpid()
        self._buffer = b""
        self.info: dict[str, Any] = {}

    def request(self, payload: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
        """Send one request; its answer, or None when the deadline passed or the worker failed."""
        with self._lock:
            try:
                proc = self._ensure_started()
                assert proc.stdin is not None
                proc.stdin.write((json.dumps(payload) + "\n").encode())
                proc.stdin.flush()
                line = self._read_line(proc, timeout_s)
            except (OSError, ValueError, TimeoutError) as e:
                logger.debug("symbolic check abandoned: %s", e)
                self._kill()
                return None
            answer: dict[str, Any] = json.loads(line)
            return answer

    def close(self) -> None:
        """Stop the worker (it is restarted on the next request)."""
        with self._lock:
            self._kill()

    def _ensure_started(self) -> subprocess.Popen[bytes]:
        if self._owner != os.getpid():
            # A forked copy of this object: the pipes belong to the parent's worker.
            self._proc, self._buffer, self._owner = None, b"", os.getpid()
        if self._proc is None or self._proc.poll() is not None:
            self._proc = subprocess.Popen(
                [sys.executable, "-c", _worker_source(), json.dumps(sys.path)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
            )
            self._buffer = b""
            self.info = json.loads(self._read_line(self._proc, self._startup_timeout_s))
        return self._proc

    def _read_line(self, proc: subprocess.Popen[bytes], timeout_s: float) -> bytes:
        assert proc.stdout is not None
        fd = proc.stdout.fileno()
        deadline = time.monotonic() + timeout_s
        while b"\n" not in self._buffer:
            remaining = deadline - time.monotonic()
            if remaining <= 0 or not select.select([fd], [], [], remaining)[0]:
                raise TimeoutError(f"no answer within {timeout_s:g} s")
            chunk = os.read(fd, 65536)
            if not chunk:
                raise OSError("the symbolic worker exited")
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        return line

    def _kill(self) -> None:
        proc, self._proc, self._buffer = self._proc, None, b""
        if proc is not None and self._owner == os.getpid():
            proc.kill()
            proc.wait()
            for stream in (proc.stdin, proc.stdout):
                if stream is not None:
                    stream.close()


def _worker_source() -> str:
    return Path(__file__).with_name("_symbolic_worker.py").read_text(encoding="utf-8")


_worker = SymbolicWorker()
atexit.register(_worker.close)


def sympy_equal(a: str, b: str, timeout_s: float) -> bool | None:
    """Whether two SymPy expression strings are equal; None when undecided in time."""
    answer = _worker.request({"op": "sympy", "a": a, "b": b}, timeout_s)
    return None if answer is None else answer.get("equal")


def math_verify_installed() -> bool:
    """Whether the optional ``math-verify`` package can be imported (without importing it)."""
    return importlib.util.find_spec("math_verify") is not None


def math_verify_equal(gold: str, pred: str, timeout_s: float) -> bool | None:
    """math-verify's verdict on two LaTeX answers; None when undecided in time."""
    answer = _worker.request(
        {"op": "math_verify", "gold": f"\\boxed{{{gold}}}", "pred": f"\\boxed{{{pred}}}"}, timeout_s
    )
    return None if answer is None else answer.get("equal")
