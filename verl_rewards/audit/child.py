"""Run audit steps in a scoring process (:mod:`.runner`) under hard deadlines.

Every step has a deadline of its own; a step that overruns it (a reward stuck
where the in-process watchdog cannot reach), a process that dies, or one that
stops answering (a reward that closes descriptors it did not open) is
recorded against that step, the process is killed with everything it
started, and the remaining steps continue in a fresh process. Nothing here
waits without a deadline.

The scoring process is the first process (PID 1) of a PID namespace of its
own where the machine allows one (``unshare``: as root, else inside a user
namespace): when it is killed, the kernel kills every process in the
namespace, also helpers a reward started in a session of their own, which a
process-group kill misses. Where no namespace can be made, the audit says so
in its notes and kills the process group only.
"""

from __future__ import annotations

import functools
import json
import os
import queue
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final, Literal

from .records import Scored

STARTUP_S: Final = 60.0  # importing a reward (SymPy, a model client) before its first step
GRACE_S: Final = 20.0  # per step, over the samples' own timeouts
MAX_RESTARTS: Final = 3
EXIT_GRACE_S: Final = 5.0  # a process whose answers ended should have exited by then
STOP_GRACE_S: Final = 10.0  # for the kernel to empty a killed process's namespace
CANCEL_POLL_S: Final = 0.25
_NAMESPACE: Final = ("--pid", "--fork", "--kill-child")
INTERRUPTED: Final = "not run: the audit was interrupted"


@dataclass(frozen=True)
class Step:
    """Samples scored with one set of kwargs, once (``threads=0``) or by ``threads`` threads at once."""

    id: int
    kwargs: Mapping[str, Any]
    samples: tuple[Mapping[str, Any], ...]
    threads: int = 0


@dataclass(frozen=True)
class StepFailure:
    """A step that got no answer: it overran its deadline, the process died or stopped answering,
    or the step could not start."""

    step: int
    reason: Literal["stuck", "died", "silent", "error"]
    detail: str
    returncode: int | None = None  # "died": the process's exit status (negative: a signal)
    stderr: str = ""  # the end of what the process wrote to stderr (the finding excerpts it)


@dataclass
class Answers:
    """What the scoring processes answered: each step's runs, and the steps that failed."""

    runs: dict[int, list[list[Scored]]] = field(default_factory=dict)
    failures: list[StepFailure] = field(default_factory=list)


@dataclass(frozen=True)
class Containment:
    """How the scoring process starts: the command before the interpreter, and what does
    not hold without a namespace (empty when everything does)."""

    prefix: tuple[str, ...]
    note: str = ""


@functools.cache
def containment() -> Containment:
    """A PID namespace for the scoring process, if this machine allows one (probed once)."""
    unshare = shutil.which("unshare")
    if not sys.platform.startswith("linux") or unshare is None:
        return Containment((), _uncontained("no `unshare` command"))
    user = () if os.geteuid() == 0 else ("--user", "--map-root-user")
    prefix = (unshare, *user, *_NAMESPACE)
    try:
        probe = subprocess.run([*prefix, sys.executable, "-c", "import os; print(os.getpid())"],
                               capture_output=True, text=True, timeout=30, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.SubprocessError) as e:
        return Containment((), _uncontained(f"{type(e).__name__}: {e}"))
    if probe.stdout.strip() != "1":
        why = probe.stderr.strip().splitlines()[-1:] or [f"exit {probe.returncode}"]
        return Containment((), _uncontained(f"`{' '.join(prefix)}` failed: {why[0]}"))
    return Containment(prefix)


def _uncontained(why: str) -> str:
    return (f"processes the reward starts in a session of their own may outlive the audit: it "
            f"could not give its scoring processes a PID namespace ({why})")


def run_steps(plugin: str, steps: Sequence[Step], timeout_s: float, grace_s: float = GRACE_S,
              cancel: threading.Event | None = None) -> Answers:
    """Score ``steps`` for ``plugin`` (``dist:name``) in fresh processes, each step under a
    deadline: its samples' timeouts plus ``grace_s``. ``cancel`` stops at once, killing
    the process in flight; the steps left are failures."""
    answers = Answers()
    remaining = list(steps)
    for _ in range(MAX_RESTARTS + 1):
        if not remaining:
            break
        failure = _run_process(plugin, remaining, (timeout_s, grace_s), answers, cancel)
        if failure is None:
            break
        answers.failures.append(failure)
        done = {f.step for f in answers.failures}
        remaining = [s for s in remaining if s.id not in answers.runs and s.id not in done]
        if cancel is not None and cancel.is_set():
            answers.failures += [StepFailure(s.id, "error", INTERRUPTED) for s in remaining]
            break
    else:
        for step in remaining:
            answers.failures.append(StepFailure(step.id, "error", "not run: the scoring process "
                                                f"failed {MAX_RESTARTS + 1} times"))
    return answers


def deadline_s(step: Step, timeout_s: float, grace_s: float = GRACE_S) -> float:
    """How long a step may take: each sample its timeout (threads run side by side), plus grace."""
    return len(step.samples) * timeout_s + grace_s


def _run_process(plugin: str, steps: Sequence[Step], limits: tuple[float, float], answers: Answers,
                 cancel: threading.Event | None) -> StepFailure | None:
    timeout_s, _ = limits
    job = {"plugin": plugin, "sys_path": sys.path, "timeout_s": timeout_s,
           "steps": [{"id": s.id, "kwargs": dict(s.kwargs), "samples": list(s.samples),
                      "threads": s.threads} for s in steps]}
    prefix = containment().prefix
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [*prefix, sys.executable, "-m", "verl_rewards.audit.runner"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True,
        )
        try:
            return _collect(process, job, steps, limits, answers, stderr, cancel)
        finally:
            _stop(process, contained=bool(prefix))


def _collect(process: subprocess.Popen[bytes], job: Mapping[str, Any], steps: Sequence[Step],
             limits: tuple[float, float], answers: Answers, stderr: Any,
             cancel: threading.Event | None) -> StepFailure | None:
    lines: queue.Queue[bytes] = queue.Queue()
    assert process.stdin is not None and process.stdout is not None
    threading.Thread(target=_pump, args=(process.stdout, lines), daemon=True).start()
    try:
        process.stdin.write(json.dumps(job, default=str).encode())
        process.stdin.close()
    except BrokenPipeError:
        pass  # it died at start: reported below with its stderr
    for number, step in enumerate(steps):
        allowed = deadline_s(step, *limits) + (STARTUP_S if number == 0 else 0.0)
        line = _next_line(lines, allowed, cancel)
        if line is None:
            if cancel is not None and cancel.is_set():
                return StepFailure(step.id, "error", INTERRUPTED)
            return StepFailure(step.id, "stuck", f"no answer within {allowed:.0f} s")
        if not line:
            return _ended(process, step, stderr)
        answer = json.loads(line)
        if "error" in answer:  # this step only: the process goes on with the next
            answers.failures.append(StepFailure(step.id, "error", str(answer["error"])))
            continue
        answers.runs[step.id] = [[Scored.from_json(r) for r in run] for run in answer["runs"]]
    return None


def _next_line(lines: queue.Queue[bytes], allowed: float, cancel: threading.Event | None) -> bytes | None:
    """The next answer line (``b""``: the answers ended), or None past ``allowed`` or once cancelled."""
    deadline = time.monotonic() + allowed
    while (left := deadline - time.monotonic()) > 0 and not (cancel is not None and cancel.is_set()):
        try:
            return lines.get(timeout=min(left, CANCEL_POLL_S))
        except queue.Empty:
            continue
    return None


def _ended(process: subprocess.Popen[bytes], step: Step, stderr: Any) -> StepFailure:
    """The answers ended before ``step``'s: the process died, or closed its answer channel
    and went on running (a reward closing descriptors it did not open)."""
    try:
        process.wait(timeout=EXIT_GRACE_S)
    except subprocess.TimeoutExpired:
        return StepFailure(step.id, "silent", "the scoring process stopped answering (its output "
                           "closed) but did not exit: does the reward close file descriptors it "
                           "did not open?", stderr=_stderr_end(stderr))
    return StepFailure(step.id, "died", f"the scoring process exited with code {process.returncode}",
                       returncode=process.returncode, stderr=_stderr_end(stderr))


def _pump(stream: Any, lines: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(b"")  # end of output: the process exited or closed stdout


def _stderr_end(stderr: Any, limit: int = 16384) -> str:
    """The last ``limit`` bytes of the process's stderr, from a line start."""
    stderr.seek(0, os.SEEK_END)
    size = stderr.tell()
    stderr.seek(max(0, size - limit))
    text: str = stderr.read().decode("utf-8", "replace")
    return text.partition("\n")[2] if size > limit else text


def _stop(process: subprocess.Popen[bytes], contained: bool) -> None:
    """End the scoring process and whatever it started, even after a clean exit: a reward's
    helper processes must not outlive the audit.

    In a namespace: kill its first process (the runner, ``unshare``'s child); the kernel
    kills the rest, and ``unshare`` exits once the namespace is empty. Then the process
    group: while ``unshare`` is unreaped, or a member lives, its id cannot have been reused."""
    if contained and process.returncode is None:
        _kill_runner(process.pid)
        _wait_unreaped(process.pid, STOP_GRACE_S)
    if process.returncode is None or not contained:  # without a namespace, helpers in its group
        try:
            os.killpg(process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
    process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()


def _kill_runner(unshare: int) -> None:
    """SIGKILL ``unshare``'s one child (the namespace's first process) through a pidfd opened
    while it was still listed as that child, so a reused pid is never signalled."""
    listing = Path(f"/proc/{unshare}/task/{unshare}/children")
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
