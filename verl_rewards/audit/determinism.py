"""Judge determinism: the same input must get the same score however it is run.

How often to repeat an input is planned here too (:func:`runs_needed`), so that
a reward that varies now and then, on some kind of input only, is still found.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Final, NamedTuple

from .records import Finding, Scored

FIX = ("make the score a pure function of the sample and kwargs: no unseeded randomness, no "
       "clock, no state shared between calls or threads, no result that depends on what ran before")

# The design target: a reward that scores differently one call in five on some kind of
# input (right answers, no answers, wrong answers, attacks) is found 99 times in 100.
RATE: Final = 0.2
CONFIDENCE: Final = 0.99


class Comparison(NamedTuple):
    """One input's result, and the same input's result when it was run again in ``mode``."""

    label: str
    mode: str
    before: Scored | None
    after: Scored | None


def runs_needed(inputs: int, rate: float = RATE, confidence: float = CONFIDENCE) -> int:
    """How many times to run each of ``inputs`` inputs of one kind, so that a reward whose
    score on that kind differs from its usual one with probability ``rate`` is caught
    (two runs of one input differ) with probability at least ``confidence``.

    The worst case for a given ``rate`` is a reward with two scores (usual with
    probability 1 - p, the other with p): any spread over more values makes equal runs
    rarer. ``r`` runs of one input are then all equal with probability
    ``p**r + (1 - p)**r``, and the inputs are scored independently, so all ``k`` inputs
    look deterministic with probability ``(p**r + (1 - p)**r) ** k``; ``r`` is the least
    that makes this at most ``1 - confidence``. For p = 0.2 and 99%:

    * k = 1 (one wrong answer): 0.8**21 + 0.2**21 = 0.0092 <= 0.01 < 0.0115 (r = 20): 21 runs;
    * k = 2: (0.8**11 + 0.2**11)**2 = 0.0074: 11 runs; k = 3: (0.8**7 + 0.2**7)**3 = 0.0092: 7;
    * k >= 12 (the attacks on one example): (0.8**2 + 0.2**2)**12 = 0.68**12 = 0.0098: 2 runs.

    At least 2 for any input (one run shows nothing); 0 when there is none.
    """
    if inputs <= 0:
        return 0
    if not 0 < rate < 1 or not 0 < confidence < 1:
        raise ValueError(f"rate and confidence must be in (0, 1), not {rate!r}, {confidence!r}")
    runs = 2
    while _all_equal(runs, rate) ** inputs > 1 - confidence:
        runs += 1
    return runs


def _all_equal(runs: int, rate: float) -> float:
    """The chance that ``runs`` runs of one input all score the same (two-score worst case)."""
    return math.pow(rate, runs) + math.pow(1 - rate, runs)


def determinism_findings(comparisons: Sequence[Comparison]) -> list[Finding]:
    """One finding per way of running again (``mode``): its first comparison whose results
    differ; timeouts are left to the latency check, a run that got no answer to the
    failures."""
    found: dict[str, Finding] = {}
    for label, mode, a, b in comparisons:
        if mode in found or a is None or b is None or "timeout" in (a.status, b.status) or _same(a, b):
            continue
        found[mode] = Finding("determinism", mode,
                              f"{label} scored {_describe(a)}, then {_describe(b)} {mode}: {FIX}")
    return list(found.values())


def _same(a: Scored, b: Scored) -> bool:
    return a.status == b.status and (a.status != "ok" or a.score == b.score)


def _describe(result: Scored) -> str:
    return repr(result.score) if result.status == "ok" else f"{result.status} ({result.error})"
