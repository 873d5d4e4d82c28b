"""Run audit steps in a scoring process (:mod:`.runner`) under hard deadlines.

Every step has a deadline of its own; a step that overruns it (a reward stuck
where the in-process watchdog cannot reach) or a process that dies is
recorded against that step, the process group is killed, and the remaining
steps continue in a fresh process. Nothing here waits without a deadline.
"""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

from .records import Scored

STARTUP_S: Final = 60.0  # importing a reward (SymPy, a model client) before its first step
GRACE_S: Final = 20.0  # per step, over the samples' own timeouts
MAX_RESTARTS: Final = 3


@dataclass(frozen=True)
class Step:
    """Samples scored with one set of kwargs, once (``threads=0``) or by ``threads`` threads at once."""

    id: int
    kwargs: Mapping[str, Any]
    samples: tuple[Mapping[str, Any], ...]
    threads: int = 0


@dataclass(frozen=True)
class StepFailure:
    """A step that got no answer: it overran its deadline, the process died, or it could not start."""

    step: int
    reason: Literal["stuck", "died", "error"]
    detail: str


@dataclass
class Answers:
    """What the scoring processes answered: each step's runs, and the steps that failed."""

    runs: dict[int, list[list[Scored]]] = field(default_factory=dict)
    failures: list[StepFailure] = field(default_factory=list)


def run_steps(plugin: str, steps: Sequence[Step], timeout_s: float, grace_s: float = GRACE_S) -> Answers:
    """Score ``steps`` for ``plugin`` (``dist:name``) in fresh processes, each step under a
    deadline: its samples' timeouts plus ``grace_s``."""
    answers = Answers()
    remaining = list(steps)
    for _ in range(MAX_RESTARTS + 1):
        if not remaining:
            break
        failure = _run_process(plugin, remaining, timeout_s, grace_s, answers)
        if failure is None:
            break
        answers.failures.append(failure)
        done = {f.step for f in answers.failures}
        remaining = [s for s in remaining if s.id not in answers.runs and s.id not in done]
    else:
        for step in remaining:
            answers.failures.append(StepFailure(step.id, "error", "not run: the scoring process "
                                                f"failed {MAX_RESTARTS + 1} times"))
    return answers


def deadline_s(step: Step, timeout_s: float, grace_s: float = GRACE_S) -> float:
    """How long a step may take: each sample its timeout (threads run side by side), plus grace."""
    return len(step.samples) * timeout_s + grace_s


def _run_process(plugin: str, steps: Sequence[Step], timeout_s: float, grace_s: float,
                 answers: Answers) -> StepFailure | None:
    job = {"plugin": plugin, "sys_path": sys.path, "timeout_s": timeout_s,
           "steps": [{"id": s.id, "kwargs": dict(s.kwargs), "samples": list(s.samples),
                      "threads": s.threads} for s in steps]}
    with tempfile.TemporaryFile() as stderr:
        process = subprocess.Popen(
            [sys.executable, "-m", "verl_rewards.audit.runner"], stdin=subprocess.PIPE,
            stdout=subprocess.PIPE, stderr=stderr, start_new_session=True,
        )
        try:
            return _collect(process, job, steps, (timeout_s, grace_s), answers, stderr)
        finally:
            _kill_group(process)


def _collect(process: subprocess.Popen[bytes], job: Mapping[str, Any], steps: Sequence[Step],
             limits: tuple[float, float], answers: Answers, stderr: Any) -> StepFailure | None:
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
        try:
            line = lines.get(timeout=allowed)
        except queue.Empty:
            return StepFailure(step.id, "stuck", f"no answer within {allowed:.0f} s")
        if not line:
            process.wait(timeout=10)
            return StepFailure(step.id, "died", f"the scoring process exited with code "
                               f"{process.returncode}{_tail(stderr)}")
        answer = json.loads(line)
        if "error" in answer:  # this step only: the process goes on with the next
            answers.failures.append(StepFailure(step.id, "error", str(answer["error"])))
            continue
        answers.runs[step.id] = [[Scored.from_json(r) for r in run] for run in answer["runs"]]
    return None


def _pump(stream: Any, lines: queue.Queue[bytes]) -> None:
    for line in iter(stream.readline, b""):
        lines.put(line)
    lines.put(b"")  # end of output: the process exited or closed stdout


def _tail(stderr: Any, limit: int = 300) -> str:
    stderr.seek(0)
    text = stderr.read().decode("utf-8", "replace").strip()
    return f"; its last words: {text[-limit:]}" if text else ""


def _kill_group(process: subprocess.Popen[bytes]) -> None:
    """End the scoring process and whatever it started (its own session), even after
    a clean exit: a reward's helper processes must not outlive the audit."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass
    process.wait(timeout=30)
    if process.stdout is not None:
        process.stdout.close()
