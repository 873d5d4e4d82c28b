"""The timeout rule, whole, in one place.

A sample's time limit is ``reward.timeout_s`` when the config sets a number
(``null``: no limit); when it is ``auto`` (the default), the reward's own
``@reward(timeout_s=...)``; else :data:`DEFAULT_TIMEOUT_S`. It applies per
reward, so each component of a composite gets its own declared timeout. The
executors, the Ray driver's stall detection, ``check``'s self-test examples
and ``show`` all take their figure from here.

A reward reads the time its call has left with :func:`time_left` (the
effective limit, whatever set it), so it can budget its own work (tests,
evaluations) to end inside it rather than be cut off as a timeout.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar, Token
from typing import TYPE_CHECKING, Literal, NamedTuple, Protocol

if TYPE_CHECKING:
    from .metadata import RewardMeta

AUTO: Literal["auto"] = "auto"  # reward.timeout_s unset: the reward's declaration, else the default
DEFAULT_TIMEOUT_S = 30.0
Timeout = float | None | Literal["auto"]


class Declares(Protocol):
    """Anything carrying a reward's metadata (a ``RewardInfo``, a ``LoadedReward``)."""

    @property
    def meta(self) -> RewardMeta: ...


class Configures(Protocol):
    """The keys of a ``RewardConfig`` that set limits."""

    @property
    def timeout_s(self) -> Timeout: ...
    @property
    def max_concurrency(self) -> int: ...
    @property
    def max_batch_size(self) -> int | None: ...


class Limits(NamedTuple):
    """How long a call may take and how many async calls may run at once.

    With ``use_declared``, a reward's own ``@reward(timeout_s=...)`` replaces
    ``timeout_s`` (the default then).
    """

    timeout_s: float | None = DEFAULT_TIMEOUT_S
    max_concurrency: int = 32
    max_batch_size: int | None = None  # a batch reward's calls; None: its @reward declaration
    use_declared: bool = False

    def for_reward(self, reward: Declares) -> Limits:
        """The limits that apply to ``reward``: its declared timeout, if it may use one."""
        declared = reward.meta.timeout_s
        if not self.use_declared or declared is None:
            return self
        return self._replace(timeout_s=declared, use_declared=False)


# What applies when no config says otherwise (``check``'s examples, ``show``).
DECLARED = Limits(DEFAULT_TIMEOUT_S, use_declared=True)


def limits_for(config: Configures) -> Limits:
    """The limits a config sets."""
    if config.timeout_s == AUTO:
        return Limits(DEFAULT_TIMEOUT_S, config.max_concurrency, config.max_batch_size,
                      use_declared=True)
    return Limits(config.timeout_s, config.max_concurrency, config.max_batch_size)


def longest(limits: Limits, rewards: Iterable[Declares]) -> float | None:
    """The longest per-sample timeout any of ``rewards`` runs under (None: no limit)."""
    timeouts = [limits.for_reward(r).timeout_s for r in rewards]
    return None if any(t is None for t in timeouts) else max(t for t in timeouts if t is not None)


# The monotonic time by which the call in progress must end (None: no limit, or no call).
_deadline: ContextVar[float | None] = ContextVar("verl_rewards_deadline", default=None)


def time_left() -> float | None:
    """Seconds the reward call in progress has left before it counts as a timeout.

    Call it from inside a reward (sample, batch or async, on any executor): None
    when the call has no time limit, or when no scored call is in progress
    (a reward called directly, outside verl-rewards). A batch call's figure is the
    whole batch's allowance. Never negative.
    """
    deadline = _deadline.get()
    return None if deadline is None else max(0.0, deadline - time.monotonic())


def enter_deadline(deadline: float | None) -> Token[float | None]:
    """Make ``deadline`` (a ``time.monotonic()`` value, or None) what :func:`time_left`
    counts down to in this context, until :func:`leave_deadline` with the token. The
    scoring loop's per-sample form: cheaper than :func:`deadline_of` on a hot path."""
    return _deadline.set(deadline)


def leave_deadline(token: Token[float | None]) -> None:
    """Undo the :func:`enter_deadline` that returned ``token``."""
    _deadline.reset(token)


@contextmanager
def deadline_of(allowed_s: float | None, started: float | None = None) -> Iterator[None]:
    """Within the block, :func:`time_left` counts down ``allowed_s`` from ``started``
    (default: now); the scoring loop wraps each reward call in it."""
    began = time.monotonic() if started is None else started
    token = enter_deadline(None if allowed_s is None else began + allowed_s)
    try:
        yield
    finally:
        leave_deadline(token)
