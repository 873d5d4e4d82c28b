"""Check a reward spec in the process that reads the config, before anything starts.

Each reward is imported here (never instantiated or called) and described
once (:class:`~verl_rewards._inspect.RewardInfo`); its ``reward.kwargs`` are
checked against that record: names (a misspelt one with its close matches),
the types of values whose parameter has a simple annotation or default
(bool, int, float, str), and the values a ``Literal[...]`` annotation
allows (``method: Literal["strict", "flexible"]``). A
plugin that does not import here fails here, before Ray starts, unless the
config says the workers have what the driver lacks (``workers_only``, or
``ship_package`` for a dependency missing here).
"""

from __future__ import annotations

import copy
from collections.abc import Callable

from ._inspect import RewardInfo, composite
from .config import RewardConfig
from .errors import PluginLoadError, PluginNotInstalledError, RewardKwargsError
from .reference import RewardRef
from .resolve import inspect_ref, sibling_module
from .spec import CompositeRef, RewardSpec


def preflight(spec: RewardSpec, config: RewardConfig | None = None) -> RewardInfo:
    """Import and describe each reward of ``spec`` here; check its kwargs.

    Raises :class:`RewardKwargsError` (a config error) for a kwarg the reward
    does not accept or a value of the wrong simple type, and
    :class:`~verl_rewards.errors.PluginLoadError` for a reward that does not
    import here (see the module docstring for when that is allowed).
    """
    if isinstance(spec, CompositeRef):
        parts = tuple((c.key, check_ref(c.ref, config, c.key)) for c in spec.components)
        return composite(spec.display_name, parts)
    return check_ref(spec, config)


def check_ref(ref: RewardRef, config: RewardConfig | None = None,
              component: str | None = None) -> RewardInfo:
    """Describe one reference here and check its kwargs against the description
    (``component``: its name in a composite)."""
    try:
        info = inspect_ref(ref)
    except PluginLoadError as e:
        if _left_to_workers(e, config):
            return RewardInfo(ref.display_name, "sample", takes_prompt=True, accepts_var_kwargs=True,
                              inspected=False)
        raise _in_driver(e, ref, config) from e.cause
    unknown = info.unaccepted(ref.kwargs)
    if unknown:
        listing = ", ".join(info.accepted_kwargs) if info.accepted_kwargs else "none"
        close = {k: m[0] for k in unknown if (m := info.close_kwargs(k))}
        if len(unknown) == 1:
            hint = "".join(f" (did you mean {m!r}?)" for m in close.values())
        else:
            hint = f" (did you mean {', '.join(f'{m!r} for {k!r}' for k, m in close.items())}?)" if close else ""
        raise RewardKwargsError(
            _kwargs_key(component), f" {', '.join(repr(k) for k in unknown)} not accepted by reward "
            f"{ref.display_name}; it accepts: {listing}{hint}", component)
    wrong = info.mistyped(ref.kwargs)
    if wrong:
        raise RewardKwargsError(_kwargs_key(component), f" of reward {ref.display_name}: {'; '.join(wrong)}",
                                component)
    return info


def _kwargs_key(component: str | None) -> str:
    """The config key of a reward's kwargs (a composite's ``component``'s, else the single reward's)."""
    return "reward.kwargs" if component is None else f"reward.rewards.{component}.kwargs"


def rekeyed(error: RewardKwargsError, key: Callable[[str | None], str]) -> RewardKwargsError:
    """``error`` naming the kwargs as its caller wrote them (``key(component)``: a
    composite's component, or None) instead of the config key ``reward.kwargs`` (an
    adapter's own argument, e.g. TRL's ``kwargs=``)."""
    return RewardKwargsError(key(error.component), error.detail, error.component)


def _left_to_workers(error: PluginLoadError, config: RewardConfig | None) -> bool:
    if config is None or config.executor != "ray":
        return False
    if config.workers_only:
        return True
    # A shipped package goes to the workers, whose environment may have a dependency this one lacks.
    return config.ship_package and isinstance(error.cause, ImportError) \
        and not isinstance(error, PluginNotInstalledError)


def _in_driver(error: PluginLoadError, ref: RewardRef, config: RewardConfig | None) -> PluginLoadError:
    """``error`` saying it happened here, in the process that reads the config (an
    import failure only: a reward of the wrong shape is wrong everywhere), with the
    settings that apply to this kind of reward."""
    importing = isinstance(error, PluginNotInstalledError) or isinstance(error.cause, ImportError)
    if config is None or config.executor != "ray" or not importing:
        return error
    if ref.kind == "file":  # the message already says what is missing and to install it
        missing = getattr(error.cause, "name", None)
        if missing and sibling_module(ref, missing) is not None:
            return error  # no setting helps: the module beside the file never travels
        note = ("in the driver, before any Ray worker started; set reward.workers_only=true "
                "if only the Ray workers have what the file imports")
    else:
        note = ("in the driver, before any Ray worker started: install it here, or set "
                "reward.workers_only=true if only the Ray workers have the plugin and what it imports")
        if not isinstance(error, PluginNotInstalledError):  # ship_package ships a plugin's package
            note += "; or reward.ship_package=true to ship it from here when only a dependency is missing here"
    located = copy.copy(error)  # same type and attributes (errors rebuild from their state)
    located.args = (f"{error} ({note})",)
    return located
