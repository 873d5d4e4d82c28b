"""Judge latency: long and odd responses against the reward's timeout."""

from __future__ import annotations

import statistics
from collections.abc import Sequence
from typing import Final

from ..executors.faults import UNINTERRUPTIBLE
from .records import Finding, Latency, Scored

# A call over this share of the timeout times out when the machine is busy.
SLOW_SHARE: Final = 0.5
FIX = ("bound the work per response: cap the length read, avoid regexes and loops that are "
       "quadratic in the input, or declare a timeout the reward really needs")


def odd_inputs() -> list[tuple[str, str]]:
    """Long and odd responses every reward should score quickly (or fail fast)."""
    mb = 1 << 20
    return [
        ("1 MB of prose", ("The answer follows from the steps above. " * (mb // 41))[:mb]),
        ("1 MB without a space", "x" * mb),
        ("100k digits", "9" * 100_000),
        ("50k open braces", "\\boxed{" + "{" * 50_000),
        ("60k backticks", "`" * 60_000),
        ("20k nested parentheses", "(" * 20_000 + ")" * 20_000),
        ("100k short lines", "1\n" * 100_000),
        ("20k tags", "<answer>" * 20_000),
        ("control characters and NULs", "\x00\x01\x1b\x7f\ufffd" * 20_000),
    ]


def summarize(seconds: Sequence[float], timeout_s: float) -> Latency:
    """p50/p95/max of ``seconds`` (at least one call)."""
    ordered = sorted(seconds)
    p95 = ordered[min(len(ordered) - 1, round(0.95 * (len(ordered) - 1)))]
    return Latency(statistics.median(ordered), p95, ordered[-1], len(ordered), timeout_s)


def latency_findings(timed: Sequence[tuple[str, Scored]], timeout_s: float) -> list[Finding]:
    """A finding per probe that timed out or took over half the timeout."""
    found = []
    for name, result in timed:
        if result.status == "timeout" and UNINTERRUPTIBLE in (result.error or ""):
            found.append(Finding("latency", name, f"timed out (timeout {timeout_s:g} s) and was stuck "
                                 f"where the watchdog cannot interrupt it (C code?), so its worker "
                                 f"process was killed: {FIX}"))
        elif result.status == "timeout":
            found.append(Finding("latency", name, f"timed out (timeout {timeout_s:g} s): {FIX}"))
        elif result.seconds > SLOW_SHARE * timeout_s:
            found.append(Finding("latency", name, f"took {result.seconds:.2f} s, over "
                                 f"{SLOW_SHARE:.0%} of its {timeout_s:g} s timeout: {FIX}"))
    return found
