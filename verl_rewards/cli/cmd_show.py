"""``verl-rewards show NAME``: what a plugin is and how it will be called."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from .errors import EXIT_OK
from .output import emit

if TYPE_CHECKING:
    from .._inspect import RewardInfo
    from ..discovery import PluginRecord

NAME = "show"
HELP = "Show a plugin: target, shape, signature, docstring, metadata, source file."
EPILOG = """\
examples:
  verl-rewards show copy_digits
  verl-rewards show verl-rewards-math:gsm8k --json

NAME is an entry-point name, or DIST:NAME when two distributions declare it.
Showing imports the plugin (listing does not): a plugin that fails to import
is an error naming its distribution and the cause (exit 1)."""


def configure(parser: argparse.ArgumentParser) -> None:
    """Add this command's arguments."""
    parser.add_argument("name", metavar="NAME", help="plugin name, or DIST:NAME")
    parser.add_argument("--json", action="store_true", help="print the details as JSON")


def run(args: argparse.Namespace) -> int:
    """Import the plugin and describe it."""
    from ..checking import inspect_plugin
    from ..discovery import select

    record = select(args.name)
    if not args.json:
        emit(record.display_name, *_lines({"target": record.target}))
    target, reward = inspect_plugin(record)  # imported, never built; a load error maps to exit 1
    info = describe(record, target, reward)
    if args.json:
        import json

        emit(json.dumps(info, indent=2, default=repr))
    else:
        emit(*_lines({k: v for k, v in info.items() if k not in ("name", "target")}))
    return EXIT_OK


def describe(record: PluginRecord, target: object, reward: RewardInfo) -> dict[str, Any]:
    """Everything ``show`` prints about a plugin, as plain data (read from its
    :class:`RewardInfo`: a class reward is not instantiated)."""
    import inspect
    from dataclasses import asdict

    from ..checking import describe_shape
    from ..limits import DECLARED

    meta = reward.meta
    info: dict[str, Any] = {
        "name": record.name,
        "target": record.target,
        "distribution": record.dist,
        "version": record.version,
        "shape": describe_shape(reward),
        "signature": _signature(target),
    }
    if reward.is_class:
        info["call"] = _signature(getattr(target, "__call__"), name="__call__", drop_first=True)  # noqa: B004, B009
    info["kwargs"] = _kwargs(reward)
    info["takes_prompt"] = reward.takes_prompt
    info["source"] = _source(target)
    info["docstring"] = inspect.getdoc(target) or ""
    info["description"] = meta.description
    info["data_sources"] = list(meta.data_sources)
    # What the runtime uses when reward.timeout_s is not set: the declared timeout, else the default.
    info["timeout_s"] = DECLARED.for_reward(reward).timeout_s
    info["timeout_declared"] = meta.timeout_s is not None
    info["tags"] = list(meta.tags)
    info["kind"] = meta.kind  # what `audit` attacks it as (None: `generic`, unless --kind)
    info["audit_accept"] = [f"{probe} ({reason})" for probe, reason in meta.audit_accept]
    info["examples"] = [asdict(e) for e in meta.examples]
    return info


def _kwargs(reward: RewardInfo) -> str:
    """Each kwarg with what it takes (its type, or the values a ``Literal`` allows)."""
    named = [f"{k}: {reward.kwarg_type(k)}" for k in reward.accepted_kwargs]
    if reward.accepts_var_kwargs:
        named.append("any other (**kwargs)" if named else "any (**kwargs)")
    return ", ".join(named) or "none"


def _signature(obj: Any, name: str | None = None, drop_first: bool = False) -> str:
    """``obj``'s signature as text; ``drop_first``: without ``self`` (a class's ``__call__``)."""
    import inspect

    label = name or getattr(obj, "__qualname__", None) or getattr(obj, "__name__", "")
    for eval_str in (True, False):
        try:
            signature = inspect.signature(obj, eval_str=eval_str)
        except (TypeError, ValueError):
            return f"{label}(...)"
        except Exception:  # noqa: BLE001 - an annotation that cannot be evaluated here
            continue
        if drop_first:
            signature = signature.replace(parameters=list(signature.parameters.values())[1:])
        return f"{label}{signature}"
    return f"{label}(...)"


def _source(target: Any) -> str:
    import inspect

    try:
        file = inspect.getsourcefile(target)
        line = inspect.getsourcelines(target)[1]
    except (TypeError, OSError):
        module = inspect.getmodule(target)
        return getattr(module, "__file__", None) or "unknown"
    return f"{file}:{line}" if file else "unknown"


def _lines(info: dict[str, Any]) -> list[str]:
    lines = []
    for key, value in info.items():
        label = f"  {key}:"
        if key == "examples":
            lines.append(f"{label} {len(value) or 'none declared'}")
            lines.extend(f"    {i}. {_example(e)}" for i, e in enumerate(value, 1))
        elif key == "docstring" and value:
            lines.append(label)
            lines.extend(f"    {line}".rstrip() for line in value.splitlines())
        elif key == "timeout_declared":
            continue
        elif key == "timeout_s":
            origin = "declared by the plugin" if info.get("timeout_declared") else "the default"
            lines.append(f"{label.ljust(16)}{value:g} s ({origin}; reward.timeout_s overrides it)")
        elif isinstance(value, list):
            lines.append(f"{label.ljust(16)}{', '.join(map(str, value)) or '-'}")
        else:
            lines.append(f"{label.ljust(16)}{'-' if value in (None, '') else value}")
    return lines


def _example(example: dict[str, Any]) -> str:
    shown: dict[str, Any] = {k: example[k] for k in ("solution_str", "ground_truth")}
    for key in ("data_source", "extra_info", "kwargs"):
        if example.get(key):
            shown[key] = example[key]
    inputs = ", ".join(f"{k}={v!r}" for k, v in shown.items())
    return f"{inputs} -> {example['expected']!r}"
