"""Resolve a :class:`RewardRef` in this process: import, classify, cache.

This is the only module that imports user code. A target is classified once,
at load time, by inspection (never by its name): sample or batch shape, sync
or async, function or class. A class is instantiated once per process.
"""

from __future__ import annotations

import importlib
import inspect
import linecache
import logging
import sys
import threading
import types
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from . import aio
from ._inspect import BATCH_PARAMS, PROMPT_PARAM, SAMPLE_PARAMS, RewardInfo, call_signature, describe
from .errors import (
    NotARewardError,
    PluginLoadError,
    PluginNotInstalledError,
    PluginShapeError,
    is_host_interrupt,
)
from .metadata import RewardMeta, Shape

if TYPE_CHECKING:  # read by its fields only: reference.RewardRef.load() imports this module
    from .reference import RewardRef

RewardFn = Callable[..., Any]

__all__ = ["BATCH_PARAMS", "PROMPT_PARAM", "SAMPLE_PARAMS", "LoadedReward", "classify",
           "import_target", "inspect_ref", "register_source", "release", "resolve", "sibling_module"]


class LoadedReward(NamedTuple):
    """A resolved reward: what to call, and how."""

    ref: RewardRef
    target: object  # the imported function or class
    call: RewardFn  # the function, or the per-process instance
    shape: Shape
    is_async: bool
    is_class: bool
    by_keyword: bool  # pass the fields by keyword (their names are not the leading parameters)
    pass_extra_info: bool
    call_kwargs: Mapping[str, Any]  # bound on every call (empty for a class)
    meta: RewardMeta
    display_name: str
    # The four fields and the prompt (lists of them for a batch reward) -> the
    # reward's return value; the prompt is optional and reaches only a target that asks.
    invoke: Callable[..., Any]
    prompt_param: str | None = None  # "prompt" / "prompts" when the target takes it
    info: RewardInfo | None = None  # what inspection found (the same record the driver reads)

    @property
    def sample_fn(self) -> RewardFn:
        """A plain verl-signature callable over this reward, whatever its shape."""
        return _sample_adapter(self)


log = logging.getLogger(__name__)

_cache: dict[str, LoadedReward] = {}
_cache_lock = threading.Lock()


def resolve(ref: RewardRef) -> LoadedReward:
    """Load ``ref`` in this process, once; later calls return the cached reward."""
    key = ref.cache_key
    loaded = _cache.get(key)
    if loaded is not None:
        return loaded
    with _cache_lock:
        loaded = _cache.get(key)
        if loaded is None:
            loaded = _load(ref)
            _cache[key] = loaded
    return loaded


def release(*refs: RewardRef) -> None:
    """Forget ``refs``' resolved rewards in this process and close class instances
    that have a ``close()`` (a model, a client): called when a pool stops.

    A failing ``close()`` is logged, naming the plugin; it never raises.
    """
    for ref in refs:
        with _cache_lock:
            loaded = _cache.pop(ref.cache_key, None)
        close = getattr(loaded.call, "close", None) if loaded is not None and loaded.is_class else None
        if callable(close):
            try:
                close()
            except BaseException as e:
                if is_host_interrupt(e):
                    raise
                log.warning("closing reward %s failed: %s: %s", ref.display_name, type(e).__name__, e)


def import_target(ref: RewardRef) -> object:
    """Import the object a reference points at, by its real module name."""
    if ref.kind == "file":
        module = _materialise_file(ref)
        attr = ref.target
    else:
        module_name, _, attr = ref.target.partition(":")
        module = _import_plugin_module(ref, module_name.strip())
    obj: object = module
    for part in attr.strip().split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError as e:
            raise PluginLoadError(
                ref.display_name, f"{module.__name__} has no attribute '{attr.strip()}'", e
            ) from e
    return obj


def inspect_ref(ref: RewardRef) -> RewardInfo:
    """Import ``ref``'s target in this process and describe it, building nothing."""
    target = import_target(ref)
    try:
        return describe(ref.display_name, target)
    except (TypeError, ValueError) as e:
        raise _shape_error(ref, e) from e


def classify(ref: RewardRef, target: object) -> LoadedReward:
    """Decide how to call ``target`` from its :class:`RewardInfo`; instantiate a class."""
    try:
        info = describe(ref.display_name, target)
        signature = call_signature(target)
    except (TypeError, ValueError) as e:
        raise _shape_error(ref, e) from e
    if info.is_class:
        call: Any = _instantiate(ref, target)
        call_kwargs: Mapping[str, Any] = {}
    else:
        call, call_kwargs = target, ref.kwargs
    shape: Shape = "batch" if info.shape == "batch" else "sample"
    names = SAMPLE_PARAMS if shape == "sample" else BATCH_PARAMS
    prompt_param = PROMPT_PARAM[shape] if info.takes_prompt else None
    named, pass_extra = _call_plan(ref, signature, names, call_kwargs, prompt_param)
    # verl's names as the leading parameters: positional passing is the same call, faster.
    by_keyword = named and not _leading_params(signature, names if pass_extra else names[:3])
    return LoadedReward(
        ref=ref, target=target, call=call, shape=shape, is_async=info.is_async,
        is_class=info.is_class, by_keyword=by_keyword, pass_extra_info=pass_extra,
        call_kwargs=dict(call_kwargs), meta=info.meta, display_name=ref.display_name,
        invoke=_invoker(call, names, by_keyword, pass_extra, dict(call_kwargs), prompt_param),
        prompt_param=prompt_param, info=info,
    )


def _shape_error(ref: RewardRef, error: Exception) -> PluginShapeError:
    if isinstance(error, NotARewardError):  # inspection's own verdict says it all
        return PluginShapeError(ref.display_name, str(error))
    return PluginShapeError(ref.display_name, "cannot inspect the target's signature", error)


def _invoker(
    call: RewardFn, names: tuple[str, ...], by_keyword: bool, pass_extra: bool,
    kwargs: dict[str, Any], prompt_param: str | None = None,
) -> Callable[..., Any]:
    """The cheapest call that passes the fields the way the target expects.

    The returned callable takes ``(data_source, solution_str, ground_truth,
    extra_info, prompt=None)``; the prompt reaches only a target that names it.
    """
    if prompt_param is not None:
        return _prompt_invoker(call, names, by_keyword, pass_extra, kwargs, prompt_param)
    if by_keyword:
        kept = names if pass_extra else names[:3]
        return lambda a, b, c, d, p=None: call(**dict(zip(kept, (a, b, c, d))), **kwargs)
    if pass_extra:
        if kwargs:
            return lambda a, b, c, d, p=None: call(a, b, c, d, **kwargs)
        return lambda a, b, c, d, p=None: call(a, b, c, d)
    if kwargs:
        return lambda a, b, c, d, p=None: call(a, b, c, **kwargs)
    return lambda a, b, c, d, p=None: call(a, b, c)


def _prompt_invoker(
    call: RewardFn, names: tuple[str, ...], by_keyword: bool, pass_extra: bool,
    kwargs: dict[str, Any], prompt_param: str,
) -> Callable[..., Any]:
    if by_keyword:
        kept = names if pass_extra else names[:3]
        return lambda a, b, c, d, p=None: call(
            **dict(zip(kept, (a, b, c, d))), **{prompt_param: p}, **kwargs)
    if pass_extra:
        return lambda a, b, c, d, p=None: call(a, b, c, d, **{prompt_param: p}, **kwargs)
    return lambda a, b, c, d, p=None: call(a, b, c, **{prompt_param: p}, **kwargs)


def _leading_params(signature: inspect.Signature, names: tuple[str, ...]) -> bool:
    """True when ``names`` are the first positional parameters, in order."""
    params = list(signature.parameters.values())[: len(names)]
    return [p.name for p in params] == list(names) and all(
        p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params
    )


def _load(ref: RewardRef) -> LoadedReward:
    return classify(ref, import_target(ref))


def _import_plugin_module(ref: RewardRef, module_name: str) -> types.ModuleType:
    try:
        return importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.split(".")[0] == e.name.split(".")[0]:
            raise PluginNotInstalledError(
                ref.display_name,
                f"module '{module_name}' is not importable in this process; install "
                f"{ref.dist}=={ref.version} here (pip install {ref.dist}=={ref.version})",
                e,
            ) from e
        raise PluginLoadError(ref.display_name, _missing_from_plugin(module_name, e), e) from e
    except BaseException as e:  # SystemExit at import too
        if is_host_interrupt(e):
            raise
        raise PluginLoadError(ref.display_name, f"importing {module_name} failed", e) from e


def _materialise_file(ref: RewardRef) -> types.ModuleType:
    """Execute a file reward's carried source as a real, deterministic module."""
    name = ref.module_name
    existing = sys.modules.get(name)
    if existing is not None:
        return existing
    assert ref.source is not None and ref.path is not None
    module = types.ModuleType(name)
    module.__file__ = ref.path
    register_source(ref)
    sys.modules[name] = module
    try:
        exec(compile(ref.source, ref.path, "exec"), module.__dict__)
    except ModuleNotFoundError as e:
        del sys.modules[name]
        raise PluginLoadError(ref.display_name, _missing_from_file(ref, e), e) from e
    except BaseException as e:
        del sys.modules[name]
        if is_host_interrupt(e):
            raise
        raise PluginLoadError(ref.display_name, "executing the reward file failed", e) from e
    return module


def register_source(ref: RewardRef) -> None:
    """Put a file reward's carried source in :mod:`linecache` under its path, so tracebacks
    and frame lines show the reward's own lines where the file does not exist (a worker
    node, a deleted file). A plugin's source is its installed module's: nothing to do."""
    if ref.kind == "file" and ref.path is not None and ref.source is not None:
        linecache.cache[ref.path] = (len(ref.source), None, ref.source.splitlines(True), ref.path)


def sibling_module(ref: RewardRef, name: str) -> Path | None:
    """The module ``name`` beside a file reward's file (``name.py`` or a package
    directory), which does not travel with the reward; None when there is none here."""
    if ref.kind != "file" or ref.path is None:
        return None
    folder = Path(ref.path).parent
    top = name.split(".")[0]
    for candidate in (folder / f"{top}.py", folder / top):
        if candidate.exists():
            return candidate
    return None


def _missing_from_file(ref: RewardRef, error: ModuleNotFoundError) -> str:
    missing = error.name or "?"
    sibling = sibling_module(ref, missing)
    line, via = _import_site(error, lambda frame: frame.f_code.co_filename == ref.path)
    if sibling is not None and not via:
        return (f"the reward file imports '{missing}' (at {line}), a module beside it ({sibling}). "
                f"A file reward travels alone, without the modules beside it: package the reward "
                f"and its modules as a plugin (`verl-rewards new NAME`) and pip install it where "
                f"the reward runs")
    return f"the reward file{_imports(missing, via)} (at {line}){_not_installed(missing)}"


def _missing_from_plugin(module_name: str, error: ModuleNotFoundError) -> str:
    missing = error.name or "?"
    line, via = _import_site(error, lambda frame: frame.f_globals.get("__name__") == module_name)
    where = f" (at {line})" if line else ""
    return f"importing {module_name} failed: it{_imports(missing, via)}{where}{_not_installed(missing)}"


def _import_site(error: ModuleNotFoundError, own: Callable[[types.FrameType], bool]) -> tuple[str, str]:
    """Where the reward's own code made the import that failed (``FILE:LINE``), and the
    module it imported there when the failing import was made further in ('' if none)."""
    entries = []
    tb = error.__traceback__
    while tb is not None:
        if not tb.tb_frame.f_code.co_filename.startswith("<"):  # not importlib's frozen frames
            entries.append(tb)
        tb = tb.tb_next
    mine = [i for i, e in enumerate(entries) if own(e.tb_frame)]
    if not mine:
        return "", ""
    site = entries[mine[-1]]
    further = entries[mine[-1] + 1:]
    via = str(further[0].tb_frame.f_globals.get("__name__", "")) if further else ""
    return f"{site.tb_frame.f_code.co_filename}:{site.tb_lineno}", via


def _imports(missing: str, via: str) -> str:
    if via and via.split(".")[0] != missing.split(".")[0]:
        return f" imports '{via}', which imports '{missing}'"
    return f" imports '{missing}'"


def _not_installed(missing: str) -> str:
    return (f", which is not installed in this Python environment ({sys.prefix}); install "
            f"'{missing.split('.')[0]}' here, or correct the name")


def _instantiate(ref: RewardRef, cls: Any) -> Any:
    try:
        return cls(**ref.kwargs)
    except TypeError as e:
        raise PluginShapeError(
            ref.display_name, f"cannot construct {cls.__name__}(**reward.kwargs)", e
        ) from e
    except BaseException as e:  # SystemExit and the like too: the reward's, not the host's
        if is_host_interrupt(e):
            raise
        raise PluginLoadError(ref.display_name, f"{cls.__name__}(...) raised", e) from e


def _call_plan(
    ref: RewardRef, signature: inspect.Signature, names: tuple[str, ...],
    call_kwargs: Mapping[str, Any], prompt_param: str | None = None,
) -> tuple[bool, bool]:
    params = signature.parameters
    has_var_kw = any(p.kind is p.VAR_KEYWORD for p in params.values())
    by_keyword = all(n in params for n in names[:3])
    # A positional slot named for the prompt is not room for extra_info.
    room = {k: v for k, v in params.items() if k != prompt_param}
    pass_extra = names[3] in params or has_var_kw or (not by_keyword and _positional_room(room))
    dummy = [object()] * 4
    prompt = {prompt_param: object()} if prompt_param else {}
    try:
        if by_keyword:
            fields = dict(zip(names if pass_extra else names[:3], dummy))
            signature.bind(**fields, **prompt, **call_kwargs)
        else:
            signature.bind(*dummy[: 4 if pass_extra else 3], **prompt, **call_kwargs)
    except TypeError as e:
        expected = f"fn({', '.join(names[:3])}, {names[3]}=None, **kwargs)"
        raise PluginShapeError(
            ref.display_name,
            f"signature {signature} cannot be called as {expected} "
            f"with reward.kwargs {sorted(call_kwargs)}",
            e,
        ) from e
    return by_keyword, pass_extra


def _positional_room(params: Mapping[str, inspect.Parameter]) -> bool:
    positional = [p for p in params.values() if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    return len(positional) >= 4 or any(p.kind is p.VAR_POSITIONAL for p in params.values())


def _sample_adapter(loaded: LoadedReward) -> RewardFn:
    def compute_score(
        data_source: Any, solution_str: Any, ground_truth: Any, extra_info: Any = None,
        *, prompt: Any = None, **kwargs: Any,
    ) -> Any:
        target = _with_call_kwargs(loaded, kwargs) if kwargs else loaded
        if target.shape == "batch":
            value = target.invoke([data_source], [solution_str], [ground_truth], [extra_info], [prompt])
        else:
            value = target.invoke(data_source, solution_str, ground_truth, extra_info, prompt)
        if inspect.isawaitable(value):
            value = aio.run(_awaited(value))
        return value[0] if target.shape == "batch" else value

    compute_score.__qualname__ = compute_score.__name__ = f"compute_score[{loaded.ref.name}]"
    compute_score.__doc__ = f"verl-signature adapter over reward {loaded.display_name}."
    return compute_score


def _with_call_kwargs(loaded: LoadedReward, extra: Mapping[str, Any]) -> LoadedReward:
    kwargs = {**loaded.call_kwargs, **extra}
    names = SAMPLE_PARAMS if loaded.shape == "sample" else BATCH_PARAMS
    invoke = _invoker(loaded.call, names, loaded.by_keyword, loaded.pass_extra_info, kwargs,
                      loaded.prompt_param)
    return loaded._replace(call_kwargs=kwargs, invoke=invoke)


async def _awaited(value: Any) -> Any:
    return await value
