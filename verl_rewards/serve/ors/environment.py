"""The served reward as an ``openreward`` environment: its splits and tasks, its prompt,
and the tool ``submit(answer)``, whose output carries the reward's score.

The environment is a subclass of the ``openreward`` package's own ``Environment``, so the
tool's schema, its argument checking (a wrong argument is the protocol's
``input_validation`` error), and the rule that a finished episode takes no further call
are the package's. Scoring is not done here: ``submit`` puts its one sample on the
service's queue (the shared pool, batched with every other request) through the
``submit_samples`` it is built with; so does ``score_group``, with all its candidates.

The package looks a tool up and reads its type hints on every call; under
``from __future__ import annotations`` each read compiles the hints' text again. The
tool's hints are resolved once here (:func:`resolve_tool_hints`), and a call to a tool
the class lists goes straight to the package's own invocation (its locks, its argument
check, its finished-episode rule).

Under ``on_error: skip`` a sample the reward did not score has no reward (``None``):
never ``error_score``, which would be trained on as a genuine score.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import time
import typing
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from openreward.environments import (
    Environment,
    GroupCandidate,
    GroupScore,
    Message,
    RunToolOutput,
    Split,
    TextBlock,
    ToolOutput,
    tool,
)
from pydantic import BaseModel, Field

from ...config import OnError
from ...results import BatchResult
from ...samples import Sample
from ...wire import json_data
from .candidates import final_text
from .tasks import Task, TaskSet, spec_location, split_type, task_spec

SubmitSamples = Callable[[list[Sample]], Awaitable[BatchResult]]

# Set by a tool once its samples are queued: the route then opens its event stream, so
# a full queue or a draining service is still an HTTP status (429, 503) before it.
QUEUED: contextvars.ContextVar[Callable[[], None]] = contextvars.ContextVar("verl_rewards_ors_queued")


class SubmitInput(BaseModel):
    """The answer to score."""

    answer: str = Field(description="Your final answer to the task.")


class RewardEnvironment(Environment):  # type: ignore[misc]  # openreward ships no type hints
    """One session's episode: a task from the served splits, scored once by ``submit``.
    :func:`environment_class` makes the served reward's subclass."""

    ors_name: ClassVar[str] = "reward"
    task_set: ClassVar[TaskSet]
    on_error: ClassVar[OnError] = "score"
    submit_samples: ClassVar[SubmitSamples]

    def __init__(self, task_spec: dict[str, Any], secrets: dict[str, str] | None = None) -> None:
        super().__init__(task_spec=task_spec, secrets={})
        self.split, self.index = spec_location(task_spec)
        self.task: Task = self.task_set.task(self.split, self.index)

    @classmethod
    def name(cls) -> str:
        return cls.ors_name

    @classmethod
    def list_splits(cls) -> list[Split]:
        return [Split(name=name, type=split_type(name)) for name in cls.task_set.splits]

    @classmethod
    def list_tasks(cls, split: str) -> list[dict[str, Any]]:
        return [task_spec(split, i, t) for i, t in enumerate(cls.task_set.tasks(split))]

    def get_messages(self) -> list[Message]:
        prompt = self.task.prompt
        if isinstance(prompt, str):
            return [Message(role="user", blocks=[TextBlock(text=prompt)])]
        return [Message(role=m["role"], blocks=[TextBlock(text=m["content"])]) for m in prompt]

    @classmethod
    @functools.cache
    def tool_names(cls) -> frozenset[str]:
        """The names of the tools the class defines and lists."""
        return frozenset(spec.name for spec in cls.list_tools().tools
                         if Environment._is_tool(getattr(cls, spec.name, None)))

    async def _call_tool(self, name: str, input: dict[str, Any]) -> RunToolOutput:
        # A listed tool: straight to the package's invocation, without finding and
        # inspecting it again; any other name: the package's own lookup and answer.
        if name in self.tool_names():
            return await self._invoke_tool_fn(name, getattr(self, name), input, time.monotonic())
        return await super()._call_tool(name, input)

    @tool(exclusive=True)  # type: ignore[untyped-decorator]
    async def submit(self, params: SubmitInput) -> ToolOutput:
        """Submit your final answer to the task. It is scored once, and the episode ends."""
        pending = type(self).submit_samples([self.task.sample(params.answer)])
        _queued()
        result = await pending
        return tool_output(result, self.on_error, self.split, self.index)

    async def score_group(self, candidates: Sequence[GroupCandidate]) -> list[GroupScore]:
        """Score a group of completions of this session's task as one batch (each
        candidate's answer: the text of its last assistant message)."""
        result = await self.score_answers([final_text(c.messages) for c in candidates])
        return [GroupScore(**score) for score in group_scores(result)]

    async def score_answers(self, answers: Sequence[str]) -> BatchResult:
        """:meth:`score_group` for the candidates' answers: one batch on the queue; its
        result, or the error :func:`check_group` raises."""
        pending = type(self).submit_samples(self.task.samples(answers))
        _queued()
        result = await pending
        check_group(result, self.on_error)
        return result


def resolve_tool_hints(cls: type[RewardEnvironment]) -> None:
    """Resolve the type hints and signature of ``cls``'s own tools once: the package reads
    them on every call, and text hints (``from __future__ import annotations``) would be
    compiled each time."""
    for fn in vars(cls).values():
        if callable(fn) and getattr(fn, "_env_tool", False):
            fn.__annotations__ = typing.get_type_hints(fn, include_extras=True)
            setattr(fn, "__signature__", inspect.signature(fn))  # noqa: B010 - what inspect reads


resolve_tool_hints(RewardEnvironment)


def environment_class(name: str, tasks: TaskSet, submit_samples: SubmitSamples,
                      on_error: OnError) -> type[RewardEnvironment]:
    """The served reward's environment class (named ``name``), scoring through
    ``submit_samples``."""
    attrs = {"ors_name": name, "task_set": tasks, "on_error": on_error,
             "submit_samples": staticmethod(submit_samples)}
    return type(f"RewardEnvironment[{name}]", (RewardEnvironment,), attrs)


def _queued() -> None:
    signal = QUEUED.get(None)
    if signal is not None:
        signal()


def tool_output(result: BatchResult, on_error: OnError, split: str, index: int) -> ToolOutput:
    """``submit``'s output: the score as ``reward`` (``None`` for a failed sample under
    ``on_error: skip``), ``finished``, and status, error and extra info in ``metadata``."""
    status, error = result.statuses[0], result.errors[0]
    reward: float | None = float(result.scores[0])
    if status != "ok" and on_error == "skip":
        reward = None
    if status == "ok":
        text = f"reward {reward:g}"
    elif reward is None:
        text = f"no reward: the reward did not score this answer ({status}); it is left out of training"
    else:
        text = f"reward {reward:g} (error_score: the reward did not score this answer, {status})"
    metadata = {"status": status, "error": error, "split": split, "index": index,
                "extra_info": json_data({k: v[0] for k, v in result.extra_info.items()})}
    # Built, not validated: every field has its model's type by construction, and checking
    # the metadata against the package's JSON types costs more than scoring the sample.
    return ToolOutput.model_construct(blocks=[TextBlock.model_construct(text=text)], metadata=metadata,
                                      reward=reward, finished=True)


def check_group(result: BatchResult, on_error: OnError) -> None:
    """``GroupScore.reward`` cannot be left empty, so under ``on_error: skip`` a group with
    a failed candidate is an error naming it (the protocol's rule: never a fabricated
    score)."""
    failed = [i for i, ok in enumerate(result.trainable) if not ok]
    if failed and on_error == "skip":
        i = failed[0]
        raise ValueError(f"candidate {i} was not scored ({result.statuses[i]}: {result.errors[i]}); "
                         f"under on_error: skip a group score cannot leave it out")


def group_scores(result: BatchResult) -> list[dict[str, Any]]:
    """``score_group``'s scores, one per candidate: ``GroupScore``'s fields as plain data."""
    return [{"reward": float(score), "metadata": {"status": status, "error": error}}
            for score, status, error in zip(result.scores, result.statuses, result.errors)]
