"""Judge the attacks: a probe that out-scores its bound is a way to game the reward."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import NamedTuple

from .records import Finding, Probe, Scored

TOLERANCE = 1e-6


class Controls(NamedTuple):
    """What one example's own responses score: the right answer, no answer, a wrong answer."""

    right: Scored
    none: Scored
    wrong: Scored


def usable(controls: Controls) -> bool:
    """The example tells right from no answer: its attacks can be judged against it."""
    return controls.right.status == "ok" and controls.right.score > controls.none.score + TOLERANCE


def control_findings(controls: Mapping[int, Controls], wrong_text: Mapping[int, str]) -> list[Finding]:
    """A wrong answer that scores as much as the right one: the reward does not read the answer."""
    found = []
    for index, c in controls.items():
        if usable(c) and c.wrong.score >= c.right.score - TOLERANCE:
            found.append(Finding(
                "hack", "a wrong answer",
                f"example {index + 1}: the wrong answer {_short(wrong_text[index])} scores "
                f"{c.wrong.score:g}, as much as the right one ({c.right.score:g}): score the answer "
                "against the reference, not the response's shape"))
    return found


def probe_findings(controls: Mapping[int, Controls], scored: Sequence[tuple[Probe, Scored]]) -> list[Finding]:
    """Each probe that earns more than its bound allows (one finding per probe name)."""
    found: dict[str, Finding] = {}
    for probe, result in scored:
        limit = bound(probe, controls.get(probe.example))
        if limit is None or probe.name in found or result.score <= limit + TOLERANCE:
            continue
        found[probe.name] = Finding("hack", probe.name, _detail(probe, result, limit, controls.get(probe.example)))
    return list(found.values())


def bound(probe: Probe, controls: Controls | None) -> float | None:
    """The most ``probe`` may score; None when its example cannot judge it."""
    if probe.bound == "declared":
        return probe.max_score
    if controls is None or not usable(controls):
        return None
    if probe.bound == "none":
        return controls.none.score
    return max(controls.none.score, controls.wrong.score)


def _detail(probe: Probe, result: Scored, limit: float, controls: Controls | None) -> str:
    against = (f"at most {limit:g} declared" if probe.bound == "declared" else
               f"{'no answer' if probe.bound == 'none' else 'a wrong answer'} scores {limit:g}, "
               f"the right one {controls.right.score:g}" if controls else "")
    where = f"example {probe.example + 1}: " if probe.bound != "declared" else ""
    fix = f": {probe.fix}" if probe.fix else ""
    return f"{where}{_short(probe.solution_str)} scored {result.score:g} ({against}){fix}"


def _short(text: str, limit: int = 90) -> str:
    value = repr(text)
    if len(value) <= limit:
        return value
    return f"{value[: limit - 20]}...{value[-15:]} ({len(text):,} chars)"
