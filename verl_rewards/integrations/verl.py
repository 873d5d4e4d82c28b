"""verl adapter: an installed plugin as verl's ``custom_reward_function``.

.. code-block:: bash

    reward.custom_reward_function.path=pkg://verl_rewards.integrations.verl \\
    reward.custom_reward_function.name=compute_score \\
    +reward.custom_reward_function.reward_kwargs.plugin=gsm8k \\
    +reward.custom_reward_function.reward_kwargs.method=flexible

verl calls ``compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=..., **reward_kwargs)``. ``reward_kwargs.plugin`` (or ``path`` and
``name`` for a reward file) selects the reward; every other key is passed to it.
The reward is resolved once per process (and selection + kwargs), by its real
module name, so the function works in verl's driver, its Ray reward workers and
its process pools: it is a module-level function of a real module and pickles
by reference. See ``docs/integrations/verl.md``.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any, NamedTuple

# Absolute imports: verl may also load this file by path, outside its package.
from verl_rewards.errors import ConfigError
from verl_rewards.integrations._common import ProcessCache, plain, selection_key
from verl_rewards.reference import RewardRef
from verl_rewards.resolve import LoadedReward, resolve
from verl_rewards.samples import Sample
from verl_rewards.scoring import Limits, Outcome, score_samples, validate

__all__ = ["compute_score", "compute_score_async", "compute_score_batch", "reference"]

# verl's reward loop adds these to every call when it serves a reward model
# (GenRM); they reach the plugin only if its signature accepts them.
HOST_KWARGS = ("reward_router_address", "reward_model_tokenizer")

_WHERE = "reward.custom_reward_function.reward_kwargs"

VerlResult = Any  # a float, or a dict with a float "score" and extra keys


class _Entry(NamedTuple):
    loaded: LoadedReward
    sample_fn: Callable[..., Any]  # verl signature, any plugin shape
    host_kwargs: frozenset[str]  # the HOST_KWARGS the plugin accepts


_entries: ProcessCache[_Entry] = ProcessCache()


def compute_score(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
    **reward_kwargs: Any,
) -> VerlResult:
    """Score one response with the plugin that ``reward_kwargs`` selects.

    Returns what the plugin returns, validated: a float, or a dict with a
    float ``"score"`` (verl keeps the other keys as extra info). Raises a
    :class:`~verl_rewards.errors.ConfigError` naming the fault when
    ``reward_kwargs`` selects no plugin or an unknown one.
    """
    host = _pop_host_kwargs(reward_kwargs)
    entry = _entry(reward_kwargs)
    value = entry.sample_fn(data_source, solution_str, ground_truth, extra_info,
                            **_accepted(host, entry))
    return _result(value, entry.loaded)


async def compute_score_async(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
    **reward_kwargs: Any,
) -> VerlResult:
    """:func:`compute_score` for verl's reward loop, which awaits a coroutine
    function: an async plugin runs on verl's event loop, a sync one in a thread."""
    host = _pop_host_kwargs(reward_kwargs)
    entry = _entries.peek(selection_key(reward_kwargs))
    if entry is None:  # the first call imports the plugin: keep the loop free
        entry = await asyncio.to_thread(_entry, reward_kwargs)
    accepted = _accepted(host, entry)
    loaded = entry.loaded
    if loaded.is_async and loaded.shape == "sample" and not accepted:
        value = await loaded.invoke(data_source, solution_str, ground_truth, extra_info)
    else:
        value = await asyncio.to_thread(entry.sample_fn, data_source, solution_str,
                                        ground_truth, extra_info, **accepted)
    return _result(value, loaded)


def compute_score_batch(
    data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None, **reward_kwargs: Any,
) -> list[VerlResult]:
    """Score a batch for verl's ``BatchRewardManager`` (``reward_manager.name=batch``).

    A batch plugin gets one call; an async plugin's calls run concurrently; the
    plugin's declared ``timeout_s`` applies per sample. The first failed sample
    raises :class:`~verl_rewards.errors.RewardError` naming the plugin and index.
    """
    _pop_host_kwargs(reward_kwargs)  # a batch call cannot pass per-call objects on
    entry = _entry(reward_kwargs)
    extras = [None] * len(solution_strs) if extra_infos is None else extra_infos
    samples = [Sample(d, s, g, e) for d, s, g, e in
               zip(data_sources, solution_strs, ground_truths, extras)]
    limits = Limits(timeout_s=entry.loaded.meta.timeout_s)
    outcomes = score_samples(entry.loaded, samples, limits, stop_on_error=True)
    return [_from_outcome(o) for o in outcomes]


def _entry(reward_kwargs: Mapping[str, Any]) -> _Entry:
    return _entries.get(selection_key(reward_kwargs), lambda: _build(reward_kwargs))


def _build(reward_kwargs: Mapping[str, Any]) -> _Entry:
    loaded = resolve(reference(reward_kwargs))
    return _Entry(loaded, loaded.sample_fn, _host_kwargs_accepted(loaded))


def reference(reward_kwargs: Mapping[str, Any]) -> RewardRef:
    """The :class:`RewardRef` that verl's ``reward_kwargs`` select (validated)."""
    options = dict(plain(reward_kwargs))
    plugin, path = options.pop("plugin", None), options.pop("path", None)
    if (plugin is None) == (path is None):
        raise ConfigError(_selection_message(plugin, reward_kwargs))
    if plugin is not None:
        return RewardRef.from_config({"plugin": plugin, "kwargs": options})
    name = options.pop("name", "compute_score")
    return RewardRef.from_config({"path": path, "name": name, "kwargs": options})


def _selection_message(plugin: Any, reward_kwargs: Mapping[str, Any]) -> str:
    given = "both 'plugin' and 'path'" if plugin is not None else (
        f"neither (keys: {sorted(reward_kwargs)})")
    return (
        f"verl_rewards.integrations.verl: {_WHERE} must set exactly one of 'plugin' "
        f"(an installed reward plugin, see `verl-rewards list`) or 'path' (a reward .py "
        f"file, with 'name'); it sets {given}. "
        f"Example: +{_WHERE}.plugin=gsm8k"
    )


def _pop_host_kwargs(reward_kwargs: dict[str, Any]) -> dict[str, Any]:
    if "reward_router_address" not in reward_kwargs and "reward_model_tokenizer" not in reward_kwargs:
        return {}
    return {k: reward_kwargs.pop(k) for k in HOST_KWARGS if k in reward_kwargs}


def _accepted(host: Mapping[str, Any], entry: _Entry) -> dict[str, Any]:
    if not host or not entry.host_kwargs:
        return {}
    return {k: v for k, v in host.items() if k in entry.host_kwargs}


def _host_kwargs_accepted(loaded: LoadedReward) -> frozenset[str]:
    try:
        params = inspect.signature(loaded.call).parameters
    except (TypeError, ValueError):
        return frozenset()
    if any(p.kind is p.VAR_KEYWORD for p in params.values()):
        return frozenset(HOST_KWARGS)
    return frozenset(k for k in HOST_KWARGS if k in params)


def _result(value: Any, loaded: LoadedReward) -> VerlResult:
    score, extra = validate(value, loaded.display_name, 0)  # verl scores one sample per call
    return score if extra is None else {"score": score, **extra}


def _from_outcome(outcome: Outcome) -> VerlResult:
    assert outcome.score is not None  # stop_on_error raised for failed samples
    return outcome.score if outcome.extra is None else {"score": outcome.score, **outcome.extra}


# Older verl (spec_from_file_location("custom_module", path)) and verl's file
# paths load this file under a made-up module name. Hand out the real module's
# functions then, so they pickle by reference to a module every process imports.
if __name__ != "verl_rewards.integrations.verl":
    from verl_rewards.integrations.verl import (
        compute_score,
        compute_score_async,
        compute_score_batch,
    )
