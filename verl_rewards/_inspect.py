"""Inspect a reward once, without building it: the :class:`RewardInfo` record.

Everything the framework needs to know about a reward before it runs (its
shape, whether it is async or a class, whether it takes the prompt, which
kwargs it accepts and of which simple type, what it declares) is read here
from the imported target's signatures and ``@reward`` metadata. A class is
read through its constructor (kwargs) and its unbound ``__call__`` (shape,
async, prompt), as pluggy's ``varnames`` does, so no model loads and no
client connects in the process that asks. Every other module reads the
record instead of inspecting again; :mod:`verl_rewards.resolve` calls the
same :func:`call_signature` to plan the call.
"""

from __future__ import annotations

import difflib
import inspect
import sys
import types
import typing
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import NotARewardError
from .metadata import RewardMeta, Shape, metadata_of

SAMPLE_PARAMS = ("data_source", "solution_str", "ground_truth", "extra_info")
BATCH_PARAMS = ("data_sources", "solution_strs", "ground_truths", "extra_infos")
# Passed only to a target whose signature names it (never through **kwargs).
PROMPT_PARAM: Mapping[Shape, str] = {"sample": "prompt", "batch": "prompts"}
FIELDS = frozenset({*SAMPLE_PARAMS, *BATCH_PARAMS, *PROMPT_PARAM.values()})

# The kwarg types checked before a run: a wrong one is a config error naming the key.
SimpleType = Literal["bool", "int", "float", "str"]
_SIMPLE: Mapping[object, SimpleType] = {bool: "bool", int: "int", float: "float", str: "str",
                                        "bool": "bool", "int": "int", "float": "float", "str": "str"}


@dataclass(frozen=True)
class RewardInfo:
    """What a reward is and how it is called, read without instantiating it.

    For a composite, ``components`` holds each reward's record and the flags
    summarise them (async or prompt if any is; the most GPUs declared).
    """

    name: str  # the reward's display name
    shape: Shape | Literal["composite"]
    is_async: bool = False
    is_class: bool = False
    takes_prompt: bool = False
    accepted_kwargs: tuple[str, ...] = ()  # by name (constructor parameters for a class)
    accepts_var_kwargs: bool = False  # a **kwargs parameter takes any key
    kwarg_types: Mapping[str, SimpleType] = field(default_factory=dict)  # from annotations or defaults
    # The values a kwarg annotated ``Literal[...]`` (or ``Literal[...] | None``) allows.
    kwarg_choices: Mapping[str, tuple[Any, ...]] = field(default_factory=dict)
    # Every other annotation, as text (what ``show`` prints for the kwarg).
    kwarg_hints: Mapping[str, str] = field(default_factory=dict)
    meta: RewardMeta = field(default_factory=RewardMeta)
    components: tuple[tuple[str, RewardInfo], ...] = ()  # (key, info) for a composite
    # False when this process could not import the reward (``workers_only``): the
    # flags are then the cautious ones (takes the prompt, accepts any kwarg).
    inspected: bool = True

    @property
    def timeout_s(self) -> float | None:
        """The declared ``@reward(timeout_s=...)``, if any."""
        return self.meta.timeout_s

    @property
    def num_gpus(self) -> float:
        """The declared GPUs per worker (the most among a composite's rewards), else 0."""
        if self.components:
            return max(info.num_gpus for _, info in self.components)
        return self.meta.num_gpus or 0.0

    @property
    def max_batch_size(self) -> int | None:
        """The declared most samples per batch call, if any."""
        return self.meta.max_batch_size

    @property
    def kind(self) -> str | None:
        """The kind the plugin declares in its metadata (``math``, ``code``, ...), if any."""
        kind = getattr(self.meta, "kind", None)
        return kind if isinstance(kind, str) else None

    def accepts(self, key: str) -> bool:
        """Whether a kwarg named ``key`` reaches the reward."""
        return self.accepts_var_kwargs or key in self.accepted_kwargs

    def unaccepted(self, kwargs: Mapping[str, Any]) -> list[str]:
        """The keys of ``kwargs`` the reward cannot take, sorted."""
        return sorted(k for k in kwargs if not self.accepts(k))

    def mistyped(self, kwargs: Mapping[str, Any]) -> list[str]:
        """One line per value of ``kwargs`` whose simple type is wrong for its parameter, or
        that is not one of the values its ``Literal`` annotation allows."""
        wrong = [f"'{key}' must be {expected}, not {value!r} ({type(value).__name__})"
                 for key, value in kwargs.items()
                 if (expected := self.kwarg_types.get(key)) is not None
                 and not _is_instance(value, expected)]
        wrong += [_not_a_choice(key, value, choices) for key, value in kwargs.items()
                  if (choices := self.kwarg_choices.get(key)) is not None
                  and not any(_same(value, c) for c in choices)]
        return wrong

    def close_kwargs(self, key: str) -> list[str]:
        """The accepted kwargs whose names are close to ``key`` (a misspelling's fixes)."""
        return difflib.get_close_matches(key, self.accepted_kwargs, n=3, cutoff=0.6)

    def kwarg_type(self, key: str) -> str:
        """What kwarg ``key`` takes, as ``show`` prints it: its simple type, the values its
        ``Literal`` allows (``'a' | 'b'``), its annotation, else ``any``."""
        if key in self.kwarg_choices:
            return " | ".join(repr(c) for c in self.kwarg_choices[key])
        return self.kwarg_types.get(key) or self.kwarg_hints.get(key) or "any"


def describe(name: str, target: object) -> RewardInfo:
    """The :class:`RewardInfo` of an imported ``target`` (never called or instantiated).

    Raises :class:`~verl_rewards.errors.NotARewardError` (a ``TypeError``) for a target
    that is neither a function nor a class or whose instances cannot be called, and
    ``TypeError`` or ``ValueError`` when its signature cannot be read.
    """
    meta = metadata_of(target)
    is_class = isinstance(target, type)
    if not is_class and not callable(target):
        raise NotARewardError(f"target is a {type(target).__name__}, not a function or class")
    signature = call_signature(target)
    shape: Shape = meta.shape or shape_of(signature)
    params = signature.parameters
    # A class takes its kwargs in the constructor; a function with the fields.
    taking = constructor_signature(target).parameters if isinstance(target, type) else params
    named = [p for p in taking.values()
             if p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY) and (is_class or p.name not in FIELDS)]
    scope = _scope(target)
    annotations = {p.name: _evaluated(p.annotation, scope) for p in named if p.annotation is not p.empty}
    choices = {name: c for name, a in annotations.items() if (c := literal_choices(a)) is not None}
    return RewardInfo(
        name=name, shape=shape, is_async=_is_async(target), is_class=is_class,
        takes_prompt=PROMPT_PARAM[shape] in params,
        accepted_kwargs=tuple(p.name for p in named),
        accepts_var_kwargs=any(p.kind is p.VAR_KEYWORD for p in taking.values()),
        kwarg_types={p.name: t for p in named
                     if p.name not in choices and (t := _simple_type(p)) is not None},
        kwarg_choices=choices,
        kwarg_hints={p.name: _annotation_text(p.annotation) for p in named
                     if p.annotation is not p.empty and p.name not in choices},
        meta=meta,
    )


def composite(name: str, components: tuple[tuple[str, RewardInfo], ...]) -> RewardInfo:
    """The record of several rewards scored together."""
    infos = [info for _, info in components]
    return RewardInfo(
        name=name, shape="composite", is_async=any(i.is_async for i in infos),
        takes_prompt=any(i.takes_prompt for i in infos), components=components,
        inspected=all(i.inspected for i in infos),
    )


def call_signature(target: object) -> inspect.Signature:
    """The signature the reward is called with: a function's own, or a class's
    ``__call__`` without ``self`` (read from the class, not an instance)."""
    if not inspect.isclass(target):
        return inspect.signature(target)  # type: ignore[arg-type]
    call = inspect.getattr_static(target, "__call__", None)
    if call is None or call is type.__call__:
        raise NotARewardError("instances of the class are not callable (it defines no __call__)")
    signature = inspect.signature(call)
    params = list(signature.parameters.values())
    return signature.replace(parameters=params[1:]) if params else signature


def constructor_signature(cls: type) -> inspect.Signature:
    """``cls(...)``'s signature (its ``__init__`` without ``self``)."""
    return inspect.signature(cls)


def shape_of(signature: inspect.Signature) -> Shape:
    """``batch`` when the signature names verl's batch fields, else ``sample``."""
    return "batch" if set(BATCH_PARAMS) & set(signature.parameters) else "sample"


def _is_async(target: object) -> bool:
    if inspect.isclass(target):
        return inspect.iscoroutinefunction(inspect.getattr_static(target, "__call__", None))
    if inspect.iscoroutinefunction(target):
        return True
    # A callable instance whose class defines `async def __call__`.
    return not inspect.isroutine(target) and inspect.iscoroutinefunction(type(target).__call__)


def literal_choices(annotation: object) -> tuple[Any, ...] | None:
    """The values ``Literal[...]`` allows (with None for ``Literal[...] | None`` or
    ``Optional[Literal[...]]``); None for any other annotation."""
    origin = typing.get_origin(annotation)
    if origin is Literal:
        return tuple(typing.get_args(annotation))
    if origin is typing.Union or origin is types.UnionType:
        found: list[Any] = []
        for member in typing.get_args(annotation):
            if member is type(None):
                found.append(None)
            elif (inner := literal_choices(member)) is not None:
                found += inner
            else:
                return None
        return tuple(dict.fromkeys(found)) if any(c is not None for c in found) else None
    return None


def _scope(target: object) -> dict[str, Any]:
    """The globals ``target``'s string annotations (``from __future__ import annotations``)
    are read in: its module's."""
    function = inspect.unwrap(target) if inspect.isfunction(target) else None
    if function is not None:
        return dict(function.__globals__)
    module = sys.modules.get(getattr(target if inspect.isclass(target) else type(target), "__module__", ""))
    return dict(vars(module)) if module is not None else {}


def _evaluated(annotation: object, scope: dict[str, Any]) -> object:
    """A string annotation evaluated in its module (as ``typing.get_type_hints`` does), or
    left as text when it names something that module does not have at run time."""
    if not isinstance(annotation, str):
        return annotation
    try:
        return eval(annotation, scope)  # the reward's own annotation, in its own module
    except Exception:  # noqa: BLE001 - e.g. a name imported only under TYPE_CHECKING
        return annotation


def _annotation_text(annotation: object) -> str:
    if isinstance(annotation, str):
        return annotation
    if isinstance(annotation, type) and typing.get_origin(annotation) is None:
        return annotation.__qualname__
    return repr(annotation).replace("typing.", "")


def _not_a_choice(key: str, value: object, choices: tuple[Any, ...]) -> str:
    allowed = ", ".join(repr(c) for c in choices)
    close = difflib.get_close_matches(value, [c for c in choices if isinstance(c, str)], n=1) \
        if isinstance(value, str) else []
    hint = f" (did you mean {close[0]!r}?)" if close else ""
    return f"'{key}' must be one of {allowed}, not {value!r}{hint}"


def _same(value: object, choice: object) -> bool:
    """``Literal`` equality: ``True`` is not ``1``, nor ``1.0`` ``1``."""
    return type(value) is type(choice) and value == choice


def _simple_type(param: inspect.Parameter) -> SimpleType | None:
    annotation = param.annotation
    if annotation is not param.empty:
        return _SIMPLE.get(annotation) if isinstance(annotation, (type, str)) else None
    default = param.default
    if default is param.empty or default is None:
        return None
    return _SIMPLE.get(type(default))


def _is_instance(value: object, expected: SimpleType) -> bool:
    if expected == "bool":
        return isinstance(value, bool)
    if isinstance(value, bool):
        return False
    if expected == "int":
        return isinstance(value, int)
    if expected == "float":
        return isinstance(value, (int, float))
    return isinstance(value, str)
