"""Find installed reward plugins: entry points in group ``verl_rewards``.

Finding is not loading: this module reads distribution metadata only and
never imports a plugin, so ``verl-rewards list`` stays fast and a broken
plugin cannot break the listing of the others.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable, Sequence
from importlib import metadata
from typing import NamedTuple

from .errors import AmbiguousPluginError, PluginNotFoundError

GROUP = "verl_rewards"

_SECTION = re.compile(r"^\s*\[\s*verl_rewards\s*\]\s*$", re.MULTILINE)


class PluginRecord(NamedTuple):
    """An installed plugin, as declared: nothing has been imported."""

    name: str
    target: str  # "module:attr"
    dist: str
    version: str

    @property
    def display_name(self) -> str:
        """``gsm8k (verl-rewards-math 0.1.0)``: the name used in every message."""
        return display_name(self.name, self.dist, self.version)

    @property
    def qualified_name(self) -> str:
        """``verl-rewards-math:gsm8k``: unambiguous even when names collide."""
        return f"{self.dist}:{self.name}"


def display_name(name: str, dist: str | None, version: str | None) -> str:
    """The one way a plugin is named in messages, logs and tables."""
    return f"{name} ({dist} {version})"


def find_plugins() -> list[PluginRecord]:
    """Every installed plugin, sorted by name then distribution."""
    records: list[PluginRecord] = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        text = dist.read_text("entry_points.txt")
        # Cheap pre-filter: most distributions declare no verl_rewards entry
        # point, and parsing their metadata is the slow part of a scan.
        if not text or not _SECTION.search(text):
            continue
        name = dist.metadata["Name"]
        key = _normalize(name)
        if key in seen:  # the same distribution twice on sys.path: first wins
            continue
        seen.add(key)
        records.extend(_records_of(dist, name))
    return sorted(records, key=lambda r: (r.name, r.dist))


def select(spec: str, records: Sequence[PluginRecord] | None = None) -> PluginRecord:
    """The plugin that ``spec`` (``name`` or ``dist:name``) refers to.

    Raises :class:`PluginNotFoundError` (with close matches and the installed
    names) or :class:`AmbiguousPluginError` (listing both distributions).
    """
    records = find_plugins() if records is None else records
    dist, _, name = spec.rpartition(":")
    matches = [r for r in records if r.name == name]
    if dist:
        matches = [r for r in matches if _normalize(r.dist) == _normalize(dist)]
    if not matches:
        raise PluginNotFoundError(spec, suggest(spec, records), _installed_names(records))
    if len(matches) > 1:
        raise AmbiguousPluginError(name, sorted(r.dist for r in matches))
    return matches[0]


def suggest(spec: str, records: Iterable[PluginRecord]) -> list[str]:
    """Installed names close to ``spec``, best first."""
    candidates = sorted({r.name for r in records} | {r.qualified_name for r in records})
    return difflib.get_close_matches(spec, candidates, n=3, cutoff=0.6)


def _records_of(dist: metadata.Distribution, name: str) -> Iterable[PluginRecord]:
    version = dist.version
    for ep in dist.entry_points:
        if ep.group == GROUP:
            yield PluginRecord(ep.name, ep.value.strip(), name, version)


def _installed_names(records: Iterable[PluginRecord]) -> list[str]:
    return [r.display_name for r in records]


def _normalize(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()
