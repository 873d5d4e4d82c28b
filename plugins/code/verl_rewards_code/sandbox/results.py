"""What a run's pipes carried, as a :class:`RunResult`."""

from __future__ import annotations

import json
import signal
from typing import Any

from .pump import Streams
from .records import Limits, RunResult


def collect(
    streams: Streams, limits: Limits, elapsed: float, oom: bool, artifacts_error: str | None,
    profile: tuple[tuple[str, str, float, float], ...] = (),
) -> RunResult:
    """Turn what a run's pipes carried into a :class:`RunResult` (``profile``: the
    launcher's own phases, when profiling, before the runner's)."""
    status = parse_status(streams.status.decode("utf-8", errors="replace"))
    stderr = streams.stderr_tail.decode("utf-8", errors="replace")
    setup_error = status.get("setup_error")
    ended = "exit" in status or "signal" in status
    if streams.exited and setup_error is None and not ended and not oom:
        # A runner killed at the run's memory limit (the OOM killer may pick it
        # over the program's processes) ended a run that hit its limit: not a sandbox fault.
        log = streams.log.decode("utf-8", errors="replace")
        setup_error = f"the sandbox exited with {streams.returncode} before the program ended: {log.strip()[-500:]}"
    return RunResult(
        stdout=streams.stdout.decode("utf-8", errors="replace"),
        stderr=stderr,
        exit_code=status.get("exit"),
        signal=status.get("signal"),
        timed_out=not streams.exited and not streams.output_limit_hit,
        output_limit_hit=(
            streams.output_limit_hit or "[Errno 27] File too large" in stderr or status.get("signal") == signal.SIGXFSZ
        ),
        setup_error=setup_error,
        wall_time_s=elapsed,
        cpu_time_s=status.get("cpu_s"),
        max_rss_kb=status.get("maxrss_kb"),
        memory_limit_hit=oom,
        artifacts_error=status.get("collect_error") or artifacts_error,
        profile=(*profile, *_phases(status)) if profile else (),
    )


def parse_status(text: str) -> dict[str, Any]:
    """The runner's status lines (JSON objects) merged; the first value of a key wins."""
    merged: dict[str, Any] = {}
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict):
            # The first setup error is the cause; later ones are its echoes.
            for key, value in record.items():
                merged.setdefault(key, value)
    return merged


def _phases(status: dict[str, Any]) -> list[tuple[str, str, float, float]]:
    """The sandbox's own phases, as its processes reported them: ``(process, phase,
    monotonic seconds, that process's CPU seconds so far)``."""
    found = []
    for process in ("server", "runner", "program"):
        for entry in status.get(f"{process}_phases") or ():
            try:
                name, at_ns, cpu_ns = entry
                found.append((process, str(name), int(at_ns) / 1e9, int(cpu_ns) / 1e9))
            except (TypeError, ValueError):
                continue
    return found
