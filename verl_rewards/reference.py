""":class:`RewardRef`: the small, picklable record that crosses processes.

A reference holds no user code. A plugin reference names an entry point's
real module; a file reference carries the file's source and hash, so it can
be materialised on a node that never saw the file. Each process resolves a
reference itself, once (see :mod:`verl_rewards.resolve`).
"""

from __future__ import annotations

import ast
import functools
import hashlib
import json
import os
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal

from . import discovery
from .config import ConfigSource, load_config
from .errors import ConfigError, RewardFileError

RefKind = Literal["plugin", "file"]


@dataclass(frozen=True)
class RewardRef:
    """Where a reward lives, and the kwargs to bind: never the reward itself."""

    kind: RefKind
    name: str  # the entry-point name, or the function/class name in a file
    target: str  # "module:attr" for a plugin; the attribute name for a file
    dist: str | None = None
    version: str | None = None
    path: str | None = None
    source: str | None = field(default=None, repr=False)
    source_hash: str | None = None
    kwargs: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_config(cls, cfg: ConfigSource) -> RewardRef:
        """Validate a ``reward`` section and reference the reward it selects.

        Raises a :class:`~verl_rewards.errors.ConfigError` subclass naming the
        fault (unknown key, unknown or ambiguous plugin, missing file, ...)
        before any worker starts.
        """
        config = load_config(cfg)
        if config.rewards:
            raise ConfigError(
                "reward.rewards selects several rewards: reference them with "
                "verl_rewards.spec.CompositeRef.from_config, or use Scorer.from_config"
            )
        if config.plugin is not None:
            return cls.from_plugin(discovery.select(config.plugin), config.kwargs)
        assert config.path is not None  # load_config enforces exactly one
        return cls.from_file(config.path, config.name, config.kwargs)

    @classmethod
    def from_plugin(
        cls, record: discovery.PluginRecord, kwargs: Mapping[str, Any] | None = None
    ) -> RewardRef:
        """Reference an installed plugin found by discovery."""
        return cls(
            kind="plugin",
            name=record.name,
            target=record.target,
            dist=record.dist,
            version=record.version,
            kwargs=dict(kwargs or {}),
        )

    @classmethod
    def from_file(
        cls, path: str | Path, name: str = "compute_score", kwargs: Mapping[str, Any] | None = None
    ) -> RewardRef:
        """Reference ``name`` in the reward file ``path``, carrying its source."""
        file = Path(path).expanduser().resolve()
        source = _read_source(file)
        _check_defines(file, source, name)
        return cls(
            kind="file",
            name=name,
            target=name,
            path=str(file),
            source=source,
            source_hash=hashlib.sha256(source.encode()).hexdigest(),
            kwargs=dict(kwargs or {}),
        )

    @property
    def display_name(self) -> str:
        """One name for messages: ``gsm8k (verl-rewards-math 0.1.0)``."""
        if self.kind == "plugin":
            return discovery.display_name(self.name, self.dist, self.version)
        return f"{self.name} (file {self.path}, sha256 {self.short_hash})"

    @property
    def short_hash(self) -> str:
        """The first 12 hex digits of a file reward's source hash."""
        return (self.source_hash or "")[:12]

    @property
    def module_name(self) -> str:
        """The real module the reward lives in (deterministic for a file)."""
        if self.kind == "plugin":
            return self.target.partition(":")[0].strip()
        return f"verl_rewards_file_{(self.source_hash or '')[:16]}"

    @functools.cached_property
    def cache_key(self) -> str:
        """Identifies this reward plus its kwargs within a process (computed once per
        reference). A kwarg JSON cannot hold is keyed by :func:`value_key`, never by its
        ``repr``: two objects that print alike must not share one loaded reward."""
        ident = (self.kind, self.target, self.dist, self.version, self.source_hash)
        return json.dumps([ident, self.kwargs], sort_keys=True, default=value_key)

    def with_kwargs(self, kwargs: Mapping[str, Any]) -> RewardRef:
        """The same reward with other kwargs."""
        return replace(self, kwargs=dict(kwargs))

    def load(self) -> Callable[..., Any]:
        """Resolve in this process (cached) and return a verl-signature callable:
        ``fn(data_source, solution_str, ground_truth, extra_info=None, **kwargs)``.
        """
        from .resolve import resolve

        return resolve(self).sample_fn


def value_key(value: Any) -> str:
    """A kwarg JSON cannot hold, as key text: its type and the digest of its pickle (the
    same in every process for the same state); one that does not pickle, by its identity
    in this process (a loaded reward keeps its reference, so the object outlives its key)."""
    kind = f"{type(value).__module__}.{type(value).__qualname__}"
    try:
        data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
    except Exception:  # noqa: BLE001 - any object's own __reduce__ may raise anything
        return f"{kind} object {id(value):#x} in process {os.getpid()}"
    return f"{kind} pickle sha256 {hashlib.sha256(data).hexdigest()}"


def _read_source(file: Path) -> str:
    if not file.is_file():
        raise RewardFileError(f"reward file not found: {file}")
    try:
        return file.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise RewardFileError(f"cannot read reward file {file}: {e}") from e


def _check_defines(file: Path, source: str, name: str) -> None:
    """Fail at config time when the file cannot define ``name`` (no import needed)."""
    try:
        tree = ast.parse(source, filename=str(file))
    except SyntaxError as e:
        raise RewardFileError(f"reward file {file} has a syntax error at line {e.lineno}: {e.msg}") from e
    defined = _top_level_names(tree)
    if name not in defined:
        callables = sorted(
            n.name
            for n in tree.body
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))
        )
        listing = ", ".join(callables) if callables else "none"
        raise RewardFileError(
            f"reward file {file} defines no function or class named '{name}' "
            f"(set reward.name); it defines: {listing}"
        )


def _top_level_names(tree: ast.Module) -> set[str]:
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names.update(t.id for t in targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            names.update((a.asname or a.name).split(".")[0] for a in node.names)
    return names

