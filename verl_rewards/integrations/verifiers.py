"""verifiers 0.4 adapter (``verifiers.v1``): a plugin as a task reward.

.. code-block:: python

    import verifiers.v1 as vf
    from verl_rewards.integrations.verifiers import reward_func

    class MathTask(vf.Task[MathData]):
        gsm8k = vf.reward(reward_func("gsm8k", timeout_s=10))

or plugged by import string, the reward chosen by ``VERL_REWARDS_PLUGIN`` (or a
whole section in ``VERL_REWARDS_CONFIG``, a JSON object or a YAML file)::

    TaskConfig(rewards={"gsm8k": vf.RewardFunctionConfig(
        fn="verl_rewards.integrations.verifiers:score")})

verifiers calls a task reward as ``fn(task=<TaskData>, trace=<Trace>)`` and
awaits it. The response is ``trace.last_reply``; ground truth, data source and
extra info are the task data's ``answer``, ``data_source`` and ``info`` fields
(names configurable). The reward is one float: verifiers sums every key of a
returned dict into the reward, so a plugin's extra keys go to
``trace.metrics`` instead (numbers only, as ``<reward>/<key>``), with
``<reward>/failed`` (0 or 1) and, for a failed sample, its status and error
under ``trace.info["verl_rewards"][<reward>]``. A failed sample scores
``error_score`` and the rollout stays ok; with ``on_error: raise`` the
``RewardError`` reaches verifiers, which fails that rollout (the rollouts
scored in the same batch keep their scores). ``on_error: skip`` is refused:
verifiers gives a reward no way to leave one rollout out (``docs/skip.md``).
Calls verifiers makes at once are scored as one batch, off its event loop.
See ``docs/integrations/verifiers.md``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any, NamedTuple

from verl_rewards.integrations._batching import Microbatcher
from verl_rewards.integrations._common import ProcessCache, selection_key
from verl_rewards.integrations._section import (
    Reward,
    SampleResult,
    env_section,
    numeric,
    reward_name,
    sample_result,
    scorer_for,
    section_of,
)
from verl_rewards.samples import Sample, normalise_prompt
from verl_rewards.scorer import Scorer

__all__ = ["Fields", "VerifiersReward", "reward_func", "score"]

INFO_KEY = "verl_rewards"  # trace.info[INFO_KEY][reward name]: a failed sample's status and error


class Fields(NamedTuple):
    """Which task data fields become the plugin's ``ground_truth``, ``data_source`` and ``extra_info``."""

    answer: str = "answer"
    data_source: str = "data_source"
    info: str = "info"
    default_data_source: str = "verifiers"  # when the task has no data source field


class _Entry(NamedTuple):
    scorer: Scorer
    batcher: Microbatcher[Sample]  # each rollout's call its own caller


_entries: ProcessCache[_Entry] = ProcessCache()


def reward_func(
    reward: Reward, *, answer_field: str = "answer", data_source_field: str = "data_source",
    info_field: str = "info", data_source: str = "verifiers", name: str | None = None,
    **options: Any,
) -> VerifiersReward:
    """A verifiers task reward ``async (task, trace) -> float`` scoring with ``reward``
    (a plugin name or ``dist:name``, or a whole reward section).

    ``options`` are reward-section keys (``kwargs``, ``timeout_s``, ``on_error``,
    ``error_score``, ...); ``*_field`` name the task data fields read, and
    ``data_source`` is used when the task has none. ``name`` is the reward's
    name in the trace (default: the plugin's). The reward is imported and
    checked now: a wrong name fails here, not in a rollout.
    """
    section = section_of(reward, options)
    scorer = _entry(section).scorer
    fields = Fields(answer_field, data_source_field, info_field, data_source)
    return VerifiersReward(section, fields, name or reward_name(scorer))


async def score(task: Any, trace: Any) -> float:
    """The reward that ``VERL_REWARDS_PLUGIN`` / ``VERL_REWARDS_CONFIG`` select, for
    ``vf.RewardFunctionConfig(fn="verl_rewards.integrations.verifiers:score")``."""
    section = env_section()
    entry = _entries.peek(selection_key(section))
    if entry is None:  # the first call imports the reward: keep verifiers' loop free
        entry = await asyncio.to_thread(_entry, section)
    return await _score(entry, Fields(), reward_name(entry.scorer), task, trace)


class VerifiersReward:
    """A verifiers task reward over a verl-rewards section; pickles as the section."""

    def __init__(self, section: Mapping[str, Any], fields: Fields, name: str) -> None:
        self.__name__ = self.__qualname__ = name  # verifiers records the reward under it
        self.section = dict(section)
        self.fields = fields

    def __repr__(self) -> str:
        return f"VerifiersReward({self.__name__})"

    async def __call__(self, task: Any, trace: Any) -> float:
        entry = _entries.peek(selection_key(self.section))
        if entry is None:  # in a process that has not built it yet
            entry = await asyncio.to_thread(_entry, self.section)
        return await _score(entry, self.fields, self.__name__, task, trace)


async def _score(entry: _Entry, fields: Fields, name: str, task: Any, trace: Any) -> float:
    # With on_error: raise, a failed sample's RewardError reaches verifiers, which fails this rollout.
    result = sample_result(await entry.batcher.score(sample_of(task, trace, fields)), 0)
    record(trace, name, result)
    return result.score


def sample_of(task: Any, trace: Any, fields: Fields) -> Sample:
    """The plugin's sample for a verifiers task data and trace."""
    source = _field(task, fields.data_source)
    info = _field(task, fields.info)
    return Sample(
        fields.default_data_source if source is None else str(source),
        str(trace.last_reply),
        _field(task, fields.answer),
        dict(info) if isinstance(info, Mapping) else None,
        normalise_prompt(getattr(task, "prompt_text", None)),
    )


def record(trace: Any, name: str, result: SampleResult) -> None:
    """Put a sample's extra keys into the trace's metrics, and its failure into ``trace.info``."""
    trace.record_metrics({f"{name}/{k}": v for k, v in numeric(result.extra).items()})
    trace.record_metric(f"{name}/failed", float(result.status != "ok"))
    if result.status != "ok":
        trace.info.setdefault(INFO_KEY, {})[name] = {"status": result.status, "error": result.error}


def _entry(section: Mapping[str, Any]) -> _Entry:
    def build() -> _Entry:
        scorer = scorer_for(section, "verifiers")
        return _Entry(scorer, Microbatcher(scorer))

    return _entries.get(selection_key(section), build)


def _field(task: Any, name: str) -> Any:
    if isinstance(task, Mapping):
        return task.get(name)
    return getattr(task, name, None)
