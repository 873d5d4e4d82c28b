"""The audit's records: an attack to score, what was found, and the verdict."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Literal

Check = Literal["hack", "determinism", "latency"]
# What a hack probe may score at most: no more than a response that gives no
# answer ("none"), or a wrong one ("wrong"), or the plugin's own figure ("declared").
Bound = Literal["none", "wrong", "declared"]


@dataclass(frozen=True)
class Probe:
    """One response to score, and the most it may earn.

    ``example`` is the index of the self-test example it was built from (its
    ground truth, kwargs and controls); ``fix`` says what to change when it
    earns more than ``bound`` allows.
    """

    name: str
    solution_str: str
    example: int
    bound: Bound = "wrong"
    fix: str = ""
    max_score: float | None = None  # for bound "declared"


@dataclass(frozen=True)
class Finding:
    """Something the audit found, and what to fix."""

    check: Check
    probe: str
    detail: str

    def as_json(self) -> dict[str, str]:
        """The finding as ``--json`` prints it."""
        return {"check": self.check, "probe": self.probe, "detail": self.detail}


def excerpt(text: str, max_lines: int = 8, max_chars: int = 800) -> str:
    """The end of ``text`` (a process's stderr) in whole lines: at most ``max_lines`` lines
    and ``max_chars`` characters, blank lines left out. A last line longer than that alone
    keeps its end, from a space, after ``...``. Each line is indented for a finding's text;
    empty when ``text`` has nothing to show."""
    kept: list[str] = []
    size = 0
    for line in reversed(text.splitlines()):
        line = line.rstrip()
        if not line.strip():
            continue
        if len(kept) == max_lines or size + len(line) > max_chars:
            if not kept:  # one line longer than the whole excerpt: its end
                tail = line[-max_chars:]
                kept.append("..." + tail[tail.find(" ") + 1:] if " " in tail else "..." + tail)
            break
        kept.append(line)
        size += len(line)
    return "".join(f"\n      | {line}" for line in reversed(kept))


@dataclass(frozen=True)
class Accepted:
    """A finding the plugin's author (or the command line) accepts as deliberate, and why."""

    finding: Finding
    reason: str

    def as_json(self) -> dict[str, str]:
        """The finding as ``--json`` prints it, with the reason."""
        return {**self.finding.as_json(), "reason": self.reason}


@dataclass(frozen=True)
class Latency:
    """Seconds per call over every response the audit scored, against the timeout."""

    p50_s: float
    p95_s: float
    max_s: float
    calls: int
    timeout_s: float


@dataclass(frozen=True)
class AuditReport:
    """The verdict on one plugin: ``passed`` when nothing was found."""

    plugin: str  # the entry-point name
    display_name: str
    kind: str
    kind_source: str  # "--kind", "metadata" or "default"
    findings: tuple[Finding, ...]
    probes_run: int
    examples_used: int
    latency: Latency | None = None
    notes: tuple[str, ...] = field(default_factory=tuple)
    accepted: tuple[Accepted, ...] = ()  # findings accepted by name: not counted against it
    runs: tuple[tuple[str, int], ...] = ()  # kind of input -> how often each ran (determinism)

    @property
    def passed(self) -> bool:
        """Nothing found (accepted findings aside)."""
        return not self.findings

    def as_json(self) -> dict[str, Any]:
        """``{"plugin", "passed", "findings": [...]}``, the contract's shape, and
        ``"accepted": [...]`` (each with its reason) when a finding was accepted."""
        shown: dict[str, Any] = {"plugin": self.plugin, "passed": self.passed,
                                 "findings": [f.as_json() for f in self.findings]}
        if self.accepted:
            shown["accepted"] = [a.as_json() for a in self.accepted]
        return shown


@dataclass(frozen=True)
class Scored:
    """One call's outcome as the audit reads it (``score`` is 0.0 for a failed call)."""

    status: str
    score: float
    error: str | None
    seconds: float

    @classmethod
    def from_json(cls, value: Mapping[str, Any]) -> Scored:
        """Read the runner's JSON form."""
        return cls(str(value["status"]), float(value["score"]), value.get("error"), float(value["seconds"]))
