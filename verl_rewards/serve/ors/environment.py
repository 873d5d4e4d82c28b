"""The served reward as an ``openreward`` environment: its splits and tasks, its prompt,
and the tool ``submit(answer)``, whose output carries the reward's score.

The environment is a subclass of the ``openreward`` package's own ``Environment``, so the
tool's schema, its argument checking (a wrong argument is the protocol's
``input_validation`` error), and the rule that a finished episode takes no further call
are the package's. Scoring is not done here: ``submit`` puts its one sample on the
service's queue (the shared pool, batched with every other request) through the
``submit_samples`` it is built with.

Under ``on_error: skip`` a sample the reward did not score has no reward (``None``):
never ``error_score``, which would be trained on as a genuine score.
"""

from __future__ import annotations

import contextvars
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, ClassVar

from openreward.environments import (
    Environment,
    GroupCandidate,
    GroupScore,
    Message,
    Split,
    TextBlock,
    ToolOutput,
    tool,
)
from pydantic import BaseModel, Field

from ...config import OnError
from ...results import BatchResult
from ...samples import Sample
from ...wire import plain
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
        samples = [self.task.sample(final_text(c.messages)) for c in candidates]
        pending = type(self).submit_samples(samples)
        _queued()
        return group_scores(await pending, self.on_error)


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
    reward: float | None = result.scores[0]
    if status != "ok" and on_error == "skip":
        reward = None
    if status == "ok":
        text = f"reward {reward:g}"
    elif reward is None:
        text = f"no reward: the reward did not score this answer ({status}); it is left out of training"
    else:
        text = f"reward {reward:g} (error_score: the reward did not score this answer, {status})"
    metadata = {"status": status, "error": error, "split": split, "index": index,
                "extra_info": plain({k: v[0] for k, v in result.extra_info.items()})}
    return ToolOutput(blocks=[TextBlock(text=text)], metadata=metadata, reward=reward, finished=True)


def group_scores(result: BatchResult, on_error: OnError) -> list[GroupScore]:
    """``score_group``'s scores, one per candidate. ``GroupScore.reward`` cannot be left
    empty, so under ``on_error: skip`` a group with a failed candidate is an error naming it
    (the protocol's rule: never a fabricated score)."""
    failed = [i for i, ok in enumerate(result.trainable) if not ok]
    if failed and on_error == "skip":
        i = failed[0]
        raise ValueError(f"candidate {i} was not scored ({result.statuses[i]}: {result.errors[i]}); "
                         f"under on_error: skip a group score cannot leave it out")
    return [GroupScore(reward=score, metadata={"status": status, "error": error})
            for score, status, error in zip(result.scores, result.statuses, result.errors)]


def final_text(messages: Sequence[Any]) -> str:
    """The text of the last assistant message (its text blocks joined), or ``""``."""
    for message in reversed(messages):
        if message.role == "assistant":
            return "".join(b.text for b in message.blocks if getattr(b, "type", None) == "text")
    return ""
