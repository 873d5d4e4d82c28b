"""The audit's scoring process: :class:`Steps`, the handler a
:class:`verl_rewards.child.JsonLineWorker` child runs for :mod:`.child`.

Built once per process with the plugin, the timeout and the first step's
kwargs (the plugin is imported, and its scorer for those kwargs built, as the
process starts); then each request is a step, a list of samples scored with
one set of kwargs, once or from several threads at once. Scores through the
public :class:`~verl_rewards.Scorer` (the job's executor: ``process`` by default,
one worker, which alone imports the plugin, so a call stuck in C is a timeout and
its worker replaced, the wait for the replacement not counted in the next call's
time; threaded steps on ``local``, so the threads share one process; the plugin's
timeout) and answers each step's runs; the answers go out on the child's private copy
of stdout, so nothing a reward prints can be read as a result. The auditing
process kills the process when a step overruns its deadline (a reward stuck
in C code, which the watchdog cannot interrupt).
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any

THREADS_BARRIER_S = 60.0


class Steps:
    """The handler: one request per step, answered ``{"id", "runs"}`` or ``{"id", "error"}``."""

    def __init__(self, job: Mapping[str, Any]) -> None:
        self._job = job
        self._scorers: dict[str, Any] = {}
        try:
            _scorer(job, job.get("kwargs", {}), self._scorers, _executor(job, {}))
        except Exception:  # noqa: BLE001 - the step that uses these kwargs reports it
            pass

    def __call__(self, step: Mapping[str, Any]) -> dict[str, Any]:
        """The runs of one step."""
        return _run_step(self._job, step, self._scorers)


def _run_step(job: Mapping[str, Any], step: Mapping[str, Any], scorers: dict[str, Any]) -> dict[str, Any]:
    try:
        scorer = _scorer(job, step["kwargs"], scorers, _executor(job, step))
    except Exception as e:  # noqa: BLE001 - reported to the auditing process
        return {"id": step["id"], "error": f"{type(e).__name__}: {e}"}
    samples = step["samples"]
    if step.get("threads"):
        runs = _in_threads(scorer, samples, int(step["threads"]))
    else:
        runs = [[_score_one(scorer, sample) for sample in samples]]
    return {"id": step["id"], "runs": runs}


def _executor(job: Mapping[str, Any], step: Mapping[str, Any]) -> str:
    """Threads of one step share a process (``local``); otherwise the job's executor."""
    return "local" if step.get("threads") else str(job.get("executor", "process"))


def _scorer(job: Mapping[str, Any], kwargs: Mapping[str, Any], scorers: dict[str, Any],
            executor: str) -> Any:
    from verl_rewards import Scorer

    key = json.dumps([kwargs, executor], sort_keys=True)
    if key not in scorers:
        config = {"plugin": job["plugin"], "kwargs": dict(kwargs), "executor": executor,
                  "timeout_s": job["timeout_s"], "on_error": "score"}
        if executor == "process":  # one worker imports the plugin, not this process too
            config.update(num_workers=1, workers_only=True)
        scorers[key] = Scorer.from_config(config).start()
    return scorers[key]


def _score_one(scorer: Any, sample: Mapping[str, Any]) -> dict[str, Any]:
    began = time.perf_counter()
    result = scorer.score([sample])
    # Not the wait for a worker replaced after the call before it (a stuck or crashing reward).
    seconds = time.perf_counter() - began - result.metrics.get("worker_wait_s", 0.0)
    return {"status": result.statuses[0], "score": result.scores[0], "error": result.errors[0],
            "seconds": seconds}


def _in_threads(scorer: Any, samples: Sequence[Mapping[str, Any]], count: int) -> list[list[dict[str, Any]]]:
    """Each of ``count`` threads scores every sample, all starting together."""
    runs: list[list[dict[str, Any]]] = [[] for _ in range(count)]
    start = threading.Barrier(count, timeout=THREADS_BARRIER_S)

    def work(slot: int) -> None:
        start.wait()
        runs[slot] = [_score_one(scorer, sample) for sample in samples]

    threads = [threading.Thread(target=work, args=(i,), name=f"audit-{i}") for i in range(count)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return runs
