"""Every error verl-rewards raises: one base class, each error formats itself.

Errors carry the plugin's display name (``gsm8k (verl-rewards-math 0.1.0)``)
and, where there is one, the original exception, so a message read in a
three-day run's log says what failed, where it came from and how to fix it.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence


class VerlRewardsError(Exception):
    """Base class of every error raised by verl-rewards."""

    def __reduce__(self) -> tuple[object, ...]:
        # Subclasses take structured __init__ arguments, so the default
        # reduce (cls(*args)) would fail when a worker's error reaches the
        # driver; rebuild from the formatted message and attributes instead.
        return (_rebuild, (type(self), str(self), self.__dict__))


def _rebuild(cls: type[VerlRewardsError], message: str, state: dict[str, object]) -> VerlRewardsError:
    error = Exception.__new__(cls)
    Exception.__init__(error, message)
    error.__dict__.update(state)
    return error


# -- configuration: raised before any worker starts -------------------------


class ConfigError(VerlRewardsError):
    """The ``reward`` configuration is invalid."""


class ConfigValueError(ConfigError):
    """A key of the ``reward`` section has a value it cannot take; ``key`` names it
    (``timeout_s``), so a caller that set it from elsewhere (an environment variable)
    can say so without reading the message."""

    def __init__(self, key: str, message: str) -> None:
        self.key = key
        super().__init__(message)


class UnknownConfigKeyError(ConfigError):
    """A key in the ``reward`` section is not one verl-rewards knows."""

    def __init__(self, key: str, suggestions: Sequence[str], valid: Sequence[str]) -> None:
        self.key = key
        self.suggestions = list(suggestions)
        hint = f" Did you mean {_quoted_or(self.suggestions)}?" if self.suggestions else ""
        super().__init__(
            f"unknown key 'reward.{key}'.{hint} Valid keys: {', '.join(sorted(valid))}."
        )


class PluginNotFoundError(ConfigError):
    """No installed distribution declares the requested plugin name."""

    MAX_LISTED = 8  # more installed names than this are left to `verl-rewards list`

    def __init__(self, name: str, suggestions: Sequence[str], installed: Sequence[str],
                 broken: Sequence[str] = ()) -> None:
        self.name = name
        self.suggestions = list(suggestions)
        self.installed = list(installed)
        self.broken = list(broken)
        if self.suggestions:
            hint = f"Did you mean {_quoted_or(self.suggestions)}?"
        elif not self.installed:
            hint = "No reward plugins are installed (entry points in group 'verl_rewards')."
        elif len(self.installed) <= self.MAX_LISTED:
            hint = f"Installed: {', '.join(self.installed)}."
        else:
            hint = f"{len(self.installed)} plugins are installed."
        notes = "".join(f" It is declared by a {b}." for b in self.broken)
        super().__init__(
            f"no reward plugin named '{name}' is installed. {hint}{notes} "
            f"Run `verl-rewards list` to see every installed plugin."
        )


class AmbiguousPluginError(ConfigError):
    """Two installed distributions declare the same plugin name."""

    def __init__(self, name: str, distributions: Sequence[str]) -> None:
        self.name = name
        self.distributions = list(distributions)
        choices = " or ".join(f"'{d}:{name}'" for d in self.distributions)
        super().__init__(
            f"plugin name '{name}' is declared by {len(self.distributions)} distributions "
            f"({', '.join(self.distributions)}); choose one with {choices}."
        )


class RewardFileError(ConfigError):
    """A reward file is missing, unreadable, or lacks the named function/class."""


class RewardKwargsError(ConfigError):
    """A reward's kwargs hold a key it does not accept, or a value it does not take.

    ``key`` names the kwargs as they were written (``reward.kwargs``,
    ``reward.rewards.NAME.kwargs`` for ``component`` NAME, or an adapter's own
    argument); ``detail`` is the rest of the message, so a caller can name them
    its own way (:func:`verl_rewards.preflight.rekeyed`).
    """

    def __init__(self, key: str, detail: str, component: str | None = None) -> None:
        self.key = key
        self.detail = detail
        self.component = component
        super().__init__(f"{key}{detail}")


# -- loading: raised when a process resolves a reference ---------------------


class PluginLoadError(VerlRewardsError):
    """A plugin's target could not be imported or instantiated."""

    def __init__(self, plugin: str, message: str, cause: BaseException | None = None) -> None:
        self.plugin = plugin
        self.cause = cause
        detail = f": {type(cause).__name__}: {cause}" if cause is not None else ""
        super().__init__(f"cannot load reward {plugin}: {message}{detail}")


class PluginNotInstalledError(PluginLoadError):
    """The plugin's module is not importable in this process (e.g. on a worker node)."""


class PluginShapeError(PluginLoadError):
    """The plugin's target is not callable, or its signature fits no reward shape."""


class NotARewardError(VerlRewardsError, TypeError):
    """Inspection's verdict on an imported target: neither a function nor a class, or a
    class whose instances cannot be called. A ``TypeError`` too (what Python says of an
    uncallable); ``resolve`` turns it into a :class:`PluginShapeError` naming the plugin."""


# -- scoring -----------------------------------------------------------------


class SampleError(VerlRewardsError):
    """An input sample is malformed (missing a required field, wrong type)."""

    def __init__(self, index: int, message: str) -> None:
        self.index = index
        super().__init__(f"sample {index}: {message}")


class RewardValueError(VerlRewardsError):
    """A reward returned something that is not a finite score."""

    def __init__(self, plugin: str, index: int, message: str) -> None:
        self.plugin = plugin
        self.index = index
        super().__init__(f"reward {plugin} returned an invalid value for sample {index}: {message}")


class RewardError(VerlRewardsError):
    """A sample failed and ``on_error='raise'`` asked to stop the batch."""

    def __init__(self, plugin: str, index: int, cause: str) -> None:
        self.plugin = plugin
        self.index = index
        self.cause = cause
        super().__init__(f"reward {plugin} failed on sample {index}: {cause}")


class SkippedSample(VerlRewardsError):
    """A failed sample under ``on_error='skip'``, raised where the host leaves a sample
    whose reward call raises out of training (verl's v1 rollout)."""

    def __init__(self, plugin: str, cause: str) -> None:
        self.plugin = plugin
        self.cause = cause
        super().__init__(f"reward {plugin} failed: {cause}; the sample is left out of training "
                         f"(on_error='skip')")


class ExecutorError(VerlRewardsError):
    """The executor itself failed (could not start workers, was closed, ...)."""


# -- child processes (verl_rewards.child) ------------------------------------


class ChildError(VerlRewardsError):
    """A request to a :class:`~verl_rewards.child.JsonLineWorker` got no reply: ``reason``
    says why (``late``, ``died``, ``silent``, ``oversized``, ``garbled``, ``raised``,
    ``cancelled``); the child, unless the handler only raised, was killed and is replaced.

    ``starting``: it happened while a child started. ``returncode`` and ``last_words``
    (the end of its stderr) are set when it died; ``cpu_used_s``, the child's CPU time
    on the request, when the request had a CPU budget."""

    def __init__(self, worker: str, reason: str, detail: str, returncode: int | None = None,
                 last_words: str = "", starting: bool = False) -> None:
        self.worker = worker
        self.reason = reason
        self.detail = detail
        self.returncode = returncode
        self.last_words = last_words
        self.starting = starting
        self.cpu_used_s = 0.0
        super().__init__(f"{worker}: {reason}: {detail}")


# -- the reward service (verl-rewards serve) ---------------------------------


class BadRequest(VerlRewardsError):
    """A request the reward service refuses; ``status`` is its HTTP code (4xx) and
    ``headers`` go with the answer (``WWW-Authenticate``, ``Allow``)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None) -> None:
        self.status = status
        self.message = message
        self.headers = dict(headers or {})
        super().__init__(message)


class QueueFull(VerlRewardsError):
    """The service holds as much as its limit allows (``what``: samples or bytes); the
    request may be sent again later (HTTP 429 with ``Retry-After``)."""

    def __init__(self, what: str, held: int, limit: int, option: str) -> None:
        self.what, self.held, self.limit, self.option = what, held, limit, option
        super().__init__(f"the scoring queue is full: {held} {what} waiting or scoring, "
                         f"limit {limit} ({option}); retry later")


class ServiceStopping(VerlRewardsError):
    """The service is shutting down and takes no new work (HTTP 503)."""


class BindError(VerlRewardsError):
    """The service cannot listen on the address it was given (exit 1: nothing is
    wrong with the command, the address is taken or not this machine's)."""


class SampleTimeout(BaseException):
    """Raised inside a reward call that exceeded ``timeout_s``.

    A ``BaseException`` so that a reward's own ``except Exception`` cannot
    swallow it.
    """


def is_host_interrupt(error: BaseException) -> bool:
    """Whether ``error``, raised while user code ran, belongs to the host rather than to the
    reward: our own :class:`SampleTimeout`, or a ``KeyboardInterrupt`` in the main thread.

    Python runs signal handlers in the main thread only, so a ``KeyboardInterrupt`` in any
    other thread (the local executor's runner, a Ray actor's threads, the async reward loop)
    was raised by the reward itself and is that sample's failure, like its ``SystemExit``
    or ``GeneratorExit``. Every entry point runs user code off the main thread; code that
    calls the scoring functions in the main thread directly keeps Ctrl-C as the user's.
    """
    if isinstance(error, SampleTimeout):
        return True
    return isinstance(error, KeyboardInterrupt) and threading.current_thread() is threading.main_thread()


def _quoted_or(names: Sequence[str]) -> str:
    quoted = [f"'{n}'" for n in names]
    if len(quoted) <= 1:
        return "".join(quoted)
    return ", ".join(quoted[:-1]) + " or " + quoted[-1]
