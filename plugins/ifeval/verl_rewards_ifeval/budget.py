"""The reward call's time, shared by the checks of one response: they stop before it runs out.

Every scan here is linear, but Punkt's is slow per sentence boundary (10-25 us
each): a response of nothing but boundaries (a megabyte of ``. ``) takes longer
than a short ``reward.timeout_s``, and a sample cut off there is a timeout,
which ``on_error: skip`` drops from training (a policy would learn that a long
enough answer dodges its 0). So inside a scored call
(:func:`verl_rewards.time_left`) the checks look at the clock between
instructions and at each candidate boundary, and give up :func:`margin_s`
before the call's time is up: :class:`OutOfTime`, which the reward scores 0,
saying why. Outside a scored call, or with no limit, nothing is bounded.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterator
from contextvars import ContextVar
from typing import Final

from verl_rewards import time_left

MARGIN_S: Final = 1.0  # room to return, and for one check that cannot look at the clock (langdetect)
MARGIN_SHARE: Final = 0.25  # of a call's time, when that is short

# (when the checks must stop, how long before the call's end that is); None: unbounded
_deadline: ContextVar[tuple[float, float] | None] = ContextVar("verl_rewards_ifeval_deadline", default=None)


class OutOfTime(Exception):
    """The checks of one response reached the margin before the reward call's time runs out."""


def margin_s(left: float) -> float:
    """How long before the call's time is up the checks give up, when ``left`` seconds remain."""
    return min(MARGIN_S, MARGIN_SHARE * left)


@contextlib.contextmanager
def checks_bounded() -> Iterator[None]:
    """Within the block, :func:`check` raises :class:`OutOfTime` once the reward call in
    progress has only :func:`margin_s` left (never, outside a scored call or without a limit)."""
    left = time_left()
    token = _deadline.set(None if left is None else (time.monotonic() + left - margin_s(left), margin_s(left)))
    try:
        yield
    finally:
        _deadline.reset(token)


def check() -> None:
    """Raise :class:`OutOfTime` when the checks in progress are past their deadline."""
    bound = _deadline.get()
    if bound is not None and time.monotonic() > bound[0]:
        raise OutOfTime(f"late: the checks were stopped {bound[1]:.2g} s before the reward call's time ran out")
