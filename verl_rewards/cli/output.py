"""Small text helpers shared by the subcommands (stdout is looked up per call)."""

from __future__ import annotations

import sys
from collections.abc import Sequence


def emit(*lines: str) -> None:
    """Print ``lines`` to stdout."""
    for line in lines:
        print(line, file=sys.stdout)


def note(message: str) -> None:
    """Print a one-line note to stderr (kept out of machine-readable stdout)."""
    print(f"note: {message}", file=sys.stderr)


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    """Left-aligned columns; the last column is not padded."""
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]

    def line(cells: Sequence[str]) -> str:
        padded = [c.ljust(w) for c, w in zip(cells[:-1], widths)]
        return "  ".join([*padded, cells[-1]]).rstrip()

    return [line(headers), *(line(r) for r in rows)]
