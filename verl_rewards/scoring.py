"""Score samples with a resolved reward: call, catch, time-limit, validate.

Every executor runs this same code (in-process, or inside each Ray worker),
so a sample fails the same way wherever it runs. Failures become
:class:`Outcome` records; nothing here raises for a bad sample unless asked
to stop at the first failure (``on_error='raise'``). Whatever user code raises,
``SystemExit``, ``KeyboardInterrupt`` and ``GeneratorExit`` included, is its
sample's failure; only the host's own interrupts pass
(:func:`~verl_rewards.errors.is_host_interrupt`).
"""

from __future__ import annotations

import asyncio
import math
import numbers
from collections.abc import Mapping, Sequence
from typing import Any

from . import aio, frames
from .errors import RewardError, RewardValueError, SampleTimeout, is_host_interrupt
from .limits import DEFAULT_TIMEOUT_S, Limits, deadline_of, enter_deadline, leave_deadline
from .outcomes import Outcome, Status
from .resolve import LoadedReward
from .samples import Sample
from .watchdog import Progress, Watchdog

_MAX_ERROR_CHARS = 500

__all__ = ["DEFAULT_TIMEOUT_S", "Limits", "Outcome", "Status", "failure", "raise_first_failure",
           "score_samples", "timeout_outcome", "validate"]


def score_samples(
    loaded: LoadedReward, samples: Sequence[Sample], limits: Limits = Limits(),
    stop_on_error: bool = False, first_index: int = 0, progress: Progress | None = None,
) -> list[Outcome]:
    """Score ``samples`` in order; one :class:`Outcome` per sample.

    With ``stop_on_error``, the first failure raises :class:`RewardError`
    naming the plugin and the sample's index (offset by ``first_index``).
    ``progress``, when given, tracks the sample being scored (sync rewards) or
    the first sample of the call in flight (batch and async rewards).
    """
    limits = limits.for_reward(loaded)
    progress = progress or Progress()
    span = 1 if loaded.shape == "sample" and not loaded.is_async else len(samples)
    progress.begin(first_index, _allowed_s(loaded, len(samples), limits), span)
    if loaded.shape == "batch":
        outcomes = _score_batches(loaded, samples, limits, first_index, progress)
    elif loaded.is_async:
        outcomes = _run_async(loaded, samples, limits, first_index, progress.allowed_s)
    else:
        outcomes = _score_sync(loaded, samples, limits, stop_on_error, first_index, progress)
    progress.index = None
    if stop_on_error:
        raise_first_failure(loaded.display_name, outcomes, first_index)
    return outcomes


def _run_async(
    loaded: LoadedReward, samples: Sequence[Sample], limits: Limits, first_index: int,
    allowed: float | None,
) -> list[Outcome]:
    try:
        return aio.run(_score_async(loaded, samples, limits, first_index), allowed)
    except SampleTimeout as e:  # a coroutine that never awaits: which one is unknown
        return [timeout_outcome(f"{e} (exceeded timeout_s={limits.timeout_s})")] * len(samples)


def raise_first_failure(reward: str, outcomes: Sequence[Outcome | None], first_index: int = 0) -> None:
    """Raise :class:`RewardError` for the first failed outcome (``on_error='raise'``)."""
    for i, outcome in enumerate(outcomes):
        if outcome is not None and outcome.status != "ok":
            raise RewardError(reward, first_index + i, outcome.error or outcome.status)


def validate(value: Any, plugin: str, index: int) -> tuple[float, Mapping[str, Any] | None]:
    """A reward's return value as ``(score, extra)``, or :class:`RewardValueError`."""
    if type(value) is float and value - value == 0.0:  # fast path: a finite float
        return value, None
    if type(value) is dict:  # fast path: a plain dict with a finite float score
        score = value.get("score")
        if type(score) is float and score - score == 0.0:
            rest = value.copy()
            del rest["score"]
            return score, rest
    extra: Mapping[str, Any] | None = None
    if isinstance(value, Mapping):
        if "score" not in value:
            raise RewardValueError(plugin, index, f"a dict without a 'score' key (keys: {sorted(value)})")
        extra = {k: v for k, v in value.items() if k != "score"}
        value = value["score"]
    score = _as_float(value, plugin, index)
    if not math.isfinite(score):
        raise RewardValueError(plugin, index, f"{score} is not a finite number")
    return score, extra


def _as_float(value: Any, plugin: str, index: int) -> float:
    """A real number (a bool, NumPy's included, counts as 0/1; a 0-d array or
    tensor, as verl's own managers take) as a float, or :class:`RewardValueError`;
    never a conversion error of its own."""
    if getattr(value, "shape", None) == () and callable(getattr(value, "item", None)):
        value = value.item()  # a 0-d NumPy array or torch tensor holds one number
    kind = type(value)
    is_bool = kind.__name__ in ("bool", "bool_") and kind.__module__ in ("builtins", "numpy")
    if isinstance(value, (str, bytes)) or not (is_bool or isinstance(value, numbers.Real)):
        raise RewardValueError(plugin, index, f"expected a number, got {kind.__name__} {_short_repr(value)}")
    try:
        return float(value)
    except (OverflowError, TypeError, ValueError) as e:
        raise RewardValueError(
            plugin, index, f"{kind.__name__} {_short_repr(value)} cannot be a score ({type(e).__name__}: {e})"
        ) from None


def _short_repr(value: Any) -> str:
    try:
        text = repr(value)
    except Exception as e:  # a reward's own __repr__, or an int too long to print
        text = f"<unprintable: {type(e).__name__}>"
    return text if len(text) <= 80 else text[:77] + "..."


def failure(exc: BaseException) -> Outcome:
    """The outcome of a sample whose call raised ``exc``."""
    if isinstance(exc, SampleTimeout):
        return timeout_outcome(str(exc) or "the call exceeded its time limit")
    return Outcome(None, None, _describe(exc), "failed")


def timeout_outcome(message: str) -> Outcome:
    """The outcome of a sample that ran out of time."""
    return Outcome(None, None, f"SampleTimeout: {message}", "timeout")


def _score_sync(
    loaded: LoadedReward, samples: Sequence[Sample], limits: Limits, stop_on_error: bool,
    first_index: int, progress: Progress,
) -> list[Outcome]:
    outcomes: list[Outcome | None] = [None] * len(samples)
    if limits.timeout_s is None:
        _sync_loop(loaded, samples, outcomes, 0, stop_on_error, first_index, progress)
        return outcomes  # type: ignore[return-value]
    with Watchdog(progress, limits.timeout_s) as watchdog:
        position = 0
        while True:
            try:
                _sync_loop(loaded, samples, outcomes, position, stop_on_error, first_index, progress,
                           watchdog)
                watchdog.disarm()  # inside the try: a timeout still in flight lands here
                break
            except SampleTimeout:
                # The call the watchdog fired for may already have returned; resume
                # after it, re-running the call that was actually interrupted.
                fired = watchdog.take_fired()
                current = (progress.index if progress.index is not None else first_index + position)
                overdue = (fired if fired is not None else current) - first_index
                outcomes[overdue] = timeout_outcome(f"exceeded timeout_s={limits.timeout_s}")
                position = overdue + 1 if overdue >= current - first_index else current - first_index
                if stop_on_error or position >= len(samples):
                    watchdog.disarm()
                    break
    return [o if o is not None else timeout_outcome("not run") for o in outcomes]


def _allowed_s(loaded: LoadedReward, n: int, limits: Limits) -> float | None:
    """How long one call may take: per sample, per batch call, or per async chunk."""
    if limits.timeout_s is None:
        return None
    if loaded.shape == "batch":
        return limits.timeout_s * max(n, 1)
    if loaded.is_async:  # wait_for bounds each sample; they run max_concurrency at a time
        return limits.timeout_s * max(1, -(-n // limits.max_concurrency))
    return limits.timeout_s


def _sync_loop(
    loaded: LoadedReward, samples: Sequence[Sample], outcomes: list[Outcome | None], position: int,
    stop_on_error: bool, first_index: int, progress: Progress, watchdog: Watchdog | None = None,
) -> None:
    allowed = progress.allowed_s
    token = enter_deadline(None)
    try:
        for i in range(position, len(samples)):
            progress.begin(first_index + i, allowed)
            if allowed is not None:  # what limits.time_left() counts down to
                enter_deadline(progress.started + allowed)
            outcome = _score_one(loaded, samples[i], first_index + i)
            if watchdog is not None and watchdog.overran():  # it caught the timeout, then returned
                outcome = timeout_outcome(f"exceeded timeout_s={allowed} (the reward caught the "
                                          f"timeout and returned later)")
            outcomes[i] = outcome
            if stop_on_error and outcome.status != "ok":
                return
    finally:
        leave_deadline(token)


def _score_one(loaded: LoadedReward, sample: Sample, index: int) -> Outcome:
    try:
        value = loaded.invoke(*sample)
        if type(value) is float and value - value == 0.0:  # fast path: a finite float
            return Outcome(value, None, None, "ok")
        score, extra = validate(value, loaded.display_name, index)
    except Exception as e:
        return failure(e)
    except BaseException as e:  # SystemExit, KeyboardInterrupt, GeneratorExit: the sample's
        if is_host_interrupt(e):
            raise
        return failure(e)
    return Outcome(score, extra, None, "ok")


async def _score_async(
    loaded: LoadedReward, samples: Sequence[Sample], limits: Limits, first_index: int
) -> list[Outcome]:
    gate = asyncio.Semaphore(limits.max_concurrency)

    async def one(index: int, sample: Sample) -> Outcome:
        async with gate:
            try:
                with deadline_of(limits.timeout_s):  # the task wait_for makes copies this context
                    value = await asyncio.wait_for(aio.contained(loaded.invoke(*sample)), limits.timeout_s)
                score, extra = validate(value, loaded.display_name, index)
            except asyncio.TimeoutError:
                return timeout_outcome(f"exceeded timeout_s={limits.timeout_s}")
            except aio.Escaped as e:
                return failure(e.error)
            except Exception as e:
                return failure(e)
            except BaseException as e:  # GeneratorExit, or a CancelledError of the reward's own
                if isinstance(e, asyncio.CancelledError) and _being_cancelled():
                    raise
                return failure(e)
            return Outcome(score, extra, None, "ok")

    return list(await asyncio.gather(*(one(first_index + i, s) for i, s in enumerate(samples))))


def _being_cancelled() -> bool:
    """Whether the running task itself is being cancelled (not a reward's own CancelledError)."""
    task = asyncio.current_task()
    return task is not None and task.cancelling() > 0


def _score_batches(
    loaded: LoadedReward, samples: Sequence[Sample], limits: Limits, first_index: int,
    progress: Progress,
) -> list[Outcome]:
    """Batch calls of at most ``max_batch_size`` samples (config, else the plugin's)."""
    size = limits.max_batch_size or loaded.meta.max_batch_size
    if size is None or size >= len(samples):
        return _score_batch(loaded, samples, limits, first_index, progress)
    outcomes: list[Outcome] = []
    for start in range(0, len(samples), size):
        part = samples[start : start + size]
        progress.begin(first_index + start, _allowed_s(loaded, len(part), limits), len(part))
        outcomes.extend(_score_batch(loaded, part, limits, first_index + start, progress))
    return outcomes


def _score_batch(
    loaded: LoadedReward, samples: Sequence[Sample], limits: Limits, first_index: int,
    progress: Progress,
) -> list[Outcome]:
    if not samples:
        return []
    columns = [list(c) for c in zip(*samples)]
    try:
        values = _call_batch(loaded, columns, progress)
    except SampleTimeout:
        return [timeout_outcome(f"batch call exceeded timeout_s x {len(samples)} samples")] * len(samples)
    except Exception as e:
        return [failure(e)] * len(samples)
    except BaseException as e:  # SystemExit, KeyboardInterrupt, GeneratorExit from the reward
        if is_host_interrupt(e):
            raise
        return [failure(e)] * len(samples)
    if not isinstance(values, Sequence) or isinstance(values, (str, bytes)) or len(values) != len(samples):
        got = f"{len(values)} values" if isinstance(values, Sequence) else type(values).__name__
        error = f"RewardValueError: batch reward {loaded.display_name} returned {got} for {len(samples)} samples"
        return [Outcome(None, None, error, "failed")] * len(samples)
    outcomes = []
    for i, value in enumerate(values):
        try:
            score, extra = validate(value, loaded.display_name, first_index + i)
            outcomes.append(Outcome(score, extra, None, "ok"))
        except Exception as e:  # this value only: the rest of the batch keeps its scores
            outcomes.append(failure(e))
        except BaseException as e:  # a value's own __float__ or __repr__ exiting
            if is_host_interrupt(e):
                raise
            outcomes.append(failure(e))
    return outcomes


def _call_batch(loaded: LoadedReward, columns: list[list[Any]], progress: Progress) -> Any:
    """One call over the whole chunk, within the allowance ``score_samples`` set."""
    allowed = progress.allowed_s
    if loaded.is_async:

        async def run() -> Any:
            try:
                with deadline_of(allowed, progress.started):
                    return await asyncio.wait_for(aio.contained(loaded.invoke(*columns)), allowed)
            except asyncio.TimeoutError:
                raise SampleTimeout() from None

        return aio.run(run(), allowed)
    if allowed is None:
        return loaded.invoke(*columns)
    with Watchdog(progress, allowed) as watchdog, deadline_of(allowed, progress.started):
        value = loaded.invoke(*columns)
        watchdog.disarm()
        if watchdog.overran():  # it caught the timeout, then returned
            raise SampleTimeout()
    return value


def _describe(exc: BaseException) -> str:
    """``Type: message (at FILE:LINE in FUNC)``, the innermost frame of the reward's own code."""
    try:
        message = str(exc)
    except BaseException as e:  # a reward's exception with a broken __str__
        message = f"<unprintable: {type(e).__name__}>"
    text = f"{type(exc).__name__}: {message}" if message else f"{type(exc).__name__}:"
    frame = frames.innermost(exc)
    where = f" (at {frame.location})" if frame is not None else ""
    room = max(_MAX_ERROR_CHARS - len(where), 40)
    if len(text) > room:
        text = _cut(text, room - 3) + "..."
    return text + where


def _cut(text: str, room: int) -> str:
    """The start of ``text`` within ``room`` characters, ending after a space when one is
    near the end (a listed name is dropped whole, never cut in the middle)."""
    head = text[:room]
    space = head.rfind(" ")
    return head[: space + 1] if space >= room * 2 // 3 else head
