"""reasoning-gym's tasks and each task's scorer, built once per process and configuration.

A scorer is the task's dataset object's bound ``score_answer``, as
``reasoning_gym.get_score_answer_fn`` builds it (the dataset class with its
config), so tasks whose scoring reads the config or data loaded at
construction score as the dataset that generated the entry. Building one
loads the task's data files (up to ~2 s, ``arc_agi``); it never generates an
item. Nine tasks' scorers would run the answer as code: ``guard`` rebuilds
them so that they cannot.
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib.metadata
import json
import threading
from collections.abc import Callable, Mapping
from typing import Any

from reasoning_gym.factory import DATASETS

from .guard import guarded

Scorer = Callable[[Any, dict[str, Any]], Any]

# Routes by the entry's metadata.source_dataset (reasoning-gym's CompositeDataset does the same).
COMPOSITE = "composite"
TASKS: tuple[str, ...] = tuple(sorted(DATASETS))
# The distribution's version: reasoning_gym.__version__ still says 0.1.19 in 0.1.25.
VERSION = importlib.metadata.version("reasoning-gym")

# Scoring configs that differ from the task's default config, and why. word_ladder's
# default loads 4-letter words only and fails (KeyError) on entries generated with
# 3- or 5-letter words; its word sets per length do not depend on the range, so
# loading every length scores each entry as the dataset that generated it.
SCORING_DEFAULTS: Mapping[str, Mapping[str, Any]] = {
    "word_ladder": {"min_word_length": 3, "max_word_length": 5},
}

_lock = threading.Lock()
_scorers: dict[tuple[str, str], Scorer] = {}


def check_task(task: str, data_source: str = "") -> str:
    """``task`` when reasoning-gym knows it; else a ValueError naming close matches."""
    if task in DATASETS:
        return task
    close = difflib.get_close_matches(task, TASKS, n=3, cutoff=0.6)
    hint = f"; close matches: {', '.join(close)}" if close else ""
    where = f" (data_source {data_source!r})" if data_source else ""
    raise ValueError(
        f"reasoning-gym {VERSION} has no task {task!r}{where}{hint}; "
        f"`verl-rewards show reasoning_gym` lists its {len(TASKS)} tasks"
    )


def scorer(task: str, config: Mapping[str, Any] | None = None) -> Scorer:
    """The task's ``score_answer``, for its scoring defaults updated by ``config``; cached."""
    key = (task, json.dumps(config, sort_keys=True, default=repr) if config else "")
    found = _scorers.get(key)
    if found is not None:
        return found
    with _lock:  # one build per key, however many threads ask at once
        if key not in _scorers:
            _scorers[key] = _build(task, {**SCORING_DEFAULTS.get(task, {}), **(config or {})})
        return _scorers[key]


def _build(task: str, config: Mapping[str, Any]) -> Scorer:
    if task == COMPOSITE:
        raise ValueError("the composite task has no scorer of its own: the entry's metadata.source_dataset "
                         "names the task to score with")
    dataset_cls, config_cls = DATASETS[check_task(task)]
    try:
        built = config_cls(**_nested(config_cls, config))
    except TypeError as e:
        fields = ", ".join(f.name for f in dataclasses.fields(config_cls))
        raise ValueError(f"configs[{task!r}]: {e}; {config_cls.__name__} fields: {fields}") from e
    score: Scorer = guarded(task, dataset_cls(config=built).score_answer)
    return score


def _nested(config_cls: type, values: Mapping[str, Any]) -> dict[str, Any]:
    """``values`` with each mapping given for a dataclass-valued field built into that dataclass
    (``arc_agi``'s ``board_format_opts``), so YAML configs can set them."""
    out = dict(values)
    for f in dataclasses.fields(config_cls):
        given = out.get(f.name)
        if not isinstance(given, Mapping):
            continue
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        if dataclasses.is_dataclass(default) and not isinstance(default, type):
            out[f.name] = type(default)(**given)
    return out
