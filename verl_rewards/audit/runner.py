"""The audit's scoring process: ``python -m verl_rewards.audit.runner``.

Reads one job (JSON) on stdin: the plugin, the import path, the timeout and
steps, each a list of samples scored with one set of kwargs, once or from
several threads at once. Scores through the public :class:`~verl_rewards.Scorer`
(the job's executor: ``process`` by default, one worker, which alone imports the plugin,
so a call stuck in C is a timeout and its worker replaced, the wait for the replacement
not counted in the next call's time; threaded steps on ``local``, so the threads share
one process; the plugin's timeout)
and answers one JSON line per step on a
private copy of stdout, so nothing a reward prints can be read as a result.
The auditing process kills it when a step overruns its deadline (a reward stuck
in C code, which the watchdog cannot interrupt).
"""

from __future__ import annotations

import json
import os
import sys
import threading
import time
from collections.abc import Mapping, Sequence
from typing import Any, TextIO

THREADS_BARRIER_S = 60.0


def main() -> int:
    """Run the job read from stdin; one answer line per step."""
    replies = _reply_channel()
    job = json.loads(sys.stdin.read())
    sys.path[:] = job["sys_path"]
    scorers: dict[str, Any] = {}
    try:
        for step in job["steps"]:
            answer = _run_step(job, step, scorers)
            print(json.dumps(answer), file=replies, flush=True)
    finally:
        for scorer in scorers.values():
            scorer.close()
    return 0


def _run_step(job: Mapping[str, Any], step: Mapping[str, Any], scorers: dict[str, Any]) -> dict[str, Any]:
    try:
        scorer = _scorer(job, step["kwargs"], scorers, "local" if step.get("threads") else job["executor"])
    except Exception as e:  # noqa: BLE001 - reported to the auditing process
        return {"id": step["id"], "error": f"{type(e).__name__}: {e}"}
    samples = step["samples"]
    if step.get("threads"):
        runs = _in_threads(scorer, samples, int(step["threads"]))
    else:
        runs = [[_score_one(scorer, sample) for sample in samples]]
    return {"id": step["id"], "runs": runs}


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


def _reply_channel() -> TextIO:
    """The original stdout, for answers only; fd 1 and ``sys.stdout`` now go to stderr."""
    replies = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return replies


if __name__ == "__main__":
    sys.exit(main())
