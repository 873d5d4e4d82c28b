"""A task's ``score_answer`` in a child process, under a deadline that always holds.

reasoning-gym's scorers compute on the model's answer, and some do it in C
holding the GIL, where nothing in the reward's process can stop them:
countdown's and puzzle24's ``parse_expr`` evaluates ``9**9**9**9`` or
``factorial(10**9)``, the integration tasks hand the answer to SymPy,
coin_flip builds ``Fraction("1e999999999")``; others loop in Python on what
the answer asks for. So answers are scored in a child process of
:class:`verl_rewards.child.JsonLineWorker` (the task's scorer built there,
once per child, task and config, and guarded there as ``guard`` says). A
child that has not answered within ``answer_timeout_s``, or before the reward
call's own time runs out (:func:`verl_rewards.time_left`), is killed and
replaced: the answer scores 0, with the reason in ``scorer_error``.

Two exceptions, scored in this process: tasks that keep reasoning-gym's
default ``score_answer`` (a third of them), which compares the answer with
the entry's by string equality and containment, linear in their lengths
(:data:`LINEAR`; a test holds that default to the names it uses); and a
response that gives no answer (no answer block, or an empty one), whose
scoring costs what the task makes of "nothing" for this entry: nothing the
policy wrote reaches the scorer. Every other answer goes to the child: what
an answer costs a task's scorer depends on what its characters mean to that
task (digits as a loop's bound or an exponent, letters as SymPy names or
numbers in a base, any character in a backtracking pattern), which no check
of the answer alone can bound for every task.
"""

from __future__ import annotations

import base64
import pickle
from collections.abc import Mapping
from typing import Any, NamedTuple

from reasoning_gym.dataset import ProceduralDataset
from reasoning_gym.factory import DATASETS

from verl_rewards.child import JsonLineWorker

from .tasks import scorer

ANSWER_TIMEOUT_S = 10.0  # a task's scorer built (arc_agi: ~2 s) and run on one answer
MEMORY_BYTES = 4 * 1024**3  # each child's address space: reasoning-gym's data, NumPy, SymPy
# Tasks scored by reasoning-gym's default score_answer: nothing but string comparisons.
LINEAR = frozenset(task for task, (cls, _) in DATASETS.items()
                   if cls.score_answer is ProceduralDataset.score_answer)


class Scored(NamedTuple):
    """The task's score for an answer, or why there is none: ``error`` (the scorer raised on
    the answer, or was cut short: the score is 0)."""

    value: float
    error: str = ""


_worker = JsonLineWorker("verl_rewards_reasoning_gym.isolation:TaskScoring", name="reasoning_gym's scoring child",
                         memory_bytes=MEMORY_BYTES,
                         spares=1)  # a child killed for a late answer is replaced at once


def ensure_started() -> bool:
    """Have a child ready now (benchmarks, tests: keep its start out of a timing); whether one is."""
    return _worker.start()


def close() -> None:
    """Stop the children (the next answer starts one)."""
    _worker.close()


def score(task: str, config: Mapping[str, Any] | None, answer: str | None, entry: Mapping[str, Any],
          timeout_s: float = ANSWER_TIMEOUT_S) -> Scored:
    """``score_answer(answer, entry)`` of ``task`` (for ``config``): in the child, or here
    for a task in :data:`LINEAR` and for no answer (None or empty).

    Raises for what is not the answer's fault: ``ValueError`` for a config the
    task refuses or an entry its scorer fails on even with its own answer,
    ``ChildError`` when no child could start in time."""
    if task in LINEAR or not answer:
        return _scored(score_here(task, config, answer, dict(entry)))
    return score_in_child(task, config, answer, entry, timeout_s)


def score_in_child(task: str, config: Mapping[str, Any] | None, answer: str | None, entry: Mapping[str, Any],
                   timeout_s: float = ANSWER_TIMEOUT_S) -> Scored:
    """``score_answer(answer, entry)`` of ``task`` (for ``config``), run in the child (see :func:`score`)."""
    # Pickled, not JSON: an entry's tuples must stay tuples (boards are compared as such).
    request = {"task": task, "config": dict(config) if config else None, "answer": answer,
               "entry": base64.b64encode(pickle.dumps(dict(entry))).decode("ascii")}
    scored = _worker.evaluate(request, timeout_s)
    if scored.cut is not None:
        return Scored(0.0, scored.why[:200])
    return _scored(scored.reply)


def _scored(reply: Mapping[str, Any]) -> Scored:
    if "invalid" in reply:
        raise ValueError(reply["invalid"])
    return Scored(float(reply["value"]), reply["error"])


def score_here(task: str, config: Mapping[str, Any] | None, answer: str | None,
               entry: dict[str, Any]) -> dict[str, Any]:
    """The task's scorer on ``answer``, in this process: ``{"value", "error"}``, or
    ``{"invalid": why}`` when the entry or config is at fault (what the child answers)."""
    try:
        score_answer = scorer(task, config)
    except ValueError as e:
        return {"invalid": str(e)}
    try:
        return {"value": float(score_answer(answer, entry)), "error": ""}
    except Exception as e:  # noqa: BLE001 - the answer's fault, unless the entry's own answer fails too
        invalid = _entry_fails(score_answer, entry, task)
        if invalid:
            return {"invalid": invalid}
        return {"value": 0.0, "error": f"{type(e).__name__}: {e}"[:200]}


class TaskScoring:
    """The child's handler: each task's scorer, built on first use, on each request."""

    def __init__(self, init: Any = None) -> None:
        pass  # reasoning-gym was imported with this module; scorers are built per task

    def __call__(self, request: Mapping[str, Any]) -> dict[str, Any]:
        """:func:`score_here` on the request's task, config, answer and (pickled) entry."""
        entry = pickle.loads(base64.b64decode(request["entry"]))
        return score_here(request["task"], request["config"], request["answer"], entry)


def _entry_fails(score_answer: Any, entry: dict[str, Any], task: str) -> str:
    """Why the task cannot score ``entry`` at all (a data problem, not a wrong answer); "" when it can."""
    from .tasks import VERSION

    try:
        score_answer(entry["answer"], entry)
    except Exception as e:  # noqa: BLE001
        return (f"reasoning-gym's {task!r} scorer fails on this entry even with its own answer "
                f"({type(e).__name__}: {e}): give the whole entry in extra_info['entry'], generated "
                f"by reasoning-gym {VERSION} (its config in reward.kwargs.configs when not the default)")
    return ""
