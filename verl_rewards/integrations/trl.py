"""TRL adapter: an installed plugin as an entry of ``GRPOTrainer(reward_funcs=[...])``.

.. code-block:: python

    from verl_rewards.integrations.trl import reward_func

    trainer = GRPOTrainer(
        model=...,
        reward_funcs=[reward_func("gsm8k", ground_truth_column="answer")],
        train_dataset=dataset,
    )

TRL calls ``f(prompts=..., completions=..., completion_ids=..., **columns)``
with every dataset column as a list, logs the function by its ``__name__``,
and awaits it when it is async (TRL >= 1.14 for callable objects). The object
returned here is picklable (TRL's async GRPO ships reward functions to a
spawned process): it holds a :class:`~verl_rewards.RewardRef`, and each
process resolves the plugin itself, once. See ``docs/integrations/trl.md``.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Mapping, Sequence
from importlib import metadata
from typing import Any, NamedTuple

from ..config import OnError, RewardConfig
from ..errors import ConfigError, RewardKwargsError
from ..hosts import check_skip, trl_scores
from ..limits import AUTO, Timeout
from ..preflight import rekeyed
from ..results import BatchResult
from ..samples import Sample, message_text, normalise_prompt
from ..scorer import Scorer
from ..spec import RewardSpec, identity_key
from ._common import ADAPTER_DEFAULTS, ProcessCache, score_batch, started

__all__ = ["AsyncPluginReward", "PluginReward", "reward_func"]

# Keyword arguments TRL adds to every call that are not dataset columns.
TRL_KWARGS = frozenset({"completion_ids", "trainer_state", "log_extra", "log_metric",
                        "environments"})

# TRL awaits async callable *objects* (not only coroutine functions) from 1.14 on.
_TRL_AWAITS_OBJECTS = (1, 14)


class Columns(NamedTuple):
    """How dataset columns become the plugin's fields."""

    ground_truth: str | None = "ground_truth"  # None: the plugin needs none ("")
    data_source: str | None = None  # a fixed value, else the column below
    data_source_column: str = "data_source"  # used when present in the batch
    extra_info: tuple[str, ...] | None = None  # None: every remaining column


def reward_func(
    plugin: str | None = None,
    *,
    reward: Mapping[str, Any] | None = None,
    ground_truth_column: str | None = "ground_truth",
    data_source: str | None = None,
    data_source_column: str = "data_source",
    extra_info_columns: Sequence[str] | None = None,
    kwargs: Mapping[str, Any] | None = None,
    on_error: OnError = "score",
    error_score: float = 0.0,
    timeout_s: Timeout = AUTO,
    max_concurrency: int = 32,
    async_: bool | None = None,
    name: str | None = None,
) -> PluginReward | AsyncPluginReward:
    """A TRL reward function scoring completions with ``plugin`` (``name`` or ``dist:name``),
    or with the ``reward`` section given instead (``path``/``name`` for a reward file,
    ``rewards``/``route`` for several weighted rewards, and any other section option).

    * ``ground_truth_column``: the dataset column passed as ``ground_truth``.
    * ``data_source``: a fixed data source; otherwise the ``data_source_column``
      value when the dataset has that column, else ``""``.
    * ``extra_info_columns``: the columns gathered into ``extra_info`` (default:
      every column not used above).
    * ``kwargs``: passed to the plugin on every call (or to its class).
    * ``on_error``: ``"score"`` gives a failed sample ``error_score`` and logs a
      warning naming the plugin and index; ``"skip"`` returns None for it (TRL
      leaves it out of the reward mean and gives it no advantage); ``"raise"``
      raises ``RewardError``.
    * ``timeout_s``, ``max_concurrency``: per-sample limit (default: the plugin's
      declared timeout, else 30 s) and async fan-out.
    * ``async_``: return an async callable; by default, when the plugin is async
      and the installed TRL awaits async callable objects (>= 1.14).
    * ``name``: the ``__name__`` TRL logs under (default: the plugin's name, or
      ``composite``), to tell apart two uses of one plugin.

    The plugin is found, imported and checked now (never instantiated: a class
    reward's model loads where it scores), so a wrong name, kwarg or signature
    fails here rather than in the first training step.
    """
    try:
        scorer = Scorer.from_config({
            "on_error": on_error, "error_score": error_score, "timeout_s": timeout_s,
            "max_concurrency": max_concurrency, **_selection(plugin, reward, kwargs),
        }, defaults=ADAPTER_DEFAULTS)
    except RewardKwargsError as e:  # named as the caller wrote it, not as the CLI's key
        raise rekeyed(e, _kwargs_argument if reward is None else _section_kwargs) from None
    check_skip("trl", scorer.config.on_error)
    columns = _columns(ground_truth_column, data_source, data_source_column, extra_info_columns)
    cls = AsyncPluginReward if _use_async(scorer.info.is_async, async_) else PluginReward
    return cls(scorer.ref, columns, scorer.config, name or _default_name(scorer.ref))


def _selection(plugin: str | None, reward: Mapping[str, Any] | None,
               kwargs: Mapping[str, Any] | None) -> dict[str, Any]:
    if (plugin is None) == (reward is None):
        raise ConfigError("reward_func needs a plugin name, or a reward section as reward={...} "
                          "(path/name for a file, rewards/route for several rewards); not both")
    if reward is None:
        return {"plugin": plugin, "kwargs": dict(kwargs or {})}
    if kwargs:
        raise ConfigError("with reward={...}, put kwargs inside it (reward['kwargs'], or "
                          "reward['rewards'][NAME]['kwargs'])")
    return dict(reward)


def _kwargs_argument(component: str | None) -> str:
    """Where a ``reward_func(plugin, kwargs=...)`` caller wrote the reward's kwargs."""
    return "kwargs="


def _section_kwargs(component: str | None) -> str:
    """Where a ``reward_func(reward={...})`` caller wrote a reward's kwargs."""
    return "reward['kwargs']" if component is None else f"reward['rewards'][{component!r}]['kwargs']"


def _default_name(spec: RewardSpec) -> str:
    return "composite" if not hasattr(spec, "name") else str(spec.name)


_scorers: ProcessCache[Scorer] = ProcessCache()


class _RewardBase:
    """Shared state and scoring of the sync and async reward functions."""

    def __init__(self, spec: RewardSpec, columns: Columns, config: RewardConfig, name: str) -> None:
        self.__name__ = self.__qualname__ = name  # TRL names the reward's metrics by it
        self.ref = spec
        self.columns = columns
        self.config = config

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.ref.display_name})"

    def score(self, completions: Sequence[Any], columns: Mapping[str, Any],
              prompts: Sequence[Any] | None = None) -> list[float | None]:
        """Score one TRL batch: one float per completion, in order; with
        ``on_error='skip'``, None for a failed one (TRL leaves it out of the
        reward mean and gives it no advantage)."""
        samples = samples_from_batch(self.columns, completions, columns, prompts)
        scorer = _scorers.get(identity_key(self.ref, self.config),
                              lambda: started(Scorer(self.ref, self.config)))
        result = score_batch(scorer, samples)
        self._log_failures(columns.get("log_metric"), result)
        return trl_scores(result, self.config.on_error)

    def _log_failures(self, log_metric: Any, result: BatchResult) -> None:
        if callable(log_metric) and len(result):  # failed or timed out
            failed = (len(result) - result.n_ok) / len(result)
            log_metric(f"rewards/{self.__name__}/failed", failed)
            if self.config.on_error == "skip":
                log_metric(f"rewards/{self.__name__}/skipped", failed)


class PluginReward(_RewardBase):
    """A synchronous TRL reward function over a verl-rewards plugin."""

    def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                 **columns: Any) -> list[float | None]:
        return self.score(completions, columns, prompts)


class AsyncPluginReward(_RewardBase):
    """An async TRL reward function: TRL gathers it with its other async rewards."""

    async def __call__(self, prompts: Sequence[Any], completions: Sequence[Any],
                       **columns: Any) -> list[float | None]:
        # The core scores on its own event loop; a thread keeps TRL's loop free.
        return await asyncio.to_thread(self.score, completions, columns, prompts)


def samples_from_batch(
    spec: Columns, completions: Sequence[Any], columns: Mapping[str, Any],
    prompts: Sequence[Any] | None = None,
) -> list[Sample]:
    """The plugin's samples for one TRL batch (one per completion); each carries its
    prompt (text, or the conversation), which reaches rewards that ask for it."""
    n = len(completions)
    truths = _column(columns, spec.ground_truth, n, "ground_truth_column") \
        if spec.ground_truth is not None else [""] * n
    sources = _data_sources(spec, columns, n)
    extras = _extra_infos(spec, columns, n)
    given = list(prompts) if prompts is not None and len(prompts) == n else [None] * n
    return [Sample(sources[i], completion_text(completions[i]), truths[i], extras[i],
                   normalise_prompt(given[i])) for i in range(n)]


def completion_text(completion: Any) -> str:
    """A completion as text: itself, or the last assistant message's content."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, Mapping):
        return _content(completion)
    messages = list(completion)
    for message in reversed(messages):
        if isinstance(message, Mapping) and message.get("role") == "assistant":
            return _content(message)
    return _content(messages[-1]) if messages else ""


def _content(message: Any) -> str:
    return message_text(message.get("content") if isinstance(message, Mapping) else message)


def _column(columns: Mapping[str, Any], name: str, n: int, option: str) -> list[Any]:
    if name not in columns:
        available = sorted(k for k in columns if k not in TRL_KWARGS)
        raise ConfigError(
            f"the batch TRL passed has no column '{name}' (set {option}=...); "
            f"its columns are: {', '.join(available) or 'none'}"
        )
    values = list(columns[name])
    if len(values) != n:
        raise ConfigError(f"column '{name}' has {len(values)} values for {n} completions")
    return values


def _data_sources(spec: Columns, columns: Mapping[str, Any], n: int) -> list[str]:
    if spec.data_source is not None:
        return [spec.data_source] * n
    if spec.data_source_column in columns:
        values = _column(columns, spec.data_source_column, n, "data_source_column")
        return ["" if v is None else str(v) for v in values]
    return [""] * n


def _extra_infos(spec: Columns, columns: Mapping[str, Any], n: int) -> list[dict[str, Any]]:
    if spec.extra_info is None:
        used = {spec.ground_truth, spec.data_source_column}
        names = [k for k in columns if k not in TRL_KWARGS and k not in used]
    else:
        names = list(spec.extra_info)
    values = {name: _column(columns, name, n, "extra_info_columns") for name in names}
    return [{name: values[name][i] for name in names} for i in range(n)]


def _columns(
    ground_truth: str | None, data_source: str | None, data_source_column: str,
    extra_info: Sequence[str] | None,
) -> Columns:
    if isinstance(extra_info, str):
        raise ConfigError(f"extra_info_columns must be a list of column names, not {extra_info!r}")
    return Columns(ground_truth, data_source, data_source_column,
                   None if extra_info is None else tuple(extra_info))


def _use_async(plugin_is_async: bool, async_: bool | None) -> bool:
    installed = _trl_version()
    awaits_objects = installed is None or installed >= _TRL_AWAITS_OBJECTS
    if async_ is None:
        return plugin_is_async and awaits_objects
    if async_ and not awaits_objects:
        raise ConfigError(
            f"async_=True needs TRL >= 1.14, which awaits async callable objects "
            f"(installed: TRL {'.'.join(map(str, installed or ()))}); use async_=False: "
            f"an async plugin's calls still run concurrently within each batch"
        )
    return async_


def _trl_version() -> tuple[int, ...] | None:
    try:
        version = metadata.version("trl")
    except metadata.PackageNotFoundError:
        return None
    return tuple(int(part) for part in re.findall(r"\d+", version)[:2])
