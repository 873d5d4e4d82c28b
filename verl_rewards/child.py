"""A warm child process that answers JSON lines, under a deadline that always holds.

Model output reaches evaluators that can compute for minutes in one C call
holding the GIL (SymPy reading ``9**9**9**9``, math-verify, a task's scorer):
no signal, thread or watchdog of the scoring process can stop them, and a
watchdog thread needs the GIL they hold. Such work runs here instead. A
:class:`JsonLineWorker` keeps warm child processes, each running a named
importable handler, and sends each request to one of them with a deadline.
A child that is late, dies, closes its reply channel, or sends a reply too
long or garbled is killed with its process group (and, when started under a
launch ``prefix`` such as ``unshare --pid --fork``, everything in it) and a
replacement starts in the background; the caller gets a :class:`ChildError`
saying why, in time.

Parent side::

    worker = JsonLineWorker("my_plugin._checks:Checks", init={"tolerance": 1e-9})
    try:
        reply = worker.request({"a": answer, "b": reference}, timeout_s=2.0)
    except ChildError as e:  # e.reason: late, died, ...; the answer's 0, with the reason
        ...

Child side: ``my_plugin._checks.Checks(init)`` is built once per child (its
imports and warm-up are the child's start, never charged to a request) and
the object it returns is called with each request (a JSON value) and returns
the reply (a JSON value). An exception it raises is that request's
``ChildError`` (``raised``), and the child goes on. The handler may print:
fd 1 and ``sys.stdout`` go to stderr (:func:`reply_channel`), whose end a
``ChildError`` for a dead child quotes, and stdin is ``/dev/null``.

Deadlines: ``request(payload, timeout_s)`` gives the handler ``timeout_s``
once a ready child has the request. Getting one (a free child, or a start)
is bounded by ``startup_timeout_s`` and not charged to the request, so an
answer gets the same verdict whether or not a child had to start first.
Inside a scored reward call the whole request also ends
:data:`RETURN_MARGIN_S` before :func:`verl_rewards.time_left` runs out, so
the reward's verdict comes back before its sample would count as a timeout.
``request(payload, timeout_s, cpu_s=...)`` also ends the request once the
child has used ``cpu_s`` seconds of CPU time on it (read from ``/proc`` every
:data:`CPU_POLL_S`): a budget that a loaded machine does not shrink, so the
same answer gets the same verdict under load, with ``timeout_s`` as the wall
clock's outer bound (:meth:`JsonLineWorker.evaluate_on_cpu` for a model's answer).

The children die with the process that started them (:func:`exit_with_parent`:
the kernel's parent-death signal, which holds in a C call too), are started by
one long-lived thread (that signal follows the starting *thread*), are
forgotten by a forked copy of the parent (which starts its own), and are
stopped at exit. A worker is safe to share between threads: each request has
a child of its own, up to ``max_children`` at once.

Wire (one JSON object per line each way): the child reads a set-up line
(handler, init, parent, memory cap) and answers ``{"ready": true}`` once
built, then reads ``{"id": n, "request": ...}`` and answers ``{"id": n,
"reply": ...}`` or ``{"id": n, "error": "Type: message"}`` on a private copy
of its stdout.
"""

from __future__ import annotations

import atexit
import contextlib
import ctypes
import importlib
import json
import logging
import math
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import threading
import time
import weakref
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Future
from pathlib import Path
from typing import IO, Any, Final, NamedTuple, TextIO

from .errors import ChildError
from .limits import time_left

__all__ = ["RETURN_MARGIN_S", "ChildError", "Evaluation", "JsonLineWorker", "exit_with_parent",
           "reply_channel", "serve", "spawn", "stdout_diverted"]

logger = logging.getLogger("verl_rewards.child")

RETURN_MARGIN_S: Final = 0.5  # a request inside a reward call ends this long before its time is up
STARTUP_TIMEOUT_S: Final = 60.0  # importing and warming a handler (SymPy, a plugin)
MAX_REPLY_BYTES: Final = 1 << 20
EXIT_GRACE_S: Final = 5.0  # a child whose replies ended should have exited by then
STOP_GRACE_S: Final = 10.0  # for a launch prefix (unshare) to exit once what it runs is killed
REAP_TIMEOUT_S: Final = 30.0
CANCEL_POLL_S: Final = 0.25
CPU_POLL_S: Final = 0.05  # how often a request with a CPU budget reads its child's CPU time
TAIL_BYTES: Final = 2000
MAX_ERROR_CHARS: Final = 1000
_PR_SET_PDEATHSIG: Final = 1
_CLOCK_TICKS: Final = os.sysconf("SC_CLK_TCK")
_BOOT: Final = ("import json, sys; sys.path[:] = json.loads(sys.argv[1]); "
                "from verl_rewards.child import serve; serve()")


# --------------------------------------------------------------- the child side


def reply_channel() -> TextIO:
    """The process's stdout, kept for replies alone, for the rest of the process: fd 1
    and ``sys.stdout`` now go to stderr, so nothing else printed (by Python or by C)
    can be read as a reply."""
    sys.stdout.flush()
    return _aside(os.dup(1))


@contextlib.contextmanager
def stdout_diverted() -> Iterator[TextIO]:
    """Within the block the yielded handle is the only writer to the process's stdout:
    fd 1 and ``sys.stdout`` go to stderr. Both are restored after."""
    previous = sys.stdout
    previous.flush()
    saved = os.dup(1)
    replies = _aside(os.dup(saved))
    try:
        yield replies
    finally:
        with contextlib.suppress(OSError, ValueError):
            replies.close()
        sys.stderr.flush()
        os.dup2(saved, 1)
        os.close(saved)
        sys.stdout = previous


def _aside(fd: int) -> TextIO:
    """A text handle on ``fd`` (a copy of stdout); fd 1 and ``sys.stdout`` now go to stderr."""
    replies = os.fdopen(fd, "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return replies


def _request_channel() -> IO[bytes]:
    """The process's stdin, kept for requests alone; fd 0 is ``/dev/null`` now, so a
    handler that reads stdin cannot take a request."""
    requests = os.fdopen(os.dup(0), "rb")
    devnull = os.open(os.devnull, os.O_RDONLY)
    os.dup2(devnull, 0)
    os.close(devnull)
    return requests


def exit_with_parent(parent: int | None = None) -> None:
    """End this process when its parent ends, even in the middle of a C call.

    On Linux the kernel sends SIGKILL (``PR_SET_PDEATHSIG``; ``parent``, the pid
    expected, catches a parent that ended before the signal was armed); elsewhere a
    thread looks once a second (which needs the GIL)."""
    expected = os.getppid() if parent is None else parent
    if _arm_parent_death_signal():
        if os.getppid() != expected:
            os._exit(0)
        return

    def watch() -> None:
        while os.getppid() == expected:
            time.sleep(1.0)
        os._exit(0)

    threading.Thread(target=watch, name="exit-with-parent", daemon=True).start()


def _arm_parent_death_signal() -> bool:
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        return int(libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGKILL), 0, 0, 0)) == 0
    except (OSError, AttributeError):
        return False


def _load_handler(name: str) -> Callable[[Any], Callable[[Any], Any]]:
    module, _, attribute = name.partition(":")
    if not module or not attribute:
        raise ValueError(f"handler {name!r} is not 'module:name'")
    target: Callable[[Any], Callable[[Any], Any]] = getattr(importlib.import_module(module), attribute)
    return target


def serve() -> None:
    """The child's main loop (what a :class:`JsonLineWorker` starts): set up, build the
    handler, say ready, answer each request until stdin closes."""
    requests = _request_channel()
    replies = reply_channel()
    setup = json.loads(requests.readline())
    exit_with_parent(setup.get("parent"))
    if setup.get("memory_bytes"):
        _cap_memory(int(setup["memory_bytes"]))
    handler = _load_handler(setup["handler"])(setup.get("init"))
    _say(replies, json.dumps({"ready": True}))
    for line in requests:
        _say(replies, _answer(handler, line))


def _answer(handler: Callable[[Any], Any], line: bytes) -> str:
    request_id = None
    try:
        frame = json.loads(line)
        request_id = frame["id"]
        return json.dumps({"id": request_id, "reply": handler(frame["request"])})
    except Exception as e:  # noqa: BLE001 - the request's answer; the child goes on
        return json.dumps({"id": request_id, "error": f"{type(e).__name__}: {e}"[:MAX_ERROR_CHARS]})


def _say(replies: TextIO, text: str) -> None:
    replies.write(text + "\n")
    replies.flush()


def _cap_memory(limit: int) -> None:
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    except (ValueError, OSError):
        pass  # a lower hard limit is already in force


# -------------------------------------------------------------- the parent side


class _Tail:
    """The last bytes a child wrote to stderr, read by a thread of its own (a pipe
    nobody reads would block the child once full)."""

    def __init__(self, stream: IO[bytes], limit: int) -> None:
        self._data = bytearray()
        self._limit = limit
        self._cut = False  # bytes were dropped from the front: the first line is partial
        self._lock = threading.Lock()
        self._ended = threading.Event()
        threading.Thread(target=self._drain, args=(stream,), name="child-stderr", daemon=True).start()

    def _drain(self, stream: IO[bytes]) -> None:
        try:
            with contextlib.suppress(OSError, ValueError), stream:
                for chunk in iter(lambda: stream.read1(65536), b""):  # type: ignore[attr-defined]
                    with self._lock:
                        self._data += chunk
                        if len(self._data) > self._limit:
                            del self._data[: len(self._data) - self._limit]
                            self._cut = True
        finally:
            self._ended.set()

    def text(self, wait_s: float = 0.0) -> str:
        """What it wrote last, in whole lines, once its stderr ended (within ``wait_s``: a
        process it started may hold the pipe)."""
        self._ended.wait(wait_s)
        with self._lock:
            text = self._data.decode("utf-8", "replace")
            return text.partition("\n")[2] if self._cut else text


class _Spawner:
    """Starts every child from one long-lived thread: Linux sends the parent-death
    signal when the *thread* that started a child ends, and a reward's thread may not
    live long (an audit's threads, a pool's)."""

    def __init__(self) -> None:
        self._jobs: queue.SimpleQueue[tuple[list[str], dict[str, Any], Future[subprocess.Popen[bytes]]]] = \
            queue.SimpleQueue()
        self._thread: threading.Thread | None = None
        self._lock = threading.Lock()

    def popen(self, argv: list[str], timeout_s: float, **options: Any) -> subprocess.Popen[bytes]:
        with self._lock:
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="child-spawner", daemon=True)
                self._thread.start()
        started: Future[subprocess.Popen[bytes]] = Future()
        self._jobs.put((argv, options, started))
        try:
            return started.result(timeout=max(timeout_s, 1.0))
        except BaseException:
            # Interrupted or late: whatever starts now is nobody's, and must not live on.
            started.add_done_callback(_kill_orphan)
            raise

    def _run(self) -> None:
        while True:
            argv, options, started = self._jobs.get()
            if not started.set_running_or_notify_cancel():
                continue
            try:
                started.set_result(subprocess.Popen(argv, **{
                    "stdin": subprocess.PIPE, "stdout": subprocess.PIPE, "stderr": subprocess.PIPE,
                    **options, "start_new_session": True}))
            except BaseException as e:  # noqa: BLE001 - handed to the caller
                started.set_exception(e)


def spawn(argv: list[str], timeout_s: float, **options: Any) -> subprocess.Popen[bytes]:
    """Start ``argv`` in a session of its own from this process's one spawner thread, so
    that a process arming :func:`exit_with_parent` dies with this process, not with the
    calling thread; ``options`` go to ``subprocess.Popen`` (default: pipes for stdin,
    stdout and stderr). One that starts after ``timeout_s`` is killed, never left running."""
    return _SPAWNER.popen(argv, timeout_s, **options)


def _kill_orphan(started: Future[subprocess.Popen[bytes]]) -> None:
    if started.exception() is not None:
        return
    proc = started.result()
    if proc.stdin is not None and proc.stdout is not None and proc.stderr is not None:
        _Child(proc, contained=False).kill(wait=False)
        return
    with contextlib.suppress(ProcessLookupError, PermissionError):  # spawn() without pipes
        os.killpg(proc.pid, signal.SIGKILL)
    threading.Thread(target=proc.wait, name="child-reaper", daemon=True).start()


class _Child:
    """One child process: its pipes, the reply bytes read ahead, its stderr's end."""

    def __init__(self, proc: subprocess.Popen[bytes], contained: bool, tail_bytes: int = TAIL_BYTES) -> None:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        self.proc = proc
        self.contained = contained
        os.set_blocking(proc.stdin.fileno(), False)
        self._readable, self._writable = select.poll(), select.poll()
        self._readable.register(proc.stdout.fileno(), select.POLLIN | select.POLLERR | select.POLLHUP)
        self._writable.register(proc.stdin.fileno(), select.POLLOUT | select.POLLERR | select.POLLHUP)
        self.buffer = bytearray()
        self.tail = _Tail(proc.stderr, tail_bytes)
        self.last_id = 0
        self.generation = 0

    def send(self, line: str, deadline: float, cancel: threading.Event | None, what: _Failing) -> None:
        """Write one line (JSON, no newline in it) to the child, under the deadline."""
        assert self.proc.stdin is not None
        data = memoryview((line + "\n").encode())
        fd = self.proc.stdin.fileno()
        while data:
            try:
                written = os.write(fd, data)  # non-blocking: a full pipe waits below, under the deadline
            except BlockingIOError:
                self._wait_for(self._writable, deadline, cancel, what)
                continue
            except (BrokenPipeError, ConnectionResetError):
                raise what.ended(self, deadline) from None
            data = data[written:]

    def read_line(self, deadline: float, cancel: threading.Event | None, what: _Failing,
                  limit: int, cpu_by: float | None = None) -> bytes:
        """One reply line; ``cpu_by``: the child's CPU time (:meth:`cpu_s`) that ends the wait too."""
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        while (end := self.buffer.find(b"\n")) < 0:
            if len(self.buffer) > limit:
                raise what.error("oversized", f"a reply longer than {limit} bytes")
            self._wait_for(self._readable, deadline, cancel, what, None if cpu_by is None else (self, cpu_by))
            chunk = os.read(fd, 65536)
            if not chunk:
                raise what.ended(self, deadline)
            self.buffer += chunk
        if end > limit:
            raise what.error("oversized", f"a reply longer than {limit} bytes")
        line = bytes(self.buffer[:end])
        del self.buffer[: end + 1]
        return line

    @staticmethod
    def _wait_for(poller: select.poll, deadline: float, cancel: threading.Event | None, what: _Failing,
                  cpu: tuple[_Child, float] | None = None) -> None:
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                raise what.late()
            if cancel is not None and cancel.is_set():
                raise what.error("cancelled", "the wait was cancelled")
            if cpu is not None and cpu[0].cpu_s() >= cpu[1]:
                raise what.error("late", f"no answer within {what.cpu_budget_s:g} s of CPU time")
            step = min(left, CANCEL_POLL_S) if cancel is not None else left
            if cpu is not None:
                step = min(step, CPU_POLL_S)
            if poller.poll(math.ceil(step * 1000)):
                return

    def cpu_s(self) -> float:
        """The CPU time (user and system, all threads) the child has used so far; 0 when it
        cannot be read (it is gone: its wait ends by its pipe)."""
        try:
            with open(f"/proc/{self.proc.pid}/stat", "rb") as stat:
                fields = stat.read().rsplit(b")", 1)[1].split()
        except (OSError, IndexError):
            return 0.0
        return (int(fields[11]) + int(fields[12])) / _CLOCK_TICKS

    def alive(self) -> bool:
        """Still running (looked at without reaping it: its group id stays ours to signal)."""
        return self.proc.returncode is None and _exit_status(self.proc.pid) is None

    def kill(self, wait: bool) -> None:
        """Kill the child and what it started: its process group (its own session; the
        group's id is its pid, which cannot be reused while it is unreaped, and it is
        reaped only here); under a launch prefix, what the prefix runs first, then the
        prefix once it has exited or the grace ended."""
        if self.proc.returncode is None:
            if self.contained:
                _kill_only_child(self.proc.pid)
                _wait_unreaped(self.proc.pid, STOP_GRACE_S)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        if wait:
            self.reap()
        else:
            threading.Thread(target=self.reap, name="child-reaper", daemon=True).start()

    def reap(self) -> None:
        try:
            self.proc.wait(timeout=REAP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            logger.warning("child process %d did not end %g s after SIGKILL", self.proc.pid, REAP_TIMEOUT_S)
        for stream in (self.proc.stdin, self.proc.stdout):
            if stream is not None:
                with contextlib.suppress(OSError):
                    stream.close()

    def forget(self) -> None:
        """In a forked copy of the parent: never signal, wait for or close it. Its pipes
        are left open, held here for good: closing them could block on a lock the
        parent's stderr reader held at the fork, and a collected file object would
        close a descriptor number reused by then. They close on exec and at exit."""
        _FORGOTTEN.append(self)


def _kill_only_child(pid: int) -> None:
    """SIGKILL the one child of ``pid`` (a launch prefix's: ``unshare``'s first process of
    the namespace) through a pidfd opened while it was listed as that child, so a reused
    pid is never signalled."""
    listing = Path(f"/proc/{pid}/task/{pid}/children")
    try:
        (child,) = listing.read_text().split()
        pidfd = os.pidfd_open(int(child))
    except (OSError, ValueError):
        return  # gone already (or not started)
    try:
        if listing.read_text().split() == [child]:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
    except OSError:
        pass  # exited meanwhile
    finally:
        os.close(pidfd)


def _exit_status(pid: int) -> int | None:
    """A child's exit code (negative: the signal that ended it) without reaping it; None
    while it runs."""
    try:
        found = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return 0  # reaped already
    if found is None:
        return None
    return -found.si_status if found.si_code in (os.CLD_KILLED, os.CLD_DUMPED) else found.si_status


def _reap_later(child: _Child) -> None:
    child.kill(wait=False)


def _wait_unreaped(pid: int, timeout_s: float) -> None:
    """Wait until ``pid`` (a child of ours) exits or ``timeout_s`` passes, leaving it unreaped."""
    try:
        pidfd = os.pidfd_open(pid)
    except OSError:
        return  # gone already
    try:
        poller = select.poll()
        poller.register(pidfd, select.POLLIN)
        poller.poll(timeout_s * 1000)
    finally:
        os.close(pidfd)


class _Failing:
    """Builds the ChildError of one request (or start), naming its worker and its bound."""

    def __init__(self, worker: str, doing: str, bound: str, exit_grace_s: float, starting: bool = False) -> None:
        self.worker, self.doing, self.bound, self.exit_grace_s = worker, doing, bound, exit_grace_s
        self.starting = starting
        self.cpu_budget_s = 0.0

    def error(self, reason: str, detail: str, returncode: int | None = None, last_words: str = "") -> ChildError:
        return ChildError(self.worker, reason, f"{detail} ({self.doing})", returncode, last_words, self.starting)

    def late(self) -> ChildError:
        return self.error("late", f"no answer {self.bound}")

    def ended(self, child: _Child, deadline: float) -> ChildError:
        """Its replies ended: it died, or closed its reply channel and lives on."""
        _wait_unreaped(child.proc.pid, max(0.0, min(self.exit_grace_s, deadline - time.monotonic())))
        code = _exit_status(child.proc.pid)
        if code is None:
            return self.error("silent", "the child closed its reply channel but did not exit",
                              last_words=child.tail.text())
        words = child.tail.text(wait_s=0.5)
        shown = words.strip()[-300:]
        return self.error("died", f"the child exited with code {code}"
                          + (f"; its last words: {shown}" if shown else ""), code, words)


class Evaluation(NamedTuple):
    """What a child made of a model's answer: the handler's ``reply``, or the ``ChildError``
    that ``cut`` it short (late, died, ...), which is that answer's 0; ``why`` says so."""

    reply: Any = None
    cut: ChildError | None = None

    @property
    def why(self) -> str:
        """``reason: detail`` of the cut, for the answer's extra info; "" when there is none."""
        return "" if self.cut is None else f"{self.cut.reason}: {self.cut.detail}"


class JsonLineWorker:
    """Warm child processes running ``handler`` (``"module:name"``; ``name(init)`` is built
    once per child and called with each request), answering one request each at a time.

    ``max_children`` children at most run at once (a request waits for one, within its
    start bound, beyond that); ``spares`` more are kept started and idle, in the
    background, once requests come: a child killed for a late answer is then replaced at
    once, instead of its replacement's start (1-5 s for SymPy or reasoning-gym) being
    waited for by the next request, which could run out of time and fail. Each costs
    the memory of one more child. ``memory_bytes`` caps each child's address space;
    ``prefix`` is a command the child runs under (e.g. ``unshare --pid --fork
    --kill-child``: killing the child then kills what it runs first, and the prefix
    is given ``STOP_GRACE_S`` to exit). ``name`` names the worker in errors, which quote the
    last ``stderr_tail_bytes`` of a dead child's stderr (whole lines).
    """

    def __init__(self, handler: str, *, init: Any = None, name: str | None = None,
                 startup_timeout_s: float = STARTUP_TIMEOUT_S, max_children: int = 4, spares: int = 0,
                 max_reply_bytes: int = MAX_REPLY_BYTES, memory_bytes: int | None = None,
                 prefix: Sequence[str] = (), exit_grace_s: float = EXIT_GRACE_S,
                 stderr_tail_bytes: int = TAIL_BYTES) -> None:
        if max_children < 1:
            raise ValueError(f"max_children must be at least 1, not {max_children}")
        if spares < 0:
            raise ValueError(f"spares must be at least 0, not {spares}")
        self.handler = handler
        self.name = name or f"child {handler}"
        self.startup_timeout_s = startup_timeout_s
        self.max_children = max_children
        self.spares = spares
        self.max_reply_bytes = max_reply_bytes
        self.exit_grace_s = exit_grace_s
        self.stderr_tail_bytes = stderr_tail_bytes
        self._setup = json.dumps({"handler": handler, "init": init, "memory_bytes": memory_bytes})
        self._prefix = tuple(prefix)
        self._reset()
        _WORKERS.add(self)

    def _reset(self) -> None:
        self._changed = threading.Condition(threading.Lock())
        self._idle: list[_Child] = []
        self._busy: set[_Child] = set()
        self._starting = 0  # starts for a request, in progress
        self._warming = 0  # replacements starting in the background
        self._claims = 0  # requests waiting for a warming replacement
        self._generation = 0

    def request(self, payload: Any, timeout_s: float, *, cancel: threading.Event | None = None,
                cpu_s: float | None = None) -> Any:
        """The handler's reply to ``payload``; ``ChildError`` when there is none in time.

        ``timeout_s`` is the handler's time once a ready child has the request; getting
        one is bounded by ``startup_timeout_s`` instead, and everything by the reward
        call's :func:`~verl_rewards.time_left` less ``RETURN_MARGIN_S``. ``cpu_s``, when
        given, also ends it once the child has used that much CPU time on it (a bound a
        loaded machine does not shrink; not for a worker with a launch ``prefix``, whose
        process is the prefix). ``cancel`` ends the wait at once (``ChildError``
        ``cancelled``; the child is killed)."""
        return self._request(payload, timeout_s, cancel, cpu_s)[0]

    def _request(self, payload: Any, timeout_s: float, cancel: threading.Event | None,
                 cpu_s: float | None) -> tuple[Any, float]:
        """(the reply, the CPU seconds the child used on it: 0 unless ``cpu_s`` was given)."""
        if cpu_s is not None and self._prefix:
            raise ValueError(f"{self.name}: cpu_s needs a worker without a launch prefix")
        began = time.monotonic()
        body = json.dumps(payload)  # not JSON: a TypeError or ValueError for the caller, no child harmed
        limit, why = _call_limit(began)
        if limit <= began:
            raise ChildError(self.name, "late", f"no time left {why}")
        start_by = min(began + self.startup_timeout_s, limit)
        child = self._acquire(start_by, cancel, self._bound(start_by, limit, f"within {self.startup_timeout_s:g} s",
                                                            why))
        self._top_up()
        answer_by = min(time.monotonic() + timeout_s, limit)
        failing = _Failing(self.name, "answering a request", self._bound(answer_by, limit, f"within {timeout_s:g} s",
                                                                        why), self.exit_grace_s)
        cpu_at = child.cpu_s() if cpu_s is not None else 0.0
        if cpu_s is not None:
            failing.cpu_budget_s = cpu_s
        try:
            child.last_id += 1
            child.send(f'{{"id": {child.last_id}, "request": {body}}}', answer_by, cancel, failing)
            frame = self._frame(child, answer_by, cancel, failing, None if cpu_s is None else cpu_at + cpu_s)
        except BaseException as e:
            # Late, dead, cancelled, or the calling thread interrupted (a SampleTimeout):
            # its answer may still come, and must never be read as the next request's.
            if isinstance(e, ChildError) and cpu_s is not None:
                e.cpu_used_s = max(0.0, child.cpu_s() - cpu_at) or cpu_s
            self._discard(child)
            raise
        used = max(0.0, child.cpu_s() - cpu_at) if cpu_s is not None else 0.0
        self._release(child)
        if "error" in frame:
            error = failing.error("raised", f"the handler raised {frame['error']}")
            error.cpu_used_s = used
            raise error
        return frame.get("reply"), used

    def evaluate(self, payload: Any, timeout_s: float) -> Evaluation:
        """:meth:`request` for a model's answer: the reply, or the error that cut it short
        (the answer's fault: a 0, with the reason). A child that could not start in time
        is not the answer's fault: that ``ChildError`` is raised (the sample fails)."""
        return self._evaluate(payload, timeout_s, None)[0]

    def evaluate_on_cpu(self, payload: Any, cpu_s: float, timeout_s: float) -> tuple[Evaluation, float]:
        """:meth:`evaluate` within ``cpu_s`` seconds of the child's CPU time (and ``timeout_s``
        of wall-clock time), and the CPU seconds the child used on it: a budget that a loaded
        machine does not shrink, so an answer's verdict does not depend on the load."""
        return self._evaluate(payload, timeout_s, cpu_s)

    def _evaluate(self, payload: Any, timeout_s: float, cpu_s: float | None) -> tuple[Evaluation, float]:
        try:
            reply, used = self._request(payload, timeout_s, None, cpu_s)
            return Evaluation(reply), used
        except ChildError as e:
            if e.starting:
                raise
            logger.debug("%s", e)
            return Evaluation(cut=e), e.cpu_used_s

    def start(self) -> bool:
        """Have one child ready now (started if none is, within ``startup_timeout_s`` and the
        reward call's time less ``RETURN_MARGIN_S``); whether one is (why not is logged)."""
        began = time.monotonic()
        limit, why = _call_limit(began)
        start_by = min(began + self.startup_timeout_s, limit)
        own = f"within {self.startup_timeout_s:g} s"
        try:
            self._release(self._acquire(start_by, None, self._bound(start_by, limit, own, why)))
        except ChildError as e:
            logger.debug("%s", e)
            return False
        return True

    def close(self) -> None:
        """Stop every child now (a later request starts a new one)."""
        with self._changed:
            self._generation += 1
            victims = [*self._idle, *self._busy]
            self._idle.clear()
            self._busy.clear()
            self._changed.notify_all()
        for child in victims:
            child.kill(wait=True)

    def _frame(self, child: _Child, deadline: float, cancel: threading.Event | None,
               failing: _Failing, cpu_by: float | None = None) -> dict[str, Any]:
        line = child.read_line(deadline, cancel, failing, self.max_reply_bytes, cpu_by)
        try:
            frame = json.loads(line)
        except ValueError:
            raise failing.error("garbled", f"a reply that is not JSON: {line[:80]!r}") from None
        if not isinstance(frame, dict) or frame.get("id") != child.last_id:
            raise failing.error("garbled", f"a reply {line[:80]!r} that does not answer request {child.last_id}")
        return frame

    @staticmethod
    def _bound(deadline: float, limit: float, own: str, why: str) -> str:
        """What ended a wait that ends at ``deadline``: its own bound, or the reward call's."""
        return own if deadline < limit else why

    # -- the pool

    def _acquire(self, deadline: float, cancel: threading.Event | None, bound: str) -> _Child:
        failing = _Failing(self.name, "starting", bound, self.exit_grace_s, starting=True)
        with self._changed:
            while True:
                while self._idle:
                    child = self._idle.pop()
                    if child.alive():
                        self._busy.add(child)
                        return child
                    _reap_later(child)  # died while idle (an OOM kill): start another
                if self._warming > self._claims:
                    self._claims += 1
                    try:
                        self._wait(deadline, cancel, failing)
                    finally:
                        self._claims -= 1
                    continue
                if len(self._busy) + self._starting + self._warming < self.max_children:
                    self._starting += 1
                    generation = self._generation
                    break
                self._wait(deadline, cancel, failing)
        try:
            child = self._start(deadline, cancel, failing)
        finally:
            with self._changed:
                self._starting -= 1
                self._changed.notify_all()
        child.generation = generation
        with self._changed:
            self._busy.add(child)
        return child

    def _wait(self, deadline: float, cancel: threading.Event | None, failing: _Failing) -> None:
        left = deadline - time.monotonic()
        if left <= 0:
            raise failing.late()
        if cancel is not None and cancel.is_set():
            raise failing.error("cancelled", "the wait was cancelled")
        self._changed.wait(min(left, CANCEL_POLL_S) if cancel is not None else left)

    def _start(self, deadline: float, cancel: threading.Event | None, failing: _Failing) -> _Child:
        argv = [*self._launch_prefix(), sys.executable, "-c", _BOOT, json.dumps(sys.path)]
        try:
            proc = _SPAWNER.popen(argv, deadline - time.monotonic())
        except TimeoutError:
            raise failing.late() from None
        except OSError as e:  # no process to be had (EAGAIN, ENOMEM): not the request's fault
            raise failing.error("died", f"could not start a process: {type(e).__name__}: {e}") from e
        child = _Child(proc, contained=bool(self._prefix), tail_bytes=self.stderr_tail_bytes)
        try:
            setup = json.loads(self._setup)
            setup["parent"] = None if self._prefix else os.getpid()
            child.send(json.dumps(setup), deadline, cancel, failing)
            hello = json.loads(child.read_line(deadline, cancel, failing, self.max_reply_bytes))
            if not isinstance(hello, dict) or hello.get("ready") is not True:
                raise failing.error("garbled", f"an unexpected greeting {str(hello)[:80]!r}")
        except BaseException:
            child.kill(wait=False)
            raise
        return child

    def _launch_prefix(self) -> tuple[str, ...]:
        if not self._prefix:
            return ()
        # The prefix dies with us too (the child arms its own signal, but inside a
        # namespace its parent is the prefix).
        setpriv = shutil.which("setpriv")
        return (setpriv, "--pdeathsig", "KILL", *self._prefix) if setpriv else self._prefix

    def _release(self, child: _Child) -> None:
        with self._changed:
            self._busy.discard(child)
            if child.generation == self._generation and child.alive():
                self._idle.append(child)
                self._changed.notify_all()
                return
        child.kill(wait=False)

    def _discard(self, child: _Child) -> None:
        with self._changed:
            self._busy.discard(child)
            replace = (child.generation == self._generation and not self._idle and self._warming == 0
                       and len(self._busy) + self._starting < self.max_children)
            if replace:
                self._warming += 1
            self._changed.notify_all()
        child.kill(wait=False)
        if replace:
            threading.Thread(target=self._warm, args=(child.generation,), name="child-warm", daemon=True).start()
        self._top_up()

    def _top_up(self) -> None:
        """Start children in the background until ``spares`` are idle or on their way, no idle
        one spoken for by a waiting request (within ``max_children + spares`` in all)."""
        with self._changed:
            coming = len(self._idle) + self._warming - self._claims
            alive = len(self._busy) + len(self._idle) + self._starting + self._warming
            more = min(self.spares - coming, self.max_children + self.spares - alive)
            if more <= 0:
                return
            self._warming += more
            generation = self._generation
        for _ in range(more):
            threading.Thread(target=self._warm, args=(generation,), name="child-warm", daemon=True).start()

    def _warm(self, generation: int) -> None:
        """Start a replacement in the background, so the next request finds it ready."""
        failing = _Failing(self.name, "starting a replacement", f"within {self.startup_timeout_s:g} s",
                           self.exit_grace_s, starting=True)
        try:
            child: _Child | None = self._start(time.monotonic() + self.startup_timeout_s, None, failing)
        except Exception as e:  # noqa: BLE001 - the next request starts one itself, and says why
            logger.debug("%s", e)
            child = None
        with self._changed:
            self._warming -= 1
            keep = child is not None and generation == self._generation
            if child is not None and keep:
                child.generation = generation
                self._idle.append(child)
            self._changed.notify_all()
        if child is not None and not keep:
            child.kill(wait=False)

    def _forget_after_fork(self) -> None:
        for child in [*self._idle, *self._busy]:
            child.forget()
        self._reset()


def _call_limit(began: float) -> tuple[float, str]:
    """When a request must end: ``RETURN_MARGIN_S`` before the reward call's time is up."""
    left = time_left()
    if left is None:
        return math.inf, ""
    return began + left - RETURN_MARGIN_S, (f"before the reward call's time ran out: {left:.2g} s were left, "
                                            f"{RETURN_MARGIN_S:g} s kept to return")


_WORKERS: weakref.WeakSet[JsonLineWorker] = weakref.WeakSet()
_FORGOTTEN: list[_Child] = []  # a forked parent's children, held so nothing closes their pipes
_SPAWNER = _Spawner()


def _after_fork_in_child() -> None:
    global _SPAWNER
    _SPAWNER = _Spawner()
    for worker in list(_WORKERS):
        worker._forget_after_fork()


def _close_all() -> None:
    for worker in list(_WORKERS):
        with contextlib.suppress(Exception):
            worker.close()


os.register_at_fork(after_in_child=_after_fork_in_child)
atexit.register(_close_all)
