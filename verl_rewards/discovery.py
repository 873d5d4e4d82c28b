"""Find installed reward plugins: entry points in group ``verl_rewards``.

Finding is not loading: this module reads distribution metadata only and
never imports a plugin, so ``verl-rewards list`` stays fast and a broken
plugin cannot break the listing of the others. A distribution whose own
metadata is unreadable (an interrupted install leaves a ``.dist-info`` without
``METADATA``; a hand-edited ``entry_points.txt`` may hold a malformed line) is
reported as a :class:`BrokenDistribution`, and its plugins are never offered.
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


class BrokenDistribution(NamedTuple):
    """An installed distribution that declares plugins but whose metadata cannot be read."""

    location: str  # its .dist-info (or .egg-info) directory
    problem: str  # what is wrong with it
    names: tuple[str, ...]  # the plugin names it seems to declare (best effort)

    def format(self) -> str:
        """One line: where, what is wrong, and what to do."""
        declared = f" (declares {', '.join(self.names)})" if self.names else ""
        return (f"broken distribution {self.location}{declared}: {self.problem}; "
                f"reinstall it (pip install --force-reinstall) or remove that directory")


class Scan(NamedTuple):
    """What a scan of ``sys.path`` found: usable plugins and broken distributions."""

    plugins: list[PluginRecord]
    broken: list[BrokenDistribution]


def display_name(name: str, dist: str | None, version: str | None) -> str:
    """The one way a plugin is named in messages, logs and tables."""
    return f"{name} ({dist} {version})"


def find_plugins() -> list[PluginRecord]:
    """Every usable installed plugin, sorted by name then distribution."""
    return scan().plugins


def scan() -> Scan:
    """Every installed plugin, and every plugin-declaring distribution that is broken."""
    records: list[PluginRecord] = []
    broken: list[BrokenDistribution] = []
    seen: set[str] = set()
    for dist in metadata.distributions():
        try:
            found = _plugins_of(dist)
        except _Broken as e:
            broken.append(BrokenDistribution(_location(dist), str(e), e.names))
            continue
        if found is None:
            continue
        key, plugins = found
        if key in seen:  # the same distribution twice on sys.path: first wins
            continue
        seen.add(key)
        records.extend(plugins)
    return Scan(sorted(records, key=lambda r: (r.name, r.dist)),
                sorted(broken, key=lambda b: b.location))


def select(spec: str, records: Sequence[PluginRecord] | None = None) -> PluginRecord:
    """The plugin that ``spec`` (``name`` or ``dist:name``) refers to.

    Raises :class:`PluginNotFoundError` (with close matches, and the broken
    distribution that declares it, if one does) or :class:`AmbiguousPluginError`
    (listing both distributions).
    """
    broken: list[BrokenDistribution] = []
    if records is None:
        records, broken = scan()
    dist, _, name = spec.rpartition(":")
    matches = [r for r in records if r.name == name]
    if dist:
        matches = [r for r in matches if _normalize(r.dist) == _normalize(dist)]
    if not matches:
        declared_by_broken = [b.format() for b in broken if name in b.names]
        raise PluginNotFoundError(spec, suggest(spec, records), _installed_names(records),
                                  declared_by_broken)
    if len(matches) > 1:
        raise AmbiguousPluginError(name, sorted(r.dist for r in matches))
    return matches[0]


def suggest(spec: str, records: Iterable[PluginRecord]) -> list[str]:
    """Installed plugins close to ``spec``, best first, each named once: by its bare name,
    or as ``dist:name`` when two distributions share the name (or ``spec`` has a ``dist:``)."""
    records = list(records)
    spelled: dict[str, list[PluginRecord]] = {}  # every spelling -> the plugins it names
    for record in records:
        spelled.setdefault(record.name, []).append(record)
        spelled.setdefault(record.qualified_name, []).append(record)
    suggestions: dict[str, None] = {}
    for match in difflib.get_close_matches(spec, sorted(spelled), n=len(spelled), cutoff=0.6):
        for record in spelled[match]:
            plain = ":" not in spec and len(spelled[record.name]) == 1
            suggestions.setdefault(record.name if plain else record.qualified_name)
    return list(suggestions)[:3]


class _Broken(Exception):
    def __init__(self, problem: str, names: tuple[str, ...] = ()) -> None:
        super().__init__(problem)
        self.names = names


def _plugins_of(dist: metadata.Distribution) -> tuple[str, list[PluginRecord]] | None:
    """``(normalised distribution name, its plugins)``; None when it declares none.

    Raises :class:`_Broken` when the distribution declares plugins but its
    metadata cannot be read as a whole.
    """
    try:
        text = dist.read_text("entry_points.txt")
    except (OSError, UnicodeDecodeError) as e:
        raise _Broken(f"cannot read entry_points.txt: {type(e).__name__}: {e}") from e
    # Cheap pre-filter: most distributions declare no verl_rewards entry
    # point, and parsing their metadata is the slow part of a scan.
    if not text or not _SECTION.search(text):
        return None
    names = _declared_names(text)
    name, version = _field(dist, "Name", names), _field(dist, "Version", names)
    try:
        entry_points = list(dist.entry_points)
    except Exception as e:  # importlib.metadata raises TypeError, ValueError, ...
        raise _Broken(f"malformed entry_points.txt ({type(e).__name__}: {e})", names) from e
    plugins = [PluginRecord(ep.name, ep.value.strip(), name, version)
               for ep in entry_points if ep.group == GROUP]
    return _normalize(name), plugins


def _field(dist: metadata.Distribution, key: str, names: tuple[str, ...]) -> str:
    """A required METADATA field, or :class:`_Broken` saying why it is missing."""
    try:
        value = dist.metadata[key]
    except KeyError:  # newer Pythons raise where older ones return None
        value = None
    except Exception as e:  # an unreadable or undecodable METADATA
        raise _Broken(f"cannot read METADATA: {type(e).__name__}: {e}", names) from e
    if value:
        return str(value)
    if not dist.read_text("METADATA"):
        raise _Broken("no METADATA file (an interrupted install?)", names)
    raise _Broken(f"its METADATA has no {key}", names)


def _declared_names(text: str) -> tuple[str, ...]:
    """The plugin names a possibly malformed ``entry_points.txt`` declares (for messages)."""
    names: list[str] = []
    in_group = False
    for raw in text.splitlines():
        line = raw.strip()
        if line.startswith("["):
            in_group = _SECTION.match(line) is not None
        elif in_group and "=" in line:
            names.append(line.split("=", 1)[0].strip())
    return tuple(names)


def _location(dist: metadata.Distribution) -> str:
    # PathDistribution keeps its directory only privately; every finder on
    # sys.path yields PathDistribution.
    path = getattr(dist, "_path", None)
    return str(path) if path is not None else repr(dist)


def _installed_names(records: Iterable[PluginRecord]) -> list[str]:
    return sorted({r.name for r in records})


def _normalize(dist_name: str) -> str:
    return re.sub(r"[-_.]+", "-", dist_name).lower()
