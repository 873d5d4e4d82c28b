"""Run audit steps in a scoring process (:mod:`.runner`) under hard deadlines.

The scoring process is a :class:`verl_rewards.child.JsonLineWorker` child
running :class:`.runner.Steps`, one request per step. Every step has a
deadline of its own; a step that overruns it (a reward stuck where the
in-process watchdog cannot reach), a process that dies, or one that stops
answering (a reward that closes descriptors it did not open) is recorded
against that step, the process is killed with everything it started, and the
remaining steps continue in a fresh process. Nothing here waits without a
deadline.

The scoring process is the first process (PID 1) of a PID namespace of its
own where the machine allows one (``unshare``: as root, else inside a user
namespace): when it is killed, the kernel kills every process in the
namespace, also helpers a reward started in a session of their own, which a
process-group kill misses. Where no namespace can be made, the audit says so
in its notes and kills the process group only.
"""

from __future__ import annotations

import functools
import os
import shutil
import subprocess
import sys
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from ..child import ChildError, JsonLineWorker
from .records import Scored

STARTUP_S: Final = 60.0  # importing a reward (SymPy, a model client) before its first step
GRACE_S: Final = 20.0  # per step, over the samples' own timeouts
MAX_RESTARTS: Final = 3
EXIT_GRACE_S: Final = 5.0  # a process whose answers ended should have exited by then
MAX_ANSWER_BYTES: Final = 256 << 20  # a step's runs, with every sample's error text
STDERR_BYTES: Final = 16384  # the end of a dead process's stderr a finding excerpts (whole lines)
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
              cancel: threading.Event | None = None, executor: str = "process") -> Answers:
    """Score ``steps`` for ``plugin`` (``dist:name``) in fresh processes, each step under a
    deadline: its samples' timeouts plus ``grace_s``. ``cancel`` stops at once, killing
    the process in flight; the steps left are failures. ``executor``: what scores in that
    process (``process``: a worker it kills at a call's timeout; ``local``: itself, so a
    call stuck in C is a stuck step); threaded steps always score on ``local``."""
    answers = Answers()
    if not steps:
        return answers
    worker = _worker(plugin, timeout_s, steps[0].kwargs, executor)
    failed = 0
    try:
        for number, step in enumerate(steps):
            if cancel is not None and cancel.is_set():
                answers.failures += [StepFailure(s.id, "error", INTERRUPTED) for s in steps[number:]]
                break
            if failed > MAX_RESTARTS:
                answers.failures += [StepFailure(s.id, "error", "not run: the scoring process failed "
                                                 f"{MAX_RESTARTS + 1} times") for s in steps[number:]]
                break
            failure = _run_step(worker, step, (timeout_s, grace_s), answers, cancel)
            if failure is not None:
                answers.failures.append(failure)
                failed += 1
    finally:
        worker.close()
    return answers


def deadline_s(step: Step, timeout_s: float, grace_s: float = GRACE_S) -> float:
    """How long a step may take: each sample its timeout (threads run side by side), plus grace."""
    return len(step.samples) * timeout_s + grace_s


def _worker(plugin: str, timeout_s: float, first_kwargs: Mapping[str, Any], executor: str) -> JsonLineWorker:
    """The scoring processes of one run: each imports the plugin (and builds its scorer for
    the first step's kwargs) as it starts, within ``STARTUP_S``."""
    init = {"plugin": plugin, "timeout_s": timeout_s, "kwargs": dict(first_kwargs), "executor": executor}
    return JsonLineWorker("verl_rewards.audit.runner:Steps", init=init, name="the audit's scoring process",
                          startup_timeout_s=STARTUP_S, max_children=1, max_reply_bytes=MAX_ANSWER_BYTES,
                          prefix=containment().prefix, exit_grace_s=EXIT_GRACE_S, stderr_tail_bytes=STDERR_BYTES)


def _run_step(worker: JsonLineWorker, step: Step, limits: tuple[float, float], answers: Answers,
              cancel: threading.Event | None) -> StepFailure | None:
    """Score one step; the step's failure when the process gave no answer (it is replaced)."""
    request = {"id": step.id, "kwargs": dict(step.kwargs), "samples": list(step.samples), "threads": step.threads}
    allowed = deadline_s(step, *limits)
    try:
        answer = worker.request(request, allowed, cancel=cancel)
    except ChildError as e:
        return _failure(step, e, allowed)
    if "error" in answer:  # this step only: the process goes on with the next
        answers.failures.append(StepFailure(step.id, "error", str(answer["error"])))
        return None
    answers.runs[step.id] = [[Scored.from_json(r) for r in run] for run in answer["runs"]]
    return None


def _failure(step: Step, error: ChildError, allowed: float) -> StepFailure:
    if error.reason == "cancelled":
        return StepFailure(step.id, "error", INTERRUPTED)
    if error.reason == "late" and error.starting:
        return StepFailure(step.id, "stuck", f"the scoring process did not start within {STARTUP_S:.0f} s")
    if error.reason == "late":
        return StepFailure(step.id, "stuck", f"no answer within {allowed:.0f} s")
    if error.reason == "silent":
        return StepFailure(step.id, "silent", "the scoring process stopped answering (its output closed) but "
                           "did not exit: does the reward close file descriptors it did not open?",
                           stderr=error.last_words)
    if error.reason == "died":
        return StepFailure(step.id, "died", f"the scoring process exited with code {error.returncode}",
                           returncode=error.returncode, stderr=error.last_words)
    return StepFailure(step.id, "error", str(error))
