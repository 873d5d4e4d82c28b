"""Run one plugin through every installed host's adapter and check they agree.

.. code-block:: python

    from verl_rewards.testing.conformance import assert_conformant

    def test_my_reward_runs_the_same_in_every_trainer():
        assert_conformant("my_reward")

For each host whose package is installed (verl's reward function and its
reward manager, TRL, OpenRLHF, verifiers, SkyRL, AReaL; slime needs none, its
calling convention is all there is), the plugin's own self-test examples are
scored the way that host calls its reward, and three things are checked:

* **the same score everywhere**: each example scores its ``expected`` value;
* **a raising sample isolated**: a probe sample that raises, scored in the
  same call as the examples, gets ``error_score`` (its error visible where the
  host shows errors) and the examples keep their scores;
* **a hanging sample bounded**: a probe sample stuck in a Python loop gets
  ``error_score`` and the call returns within ``probe_timeout_s`` plus
  ``slack_s``.

The probes are a small reward file (written to a temporary directory) routed
by data source: the section is ``rewards: {plugin: <the plugin, weight 1>,
probe: <the file>}`` with ``route: {<probe data source>: probe, "*": plugin}``,
so every example reaches the plugin unchanged. Examples that declare kwargs
run in a section of their own, without probes; examples with ``extra_info``
are not run in OpenRLHF, which passes a reward only labels. Every adapter scores on
its default, worker processes beside the caller (``executor: process``), and the
verl manager in the calling process (``executor: local``), so the kit needs no
Ray; its hang probe is a Python loop, which every executor bounds.
"""

from __future__ import annotations

import tempfile
import textwrap
import time
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..metadata import Example
from ..samples import Sample
from ._hosts import HOSTS, Host, Seen

__all__ = ["ConformanceError", "ConformanceReport", "assert_conformant", "run_conformance"]

PROBE_SOURCE = "verl_rewards.conformance.probe"
RAISE = "verl-rewards conformance probe: raise"
HANG = "verl-rewards conformance probe: hang"

_PROBE_FILE = '''\
from verl_rewards.metadata import reward


@reward(timeout_s={timeout_s!r})
def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """Raise or hang when told to: the conformance kit's fault probes."""
    if solution_str == {raise_!r}:
        raise RuntimeError("the conformance probe raised on purpose")
    if solution_str == {hang!r}:
        while True:
            pass
    return 0.0
'''


@dataclass(frozen=True)
class ConformanceReport:
    """What running one plugin through every installed host found."""

    plugin: str
    hosts: tuple[str, ...]  # the hosts it ran in
    missing: tuple[str, ...]  # hosts not installed here (not run)
    examples: int
    problems: tuple[str, ...] = ()
    seconds: Mapping[str, float] = field(default_factory=dict)  # per host, the probe call

    @property
    def ok(self) -> bool:
        """Whether every check passed in every host run."""
        return not self.problems

    def format(self) -> str:
        """A few lines for a person: the verdict, hosts run and missing, each problem."""
        head = (f"{self.plugin}: {'conformant' if self.ok else 'NOT conformant'} in "
                f"{', '.join(self.hosts) or 'no host'} ({self.examples} examples)")
        lines = [head]
        if self.missing:
            lines.append(f"  not installed (not run): {', '.join(self.missing)}")
        lines += [f"  - {p}" for p in self.problems]
        return "\n".join(lines)


class ConformanceError(AssertionError):
    """A plugin that does not behave the same in every host."""


def run_conformance(
    plugin: str, *, hosts: Sequence[str] | None = None, probe_timeout_s: float = 2.0,
    error_score: float = -1.0, slack_s: float = 60.0,
) -> ConformanceReport:
    """Run ``plugin``'s self-test examples and the fault probes through every installed
    host (or those named in ``hosts``) and report what differs."""
    examples = _examples(plugin)
    chosen = _hosts(hosts)
    run = [h for h in chosen if h.installed()]
    problems: list[str] = []
    seconds: dict[str, float] = {}
    with _probe_file(probe_timeout_s) as probe:
        for host in run:
            host.load()  # importing a host (seconds for some) is not part of any check
            found, seconds[host.name] = _run_host(host, plugin, examples, probe, error_score)
            problems += found
            if seconds[host.name] > probe_timeout_s + slack_s:
                problems.append(f"{host.name}: the call with the hanging probe took "
                                f"{seconds[host.name]:.1f} s (timeout_s={probe_timeout_s})")
    return ConformanceReport(plugin, tuple(h.name for h in run),
                             tuple(h.name for h in chosen if not h.installed()), len(examples),
                             tuple(problems), seconds)


def assert_conformant(plugin: str, **options: Any) -> ConformanceReport:
    """:func:`run_conformance`, raising :class:`ConformanceError` with the report unless it passed."""
    report = run_conformance(plugin, **options)
    if not report.examples:
        raise ConformanceError(f"{plugin} declares no self-test examples (@reward(examples=...)): "
                               f"the conformance kit has nothing to compare")
    if not report.ok:
        raise ConformanceError(report.format())
    return report


def _run_host(host: Host, plugin: str, examples: Sequence[Example], probe: Path,
              error_score: float) -> tuple[list[str], float]:
    """Score every kwargs group in ``host``; the first group carries the probes."""
    problems: list[str] = []
    elapsed = 0.0
    for n, (kwargs, numbered) in enumerate(_by_kwargs(examples)):
        with_probes = n == 0
        section = _section(plugin, kwargs, probe, error_score)
        if not host.carries_extra_info:  # OpenRLHF passes labels only: nothing to compare
            numbered = [(number, e) for number, e in numbered if not e.extra_info]
        samples = [e.as_sample() for _, e in numbered]
        probes = [Sample(PROBE_SOURCE, RAISE, ""), Sample(PROBE_SOURCE, HANG, "")] if with_probes else []
        if probes and not host.routes_per_sample:  # the probes in a call of their own
            seen, elapsed = _score(host, section, probes)
            problems += _probes(host, seen, error_score)
            probes = []
        if not samples and not probes:
            continue
        seen, took = _score(host, section, samples + probes)
        elapsed = took if probes else elapsed
        problems += [p for (number, e), s in zip(numbered, seen)
                     if (p := _example_problem(host, number, e, s)) is not None]
        if probes:
            problems += _probes(host, seen[len(samples):], error_score)
    return problems, elapsed


def _score(host: Host, section: Mapping[str, Any], samples: list[Sample]) -> tuple[list[Seen], float]:
    began = time.monotonic()
    seen = host.run(section, samples)
    return seen, time.monotonic() - began


def _example_problem(host: Host, number: int, example: Example, seen: Seen) -> str | None:
    if abs(seen.score - example.expected) <= example.tolerance:
        return None
    why = f" ({seen.error})" if seen.error else ""
    return (f"{host.name}: example {number} ({example.solution_str[:40]!r}) scored {seen.score!r}, "
            f"expected {example.expected!r}{why}")


def _probes(host: Host, seen: Sequence[Seen], error_score: float) -> list[str]:
    problems = []
    for label, s in zip(("raising", "hanging"), seen):
        if s.score != error_score:
            problems.append(f"{host.name}: the {label} probe scored {s.score!r}, "
                            f"expected error_score {error_score!r}")
        elif host.shows_errors and not s.error:
            problems.append(f"{host.name}: the {label} probe's error is not visible to the host")
    return problems


def _section(plugin: str, kwargs: Mapping[str, Any], probe: Path, error_score: float) -> dict[str, Any]:
    return {
        "rewards": {"plugin": {"plugin": plugin, "kwargs": dict(kwargs)}, "probe": {"path": str(probe)}},
        "route": {PROBE_SOURCE: ["probe"], "*": ["plugin"]},
        "error_score": error_score,
    }


def _by_kwargs(examples: Sequence[Example]) -> list[tuple[dict[str, Any], list[tuple[int, Example]]]]:
    """Examples grouped by their kwargs (numbered from 1 as ``check`` numbers them);
    the group without kwargs first."""
    groups: dict[str, tuple[dict[str, Any], list[tuple[int, Example]]]] = {"{}": ({}, [])}
    for number, example in enumerate(examples, 1):
        kwargs = dict(example.kwargs)
        groups.setdefault(repr(sorted(kwargs.items())) if kwargs else "{}", (kwargs, []))[1].append(
            (number, example))
    return [g for g in groups.values() if g[1] or g is groups["{}"]]


def _examples(plugin: str) -> tuple[Example, ...]:
    """The plugin's self-test examples, read from its metadata: nothing is built (a class
    reward's model is loaded by each host, not by the kit)."""
    from .. import discovery
    from ..checking import inspect_plugin

    return inspect_plugin(discovery.select(plugin))[1].meta.examples


def _hosts(names: Sequence[str] | None) -> list[Host]:
    if names is None:
        return list(HOSTS)
    known = {h.name: h for h in HOSTS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown host(s) {unknown}; the kit knows {sorted(known)}")
    return [known[n] for n in names]


@contextmanager
def _probe_file(timeout_s: float) -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="verl-rewards-conformance-") as tmp:
        path = Path(tmp) / "conformance_probe.py"
        path.write_text(textwrap.dedent(_PROBE_FILE.format(timeout_s=timeout_s, raise_=RAISE, hang=HANG)))
        yield path
