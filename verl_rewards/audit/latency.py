"""Judge latency: long and odd responses against the reward's timeout."""

from __future__ import annotations

import signal
import statistics
from collections.abc import Sequence
from typing import Final

from ..executors.faults import UNINTERRUPTIBLE, WORKER_DIED
from .records import Finding, Latency, Scored, excerpt

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
    """A finding per probe that timed out, took over half the timeout, or killed the
    worker process it was scored in (the process executor's ``WorkerDied``)."""
    found = []
    for name, result in timed:
        if result.status == "failed" and (result.error or "").startswith(f"{WORKER_DIED}:"):
            found.append(Finding("latency", name, f"{result.error}: a reward must fail one sample, "
                                 f"never its process"))
        elif result.status == "timeout" and UNINTERRUPTIBLE in (result.error or ""):
            found.append(Finding("latency", name, f"timed out (timeout {timeout_s:g} s) and was stuck "
                                 f"where the watchdog cannot interrupt it (C code?), so its worker "
                                 f"process was killed: {FIX}"))
        elif result.status == "timeout":
            found.append(Finding("latency", name, f"timed out (timeout {timeout_s:g} s): {FIX}"))
        elif result.seconds > SLOW_SHARE * timeout_s:
            found.append(Finding("latency", name, f"took {result.seconds:.2f} s, over "
                                 f"{SLOW_SHARE:.0%} of its {timeout_s:g} s timeout: {FIX}"))
    return found


def stuck_finding(label: str, detail: str, timeout_s: float, samples: int, stderr: str = "") -> Finding:
    """A step that got no answer by its deadline: the reward is stuck where the in-process
    watchdog cannot stop it (``detail``: how long the audit waited)."""
    return Finding("latency", label, (
        f"{detail}, beyond its timeout: the reward is stuck where the watchdog cannot interrupt it "
        f"(C code?), past {_calls(samples)} of {timeout_s:g} s each and the audit's grace; bound "
        f"its work{_stderr(stderr)}"))


def died_finding(label: str, detail: str, returncode: int | None, response_chars: int | None,
                 stderr: str = "") -> Finding:
    """The scoring process died while scoring ``label``'s response: say how, then what it
    printed last (``detail``: its exit code, as the scoring process reports it)."""
    on = f" on a {response_chars:,}-character response" if response_chars is not None else ""
    return Finding("latency", label, (
        f"{detail}: {_how(returncode)}{on}; a reward must fail one sample, never its process"
        f"{_stderr(stderr)}"))


def silent_finding(label: str, detail: str, stderr: str = "") -> Finding:
    """The scoring process stopped answering but went on running."""
    return Finding("latency", label, (
        f"{detail}: this step and the reward's answers after it could not be checked; a reward "
        f"must leave the descriptors of the process it runs in alone{_stderr(stderr)}"))


def _calls(samples: int) -> str:
    return "1 call" if samples == 1 else f"{samples} calls"


_SIGNALS: Final = {
    signal.SIGSEGV: "a segmentation fault: native code, or Python recursing past the C stack",
    signal.SIGKILL: "killed, e.g. by the kernel's out-of-memory killer",
    signal.SIGABRT: "an abort, e.g. a failed assertion in native code",
    signal.SIGBUS: "a bus error in native code",
    signal.SIGFPE: "an arithmetic fault in native code",
}


def _how(returncode: int | None) -> str:
    """What an exit code says the reward did to its process."""
    if returncode is None:
        return "the reward ended its process"
    if returncode < 0:
        try:
            name = signal.Signals(-returncode).name
        except ValueError:
            name = f"signal {-returncode}"
        why = _SIGNALS.get(-returncode)  # type: ignore[call-overload]
        return f"the reward's process was ended by {name}" + (f" ({why})" if why else "")
    return (f"the reward ended its process with exit status {returncode} (os._exit, sys.exit from "
            f"the main thread, or a native exit)")


def _stderr(text: str) -> str:
    shown = excerpt(text)
    return f". Its stderr ended with:{shown}" if shown else ""
