"""verl adapter: verl-rewards as verl's reward manager, or as its custom reward function.

The reward manager (verl >= 0.9, whose trainer scores through its
``RewardLoopManager``) brings timeouts, crash isolation, composites and
per-sample errors to verl::

    reward.reward_manager.source=importlib \\
    reward.reward_manager.module.path=pkg://verl_rewards.integrations.verl \\
    reward.reward_manager.name=RewardManager \\
    +reward.verl_rewards.plugin=gsm8k

See :mod:`verl_rewards.integrations.verl_manager` (imported on first use of
``RewardManager``, so the functions below never import verl).

The function (any verl reward manager)::

    reward.custom_reward_function.path=pkg://verl_rewards.integrations.verl \\
    reward.custom_reward_function.name=compute_score \\
    +reward.custom_reward_function.reward_kwargs.plugin=gsm8k \\
    +reward.custom_reward_function.reward_kwargs.method=flexible

verl calls ``compute_score(data_source=..., solution_str=..., ground_truth=...,
extra_info=..., **reward_kwargs)``. ``reward_kwargs`` selects the reward:
``plugin``, or ``path`` (and ``name``) for a reward file, or ``rewards`` (and
``route``) for several weighted rewards; with ``plugin`` or ``path`` every
other key is passed to the reward. ``reward_kwargs.verl_rewards`` holds the
rest of a reward section (``timeout_s``, ``on_error``, ``error_score``, ...).
The reward is resolved once per process (and selection), by its real module
name, and scored through the same path as the ``Scorer``: the function is a
module-level function of a real module and pickles by reference. See
``docs/integrations/verl.md``.
"""

from __future__ import annotations

import asyncio
from collections.abc import Hashable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, NamedTuple

# Absolute imports: verl may also load this file by path, outside its package.
from verl_rewards.config import KEYS, SELECTORS
from verl_rewards.errors import ConfigError
from verl_rewards.hosts import check_skip
from verl_rewards.integrations._batching import Microbatcher
from verl_rewards.integrations._common import (
    ADAPTER_DEFAULTS,
    ProcessCache,
    score_batch,
    scorer_from_section,
    selection_key,
    to_container,
)
from verl_rewards.results import BatchResult
from verl_rewards.samples import Sample
from verl_rewards.scorer import Scorer
from verl_rewards.spec import RewardSpec

if TYPE_CHECKING:
    from verl_rewards.integrations.verl_manager import RewardManager

__all__ = ["RewardManager", "compute_score", "compute_score_async", "compute_score_batch",
           "reference", "section"]

# verl's reward loop adds these to every call when it serves a reward model
# (GenRM); they reach a single plugin only if its signature accepts them.
HOST_KWARGS = ("reward_router_address", "reward_model_tokenizer")
OPTIONS_KEY = "verl_rewards"

_WHERE = "reward.custom_reward_function.reward_kwargs"
# Reward-section options: under reward_kwargs.verl_rewards, never passed to the reward.
RESERVED = tuple(k for k in KEYS if k not in {*SELECTORS, "name", "kwargs", "route"})

VerlResult = Any  # a float, or a dict with a float "score" and extra keys


class _Entry(NamedTuple):
    scorer: Scorer
    host_kwargs: frozenset[str]  # the HOST_KWARGS the reward accepts
    batcher: Microbatcher[Sample]  # gathers concurrent compute_score_async calls
    keys: dict[str, None]  # the extra keys the reward has returned in this process


_entries: ProcessCache[_Entry] = ProcessCache()


def compute_score(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
    **reward_kwargs: Any,
) -> VerlResult:
    """Score one response with the reward that ``reward_kwargs`` selects.

    Returns a float, or a dict with a float ``"score"`` and the reward's extra
    keys. A sample that fails (raises, times out, returns a bad value) scores
    ``error_score`` with a logged warning, or raises
    :class:`~verl_rewards.errors.RewardError` with ``on_error: raise``. Raises a
    :class:`~verl_rewards.errors.ConfigError` naming the fault when
    ``reward_kwargs`` selects no reward or an unknown one.
    """
    host = _pop_host_kwargs(reward_kwargs)
    entry = _entry(reward_kwargs, host)
    result = score_batch(entry.scorer, [Sample(data_source, solution_str, ground_truth, extra_info)])
    return _verl_results(result, entry.keys)[0]


async def compute_score_async(
    data_source: Any, solution_str: str, ground_truth: Any, extra_info: Any = None,
    **reward_kwargs: Any,
) -> VerlResult:
    """:func:`compute_score` for verl's reward loop, which awaits a coroutine
    function. The calls verl makes at once are scored as one batch in a thread,
    keeping verl's event loop free; an async reward's calls run concurrently. Each
    call is its own caller: with ``on_error: raise`` only a failed sample's call raises."""
    host = _pop_host_kwargs(reward_kwargs)
    entry = _entries.peek(selection_key(reward_kwargs))
    if entry is None or host:  # the first call imports the reward: keep the loop free
        entry = await asyncio.to_thread(_entry, reward_kwargs, host)
    result = await entry.batcher.score(Sample(data_source, solution_str, ground_truth, extra_info))
    return _verl_results(result, entry.keys)[0]


def compute_score_batch(
    data_sources: Sequence[Any], solution_strs: Sequence[str], ground_truths: Sequence[Any],
    extra_infos: Sequence[Any] | None = None, **reward_kwargs: Any,
) -> list[VerlResult]:
    """Score a batch for verl's ``BatchRewardManager`` (``reward_manager.name=batch``).

    A batch reward gets one call; an async reward's calls run concurrently; a
    failed sample scores ``error_score`` (or raises with ``on_error: raise``).
    """
    _pop_host_kwargs(reward_kwargs)  # a batch call cannot pass per-call objects on
    entry = _entry(reward_kwargs, {})
    extras = [None] * len(solution_strs) if extra_infos is None else extra_infos
    samples = [Sample(d, s, g, e) for d, s, g, e in
               zip(data_sources, solution_strs, ground_truths, extras)]
    return _verl_results(score_batch(entry.scorer, samples), entry.keys)


def section(reward_kwargs: Mapping[str, Any]) -> dict[str, Any]:
    """The reward section that verl's ``reward_kwargs`` describe (not yet validated)."""
    options = dict(to_container(reward_kwargs))
    settings = options.pop(OPTIONS_KEY, None) or {}
    if not isinstance(settings, Mapping):
        raise ConfigError(f"{_WHERE}.{OPTIONS_KEY} must be a mapping of reward options "
                          f"(timeout_s, on_error, ...), not {settings!r}")
    chosen = [k for k in SELECTORS if options.get(k) is not None]
    if len(chosen) != 1:
        raise ConfigError(_selection_message(chosen, reward_kwargs))
    _check_reserved(options)
    misplaced = sorted(set(settings) & {*SELECTORS, "route", "kwargs", "name"})
    if misplaced:
        raise ConfigError(f"{_WHERE}.{OPTIONS_KEY} sets {misplaced}: choose the reward and its "
                          f"kwargs directly in {_WHERE}")
    check_skip("verl_function", str(settings.get("on_error", "score")))
    if chosen == ["plugin"]:
        return {**settings, "plugin": options.pop("plugin"), "kwargs": options}
    if chosen == ["path"]:
        path, name = options.pop("path"), options.pop("name", "compute_score")
        return {**settings, "path": path, "name": name, "kwargs": options}
    rewards, route = options.pop("rewards"), options.pop("route", None)
    if options:
        raise ConfigError(f"{_WHERE} with 'rewards' takes kwargs per reward "
                          f"(rewards.NAME.kwargs); unexpected keys: {sorted(options)}")
    return {**settings, "rewards": rewards, **({"route": route} if route is not None else {})}


def reference(reward_kwargs: Mapping[str, Any]) -> RewardSpec:
    """The reward (a ``RewardRef``, or a ``CompositeRef``) that verl's ``reward_kwargs``
    select, checked as the CLI checks it (kwargs names and simple types included):
    raises a ``ConfigError`` naming the fault."""
    return Scorer.from_config(section(reward_kwargs), defaults=ADAPTER_DEFAULTS).ref


def __getattr__(name: str) -> Any:
    # The reward manager needs verl itself: import it only when asked for.
    if name == "RewardManager":
        from verl_rewards.integrations.verl_manager import RewardManager

        return RewardManager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _entry(reward_kwargs: Mapping[str, Any], host: Mapping[str, Any]) -> _Entry:
    key = selection_key(reward_kwargs)
    entry = _entries.get(key, lambda: _build(reward_kwargs, {}))
    accepted = {k: v for k, v in host.items() if k in entry.host_kwargs}
    if not accepted:
        return entry
    # A GenRM-style reward takes verl's router address and tokenizer as kwargs.
    host_key = (key, tuple(sorted((k, _host_key(v)) for k, v in accepted.items())))
    return _entries.get(host_key, lambda: _build(reward_kwargs, accepted))


def _host_key(value: object) -> Hashable:
    """A host kwarg in a cache key, held by the key itself: a hashable value by type and
    value (an address string), anything else by identity. Held, the object stays alive
    while its key is cached, so no later object can come back at its address and find
    its scorer (or its remembered config error), as an ``id()`` key would allow."""
    try:
        hash(value)
    except TypeError:
        return _Held(value)
    return (type(value), value)


class _Held:
    """An unhashable object compared and hashed by identity (and kept alive by its holder)."""

    __slots__ = ("obj",)

    def __init__(self, obj: object) -> None:
        self.obj = obj

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _Held) and other.obj is self.obj

    def __hash__(self) -> int:
        return id(self.obj)


def _build(reward_kwargs: Mapping[str, Any], host: Mapping[str, Any]) -> _Entry:
    reward = section(reward_kwargs)
    if host:
        reward["kwargs"] = {**reward["kwargs"], **host}
    scorer = scorer_from_section(reward)
    info = scorer.info
    accepted = frozenset() if info.is_class else frozenset(k for k in HOST_KWARGS if info.accepts(k))
    return _Entry(scorer, accepted, Microbatcher(scorer), {})


def _check_reserved(options: Mapping[str, Any]) -> None:
    """Refuse a reward-section option set beside the reward's kwargs: passed on as a
    kwarg it would be ignored (a timeout not applied, ``on_error`` not honoured)."""
    misplaced = [k for k in options if k in RESERVED]
    if misplaced:
        moves = ", ".join(f"{_WHERE}.{k} -> {_WHERE}.{OPTIONS_KEY}.{k}" for k in misplaced)
        raise ConfigError(
            f"{_WHERE} sets the verl-rewards option(s) {misplaced} beside the reward's kwargs, "
            f"where they would reach the reward as plain kwargs and not apply. Move them: "
            f"{moves} (e.g. +{_WHERE}.{OPTIONS_KEY}.{misplaced[0]}=...). These names are "
            f"reserved for the options, whatever the reward's signature")


def _selection_message(chosen: list[str], reward_kwargs: Mapping[str, Any]) -> str:
    given = " and ".join(f"'{k}'" for k in chosen) if chosen else (
        f"neither (keys: {sorted(reward_kwargs)})")
    return (
        f"verl_rewards.integrations.verl: {_WHERE} must set exactly one of 'plugin' "
        f"(an installed reward plugin, see `verl-rewards list`), 'path' (a reward .py "
        f"file, with 'name') or 'rewards' (several weighted rewards, with 'route'); "
        f"it sets {given}. Example: +{_WHERE}.plugin=gsm8k"
    )


def _pop_host_kwargs(reward_kwargs: dict[str, Any]) -> dict[str, Any]:
    if "reward_router_address" not in reward_kwargs and "reward_model_tokenizer" not in reward_kwargs:
        return {}
    return {k: reward_kwargs.pop(k) for k in HOST_KWARGS if k in reward_kwargs}


def _verl_results(result: BatchResult, keys: dict[str, None]) -> list[VerlResult]:
    """Each sample as verl takes it: a float, or ``{"score": ..., **extra}``.

    Once the reward has returned extra keys in this process, every result is a
    dict with all of them (None where a sample has none, a failed one
    included): verl builds its arrays from the first sample's keys.
    """
    keys.update(dict.fromkeys(result.extra_info))
    if not keys:
        return list(result.scores)
    return [{"score": result.scores[i], **result.extras(i, keys)} for i in range(len(result))]


# Older verl (spec_from_file_location("custom_module", path)) and verl's file
# paths load this file under a made-up module name. Hand out the real module's
# functions then, so they pickle by reference to a module every process imports.
if __name__ != "verl_rewards.integrations.verl":
    from verl_rewards.integrations.verl import (
        compute_score,
        compute_score_async,
        compute_score_batch,
    )
