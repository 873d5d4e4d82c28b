"""The environment's tasks: dataset rows -> tasks by split, and the names clients see.

No HTTP and no ``openreward`` here: the command reads the files (with the CLI's row
readers) and hands :func:`task_from_row` each row; the routes look tasks up by split
and index.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, NamedTuple

from ...errors import BadRequest
from ...results import Provenance
from ...samples import Prompt, Sample, normalise_prompt

SplitType = Literal["train", "validation", "test"]
DEFAULT_SPLIT = "train"
ROLES = ("system", "user", "assistant")  # the roles of an ORS message
_SPLIT_NAME = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


class Task(NamedTuple):
    """One dataset row: what the policy is asked, and what its answer is scored against."""

    data_source: str
    prompt: Prompt
    ground_truth: Any
    extra_info: Mapping[str, Any] | None = None

    def sample(self, answer: str) -> Sample:
        """The sample that scores ``answer`` to this task."""
        return Sample(self.data_source, answer, self.ground_truth, self.extra_info, self.prompt)

    def samples(self, answers: Sequence[str]) -> list[Sample]:
        """:meth:`sample` for each of ``answers`` (a group's: one comprehension, no call each)."""
        source, truth, extra, prompt = self.data_source, self.ground_truth, self.extra_info, self.prompt
        return [Sample(source, answer, truth, extra, prompt) for answer in answers]


@dataclass(frozen=True)
class TaskSet:
    """Tasks by split, in the order the splits were given."""

    splits: Mapping[str, Sequence[Task]]

    def task(self, split: str, index: int) -> Task:
        """The task, or a 400 naming the split or the index at fault."""
        return self.tasks(split)[self.check_index(split, index)]

    def tasks(self, split: str) -> Sequence[Task]:
        """The split's tasks, or a 400 naming the splits there are."""
        try:
            return self.splits[split]
        except (KeyError, TypeError):
            known = ", ".join(repr(s) for s in self.splits)
            raise BadRequest(400, f"unknown split {split!r}; this environment has {known}") from None

    def check_index(self, split: str, index: int) -> int:
        """``index`` if it names a task of ``split`` (0 to n-1), else a 400."""
        n = len(self.tasks(split))
        if not 0 <= index < n:
            raise BadRequest(400, f"task index {index} is out of range for split {split!r} "
                                  f"({n} tasks: 0 to {n - 1})")
        return index

    def counts(self) -> dict[str, int]:
        """``{split: number of tasks}``."""
        return {name: len(tasks) for name, tasks in self.splits.items()}


def task_spec(split: str, index: int, task: Task) -> dict[str, Any]:
    """What a client sees of a task (``/tasks``, ``/task``): where it is and its data source.
    Neither the ground truth nor the extra info (which often holds the solution) is shown."""
    return {"split": split, "index": index, "data_source": task.data_source}


def spec_location(spec: Mapping[str, Any]) -> tuple[str, int]:
    """The split and index of a task spec a client sends back (``/create`` with
    ``task_spec``), or a 400: a session's task is always one this environment listed."""
    split, index = spec.get("split"), spec.get("index")
    if not isinstance(split, str) or not isinstance(index, int) or isinstance(index, bool):
        raise BadRequest(400, "task_spec must be one this environment listed (it names its 'split' "
                              "and 'index'); or create the session with split and index")
    return split, index


def split_type(name: str) -> SplitType:
    """The ORS split type: ``train``, ``validation`` or ``test`` by name, else ``validation``
    (the convention of the openreward package's server)."""
    return name if name in ("train", "validation", "test") else "validation"  # type: ignore[return-value]


def parse_tasks_option(text: str) -> tuple[str, Path]:
    """``--tasks SPLIT=FILE`` or ``--tasks FILE`` (split ``train``): the split and the file.
    A bare path that exists is a file even when its name holds ``=``."""
    split, sep, file = text.partition("=")
    if not sep or Path(text).exists():
        return DEFAULT_SPLIT, Path(text)
    if not _SPLIT_NAME.match(split):
        raise ValueError(f"--tasks {text}: the split name {split!r} must be 1-64 letters, digits, "
                         f"'_', '.' or '-' (--tasks SPLIT=FILE)")
    if not file:
        raise ValueError(f"--tasks {text}: no file after '='")
    return split, Path(file)


def task_from_row(row: Mapping[str, Any]) -> Task:
    """A task from a dataset row: ``data_source``, ``prompt`` (text or chat messages),
    ``ground_truth`` (or verl's ``reward_model.ground_truth``), optional ``extra_info``.
    :class:`ValueError` says what the row lacks."""
    missing = [k for k in ("data_source", "prompt") if k not in row]
    truth = _ground_truth(row)
    if truth is _MISSING:
        missing.append("ground_truth (or reward_model.ground_truth)")
    if missing:
        raise ValueError(f"missing {', '.join(missing)}; its columns: {', '.join(map(repr, row)) or 'none'}")
    if not isinstance(row["data_source"], str):
        raise ValueError(f"data_source must be text, not {type(row['data_source']).__name__}")
    prompt = normalise_prompt(row["prompt"], strict=True)
    if prompt is None:
        raise ValueError("the prompt is empty: a task needs one (the environment's prompt)")
    if not isinstance(prompt, str):
        bad = [m["role"] for m in prompt if m["role"] not in ROLES]
        if bad:
            raise ValueError(f"a prompt message has role {bad[0]!r}; an ORS prompt has {', '.join(ROLES)}")
    extra = row.get("extra_info")
    if extra is not None and not isinstance(extra, Mapping):
        raise ValueError(f"extra_info must be a mapping or null, not {type(extra).__name__}")
    return Task(row["data_source"], prompt, truth, dict(extra) if extra is not None else None)


_MISSING = object()


def _ground_truth(row: Mapping[str, Any]) -> Any:
    if "ground_truth" in row:
        return row["ground_truth"]
    reward_model = row.get("reward_model")
    if isinstance(reward_model, Mapping) and "ground_truth" in reward_model:
        return reward_model["ground_truth"]
    return _MISSING


def environment_name(provenance: Provenance) -> str:
    """The environment's name: the plugin's (``gsm8k``), a reward file's name without
    ``.py``, or ``composite``; lower case, letters, digits, ``_`` and ``-`` only (a URL
    path segment)."""
    name = provenance.name
    if provenance.kind == "file" and provenance.path:
        name = Path(provenance.path).stem
    return re.sub(r"[^a-z0-9_-]+", "_", name.lower()).strip("_") or "reward"
