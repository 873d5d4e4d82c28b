"""Where a run's time goes, phase by phase, when profiling is on (``bench_sandbox.py --profile``).

Off by default: then a run records nothing and its result's ``profile`` is
empty. On, the launcher marks its own phases and asks the sandbox's processes
(the warm server, the runner, the program's process before the program
starts) to report theirs on the status pipe; each mark is ``(process, phase,
monotonic seconds, CPU seconds of that process's thread so far)``.
"""

from __future__ import annotations

import time

_enabled = False

Entry = tuple[str, str, float, float]


def enable(on: bool = True) -> None:
    """Turn profiling on (or off) for the runs this process starts from now on."""
    global _enabled
    _enabled = on


def enabled() -> bool:
    """Whether runs started now are profiled."""
    return _enabled


class Marks:
    """The phases one process marks during one run (nothing when profiling is off)."""

    def __init__(self, process: str) -> None:
        self.process = process
        self.on = _enabled
        self._entries: list[Entry] = []

    def mark(self, phase: str) -> None:
        """``phase`` ends now."""
        if self.on:
            self._entries.append((self.process, phase, time.monotonic(), time.thread_time()))

    def entries(self) -> tuple[Entry, ...]:
        return tuple(self._entries)
