"""Judge determinism: the same input must get the same score however it is run."""

from __future__ import annotations

from collections.abc import Sequence

from .records import Finding, Scored

FIX = ("make the score a pure function of the sample and kwargs: no unseeded randomness, no "
       "clock, no state shared between calls or threads, no result that depends on what ran before")


def determinism_findings(labels: Sequence[str], first: Sequence[Scored | None],
                         runs: Sequence[tuple[str, Sequence[Scored | None]]]) -> list[Finding]:
    """One finding per way of running (``runs``: name, results in ``labels`` order) whose
    results differ from ``first``; timeouts are left to the latency check."""
    found = []
    for mode, results in runs:
        for label, a, b in zip(labels, first, results):
            if a is None or b is None or "timeout" in (a.status, b.status) or _same(a, b):
                continue
            found.append(Finding("determinism", mode,
                                 f"{label} scored {_describe(a)}, then {_describe(b)} {mode}: {FIX}"))
            break
    return found


def _same(a: Scored, b: Scored) -> bool:
    return a.status == b.status and (a.status != "ok" or a.score == b.score)


def _describe(result: Scored) -> str:
    return repr(result.score) if result.status == "ok" else f"{result.status} ({result.error})"
